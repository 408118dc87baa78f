//! What fixing a finding would buy: each finding whose fix is a change of durations gets a what-if
//! on the step graph, and the findings are ordered by the time their fix saves per step.
//!
//! Each rule writes the edits that stand for its advice at its best case ([`Finding::whatif`]):
//! - `dataloader_bound`: the DataLoader's `__next__` off the main thread (`DataLoader=0`);
//! - `cpu_copy_overhead`: no implicit copies (`aten::copy_`, `aten::to`, `aten::_to_copy`,
//!   `aten::contiguous` removed, with what they run);
//! - `pageable_memcpy`: pinned memory, taken as copies twice as fast (`pageable*0.5`: the
//!   copies from or to pageable memory at half their time; the CPU still waits where it did, so
//!   this is a floor);
//! - `communication_heavy`: communication hidden behind compute (`communication=0`);
//! - `dtype_round_trip`: float64 operators at float32's speed (`float64*0.5`, a floor on CPUs);
//! - `small_op_storm`: the loop's calls and the Python time between them, down to about one call
//!   of each name a step (`A|B+gaps*F`);
//! - `untraced_cpu_time`: no untraced time on the CPU (`untraced=0`);
//! - `annotation_overhead`: the ranges' own time and the time between them (`self:NAME+gaps=0`:
//!   the Python work they wrap is taken as free, right where they wrap no operator);
//! - `optimizer_step_heavy`: the step at what one fused call would cost (`Optimizer.step#X*F`).
//!
//! Other findings (settings, utilization, the CPU starving the device) name no single duration to
//! change, and carry no saving.
//!
//! A finding whose fix saves less than [`MIN_WARNING_PCT`] of the step is told as `info`, whatever
//! its own severity: a warning that buys nothing is noise. Savings read as the page prints
//! durations ([`duration`]): three significant digits, in µs below 1 ms.

use super::whatif::{self, Edit};
use super::{Analysis, PathOptions};
use crate::analysis::findings::{Finding, Severity};
use crate::analysis::links::Links;
use crate::analysis::slicing::{block_on, Slicer};
use crate::analysis::steps::StepsReport;
use crate::model::Trace;
use serde::Serialize;

/// A finding with what its fix would save.
#[derive(Debug, Clone, Serialize)]
pub struct Assessed {
    #[serde(flatten)]
    pub finding: Finding,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saving: Option<Saving>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Saving {
    /// The what-if edits that stand for the fix.
    pub edits: Vec<String>,
    /// Mean time saved per step, and its share of the mean step.
    pub per_step_us: f64,
    pub pct: f64,
    /// "Fixing this saves about 12.3 ms per step (8.1%)."
    pub sentence: String,
}

/// Below this share of the step (in percent), a saving makes its finding `info`.
pub const MIN_WARNING_PCT: f64 = 1.0;

/// A duration as the page prints it (`www/js/format.js`'s `duration`): ns, µs, ms or s, with
/// three significant digits (no decimals from 100 on).
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    let (unit, name) = if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else if a >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    let v = ns / unit;
    let d = if unit == 1.0 || v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.d$} {name}")
}

/// The findings with their savings, the largest first; those without one keep their order after.
pub fn assess(
    trace: &Trace,
    links: &Links,
    steps: &StepsReport,
    findings: Vec<Finding>,
) -> Vec<Assessed> {
    let needed = findings.iter().any(|f| !f.whatif.is_empty());
    let analysis = needed
        .then(|| Analysis::build(trace, links, steps, &PathOptions::default()).ok())
        .flatten();
    assess_with(trace, analysis.as_ref(), findings)
}

/// [`assess`] given the critical-path graph of the default path options (`None`: no finding is
/// priced).
pub fn assess_with(
    trace: &Trace,
    analysis: Option<&Analysis>,
    findings: Vec<Finding>,
) -> Vec<Assessed> {
    block_on(assess_with_sliced(
        trace,
        analysis,
        findings,
        &mut Slicer::never(),
    ))
}

