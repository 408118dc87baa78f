//! Browser glue: the wasm32-only entry points that the page calls.
//!
//! Everything here is compiled for `wasm32` only (see `lib.rs`); the native
//! CLI never links it.

use wasm_bindgen::prelude::*;

/// Runs once when the page instantiates the module.
#[wasm_bindgen(start)]
pub fn start() {
    install_panic_hook();
}

/// The crate version, so the page (and tests) can tell which build is loaded.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Routes Rust panics to `console.error`, with a JS stack trace attached.
///
/// Without this a panic in wasm only shows up as an opaque
/// `RuntimeError: unreachable`.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = format!("sightline panicked: {info}");
            // Passing an Error object makes the console show where it was thrown.
            web_sys::console::error_2(
                &JsValue::from_str(&message),
                &js_sys::Error::new(&message).into(),
            );
        }));
    });
}
