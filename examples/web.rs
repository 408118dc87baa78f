//! The wasm entry point that Trunk builds for the browser viewer (see Trunk.toml).
//!
//! The crate's cdylib lib and its native `sightline` bin share a target name,
//! so Trunk cannot select the lib's artifact by name. This example only links
//! the lib: every `#[wasm_bindgen]` item in `sightline::web` (the start hook,
//! `version`, ...) is exported from the resulting module. Natively it is an
//! empty program.

use sightline as _;

fn main() {}
