//! Browser glue: the wasm32-only entry points that the page calls.
//!
//! One [`Session`] per opened trace holds the parser while bytes arrive, then the `Trace`, its
//! `Timeline` index and the view state, all in wasm memory. JavaScript gets small results: a
//! frame's draw list as a `Float32Array` plus a JSON string, a details or table JSON, a count.
//! Every method that can fail returns `Result<_, JsValue>` with a JS `Error` carrying a readable
//! message; a panic is logged by the hook and its message kept for [`last_panic`], so the page can
//! show it in its error banner and stay usable for the next file.
//!
//! Compiled for `wasm32` only (see `lib.rs`); the native CLI never links it.
//!
//! By concern: `session` (reading and the model build; `Loaded.derived`, the trace's one
//! [`crate::analysis::derived::Derived`] store, which every panel, table, digest and view asks),
//! `capture` (a graph capture read in another session, applied to a replay: `capture_of`,
//! `use_capture`), `parts` (a file parsed in several workers: `start_part`, `take_part`, `absorb_part`,
//! `splittable`, `event_boundary`), `warm` (a synthetic trace read through a whole load while the
//! page waits for a file, so the browser has optimized the module's code before the first one), `view` (frames, viewport, hit testing, selection, search),
//! `tables` (`analyse_step`, the analyses run in slices on the store's `*_sliced` getters with
//! `SLICE_UNITS` of work per call; the reports and tables), `flops` (the roofline's rows, device,
//! peaks and roofs; a row's calls), `memory` (the memory chart's columns, live allocations, the
//! allocation table), `critical` (a thin adapter: the panel is `view::critical`, the path drawn
//! is `view::path`, the graph is the store's), `compare` (a session's digest and the diff of two
//! digests), `ranks` (the report of many ranks from their digests; CPU groups folded into a
//! band), `embedding` (the window and selection for links and the iframe protocol), `snapshot`
//! (a memory snapshot: `SnapshotSession`, read like a trace, its report, its timeline's bands,
//! and `diff_snapshots` of two sessions' peaks).
//!
//! The page (`www/`), which calls these through its workers:
//! - `index.html`, `style.css`; `js/app.js` wires the page (no inline script: Trunk's loader is
//!   replaced by `pattern_script` in `Trunk.toml`); `js/starting.js` keeps what is chosen before
//!   the module is compiled and hands it on.
//! - `js/worker/`: `client.js` (a Session in a worker, asked through typed clients with one
//!   method per question, their JSON parsed into `www/generated/answers.ts`'s types; `Bindings`,
//!   `readFile`, `LocalSession` for a page of another origin), `protocol.js` (the calls a
//!   worker answers, declared once; any other name is refused), `session-worker.js`,
//!   `portable.js` (wasm-bindgen results made postable), `parallel.js` (a file cut into ranges
//!   for parse workers, their parts joined), `inflate-worker.js` (the browser's
//!   `DecompressionStream` over a `.gz` file, JSON sent straight to the session worker).
//! - `js/load.js` (loading, spare workers, cancel), `js/analyses.js` (the background analyses
//!   loop), `js/wasm-choice.js` (the simd128 or the plain build, chosen where the module is
//!   compiled).
//! - Painting and panels: `timeline.js` (a frame's draw list painted), `charts.js` (findings,
//!   step and idle breakdowns), `overview.js` (the Overview panel), `table.js` (the generic
//!   table), `kernel-columns.js`, `modules-view.js` (the Modules tab and its icicle),
//!   `range-table.js`, `roofline.js`, `details.js`, `source-links.js` (a Python frame's editor
//!   link: the configured prefix, schemes that run or embed content refused, then the
//!   percent-encoded path and line), `notice.js` (damage as a notice, observations quietly),
//!   `pyframes.js` (the "Hide Python frames" toggle), `header.js`, `format.js`, `dom.js`
//!   (`el()`, the one element-making helper, text set as text only).
//! - `context.js`: the page's one application context (its typed `PageContext`), made once by
//!   `app.js`, handed to every feature, which adds the state it owns; `window.sightline` for tests.
//! - Features beside the page, each a module started with the context by `app.js`: `memory.js`,
//!   `memory-chart.js`, `memory-panels.js` (the chart is a layer of the timeline, painted as one
//!   `ImageData`); `critical.js` (the critical-path toggle and panel, its
//!   controller), `critical-summary.js` (what bounds the steps), `whatif.js` (the what-if's
//!   controls and answer); `compare.js` (a
//!   second trace in a second worker, the two views kept on one time span); `pair.js` (two files
//!   chosen together: two ranks or a pair to compare, by their `distributedInfo`); `ranks.js` (a
//!   job's ranks, each in its own worker, at most 8 kept; the rest keep their digest only);
//!   `logdir.js` (the start screen of `sightline serve LOGDIR`); `url.js`, `embed.js` and
//!   `sightline-trace.js` (links, Perfetto's postMessage protocol, the `<sightline-trace>`
//!   element with its own Session in its own worker).
//! - `types.d.ts` (beside `js/`, so it does not ship): what the scripts use that none of them
//!   defines, for `tsc --noEmit` (`tsconfig.json`, `tsconfig.worker.json`): this module's
//!   wasm-bindgen glue, loaded by URL at run time, and the page's globals for tests.
//!   `generated/answers.ts` beside it: the JSON these methods answer, generated from the Rust
//!   types (`tests/generated_types.rs`, the `ts` feature).
//!
//! The wasm module is `examples/web.rs`, an empty program that links the library (the lib and the
//! `sightline` bin share a target name, so Trunk cannot pick the lib's cdylib by name); every
//! `#[wasm_bindgen]` item here is exported from it. Trunk builds it with `+simd128`
//! (`.cargo/config.toml`); `scripts/wasm-plain`, a Trunk build hook, builds the plain one beside
//! it, in every `trunk build` and `trunk serve` (its own folder of the cargo target, so the two
//! builds' flags do not share a cache).

