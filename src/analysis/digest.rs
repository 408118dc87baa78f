//! The digest of one trace: its analyses in a compact, serializable form, the interface between
//! single-trace and cross-trace analyses. `sightline diff` reads two digests; the Python package
//! and cross-rank analyses read the same structure.
//!
//! A digest holds what comparisons need and nothing that points into the trace (no slice
//! references, no evidence): counts, the step breakdown per step, the operator table (also by
//! input shape), GPU ops by name and launching operator, `record_function` labels, the idle
//! breakdown with what the CPU was doing while the GPU waited, and the findings. Every figure is
//! taken from the analysis that computes it for a single trace ([`super::tables`],
//! [`super::steps`], [`super::idle`], [`super::findings`]); nothing is recomputed here.
//!
//! Times are integer nanoseconds, totals over the whole trace; `steps.active` is the divisor for
//! per-step figures. The tables report microseconds as `ns / 1000` in `f64`, which converts back
//! to the same integer exactly (every duration is far below 2^53 ns).
//!
//! Kernels carry their launching operator and, where `with_modules` recorded it, the innermost
//! `nn.Module` around that operator: what lets a diff pair "the GEMMs of `aten::addmm` in
//! `Linear_3`" when two libraries name those GEMMs differently.
//!
//! `measured` keeps what the rules with one primary figure measured against their threshold,
//! whether they fired or not, so that a diff can tell a finding that crossed its threshold from
//! one that appeared; `dataloader_self_cpu` the operators' self CPU time inside DataLoader spans,
//! which the step breakdown counts as DataLoader time (the diff's explanation keeps it out of CPU
//! Exec). Digests written before either was kept read with them empty.
//!
//! `distributed` is the trace as one rank of a job ([`Distributed`], defined in
//! [`super::ranks::digest`]): rank, host, clock origin, compute and communication, collective
//! instances. The cross-rank analyses ([`super::ranks::analyze`]) read whole digests, so one digest
//! per trace serves `diff`, `ranks`, the Python package and the page. A digest written before that
//! section existed reads with an empty one (no rank, no collectives).

use super::critical::{self, StepPath};
use super::findings::Found;
use super::idle::IdleReport;
use super::links::Links;
use super::ranks::digest::{distributed, Distributed};
use super::steps::{is_dataloader, Breakdown, StepsReport};
use super::tables::tree::{EventKind, NO_NODE};
use super::tables::{label_table, op_table, Forest, OpTable};
use crate::model::Trace;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The format's version: bumped when a field changes meaning or goes away.
pub const DIGEST_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Digest {
    pub version: u32,
    pub summary: DigestSummary,
    pub steps: DigestSteps,
    /// The operator table (`key_averages()`), one row per name and kind.
    pub ops: Vec<DigestOp>,
    /// The same, grouped by input shapes too (`group_by_input_shape=True`).
    pub ops_by_shape: Vec<DigestOp>,
    /// GPU ops by (name, launching operator, module); most time first.
    pub kernels: Vec<DigestKernel>,
    pub labels: Vec<DigestLabel>,
    pub idle: DigestIdle,
    pub findings: Vec<DigestFinding>,
    #[serde(default)]
    pub distributed: Distributed,
    /// Self CPU time of the operators and annotations inside DataLoader spans
    /// ([`super::steps::is_dataloader`]), by name, most first: the part of the operator table's
    /// self CPU time that the step breakdown counts as DataLoader time, not CPU Exec (the diff's
    /// explanation takes it off). Empty in a digest written before it was kept.
    #[serde(default)]
    pub dataloader_self_cpu: Vec<(String, i64)>,
    /// What the rules with one primary figure measured against their threshold, fired or not, by
    /// rule id: what lets a diff tell a finding that crossed its threshold from one that
    /// appeared. Empty in a digest written before it was kept.
    #[serde(default)]
    pub measured: BTreeMap<String, DigestMeasure>,
}

