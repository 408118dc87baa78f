//! Command-line plumbing shared by the commands: the grammar ([`args`]), loading a file, output.
//!
//! A loaded trace is a [`Loaded`]: its [`Derived`] store, the file's name and how long reading
//! took (the file read by `sightline::native`). Each command maps its flags onto a request of
//! `sightline::query`, asks it of the loaded trace ([`Loaded::ask`]) and prints the answer, as
//! text or as JSON for `--json`; `sightline mcp` asks the same requests.
//!
//! Exit codes: 0 for a trace, also a damaged one; 1 when a `diff --fail-if` condition
//! holds; 2 for a non-trace or a bad command line; a closed pipe ends quietly (`src/main.rs`).
//! Text names the trace's device as the analyses do (`kernels`' `MTIA time %`), `ops` heads its
//! device columns as PyTorch does (`Self CUDA` on CUDA and ROCm, `Self XPU`, `Self MTIA`); JSON
//! field names never change with the device. Long names are cut unless `--full-names`.
//!
//! Files:
//! - [`args`]: the command line declared once with clap's derive (help, `--version`, errors with
//!   suggestions, shell completions); each command's `run` takes its parsed arguments.
//! - one module a command: [`summary`], [`ops`], [`kernels`], [`labels`], [`modules`],
//!   [`steps`], [`idle`], [`report`], [`flops`], [`memory`], [`path`] (critical path, what-if,
//!   one graph per rank joined for several files), [`digest`], [`diff`] (BASE digested and its
//!   model dropped before NEW is read; BASE or NEW may be a digest file), [`ranks`] (files found
//!   and digested through `native::job`, one trace per core at a time, only digests kept),
//!   [`snapshot`] (a memory snapshot, read by `native::read_snapshot`, or two and their diff).
//! - [`table`]: the text layout of the table commands, PyTorch's.
//! - [`mcp`]: `sightline mcp`, the official `rmcp` SDK over stdio: tools take the requests of
//!   `sightline::query` and answer with the commands' JSON; the last four traces asked about are
//!   kept with their stores (parsed again when their size or time changes); long lists are paged (`top`, `offset`); a step path keeps
//!   its longest segments; answers past 200 KB are refused; failures are tool results flagged
//!   `isError` with the CLI's message.
//! - [`serve`]: `sightline serve`, the only HTTP in the project (its doc lists its files).

pub mod args;
pub mod compiled;
pub mod diff;
pub mod digest;
pub mod flops;
pub mod graphs;
pub mod idle;
pub mod kernels;
pub mod labels;
pub mod mcp;
pub mod memory;
pub mod modules;
pub mod ops;
pub mod path;
pub mod ranks;
pub mod report;
pub mod serve;
pub mod snapshot;
pub mod steps;
pub mod summary;
pub mod table;

use sightline::analysis::derived::Derived;
use sightline::model::{cut_long_strings_in, cut_name, Trace};
use sightline::native;
use sightline::query::{Opened, Question};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A loaded trace, what has been derived from it so far, the file as the user named it, and how
/// long reading and parsing took.
pub struct Loaded {
    pub derived: Derived,
    pub file: String,
    pub parse_seconds: f64,
}

impl Loaded {
    pub fn trace(&self) -> &Trace {
        self.derived.trace()
    }

    /// The trace as the questions of `sightline::query` take it.
    pub fn opened(&self) -> Opened<'_> {
        Opened {
            derived: &self.derived,
            file: &self.file,
            parse_seconds: self.parse_seconds,
        }
    }

    /// The answer to `q` about this trace.
    pub fn ask<'a, Q: Question<'a>>(&'a self, q: &Q) -> Result<Q::Answer, String> {
        q.answer(&self.opened())
    }
}

/// Reads the file through the parser ([`native::read_trace`]: 1 MiB reads, a large plain-JSON
/// file on one thread per core).
pub fn load(path: &str) -> Result<Loaded, String> {
    let start = Instant::now();
    let trace = native::read_trace(std::path::Path::new(path), native::parse_threads())
        .map_err(|e| format!("{path}: {e}"))?
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(Loaded {
        derived: Derived::new(trace),
        file: path.to_string(),
        parse_seconds: start.elapsed().as_secs_f64(),
    })
}

/// Whether outputs give names whole (`--full-names`, a flag of every command); by default a name
/// longer than [`LONG_NAME_BYTES`] is cut.
static FULL_NAMES: AtomicBool = AtomicBool::new(false);

pub fn set_full_names(on: bool) {
    FULL_NAMES.store(on, Ordering::Relaxed);
}

/// `name` as outputs give it: whole with `--full-names`, else as [`cut_name`] cuts it. A trace
/// can hold a name of hundreds of MB; a report must not copy it.
pub fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    if FULL_NAMES.load(Ordering::Relaxed) {
        return name.into();
    }
    cut_name(name)
}

/// `v` as every `--json` prints it: pretty, long names cut unless `--full-names`.
pub fn json_text<T: serde::Serialize>(v: &T) -> Result<String, String> {
    let s = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    Ok(if FULL_NAMES.load(Ordering::Relaxed) {
        s
    } else {
        cut_long_strings_in(s)
    })
}

pub fn print_json<T: serde::Serialize>(v: &T) -> Result<(), String> {
    println!("{}", json_text(v)?);
    Ok(())
}

/// Formats bytes as MB with one decimal.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