mod capture;
mod compare;
mod critical;
mod embedding;
mod flops;
mod memory;
mod parts;
mod ranks;
mod session;
mod snapshot;
mod tables;
mod view;
mod warm;

pub use session::Session;
pub use snapshot::SnapshotSession;
pub use view::Frame;
pub use warm::warm_up;

use crate::analysis::idle;
use crate::model::cut_long_strings_in;
use crate::view::colour;
use crate::view::panels::FrameConstants;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
pub fn start() {
    install_panic_hook();
}

/// The crate version, so the page (and tests) can tell which build is loaded.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Whether this module was compiled with 128-bit wasm SIMD: the page ships a build with it and one
/// without (www/js/wasm-choice.js), and a worker can say which one it runs.
#[wasm_bindgen]
pub fn simd128() -> bool {
    cfg!(target_feature = "simd128")
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The message of the last panic, if any (the page shows it when a call throws).
#[wasm_bindgen]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow().clone())
}

/// Routes Rust panics to `console.error`, with a JS stack trace attached, and keeps the message.
///
/// Without this a panic in wasm only shows up as an opaque `RuntimeError: unreachable`.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = format!("sightline panicked: {info}");
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(message.clone()));
            // Passing an Error object makes the console show where it was thrown.
            web_sys::console::error_2(
                &JsValue::from_str(&message),
                &js_sys::Error::new(&message).into(),
            );
        }));
    });
}

/// Bytes of this module's linear memory (its wasm heap), for the page's memory figures: the
/// memory lives in the worker, where the page cannot read its size.
#[wasm_bindgen]
pub fn memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65536) as f64
}

/// The palette as JSON `[[light, dark], ...]`, indexed by the slot in a frame's rectangles.
#[wasm_bindgen]
pub fn palette() -> String {
    json(&colour::PALETTE)
}

/// The geometry and flag values a painter needs to read a frame (JSON), from `view::frame` and
/// `view::tracks`, so the page never hard-codes them.
#[wasm_bindgen]
pub fn constants() -> String {
    json(&FrameConstants::PAGE)
}

/// Words for the idle analysis' wait kinds (JSON object kind -> phrase), for the idle chart.
#[wasm_bindgen]
pub fn wait_kinds() -> String {
    let m: serde_json::Map<String, serde_json::Value> = idle::WaitKind::ALL
        .iter()
        .map(|k| (json(k).trim_matches('"').to_string(), k.phrase().into()))
        .collect();
    json(&m)
}

pub(crate) fn err(message: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&message.to_string()).into()
}

pub(crate) fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    // Serializing plain data structures cannot fail; "null" keeps the page going if it ever did.
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    // A trace can hold a name of hundreds of MB: every table and panel gets it cut (the details
    // panel asks for it whole).
    cut_long_strings_in(text)
}
