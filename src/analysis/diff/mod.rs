//! Before and after: two [`Digest`]s compared row by row (`sightline diff BASE NEW`).
//!
//! Matching:
//! - Operators by name and kind (as the operator table keys them) and, with `by_shape`, by input
//!   shapes; `record_function` labels by name. Steps: the breakdown and mean step time compare
//!   sums and means; `pairs` also sets the i-th active step of each trace side by side.
//! - GPU ops by name, launching operator and module where the name appears in both traces. Names
//!   found in one trace only (another library, another GPU: cuBLAS and hipBLASLt name the same
//!   GEMM differently) are grouped by launching operator and module on each side, and those groups
//!   are matched, so "the kernels of `aten::addmm` in `Linear_3`" compare across hardware. What is
//!   still unpaired in one module on both sides (a backend's own operator launched it:
//!   `aten::cudnn_convolution` and `aten::miopen_convolution`) is paired by the module.
//! - A row present on one side only is `added` or `removed`, with its time; the other side is zero.
//!
//! Figures are per step by default: each side's totals divided by its own number of active steps
//! (the two traces rarely hold the same number). [`Mode::Total`] compares the totals. Deltas are
//! `new - base`; ratios `new / base`, absent when the base is zero.
//!
//! Findings: an id in NEW only is added, in BASE only removed, in both with another severity
//! changed (where one trace raises an id more than once, its highest severity stands). An added
//! finding whose rule measured its figure in BASE too, on the other side of its threshold
//! (`Digest::measured`: the optimizer's 13.6% of the steps, then 16.2% against 15%), did not
//! appear: it crossed its threshold, and says so with both figures (`crossed`); a removed one
//! likewise. Digests without the figures (written before they were kept) compare as before.
//!
//! Invariant: `diff(A, A)` is all zeros and `diff(A, B)` is `diff(B, A)` negated, row for row
//! (`tests/diff.rs`); operator rows equal the difference of PyTorch's two `key_averages()`.
//!
//! Files: this module (the matching and the rows), [`headline`] (the few rows that explain most of
//! the step time's change), [`explain`] (the change split by step category, then operator) and
//! [`gate`] (`--fail-if` conditions parsed and checked).

pub mod explain;
pub mod gate;
pub mod headline;

use super::columns::{Column, Row, Sort, Type, Unit};
use super::digest::{Digest, DigestFinding, DigestKernel, DigestMeasure, DigestOp};
use super::tables::labels::{LABEL_CPU_TOTAL, LABEL_SELF_CPU};
use super::tables::ops::{CPU_TOTAL, OP_KIND, OP_NAME, SELF_CPU};
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};

/// How each side's figures are scaled before they are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "DiffMode"))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Totals divided by the side's active steps (the default).
    PerStep,
    /// Totals as they are.
    Total,
}

#[derive(Debug, Clone, Copy)]
pub struct DiffOptions {
    pub mode: Mode,
    /// Operators are matched by input shapes too.
    pub by_shape: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            mode: Mode::PerStep,
            by_shape: false,
        }
    }
}

/// Whether a row was found in both traces or in one only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Both,
    Added,
    Removed,
}

impl Presence {
    fn of(in_base: bool, in_new: bool) -> Presence {
        match (in_base, in_new) {
            (true, false) => Presence::Removed,
            (false, true) => Presence::Added,
            _ => Presence::Both,
        }
    }
}

