//! Sightline: reads PyTorch profiler traces.
//!
//! The pipeline is bytes -> parse -> model -> analysis -> view -> web; see ARCHITECTURE.md.
//! Everything but `web` is plain Rust that compiles and tests natively; only `web` knows the browser.

pub mod analysis;
pub mod model;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
pub mod parse;
pub mod view;

#[cfg(target_arch = "wasm32")]
pub mod web;