/// A rule's figure and the threshold it is compared against, in one unit: `share` (a fraction:
/// 0.15 is 15%), `pct`, `times`, `count`, `ns` or `bytes` ([`crate::analysis::findings::types::Value`]),
/// to six decimals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestMeasure {
    pub value: f64,
    pub threshold: f64,
    pub unit: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestSummary {
    pub schema: String,
    pub rank: i64,
    pub span_ns: i64,
    pub events: u64,
    pub lanes: usize,
    /// GPU devices with busy time.
    pub devices: usize,
    /// Kernels, memcpy and memset, and their summed duration.
    pub gpu_ops: u64,
    pub gpu_time_ns: i64,
    /// GPU time no link leads to an operator for.
    pub unattributed_gpu_ns: i64,
    /// Kinds of damage the parser salvaged.
    pub diagnostics: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestSteps {
    /// `ProfilerStep#N` steps kept by the step analysis; 1 for a trace without any (one
    /// synthetic step stands for the whole trace), so per-step figures always divide by it.
    pub active: usize,
    pub synthetic: bool,
    /// Sum of the steps' lengths (their `ProfilerStep` spans; see `DigestStep::length_ns`).
    pub total_ns: i64,
    /// The TensorBoard plugin's breakdown summed over the steps.
    pub breakdown: DigestBreakdown,
    pub per_step: Vec<DigestStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestStep {
    pub name: String,
    pub number: Option<i64>,
    /// The `ProfilerStep#N` slice's start on the CPU (`start_ns` is the step extended to its GPU
    /// work, as the TensorBoard plugin extends it).
    #[serde(default)]
    pub cpu_start_ns: i64,
    pub start_ns: i64,
    /// The plugin's span: the step extended to its GPU work.
    pub dur_ns: i64,
    /// The step's length, its `ProfilerStep` span ([`crate::analysis::steps::Step::length_ns`]);
    /// 0 in a digest written before it was kept.
    #[serde(default)]
    pub length_ns: i64,
    pub gpu_ops: usize,
    pub breakdown: DigestBreakdown,
    /// What bounds the step: its critical path's longest parts, by slice and category, most time
    /// first (at most [`PATH_ITEMS`]); the straggler findings quote it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<DigestPathItem>,
}

impl DigestStep {
    /// The step's length: its `ProfilerStep` span, the one length every view uses; in a digest
    /// written before it was kept, the plugin's span.
    pub fn length(&self) -> i64 {
        if self.length_ns > 0 {
            self.length_ns
        } else {
            self.dur_ns
        }
    }
}

/// How many of a step's critical path parts a digest keeps.
pub const PATH_ITEMS: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestPathItem {
    /// The slice the time is charged to (empty for time in no slice).
    pub name: String,
    /// Its [`crate::analysis::critical`] category (`cpu_op`, `gpu_compute`, ...).
    pub bound_by: String,
    pub ns: i64,
}

/// [`Breakdown`], as a list of (category, ns) in the plugin's priority order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestBreakdown(pub Vec<(String, i64)>);

impl From<&Breakdown> for DigestBreakdown {
    fn from(b: &Breakdown) -> Self {
        DigestBreakdown(
            b.fields()
                .iter()
                .map(|&(k, ns)| (k.to_string(), ns))
                .collect(),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestOp {
    pub name: String,
    /// `op`, `annotation`, `runtime` or `memory`, as the operator table keys rows.
    pub kind: String,
    /// `Input Dims` as Python prints the list; only in `ops_by_shape`. Written as a JSON list of
    /// lists of numbers, read from that (or the printed text).
    #[serde(with = "crate::analysis::tables::ops::dims_json")]
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown> | string | null"))]
    pub input_shapes: Option<String>,
    pub calls: u64,
    pub self_cpu_ns: i64,
    pub cpu_total_ns: i64,
    pub self_device_ns: i64,
    pub device_total_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestKernel {
    pub name: String,
    /// `computation`, `memory` or `communication` (HTA's classes).
    pub kind: String,
    /// The operator (or label) charged with it; `None` when no link leads to one.
    pub launcher: Option<String>,
    /// The innermost `nn.Module: ...` frame around the launcher, when recorded.
    pub module: Option<String>,
    pub calls: u64,
    pub total_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestLabel {
    pub name: String,
    pub calls: u64,
    pub cpu_total_ns: i64,
    pub self_cpu_ns: i64,
    /// GPU time of the GPU ops launched inside the label.
    pub device_ns: i64,
    pub gpu_calls: u64,
    pub gpu_span_total_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestIdle {
    pub devices: Vec<DigestDevice>,
    /// Idle time of all devices by what the CPU was doing ([`idle::WaitKind`]), in the analysis'
    /// order; kinds with no time are left out.
    pub waits: Vec<DigestWait>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestDevice {
    pub device: i64,
    pub window_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub compute_ns: i64,
    pub non_compute_ns: i64,
    /// Idle time in gaps whose launch came after the gap began (the GPU waited for the host).
    pub host_wait_ns: i64,
    pub gaps: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestWait {
    /// The [`idle::WaitKind`] in snake case (`data_loader`, `sync`, ...).
    pub kind: String,
    /// How the page and the CLI say it ("the DataLoader").
    pub phrase: String,
    pub ns: i64,
    pub gaps: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DigestFinding {
    pub id: String,
    /// `info`, `warning` or `critical`.
    pub severity: String,
    pub title: String,
    /// The sentence with the numbers.
    pub detail: String,
}

/// Microseconds from a table back to the nanoseconds they were computed from.
fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

/// `x` to six decimals: a short decimal reads back as the same `f64` (an exact integer over a
/// power of ten, which serde_json parses exactly), where a float's full digits may not, and a
/// digest must read back as it was written.
fn six_decimals(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// A serde enum's snake-case word (`EventKind::Op` -> `op`).
fn word<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl Digest {
    /// The digest of analyses already run (as the page runs them once per trace).
    pub fn from_analyses(trace: &Trace, a: &Analyses, file: &str) -> Digest {
        let Analyses {
            links,
            forest,
            steps,
            idle,
            found,
            critical,
        } = *a;
        Digest {
            version: DIGEST_VERSION,
            summary: summary(trace, forest, idle),
            steps: digest_steps(
                steps,
                &critical.map_or_else(Vec::new, |c| c.paths(trace, links)),
            ),
            ops: ops(&op_table(trace, forest, false)),
            ops_by_shape: ops(&op_table(trace, forest, true)),
            kernels: kernels(trace, forest),
            labels: label_table(trace, forest)
                .rows
                .into_iter()
                .map(|r| DigestLabel {
                    name: r.name,
                    calls: r.calls,
                    cpu_total_ns: ns(r.cpu_total_us),
                    self_cpu_ns: ns(r.self_cpu_us),
                    device_ns: ns(r.device_us),
                    gpu_calls: r.gpu_calls,
                    gpu_span_total_ns: ns(r.gpu_span_total_us),
                })
                .collect(),
            idle: DigestIdle {
                devices: idle
                    .devices
                    .iter()
                    .map(|d| DigestDevice {
                        device: d.device,
                        window_ns: d.window_ns,
                        busy_ns: d.busy_ns,
                        idle_ns: d.idle_ns,
                        compute_ns: d.compute_ns,
                        non_compute_ns: d.non_compute_ns,
                        host_wait_ns: d.host_wait_ns,
                        gaps: d.gaps,
                    })
                    .collect(),
                waits: idle
                    .waits
                    .iter()
                    .filter(|w| w.ns > 0)
                    .map(|w| DigestWait {
                        kind: word(&w.kind),
                        phrase: w.kind.phrase().to_string(),
                        ns: w.ns,
                        gaps: w.gaps,
                    })
                    .collect(),
            },
            findings: found
                .findings
                .iter()
                .map(|f| DigestFinding {
                    id: f.id.to_string(),
                    severity: word(&f.severity),
                    title: f.title.clone(),
                    detail: f.detail.clone(),
                })
                .collect(),
            distributed: distributed(trace, links, steps, file),
            dataloader_self_cpu: dataloader_self_cpu(trace, forest),
            measured: found
                .measured
                .iter()
                .map(|m| {
                    let measure = DigestMeasure {
                        value: six_decimals(m.value.number()),
                        threshold: six_decimals(m.threshold.value.number()),
                        unit: m.value.unit().to_string(),
                    };
                    (m.rule.to_string(), measure)
                })
                .collect(),
        }
    }

    /// The `ProfilerStep#N` steps; none for a trace without any (the synthetic step is left out).
    pub fn real_steps(&self) -> &[DigestStep] {
        if self.steps.synthetic {
            &[]
        } else {
            &self.steps.per_step
        }
    }

    /// Idle time of all devices in gaps the host caused (0 for a trace without GPU work).
    pub fn host_wait_idle_ns(&self) -> i64 {
        self.idle.devices.iter().map(|d| d.host_wait_ns).sum()
    }

    /// The number per-step figures divide by (never 0).
    pub fn active_steps(&self) -> usize {
        self.steps.active.max(1)
    }
}

/// The analyses a digest is made of, run once on one trace.
#[derive(Clone, Copy)]
pub struct Analyses<'a> {
    pub links: &'a Links,
    pub forest: &'a Forest,
    pub steps: &'a StepsReport,
    pub idle: &'a IdleReport,
    /// The findings, and what the rules measured.
    pub found: &'a Found,
    /// The steps' critical-path graph (default options); `None` when it cannot be built.
    pub critical: Option<&'a critical::Analysis>,
}

fn summary(trace: &Trace, forest: &Forest, idle: &IdleReport) -> DigestSummary {
    DigestSummary {
        schema: trace.meta.schema.clone(),
        rank: trace.rank(),
        span_ns: trace.span_ns(),
        events: trace.stats.events_total,
        lanes: trace.lanes.len(),
        devices: idle.devices.len(),
        gpu_ops: forest.gpu_ops.len() as u64,
        gpu_time_ns: forest.gpu_time_ns,
        unattributed_gpu_ns: forest.unattributed_ns,
        diagnostics: trace.diagnostics.items.len(),
    }
}

/// A path's longest parts, by slice name and category.
fn path_items(p: &StepPath) -> Vec<DigestPathItem> {
    let mut by: FxHashMap<(&str, &str), i64> = FxHashMap::default();
    for s in &p.segments {
        *by.entry((s.name.as_str(), s.bound_by)).or_default() +=
            ((s.end_us - s.start_us) * 1e3).round() as i64;
    }
    let mut items: Vec<DigestPathItem> = by
        .into_iter()
        .map(|((name, bound_by), ns)| DigestPathItem {
            name: name.to_string(),
            bound_by: bound_by.to_string(),
            ns,
        })
        .collect();
    items.sort_by(|a, b| (b.ns, &a.name, &a.bound_by).cmp(&(a.ns, &b.name, &b.bound_by)));
    items.truncate(PATH_ITEMS);
    items
}

fn digest_steps(steps: &StepsReport, paths: &[StepPath]) -> DigestSteps {
    DigestSteps {
        active: steps.steps.len().max(1),
        synthetic: steps.synthetic,
        total_ns: steps.steps.iter().map(|s| s.length_ns).sum(),
        breakdown: (&steps.total).into(),
        per_step: steps
            .steps
            .iter()
            .map(|s| DigestStep {
                name: s.name.clone(),
                number: s.number,
                cpu_start_ns: s.cpu_start_ns,
                start_ns: s.start_ns,
                dur_ns: s.dur_ns,
                length_ns: s.length_ns,
                gpu_ops: s.gpu_ops,
                breakdown: (&s.breakdown).into(),
                path: paths
                    .iter()
                    .find(|p| p.step == s.name)
                    .map(path_items)
                    .unwrap_or_default(),
            })
            .collect(),
    }
}

fn ops(table: &OpTable) -> Vec<DigestOp> {
    table
        .rows
        .iter()
        .map(|r| DigestOp {
            name: r.name.clone(),
            kind: word(&r.kind),
            input_shapes: r.input_shapes.clone(),
            calls: r.calls,
            self_cpu_ns: ns(r.self_cpu_us),
            cpu_total_ns: ns(r.cpu_total_us),
            self_device_ns: ns(r.self_device_us),
            device_total_ns: ns(r.device_total_us),
        })
        .collect()
}

/// GPU ops grouped by name, the operator the [`Forest`] charged them to, and the innermost module
/// frame above that operator.
fn kernels(trace: &Trace, forest: &Forest) -> Vec<DigestKernel> {
    const MODULE: &str = "nn.Module: ";
    // (name, launcher, module) -> (calls, ns)
    type Key<'a> = (&'a str, Option<&'a str>, Option<&'a str>);
    let mut groups: FxHashMap<Key, (u64, i64)> = FxHashMap::default();
    for op in &forest.gpu_ops {
        let s = trace.slices(op.slice.lane as usize);
        let i = op.slice.index as usize;
        let (launcher, module) = match op.launch {
            None => (None, None),
            Some(l) => {
                let t = forest.tree(l.op.tree as usize);
                let mut module = None;
                let mut n = t.parent[l.op.node as usize];
                while n != NO_NODE {
                    let name = t.name[n as usize].as_str(trace);
                    if t.kind[n as usize] == EventKind::Python && name.starts_with(MODULE) {
                        module = Some(name);
                        break;
                    }
                    n = t.parent[n as usize];
                }
                (Some(t.name[l.op.node as usize].as_str(trace)), module)
            }
        };
        let g = groups
            .entry((trace.str(s.name[i]), launcher, module))
            .or_default();
        g.0 += 1;
        g.1 += s.dur_ns[i];
    }
    let mut out: Vec<DigestKernel> = groups
        .into_iter()
        .map(
            |((name, launcher, module), (calls, total_ns))| DigestKernel {
                name: name.to_string(),
                kind: super::tables::kernels::kernel_kind(name)
                    .as_str()
                    .to_string(),
                launcher: launcher.map(str::to_string),
                module: module.map(str::to_string),
                calls,
                total_ns,
            },
        )
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| (&a.name, &a.launcher, &a.module).cmp(&(&b.name, &b.launcher, &b.module)))
    });
    out
}

/// Self CPU time of operators and annotations under a DataLoader span, by name, most first.
fn dataloader_self_cpu(trace: &Trace, forest: &Forest) -> Vec<(String, i64)> {
    let mut by: FxHashMap<&str, i64> = FxHashMap::default();
    for t in forest.trees() {
        // A parent comes before its children, so one pass settles each node from its parent.
        let mut under = vec![false; t.len()];
        for x in 0..t.len() {
            let p = t.parent[x];
            under[x] = p != NO_NODE
                && (under[p as usize] || is_dataloader(t.name[p as usize].as_str(trace)));
            if under[x]
                && !t.folded[x]
                && matches!(t.kind[x], EventKind::Op | EventKind::Annotation)
            {
                *by.entry(t.name[x].as_str(trace)).or_default() += t.self_cpu_ns[x];
            }
        }
    }
    let mut out: Vec<(String, i64)> = by
        .into_iter()
        .filter(|&(_, ns)| ns != 0)
        .map(|(name, ns)| (name.to_string(), ns))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}
