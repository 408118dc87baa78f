//! Sightline: reads PyTorch profiler traces.
//!
//! The pipeline is bytes -> parse -> model -> analysis -> view -> web; see ARCHITECTURE.md.

pub mod model;
pub mod parse;

#[cfg(target_arch = "wasm32")]
mod web;
