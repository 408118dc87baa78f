//! The tables users hold against PyTorch's, HTA's and TensorBoard's: operators, kernels, labels,
//! `nn.Module`s, and the same data as a call tree.
//!
//! Every table reads one [`Forest`]: per-thread trees of the CPU events, built and folded as
//! PyTorch builds them for `prof.key_averages()`, with each GPU op charged to the operator that
//! launched it (`launch`). A loaded trace's forest is built once and kept (`Derived::forest`;
//! [`Forest::build`] alone elsewhere) and passed to each table; all of them are pure functions of
//! the trace and the forest, returning serde structures that the CLI prints and the viewer renders.
//!
//! Files: [`tree`] (the [`Forest`]: per-lane trees built, folded and named as PyTorch's
//! `EventList._build_tree` does, with GPU time charged), `node` (the tree's node types and
//! every tree's rows, which `tree` re-exports: read by `tree` and `launch` alike, so `tree` calls
//! `launch` and `launch` imports nothing of `tree`), `launch` (the project's one
//! kernel-to-launcher rule, `analysis::launch`, mapped onto the tree's nodes), [`ops`] (the
//! operator table, `key_averages()` and `group_by_input_shape`), [`kernels`] (GPU ops by name,
//! with HTA's kinds and the TensorBoard plugin's occupancy and SM efficiency), [`labels`]
//! (`record_function` labels on the CPU and as projected on the GPU), [`modules`] (the
//! `nn.Module` hierarchy) and [`calltree`] (top-down and bottom-up, the latter made level by level
//! on request). Every GPU op is charged to the operator that launched it or counted as
//! unattributed, so charged plus unattributed is all GPU time.

pub mod calltree;
pub mod kernels;
pub mod labels;
mod launch;
pub mod modules;
mod node;
pub mod ops;
pub mod tree;

use crate::analysis::columns::{Column, Unit};
pub use calltree::{call_tree, BottomUpNode, CallTree};

/// A table row's critical-path columns ([`crate::analysis::critical::slack`]), when asked for.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PathColumns {
    /// Time on the steps' critical paths (inclusive for operators, as `CPU total` is).
    pub on_path_us: f64,
    /// The least slack over the calls inside steps; `None` when no call is in a step.
    pub slack_us: Option<f64>,
}

impl PathColumns {
    /// The declarations of the two columns, for the rows that flatten them in.
    pub const ON_PATH: Column = Column::new(
        "on_path_us",
        "On path",
        Unit::Us,
        "Time on the steps' critical paths",
    );
    pub const SLACK: Column = Column::new(
        "slack_us",
        "Slack",
        Unit::Us,
        "The least slack over its calls inside steps; null when no call is in a step",
    );
}
pub use kernels::{kernel_table, kernel_table_attributed, KernelFlops, KernelRow, KernelTable};
pub use labels::{label_table, LabelRow, LabelTable};
pub use modules::{module_table, module_table_attributed, ModuleRow, ModuleTable};
pub use ops::{op_table, op_table_charged, OpColumn, OpRow, OpTable};
pub use tree::{EventKind, Forest};

/// Nanoseconds as microseconds, PyTorch's unit and the tables'.
fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// `part` as a percentage of `whole`; 0 when `whole` is 0.
fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The median of sorted, non-empty durations, in microseconds (mean of the middle two for an
/// even count, as numpy does).
fn median_us(sorted_ns: &[i64]) -> f64 {
    let n = sorted_ns.len();
    if n % 2 == 1 {
        us(sorted_ns[n / 2])
    } else {
        (us(sorted_ns[n / 2 - 1]) + us(sorted_ns[n / 2])) / 2.0
    }
}
