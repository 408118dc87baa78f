//! The native integration tests, one binary: each `tests/*.rs` file is a module of it, so the crate
//! and its dependencies are linked once rather than once per file (Cargo.toml sets
//! `autotests = false`; `tests/web.rs`, the browser tests, is a target of its own). A new test file
//! is added here; `every_test_file_is_a_module` fails until it is.

mod common;

#[path = "cli.rs"]
mod cli;
#[path = "columns.rs"]
mod columns;
#[path = "compiled.rs"]
mod compiled;
#[path = "critical.rs"]
mod critical;
#[path = "devices.rs"]
mod devices;
#[path = "diagnostics.rs"]
mod diagnostics;
#[path = "diff.rs"]
mod diff;
#[path = "docs.rs"]
mod docs;
#[path = "findings_reference.rs"]
mod findings_reference;
#[path = "flops.rs"]
mod flops;
#[path = "fuzz.rs"]
mod fuzz;
// Needs ts-rs: `cargo test --features ts` (scripts/test).
#[cfg(feature = "ts")]
#[path = "generated_types.rs"]
mod generated_types;
#[path = "gpu_training.rs"]
mod gpu_training;
#[path = "graphs.rs"]
mod graphs;
#[path = "hostile.rs"]
mod hostile;
#[path = "idle.rs"]
mod idle;
#[path = "judge.rs"]
mod judge;
#[path = "mcp.rs"]
mod mcp;
#[path = "memory.rs"]
mod memory;
#[path = "parse.rs"]
mod parse;
#[path = "parts.rs"]
mod parts;
#[path = "ranks.rs"]
mod ranks;
#[path = "readers.rs"]
mod readers;
#[path = "robustness.rs"]
mod robustness;
#[path = "rows.rs"]
mod rows;
#[path = "serve.rs"]
mod serve;
#[path = "serve_limits.rs"]
mod serve_limits;
#[path = "shapes.rs"]
mod shapes;
#[path = "slicing.rs"]
mod slicing;
#[path = "snapshot.rs"]
mod snapshot;
#[path = "tables.rs"]
mod tables;
#[path = "text_outputs.rs"]
mod text_outputs;
#[path = "units.rs"]
mod units;
#[path = "view_fixtures.rs"]
mod view_fixtures;

/// With `autotests = false`, Cargo no longer picks up a new `tests/*.rs` by itself: one that is not
/// declared above would never be compiled, and its tests would pass by not running.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("it.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name == "it.rs" || name == "web.rs" {
            continue;
        }
        if !this.contains(&format!("#[path = \"{name}\"]")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/it.rs does not declare {missing:?}"
    );
}
