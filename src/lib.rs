//! Sightline: reads PyTorch profiler traces.
//!
//! The pipeline is bytes -> parse -> model -> analysis -> view -> web; see ARCHITECTURE.md for the
//! stages, their owners and invariants. Everything but `web` is plain Rust that compiles and tests
//! natively; only `web` knows the browser. Each module's doc lists its files.
//!
//! Modules:
//! - [`parse`]: bytes (JSON or gzip, in chunks split anywhere, on one thread or several) to a
//!   [`model::Trace`]; damage salvaged and listed.
//! - [`model`]: the columnar, interned timeline every later stage reads, and the category
//!   vocabulary (what an event is, which lanes are devices).
//! - [`analysis`]: every number shown to a user, as pure functions of the model, kept per loaded
//!   trace by `analysis::derived::Derived`; the digest, across traces.
//! - [`snapshot`]: memory snapshots (`torch.cuda.memory._dump_snapshot` pickles) to a
//!   [`snapshot::Snapshot`], data opcodes only, and every figure of one.
//! - [`query`]: the questions a user asks (report, ops, path, diff, ...), each a request type
//!   answered from a trace's `Derived` store: what the CLI, `sightline mcp`, Python and the page
//!   call.
//! - [`units`]: durations in words, the one rule of the findings, the comparison and every other
//!   text outside a table, the page's `format.js` rule.
//! - [`view`]: what the page draws for a viewport (a draw list), hit testing, search, details.
//! - `native` (not on wasm32): reading trace files, the library's only file I/O, for the CLI and
//!   the Python package.
//! - `web` (wasm32 only): the page's entry points, one `Session` per trace.
//! - `ordered`: binary and exponential searches of ordered runs, and items grouped by key into
//!   one list, for the view and the analyses.
//! - `room`: how the columns that grow with the input are reserved from its size, for the parser
//!   and the snapshot reader.
//! - `cores`: work split over two cores where the process may use a second (natively), for the
//!   parser's join and finish and the what-ifs.
//!
//! Outside this library: the `sightline` binary (`src/main.rs`, `src/cli/`: the commands,
//! `sightline mcp`, `sightline serve`), the page (`www/`) and the Python package (`python/`).

pub mod analysis;
mod cores;
pub mod model;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
mod ordered;
pub mod parse;
pub mod query;
mod room;
pub mod snapshot;
pub mod units;
pub mod view;

#[cfg(target_arch = "wasm32")]
pub mod web;
