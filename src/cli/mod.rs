//! Command-line plumbing shared by the commands: the grammar ([`args`]), loading a file, output.

pub mod args;
pub mod compiled;
pub mod diff;
pub mod digest;
pub mod flops;
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
pub mod steps;
pub mod summary;
pub mod table;

use sightline::analysis::derived::Derived;
use sightline::model::{cut_long_strings_in, cut_name, Trace};
use sightline::native;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A loaded trace, what has been derived from it so far, and how long reading and parsing took.
pub struct Loaded {
    pub derived: Derived,
    pub parse_seconds: f64,
}

impl Loaded {
    pub fn trace(&self) -> &Trace {
        self.derived.trace()
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
