//! What a finding is: the leaf every rule (here, in `flops::rules` and `memory::growth`) and every
//! reader of findings imports, so that none of them imports the rules back.

use crate::model::SliceRef;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub id: &'static str,
    pub severity: Severity,
    pub title: String,
    /// A sentence with the numbers.
    pub detail: String,
    pub advice: String,
    pub evidence: Evidence,
    /// What-if edits ([`crate::analysis::critical::whatif`]'s grammar) that stand for the advice at
    /// its best case: what `critical::savings` replays to price the fix, and what the page's
    /// "what if" button applies. Empty when the fix names no duration to change.
    #[serde(skip)]
    pub whatif: Vec<String>,
}

/// The notes on how the trace was recorded (activities, shapes, stacks, memory profiling, the
/// schedule's active steps): facts of the recording, not costs. Reports list them apart ("How this
/// trace was recorded", `recording` beside `findings`), after every cost.
pub const RECORDING: [&str; 5] = [
    "no_cpu_activity",
    "no_input_shapes",
    "memory_profiling_on",
    "no_python_stack",
    "few_active_steps",
];

impl Finding {
    /// Whether this is a note on how the trace was recorded ([`RECORDING`]).
    pub fn is_recording(&self) -> bool {
        RECORDING.contains(&self.id)
    }
}

/// What the viewer can jump to.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    pub slices: Vec<SliceRef>,
    pub ranges: Vec<TimeRange>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct TimeRange {
    pub start_ns: i64,
    pub end_ns: i64,
}