/// [`assess_with`], pausing as `y` says: the page prices the fixes between frames.
pub async fn assess_with_sliced(
    trace: &Trace,
    analysis: Option<&Analysis>,
    findings: Vec<Finding>,
    y: &mut Slicer,
) -> Vec<Assessed> {
    let savings = match analysis {
        Some(a) => price(trace, a, &findings, y).await,
        None => vec![None; findings.len()],
    };
    let mut out: Vec<Assessed> = findings
        .into_iter()
        .zip(savings)
        .map(|(finding, saving)| {
            let mut finding = finding;
            if saving.as_ref().is_some_and(|s| s.pct < MIN_WARNING_PCT) {
                finding.severity = Severity::Info;
            }
            Assessed { finding, saving }
        })
        .collect();
    // Costs before the notes on how the trace was recorded, which never outrank one; among
    // costs, savings worth a warning first, the largest first; then the rest by severity (a
    // saving too small to matter ranks as the info it now is). Stable: ties keep the findings'
    // own order.
    out.sort_by(|a, b| {
        let s = |x: &Assessed| {
            x.saving
                .as_ref()
                .filter(|s| s.pct >= MIN_WARNING_PCT)
                .map_or(-1.0, |s| s.per_step_us)
        };
        a.finding
            .is_recording()
            .cmp(&b.finding.is_recording())
            .then(s(b).total_cmp(&s(a)))
            .then(b.finding.severity.cmp(&a.finding.severity))
    });
    out
}

/// [`assess`]'s list cut in two: the findings that cost time, and the notes on how the trace was
/// recorded (`findings` and `recording` of `sightline report --json`).
pub fn split(assessed: Vec<Assessed>) -> (Vec<Assessed>, Vec<Assessed>) {
    assessed
        .into_iter()
        .partition(|a| !a.finding.is_recording())
}

/// Each finding's saving (`None` for one without a what-if or whose edits match nothing). Their
/// what-ifs are priced together, as each one walks the whole graph: one pass and one replay
/// serve them all ([`whatif::factors_each`], [`whatif::predict_each`]).
async fn price(
    trace: &Trace,
    a: &Analysis,
    findings: &[Finding],
    y: &mut Slicer,
) -> Vec<Option<Saving>> {
    if a.windows.is_empty() {
        return vec![None; findings.len()];
    }
    let edits: Vec<Vec<Edit>> = findings
        .iter()
        .map(|f| {
            f.whatif
                .iter()
                .filter_map(|t| Edit::parse(t).ok())
                .collect()
        })
        .collect();
    // Only the findings with an edit are replayed.
    let priced: Vec<usize> = (0..findings.len())
        .filter(|&k| !edits[k].is_empty())
        .collect();
    let sets: Vec<&[Edit]> = priced.iter().map(|&k| edits[k].as_slice()).collect();
    let factored = whatif::factors_each_sliced(trace, a, &sets, y).await;
    // Only the edits that found something stand for the fix.
    let used: Vec<Vec<String>> = sets
        .iter()
        .zip(&factored)
        .map(|(set, (_, matched))| {
            set.iter()
                .zip(matched)
                .filter(|(_, &m)| m > 0)
                .map(|(e, _)| e.text.clone())
                .collect()
        })
        .collect();
    let replayed: Vec<&[f64]> = factored
        .iter()
        .zip(&used)
        .filter(|(_, u)| !u.is_empty())
        .map(|((f, _), _)| f.as_slice())
        .collect();
    let mut predictions = whatif::predict_each_sliced(a, &replayed, y)
        .await
        .into_iter();
    let mut out = vec![None; findings.len()];
    for (&k, used) in priced.iter().zip(used) {
        if used.is_empty() {
            continue;
        }
        let Some(p) = predictions.next() else { break };
        out[k] = Some(saving(&p, used));
    }
    out
}

fn saving(predictions: &[whatif::Prediction], edits: Vec<String>) -> Saving {
    let n = predictions.len() as f64;
    let measured: f64 = predictions.iter().map(|p| p.measured_us).sum();
    let saved: f64 = predictions.iter().map(|p| p.saving_us).sum();
    let per_step_us = saved / n;
    let pct = if measured > 0.0 {
        100.0 * saved / measured
    } else {
        0.0
    };
    Saving {
        sentence: if per_step_us * 1e3 >= 0.5 {
            format!(
                "Fixing this saves about {} per step ({pct:.1}%).",
                duration(per_step_us * 1e3)
            )
        } else {
            "Fixing this saves nothing measurable per step.".into()
        },
        edits,
        per_step_us,
        pct,
    }
}