/// A count that may be fractional (calls per step); written as an integer when it is one.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "number"))]
pub struct Count(pub f64);

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 9.0e15 {
            s.serialize_i64(self.0 as i64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diff {
    pub mode: Mode,
    pub by_shape: bool,
    pub steps: StepsDiff,
    pub ops: Vec<OpDiff>,
    pub kernels: Vec<KernelDiff>,
    pub labels: Vec<LabelDiff>,
    pub idle: IdleDiff,
    pub findings: FindingsDiff,
    pub summary: headline::Summary,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepsDiff {
    pub base: StepSide,
    pub new: StepSide,
    pub delta: StepDelta,
    /// The steps side by side in `ProfilerStep#N` order: the i-th active step of each trace.
    pub pairs: Vec<StepPair>,
}

impl StepsDiff {
    /// How much a breakdown category varies from step to step: the larger of the two runs'
    /// median absolute deviations of it. A category that moved less explains nothing.
    pub(super) fn category_noise_us(&self, category: &str) -> f64 {
        let of = |side: &StepSide| {
            side.breakdown_mad
                .iter()
                .find(|c| c.category == category)
                .map_or(0.0, |c| c.us)
        };
        of(&self.base).max(of(&self.new))
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepPair {
    pub index: usize,
    pub base_name: Option<String>,
    pub new_name: Option<String>,
    /// Durations (each step extended to its GPU work); 0 for a side with fewer steps.
    pub base_us: f64,
    pub new_us: f64,
    pub delta_us: f64,
}

impl Row for StepPair {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "index",
            "Step",
            Unit::Count,
            "i: the i-th active step of each trace, from 0",
        ),
        Column::new(
            "base_name",
            "Base step",
            Unit::Text,
            "BASE's `ProfilerStep#N`; none where BASE has fewer steps",
        ),
        Column::new(
            "new_name",
            "New step",
            Unit::Text,
            "NEW's `ProfilerStep#N`; none where NEW has fewer steps",
        ),
        Column::new(
            "base_us",
            "Base",
            Unit::Us,
            "BASE's step extended to its device work; 0 where it has fewer steps",
        ),
        Column::new(
            "new_us",
            "New",
            Unit::Us,
            "NEW's step extended to its device work; 0 where it has fewer steps",
        ),
        Column::new("delta_us", "Delta", Unit::Us, "`new_us - base_us`"),
    ];
    const SORT: Sort = Sort::Smallest("index");
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepSide {
    /// Active steps (1 where the trace has none and one step stands for it).
    pub steps: usize,
    pub synthetic: bool,
    /// Mean step duration.
    pub step_time_us: f64,
    /// The median step's length and the steps' median absolute deviation from it: the Overviews'
    /// statistic, and how much the steps of one run differ among themselves (the headline's
    /// noise). The mean where the digest keeps no step's length.
    pub median_us: f64,
    pub mad_us: f64,
    /// Each breakdown category's median absolute deviation over the steps: how much it differs
    /// from step to step (a category that moved less explains nothing).
    pub breakdown_mad: Vec<Category>,
    pub total_us: f64,
    /// The step breakdown, per step or total as the diff's mode says.
    pub breakdown: Vec<Category>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Category {
    pub category: String,
    pub us: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepDelta {
    pub steps: i64,
    pub step_time_us: f64,
    /// Change of the mean step time in percent of the base; absent when the base is zero.
    pub step_time_pct: Option<f64>,
    pub total_us: f64,
    pub breakdown: Vec<Category>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OpSide {
    pub calls: Count,
    pub self_cpu_us: f64,
    pub cpu_total_us: f64,
    pub self_device_us: f64,
    pub device_total_us: f64,
}

/// Calls: per step a fraction where a side's steps differ in calls ([`Count`]).
const CALLS: Column = Column::new(
    "calls",
    "Calls",
    Unit::Count,
    "Calls; per step, a fraction where the steps differ",
)
.typed(Type::Float);

/// What a ratio column holds.
const RATIO: &str = "`new / base`; none when the base is zero";

impl OpSide {
    /// A side's figures as the columns `base` and `new` hold them.
    const PARTS: &'static [Column] = &[
        CALLS,
        SELF_CPU,
        CPU_TOTAL,
        Column::new(
            "self_device_us",
            "Self device",
            Unit::Us,
            "Device time of the device ops it launched itself",
        ),
        Column::new(
            "device_total_us",
            "Device total",
            Unit::Us,
            "Device time of the device ops it and its children launched",
        ),
    ];
    const TYPE: Type = Type::Struct(&[
        ("calls", Type::Float),
        ("self_cpu_us", Type::Float),
        ("cpu_total_us", Type::Float),
        ("self_device_us", Type::Float),
        ("device_total_us", Type::Float),
    ]);
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OpDiff {
    pub name: String,
    pub kind: String,
    /// The input shapes as a list (`Input Dims`); only when matching by shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub input_shapes: Option<serde_json::Value>,
    pub status: Presence,
    pub base: OpSide,
    pub new: OpSide,
    pub delta_self_cpu_us: f64,
    pub delta_self_device_us: f64,
    pub ratio_self_cpu: Option<f64>,
}

/// Whether a row is in both traces, NEW's only or BASE's only.
const STATUS: Column = Column::new(
    "status",
    "Status",
    Unit::Text,
    "`both`, `added` (in NEW only) or `removed` (in BASE only); a side without the row is zeros",
);

impl Row for OpDiff {
    const COLUMNS: &'static [Column] = &[
        OP_NAME,
        OP_KIND,
        Column::new(
            "input_shapes",
            "Input Shapes",
            Unit::Data,
            "`Input Dims` as a list of lists, when matched by input shape",
        )
        .with("by_shape"),
        STATUS,
        Column::new("base", "Base", Unit::Data, "BASE's figures")
            .typed(OpSide::TYPE)
            .parts(OpSide::PARTS),
        Column::new("new", "New", Unit::Data, "NEW's figures")
            .typed(OpSide::TYPE)
            .parts(OpSide::PARTS),
        Column::new(
            "delta_self_cpu_us",
            "Self CPU delta",
            Unit::Us,
            "Self CPU time, NEW's minus BASE's",
        ),
        Column::new(
            "delta_self_device_us",
            "Self device delta",
            Unit::Us,
            "Self device time, NEW's minus BASE's",
        ),
        Column::new("ratio_self_cpu", "Self CPU change", Unit::Ratio, RATIO).digits(1),
    ];
    const SORT: Sort = Sort::Change(&["delta_self_cpu_us", "delta_self_device_us"]);
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KernelSide {
    pub calls: Count,
    pub total_us: f64,
    /// The GPU op names this side contributes to the row.
    pub names: Vec<String>,
}

impl KernelSide {
    /// A side's figures as the columns `base` and `new` hold them.
    const PARTS: &'static [Column] = &[
        CALLS,
        Column::new("total_us", "Time", Unit::Us, "Device time of the row's ops"),
        Column::new(
            "names",
            "Names",
            Unit::Data,
            "The device op names this side contributes to the row",
        )
        .typed(Type::List(&Type::Str)),
    ];
    const TYPE: Type = Type::Struct(&[
        ("calls", Type::Float),
        ("total_us", Type::Float),
        ("names", Type::List(&Type::Str)),
    ]);
}

/// How a kernel row's two sides were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum KernelMatch {
    /// The same name, launching operator and module.
    Name,
    /// Names found in one trace only, paired through launching operator and module.
    Launcher,
    /// Left unpaired by launcher in one module on both sides (each backend has its own
    /// operator, as `aten::cudnn_convolution` and `aten::miopen_convolution`), paired by module.
    Module,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KernelDiff {
    /// The kernel's name, or for a row matched through its launcher, the names joined by ` | `
    /// (base's first).
    pub name: String,
    pub launcher: Option<String>,
    pub module: Option<String>,
    pub matched_by: KernelMatch,
    pub status: Presence,
    pub base: KernelSide,
    pub new: KernelSide,
    pub delta_us: f64,
    pub ratio: Option<f64>,
}

impl Row for KernelDiff {
    const COLUMNS: &'static [Column] = &[
        Column::new("name", "Name", Unit::Text, "The device op's name; of a row matched through its launcher or module, the names joined by ` | `, BASE's first"),
        Column::new("launcher", "Launcher", Unit::Text, "The operator that launched it (of a row matched by module, the launchers joined by ` | `)"),
        Column::new("module", "Module", Unit::Text, "The `nn.Module` it ran in"),
        Column::new("matched_by", "Matched by", Unit::Text, "`name` (the same name, launcher and module), `launcher` (names in one trace only, paired through launcher and module) or `module` (left unpaired in one module on both sides, paired by the module)"),
        STATUS,
        Column::new("base", "Base", Unit::Data, "BASE's figures").typed(KernelSide::TYPE).parts(KernelSide::PARTS),
        Column::new("new", "New", Unit::Data, "NEW's figures").typed(KernelSide::TYPE).parts(KernelSide::PARTS),
        Column::new("delta_us", "Delta", Unit::Us, "Device time, NEW's minus BASE's"),
        Column::new("ratio", "Change", Unit::Ratio, RATIO).digits(1),
    ];
    const SORT: Sort = Sort::Change(&["delta_us"]);
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelSide {
    pub calls: Count,
    pub cpu_total_us: f64,
    pub self_cpu_us: f64,
    pub device_us: f64,
    pub gpu_span_total_us: f64,
}

impl LabelSide {
    /// A side's figures as the columns `base` and `new` hold them.
    const PARTS: &'static [Column] = &[
        CALLS,
        LABEL_CPU_TOTAL,
        LABEL_SELF_CPU,
        Column::new(
            "device_us",
            "Device inside",
            Unit::Us,
            "Device time of the kernels, memcpy and memset launched inside the label",
        ),
        Column::new(
            "gpu_span_total_us",
            "Device total",
            Unit::Us,
            "Summed durations of its spans on the device's streams",
        ),
    ];
    const TYPE: Type = Type::Struct(&[
        ("calls", Type::Float),
        ("cpu_total_us", Type::Float),
        ("self_cpu_us", Type::Float),
        ("device_us", Type::Float),
        ("gpu_span_total_us", Type::Float),
    ]);
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelDiff {
    pub name: String,
    pub status: Presence,
    pub base: LabelSide,
    pub new: LabelSide,
    pub delta_cpu_total_us: f64,
    pub delta_device_us: f64,
    pub ratio_cpu_total: Option<f64>,
}

impl Row for LabelDiff {
    const COLUMNS: &'static [Column] = &[
        Column::new("name", "Name", Unit::Text, "The `record_function` label"),
        STATUS,
        Column::new("base", "Base", Unit::Data, "BASE's figures")
            .typed(LabelSide::TYPE)
            .parts(LabelSide::PARTS),
        Column::new("new", "New", Unit::Data, "NEW's figures")
            .typed(LabelSide::TYPE)
            .parts(LabelSide::PARTS),
        Column::new(
            "delta_cpu_total_us",
            "CPU total delta",
            Unit::Us,
            "CPU total, NEW's minus BASE's",
        ),
        Column::new(
            "delta_device_us",
            "Device delta",
            Unit::Us,
            "Device time, NEW's minus BASE's",
        ),
        Column::new("ratio_cpu_total", "CPU total change", Unit::Ratio, RATIO).digits(1),
    ];
    const SORT: Sort = Sort::Change(&["delta_cpu_total_us", "delta_device_us"]);
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IdleDiff {
    pub base: IdleSide,
    pub new: IdleSide,
    pub delta: IdleSide,
    /// What the CPU was doing while the GPU waited, side by side.
    pub waits: Vec<WaitDiff>,
}

/// Sums over the devices.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IdleSide {
    pub devices: usize,
    pub window_us: f64,
    pub idle_us: f64,
    pub host_wait_us: f64,
    pub compute_us: f64,
    pub non_compute_us: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WaitDiff {
    pub kind: String,
    pub phrase: String,
    pub base_us: f64,
    pub new_us: f64,
    pub delta_us: f64,
}

impl Row for WaitDiff {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "kind",
            "Kind",
            Unit::Text,
            "What the CPU was doing while the device waited (`data_loader`, `collate`, `copy`, \
             `sync`, `python`, ...), as `idle` classes a gap",
        ),
        Column::new(
            "phrase",
            "Waiting for",
            Unit::Text,
            "The kind in words, as the text says it",
        ),
        Column::new(
            "base_us",
            "Base",
            Unit::Us,
            "BASE's device idle time while the CPU did this, summed over devices",
        ),
        Column::new("new_us", "New", Unit::Us, "NEW's, the same way"),
        Column::new("delta_us", "Delta", Unit::Us, "NEW's minus BASE's"),
    ];
    const SORT: Sort = Sort::Ranked("the larger of `base_us` and `new_us`, largest first");
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingsDiff {
    pub added: Vec<FindingDiff>,
    pub removed: Vec<FindingDiff>,
    pub changed: Vec<FindingChange>,
}

/// A finding raised in one trace only: its words, and whether it only crossed its threshold.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingDiff {
    #[serde(flatten)]
    pub finding: DigestFinding,
    /// Present where the rule measured its figure in both traces, on either side of its
    /// threshold: the finding did not appear or go, its figure crossed the threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub crossed: Option<Crossed>,
}

/// A rule's figure in each trace and the threshold it crossed, in its unit (`share`: a fraction;
/// `pct`, `times`, `count`, `ns`, `bytes`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Crossed {
    pub base: f64,
    pub new: f64,
    /// The threshold of the trace that raised the finding.
    pub threshold: f64,
    pub unit: String,
}

impl Crossed {
    /// Whether the two figures lie on either side of their thresholds; `fired` is the side that
    /// raised the finding, whose threshold is told. Which side fires (above or below) is the
    /// rule's; it need not be known, since only one side raised the finding.
    fn of(base: &DigestMeasure, new: &DigestMeasure, fired: &DigestMeasure) -> Option<Crossed> {
        let under = |m: &DigestMeasure| m.value < m.threshold;
        (base.unit == new.unit && under(base) != under(new)).then(|| Crossed {
            base: base.value,
            new: new.value,
            threshold: fired.threshold,
            unit: fired.unit.clone(),
        })
    }

    /// "13.6% -> 16.2% (threshold 15%)", as the CLI prints it.
    pub fn text(&self) -> String {
        let v = |x: f64| figure(x, &self.unit);
        format!(
            "{} -> {} (threshold {})",
            v(self.base),
            v(self.new),
            v(self.threshold)
        )
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingChange {
    pub id: String,
    pub title: String,
    pub base_severity: String,
    pub new_severity: String,
    pub base_detail: String,
    pub new_detail: String,
    /// The rule's figure in each trace, where both measured it: what moved the severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub measured: Option<Moved>,
}

/// A rule's figure in each trace, in its unit (as [`Crossed`]'s), for a finding raised by both.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Moved {
    pub base: f64,
    pub new: f64,
    pub unit: String,
}

impl Moved {
    fn of(base: &DigestMeasure, new: &DigestMeasure) -> Option<Moved> {
        (base.unit == new.unit).then(|| Moved {
            base: base.value,
            new: new.value,
            unit: new.unit.clone(),
        })
    }

    /// "13.6% -> 16.2%", as the CLI prints it.
    pub fn text(&self) -> String {
        format!(
            "{} -> {}",
            figure(self.base, &self.unit),
            figure(self.new, &self.unit)
        )
    }
}

/// A rule's figure in its unit: `share` a fraction, `pct`, `times`, `ns`, `bytes`, a count.
fn figure(x: f64, unit: &str) -> String {
    match unit {
        "share" => format!("{:.1}%", x * 100.0),
        "pct" => format!("{x:.1}%"),
        "times" => format!("{x:.2}x"),
        "ns" => crate::units::duration(x),
        "bytes" => format!("{:.1} MiB", x / f64::from(1 << 20)),
        _ => format!("{x}"),
    }
}

/// `new / base`, absent when the base is zero.
fn ratio(base: f64, new: f64) -> Option<f64> {
    (base != 0.0).then(|| new / base)
}

/// One side's scale: nanoseconds to the microseconds compared.
#[derive(Clone, Copy)]
struct Scale(f64);

impl Scale {
    fn of(d: &Digest, mode: Mode) -> Scale {
        Scale(match mode {
            Mode::PerStep => d.active_steps() as f64,
            Mode::Total => 1.0,
        })
    }
    fn us(self, ns: i64) -> f64 {
        ns as f64 / 1000.0 / self.0
    }
    fn count(self, n: u64) -> Count {
        Count(n as f64 / self.0)
    }
}

/// Compares two digests.
pub fn diff(base: &Digest, new: &Digest, opts: &DiffOptions) -> Diff {
    let (sb, sn) = (Scale::of(base, opts.mode), Scale::of(new, opts.mode));
    let steps = steps(base, new, opts.mode);
    let ops = ops(base, new, opts.by_shape, sb, sn);
    let kernels = kernels(&base.kernels, &new.kernels, sb, sn);
    let labels = labels(base, new, sb, sn);
    let idle = idle(base, new, sb, sn);
    let findings = findings(base, new);
    let summary = headline::summarize((base, new), &steps, &ops, &idle, opts.mode);
    Diff {
        mode: opts.mode,
        by_shape: opts.by_shape,
        steps,
        ops,
        kernels,
        labels,
        idle,
        findings,
        summary,
    }
}

/// A step's length in µs ([`super::digest::DigestStep::length`]).
fn step_us(s: &super::digest::DigestStep) -> f64 {
    s.length() as f64 / 1000.0
}

/// The median of `v` (sorted here); 0 for none.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The median of `v` and the median absolute deviation from it; 0 and 0 for none.
fn median_and_mad(v: &mut [f64]) -> (f64, f64) {
    let m = median(v);
    let mut deviations: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    (m, median(&mut deviations))
}

fn step_side(d: &Digest, mode: Mode) -> StepSide {
    let s = Scale::of(d, mode);
    let n = d.active_steps() as f64;
    let mean = d.steps.total_ns as f64 / 1000.0 / n;
    let mut lengths: Vec<f64> = d.steps.per_step.iter().map(step_us).collect();
    let (median_us, mad_us) = if lengths.is_empty() {
        (mean, 0.0)
    } else {
        median_and_mad(&mut lengths)
    };
    let breakdown_mad = d
        .steps
        .breakdown
        .0
        .iter()
        .map(|(k, _)| {
            let mut v: Vec<f64> = d
                .steps
                .per_step
                .iter()
                .map(|s| {
                    s.breakdown
                        .0
                        .iter()
                        .find(|(c, _)| c == k)
                        .map_or(0.0, |(_, ns)| *ns as f64 / 1000.0)
                })
                .collect();
            Category {
                category: k.clone(),
                us: median_and_mad(&mut v).1,
            }
        })
        .collect();
    StepSide {
        steps: d.steps.active,
        synthetic: d.steps.synthetic,
        step_time_us: mean,
        median_us,
        mad_us,
        breakdown_mad,
        total_us: d.steps.total_ns as f64 / 1000.0,
        breakdown: d
            .steps
            .breakdown
            .0
            .iter()
            .map(|(k, ns)| Category {
                category: k.clone(),
                us: s.us(*ns),
            })
            .collect(),
    }
}

fn steps(base: &Digest, new: &Digest, mode: Mode) -> StepsDiff {
    let (b, n) = (step_side(base, mode), step_side(new, mode));
    let get = |side: &StepSide, k: &str| {
        side.breakdown
            .iter()
            .find(|c| c.category == k)
            .map_or(0.0, |c| c.us)
    };
    // In the breakdown's own order (both sides share it), then any category only one side has.
    let mut order: Vec<String> = b.breakdown.iter().map(|c| c.category.clone()).collect();
    for c in &n.breakdown {
        if !order.contains(&c.category) {
            order.push(c.category.clone());
        }
    }
    let delta = StepDelta {
        steps: n.steps as i64 - b.steps as i64,
        step_time_us: n.step_time_us - b.step_time_us,
        step_time_pct: ratio(b.step_time_us, n.step_time_us - b.step_time_us).map(|r| r * 100.0),
        total_us: n.total_us - b.total_us,
        breakdown: order
            .iter()
            .map(|k| Category {
                category: k.clone(),
                us: get(&n, k) - get(&b, k),
            })
            .collect(),
    };
    let (pb, pn) = (&base.steps.per_step, &new.steps.per_step);
    let pairs = (0..pb.len().max(pn.len()))
        .map(|i| {
            let (sb, sn) = (pb.get(i), pn.get(i));
            let us = |s: Option<&super::digest::DigestStep>| s.map_or(0.0, step_us);
            StepPair {
                index: i,
                base_name: sb.map(|s| s.name.clone()),
                new_name: sn.map(|s| s.name.clone()),
                base_us: us(sb),
                new_us: us(sn),
                delta_us: us(sn) - us(sb),
            }
        })
        .collect();
    StepsDiff {
        base: b,
        new: n,
        delta,
        pairs,
    }
}

fn ops(base: &Digest, new: &Digest, by_shape: bool, sb: Scale, sn: Scale) -> Vec<OpDiff> {
    fn rows(d: &Digest, by_shape: bool) -> &[DigestOp] {
        if by_shape {
            &d.ops_by_shape
        } else {
            &d.ops
        }
    }
    let side = |s: Scale, o: &DigestOp| OpSide {
        calls: s.count(o.calls),
        self_cpu_us: s.us(o.self_cpu_ns),
        cpu_total_us: s.us(o.cpu_total_ns),
        self_device_us: s.us(o.self_device_ns),
        device_total_us: s.us(o.device_total_ns),
    };
    let zero = OpSide {
        calls: Count(0.0),
        self_cpu_us: 0.0,
        cpu_total_us: 0.0,
        self_device_us: 0.0,
        device_total_us: 0.0,
    };
    type Key<'a> = (&'a str, &'a str, Option<&'a str>);
    let mut pairs: BTreeMap<Key, (Option<OpSide>, Option<OpSide>)> = BTreeMap::new();
    for o in rows(base, by_shape) {
        let key = (o.name.as_str(), o.kind.as_str(), o.input_shapes.as_deref());
        pairs.entry(key).or_default().0 = Some(side(sb, o));
    }
    for o in rows(new, by_shape) {
        let key = (o.name.as_str(), o.kind.as_str(), o.input_shapes.as_deref());
        pairs.entry(key).or_default().1 = Some(side(sn, o));
    }
    let mut out: Vec<OpDiff> = pairs
        .into_iter()
        .map(|((name, kind, shapes), (b, n))| {
            let status = Presence::of(b.is_some(), n.is_some());
            let (b, n) = (
                b.unwrap_or_else(|| zero.clone()),
                n.unwrap_or_else(|| zero.clone()),
            );
            OpDiff {
                name: name.to_string(),
                kind: kind.to_string(),
                input_shapes: shapes.map(shape_list),
                status,
                delta_self_cpu_us: n.self_cpu_us - b.self_cpu_us,
                delta_self_device_us: n.self_device_us - b.self_device_us,
                ratio_self_cpu: ratio(b.self_cpu_us, n.self_cpu_us),
                base: b,
                new: n,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let size = |r: &OpDiff| r.delta_self_cpu_us.abs() + r.delta_self_device_us.abs();
        size(b).total_cmp(&size(a))
    });
    out
}

/// `Input Dims` as Python prints them (`[[32, 3], []]`) as a JSON list; text that does not read
/// as one stays a string.
fn shape_list(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

fn kernels(base: &[DigestKernel], new: &[DigestKernel], sb: Scale, sn: Scale) -> Vec<KernelDiff> {
    fn names(ks: &[DigestKernel]) -> BTreeSet<&str> {
        ks.iter().map(|k| k.name.as_str()).collect()
    }
    let (nb, nn) = (names(base), names(new));
    type Key<'a> = (&'a str, Option<&'a str>, Option<&'a str>);
    #[derive(Default)]
    struct Acc<'a> {
        calls: u64,
        ns: i64,
        names: BTreeSet<&'a str>,
        launchers: BTreeSet<&'a str>,
    }
    impl<'a> Acc<'a> {
        fn absorb(&mut self, o: Acc<'a>) {
            self.calls += o.calls;
            self.ns += o.ns;
            self.names.extend(o.names);
            self.launchers.extend(o.launchers);
        }
    }
    // Side 0 is base, 1 is new; the key's name is empty for rows matched through the launcher.
    let mut rows: BTreeMap<Key, [Option<Acc>; 2]> = BTreeMap::new();
    for (side, ks, other) in [(0, base, &nn), (1, new, &nb)] {
        for k in ks {
            let by_name = other.contains(k.name.as_str());
            let name = if by_name { k.name.as_str() } else { "" };
            let key = (name, k.launcher.as_deref(), k.module.as_deref());
            let acc = rows.entry(key).or_default()[side].get_or_insert_with(Acc::default);
            acc.calls += k.calls;
            acc.ns += k.total_ns;
            acc.names.insert(k.name.as_str());
            acc.launchers.extend(k.launcher.as_deref());
        }
    }
    // Launchers differ too where a backend has its own operator (`aten::cudnn_convolution`,
    // `aten::miopen_convolution`): what is left unpaired in one module on both sides pairs by
    // the module.
    let mut by_module: BTreeMap<&str, [Option<Acc>; 2]> = BTreeMap::new();
    let mut sides_of: BTreeMap<&str, [bool; 2]> = BTreeMap::new();
    for ((name, _, module), [b, n]) in &rows {
        if let (true, Some(m)) = (name.is_empty() && (b.is_none() || n.is_none()), module) {
            let e = sides_of.entry(m).or_default();
            e[0] |= b.is_some();
            e[1] |= n.is_some();
        }
    }
    rows.retain(|(name, _, module), pair| {
        let Some(m) = module.filter(|m| name.is_empty() && sides_of.get(m) == Some(&[true, true]))
        else {
            return true;
        };
        if pair[0].is_some() && pair[1].is_some() {
            return true;
        }
        let merged = by_module.entry(m).or_default();
        for (into, from) in merged.iter_mut().zip(pair.iter_mut()) {
            if let Some(a) = from.take() {
                into.get_or_insert_with(Acc::default).absorb(a);
            }
        }
        false
    });

    let side = |s: Scale, a: &Option<Acc>| match a {
        Some(a) => KernelSide {
            calls: s.count(a.calls),
            total_us: s.us(a.ns),
            names: a.names.iter().map(|n| n.to_string()).collect(),
        },
        None => KernelSide {
            calls: Count(0.0),
            total_us: 0.0,
            names: Vec::new(),
        },
    };
    let row = |name: &str,
               launcher: Option<String>,
               module: Option<&str>,
               matched_by: KernelMatch,
               [b, n]: [Option<Acc>; 2]| {
        let status = Presence::of(b.is_some(), n.is_some());
        let (b, n) = (side(sb, &b), side(sn, &n));
        let name = if name.is_empty() {
            b.names
                .iter()
                .chain(&n.names)
                .cloned()
                .collect::<Vec<_>>()
                .join(" | ")
        } else {
            name.to_string()
        };
        KernelDiff {
            name,
            launcher,
            module: module.map(str::to_string),
            matched_by,
            status,
            delta_us: n.total_us - b.total_us,
            ratio: ratio(b.total_us, n.total_us),
            base: b,
            new: n,
        }
    };
    let mut out: Vec<KernelDiff> = Vec::with_capacity(rows.len() + by_module.len());
    for ((name, launcher, module), pair) in rows {
        let matched_by = if name.is_empty() {
            KernelMatch::Launcher
        } else {
            KernelMatch::Name
        };
        out.push(row(
            name,
            launcher.map(str::to_string),
            module,
            matched_by,
            pair,
        ));
    }
    for (module, pair) in by_module {
        let launchers: BTreeSet<&str> = pair
            .iter()
            .flatten()
            .flat_map(|a| a.launchers.iter().copied())
            .collect();
        let launcher = Some(launchers.into_iter().collect::<Vec<_>>().join(" | "));
        out.push(row("", launcher, Some(module), KernelMatch::Module, pair));
    }
    out.sort_by(|a, b| b.delta_us.abs().total_cmp(&a.delta_us.abs()));
    out
}

fn labels(base: &Digest, new: &Digest, sb: Scale, sn: Scale) -> Vec<LabelDiff> {
    let side = |s: Scale, l: &super::digest::DigestLabel| LabelSide {
        calls: s.count(l.calls),
        cpu_total_us: s.us(l.cpu_total_ns),
        self_cpu_us: s.us(l.self_cpu_ns),
        device_us: s.us(l.device_ns),
        gpu_span_total_us: s.us(l.gpu_span_total_ns),
    };
    let mut pairs: BTreeMap<&str, (Option<LabelSide>, Option<LabelSide>)> = BTreeMap::new();
    for l in &base.labels {
        pairs.entry(&l.name).or_default().0 = Some(side(sb, l));
    }
    for l in &new.labels {
        pairs.entry(&l.name).or_default().1 = Some(side(sn, l));
    }
    let zero = LabelSide {
        calls: Count(0.0),
        cpu_total_us: 0.0,
        self_cpu_us: 0.0,
        device_us: 0.0,
        gpu_span_total_us: 0.0,
    };
    let mut out: Vec<LabelDiff> = pairs
        .into_iter()
        .map(|(name, (b, n))| {
            let status = Presence::of(b.is_some(), n.is_some());
            let (b, n) = (
                b.unwrap_or_else(|| zero.clone()),
                n.unwrap_or_else(|| zero.clone()),
            );
            LabelDiff {
                name: name.to_string(),
                status,
                delta_cpu_total_us: n.cpu_total_us - b.cpu_total_us,
                delta_device_us: n.device_us - b.device_us,
                ratio_cpu_total: ratio(b.cpu_total_us, n.cpu_total_us),
                base: b,
                new: n,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let size = |r: &LabelDiff| r.delta_cpu_total_us.abs() + r.delta_device_us.abs();
        size(b).total_cmp(&size(a))
    });
    out
}

fn idle_side(d: &Digest, s: Scale) -> IdleSide {
    let sum = |f: fn(&super::digest::DigestDevice) -> i64| s.us(d.idle.devices.iter().map(f).sum());
    IdleSide {
        devices: d.idle.devices.len(),
        window_us: sum(|x| x.window_ns),
        idle_us: sum(|x| x.idle_ns),
        host_wait_us: sum(|x| x.host_wait_ns),
        compute_us: sum(|x| x.compute_ns),
        non_compute_us: sum(|x| x.non_compute_ns),
    }
}

fn idle(base: &Digest, new: &Digest, sb: Scale, sn: Scale) -> IdleDiff {
    let (b, n) = (idle_side(base, sb), idle_side(new, sn));
    let delta = IdleSide {
        devices: n.devices.abs_diff(b.devices),
        window_us: n.window_us - b.window_us,
        idle_us: n.idle_us - b.idle_us,
        host_wait_us: n.host_wait_us - b.host_wait_us,
        compute_us: n.compute_us - b.compute_us,
        non_compute_us: n.non_compute_us - b.non_compute_us,
    };
    let mut waits: Vec<WaitDiff> = Vec::new();
    for (w, is_new) in base
        .idle
        .waits
        .iter()
        .map(|w| (w, false))
        .chain(new.idle.waits.iter().map(|w| (w, true)))
    {
        let row = match waits.iter_mut().find(|x| x.kind == w.kind) {
            Some(r) => r,
            None => {
                waits.push(WaitDiff {
                    kind: w.kind.clone(),
                    phrase: w.phrase.clone(),
                    base_us: 0.0,
                    new_us: 0.0,
                    delta_us: 0.0,
                });
                waits.last_mut().expect("just pushed")
            }
        };
        if is_new {
            row.new_us = sn.us(w.ns);
        } else {
            row.base_us = sb.us(w.ns);
        }
        row.delta_us = row.new_us - row.base_us;
    }
    // Largest first (by the larger side), so that the order does not depend on which is BASE.
    waits.sort_by(|x, y| {
        y.base_us
            .abs()
            .max(y.new_us.abs())
            .total_cmp(&x.base_us.abs().max(x.new_us.abs()))
            .then_with(|| x.kind.cmp(&y.kind))
    });
    IdleDiff {
        base: b,
        new: n,
        delta,
        waits,
    }
}

/// The rank of a severity word, for "which is worse".
fn severity_rank(s: &str) -> u8 {
    match s {
        "critical" => 2,
        "warning" => 1,
        _ => 0,
    }
}

/// One finding per id: the first with the highest severity.
fn by_id(fs: &[DigestFinding]) -> BTreeMap<&str, &DigestFinding> {
    let mut out: BTreeMap<&str, &DigestFinding> = BTreeMap::new();
    for f in fs {
        let e = out.entry(&f.id).or_insert(f);
        if severity_rank(&f.severity) > severity_rank(&e.severity) {
            *e = f;
        }
    }
    out
}

fn findings(base: &Digest, new: &Digest) -> FindingsDiff {
    let (b, n) = (by_id(&base.findings), by_id(&new.findings));
    // A finding of one side, with its figures where both sides measured them.
    let one = |f: &DigestFinding, added: bool| {
        let crossed = match (base.measured.get(&f.id), new.measured.get(&f.id)) {
            (Some(mb), Some(mn)) => Crossed::of(mb, mn, if added { mn } else { mb }),
            _ => None,
        };
        FindingDiff {
            finding: f.clone(),
            crossed,
        }
    };
    let mut out = FindingsDiff {
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
    };
    for (id, f) in &n {
        match b.get(id) {
            None => out.added.push(one(f, true)),
            Some(old) if old.severity != f.severity => out.changed.push(FindingChange {
                id: id.to_string(),
                title: f.title.clone(),
                base_severity: old.severity.clone(),
                new_severity: f.severity.clone(),
                base_detail: old.detail.clone(),
                new_detail: f.detail.clone(),
                measured: match (base.measured.get(*id), new.measured.get(*id)) {
                    (Some(mb), Some(mn)) => Moved::of(mb, mn),
                    _ => None,
                },
            }),
            Some(_) => {}
        }
    }
    out.removed = b
        .iter()
        .filter(|(id, _)| !n.contains_key(*id))
        .map(|(_, f)| one(f, false))
        .collect();
    out
}

impl FindingChange {
    /// Whether NEW's severity is higher than BASE's.
    pub fn worse(&self) -> bool {
        severity_rank(&self.new_severity) > severity_rank(&self.base_severity)
    }
}
