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
//! - `gpu_starved_by_cpu`, `low_gpu_utilization`: the host work the device waited for made free
//!   (a bound), or context under the finding that prices their cause ([`CONTEXT`]);
//! - `small_kernels`: launches batched as a CUDA/HIP graph would batch them (`launches=0`, an
//!   estimate);
//! - the hotspots ([`super::hotspot`]): the operator, the allocator's calls or the host's waits
//!   made free (bounds).
//!
//! Other findings (settings, memory, compile graphs) name no single duration to change, and carry
//! no saving.
//!
//! A finding whose fix saves less than [`MIN_WARNING_PCT`] of the step is told as `info`, whatever
//! its own severity: a warning that buys nothing is noise. Savings read as the page prints
//! durations ([`duration`]): three significant digits, in µs below 1 ms.

use super::graph::EdgeKind;
use super::hotspot;
use super::whatif::{self, Edit};
use super::Analysis;
use crate::analysis::columns::{Column, Row, Sort, Type, Unit, SLICE_REF};
use crate::analysis::findings::{
    reference, Finding, Pricing, Severity, DEVICE_EVENTS_LOST, GPU_STARVED_BY_CPU,
    LOW_GPU_UTILIZATION,
};
use crate::analysis::flops::rules::{LAUNCH_BOUND_PCT, SMALL_KERNELS};
use crate::analysis::links::Links;
use crate::analysis::slicing::Slicer;
use crate::model::Trace;
use serde::Serialize;

/// A finding with what its fix would save.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Assessed {
    #[serde(flatten)]
    pub finding: Finding,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub saving: Option<Saving>,
    /// Findings told as context of this one, the priced finding that names their cause: "GPU 0
    /// waits for the CPU (gpu_starved_by_cpu): ..." ([`CONTEXT`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub context: Vec<String>,
}

impl Row for Assessed {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "id",
            "Rule",
            Unit::Text,
            "The rule that found it (`docs/findings.md`); stable, CI gates read it",
        ),
        Column::new(
            "severity",
            "Severity",
            Unit::Text,
            "`critical`, `warning` or `info` (a fix that saves under 1% of the step is `info`)",
        ),
        Column::new("title", "Finding", Unit::Text, "What was found, in a line"),
        Column::new(
            "detail",
            "Detail",
            Unit::Text,
            "A sentence with the numbers",
        ),
        Column::new("advice", "Advice", Unit::Text, "What to do about it"),
        Column::new(
            "evidence",
            "Evidence",
            Unit::Data,
            "What a viewer can jump to: slices (`{lane, index}`) and time ranges",
        )
        .typed(EVIDENCE),
        Column::new(
            "saving",
            "Saving",
            Unit::Data,
            "What the fix saves per step, replayed as what-if edits on the step graph: the edits, \
             the mean time saved per step and its share of the mean step, the sentence, and \
             whether it is a bound or an estimate rather than the fix's best case",
        )
        .typed(SAVING)
        .sometimes(),
        Column::new(
            "context",
            "Context",
            Unit::Data,
            "Findings told as context of this one, which prices their cause",
        )
        .typed(Type::List(&Type::Str))
        .sometimes(),
    ];
    const SORT: Sort = Sort::Ranked(
        "a damaged trace's finding first, then the time each fix saves per step, largest \
         first, then the rest by severity",
    );
}

/// An [`Evidence`](crate::analysis::findings::Evidence) as its JSON holds it.
const EVIDENCE: Type = Type::Struct(&[
    ("slices", Type::List(&SLICE_REF)),
    (
        "ranges",
        Type::List(&Type::Struct(&[
            ("start_ns", Type::Int),
            ("end_ns", Type::Int),
        ])),
    ),
]);

/// A [`Saving`] as its JSON holds it.
const SAVING: Type = Type::Struct(&[
    ("edits", Type::List(&Type::Str)),
    ("per_step_us", Type::Float),
    ("pct", Type::Float),
    ("sentence", Type::Str),
    ("bound", Type::Bool),
]);

/// Findings that describe a symptom (the device idle, waiting for the host): where another
/// finding prices a cause worth a warning, they are context under the largest such one; where
/// none does, they stand alone, priced by their own what-if (the host work made free).
pub const CONTEXT: [&str; 2] = [GPU_STARVED_BY_CPU.id, LOW_GPU_UTILIZATION.id];

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Saving {
    /// The what-if edits that stand for the fix.
    pub edits: Vec<String>,
    /// Mean time saved per step, and its share of the mean step.
    pub per_step_us: f64,
    pub pct: f64,
    /// "Fixing this saves about 12.3 ms per step (8.1%)."
    pub sentence: String,
    /// The saving is a bound (the work made free) or an estimate, not a fix's best case.
    /// Written when false too: the declared `saving` object has the same members in every row.
    pub bound: bool,
}

/// Below this share of the step (in percent), a saving makes its finding `info`.
pub const MIN_WARNING_PCT: f64 = 1.0;

/// The findings with their savings, the largest first; those without one keep their order
/// after. `analysis` is the critical-path graph of the default path options (`None`: no finding
/// is priced); on it, the hotspots ([`hotspot`]) join the findings where their bound is worth
/// one. Pauses as `y` says: the page prices the fixes between frames.
pub async fn assess_with_sliced(
    trace: &Trace,
    links: &Links,
    analysis: Option<&Analysis>,
    findings: Vec<Finding>,
    y: &mut Slicer,
) -> Vec<Assessed> {
    let mut findings = findings;
    // A trace whose devices lost their events has no device side to its paths: no hotspot is
    // read off them.
    let lost = findings.iter().any(|f| f.id == DAMAGE);
    if let Some(a) = analysis.filter(|_| !lost) {
        let found = hotspot::candidates(trace, links, a, &findings);
        findings.extend(found);
        launch_bound(trace, a, &mut findings);
        y.tick(trace.slice_count() as u64).await;
    }
    // The symptoms ([`CONTEXT`]) are priced only where no cause is: their what-ifs (the host
    // work made free) would be replayed for nothing where they end up as context.
    let symptom = |f: &Finding| CONTEXT.contains(&f.id);
    let causes: Vec<Finding> = findings.iter().filter(|f| !symptom(f)).cloned().collect();
    let mut savings = match analysis {
        Some(a) => price(trace, a, &causes, y).await,
        None => vec![None; causes.len()],
    };
    let caused = causes
        .iter()
        .zip(&savings)
        .any(|(f, s)| is_cause(f, s.as_ref()));
    let symptoms: Vec<Finding> = findings.iter().filter(|f| symptom(f)).cloned().collect();
    let mut priced_symptoms = match analysis {
        Some(a) if !caused && !symptoms.is_empty() => price(trace, a, &symptoms, y).await,
        _ => vec![None; symptoms.len()],
    }
    .into_iter();
    // Back in the findings' order.
    let mut priced_causes = std::mem::take(&mut savings).into_iter();
    let savings: Vec<Option<Saving>> = findings
        .iter()
        .map(|f| {
            if symptom(f) {
                priced_symptoms.next().flatten()
            } else {
                priced_causes.next().flatten()
            }
        })
        .collect();
    let mut out: Vec<Assessed> = findings
        .into_iter()
        .zip(savings)
        .filter(|(f, saving)| kept(f, saving.as_ref()))
        .map(|(finding, saving)| {
            let mut finding = finding;
            if saving.as_ref().is_some_and(|s| s.pct < MIN_WARNING_PCT) {
                finding.severity = Severity::Info;
            }
            Assessed {
                finding,
                saving,
                context: Vec::new(),
            }
        })
        .collect();
    let top = (0..out.len())
        .filter(|&k| is_cause(&out[k].finding, out[k].saving.as_ref()))
        .filter_map(|k| out[k].saving.as_ref().map(|s| (k, s.per_step_us)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    if let Some((top, _)) = top {
        let mut context = Vec::new();
        let mut kept: Vec<Assessed> = Vec::with_capacity(out.len());
        let mut at = 0;
        for (k, a) in out.into_iter().enumerate() {
            if CONTEXT.contains(&a.finding.id) {
                let f = &a.finding;
                context.push(format!("{} ({}): {}", f.title, f.id, f.detail));
                continue;
            }
            if k == top {
                at = kept.len();
            }
            kept.push(a);
        }
        kept[at].context = context;
        out = kept;
    }
    // The damage first; costs before the notes on how the trace was recorded, which never
    // outrank one; among costs, every finding with a measurable saving first, the largest first
    // (a saving too small to warn about is still a saving, and one without a price says nothing
    // of its size); then the rest by severity. Stable: ties keep the findings' own order.
    out.sort_by(|a, b| {
        let s = |x: &Assessed| {
            x.saving
                .as_ref()
                .filter(|s| measurable(s.per_step_us))
                .map_or(-1.0, |s| s.per_step_us)
        };
        let damage = |x: &Assessed| x.finding.id != DAMAGE;
        damage(a)
            .cmp(&damage(b))
            .then(a.finding.is_recording().cmp(&b.finding.is_recording()))
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
    // Only the findings with an edit are replayed, and each distinct set of edits once: a
    // finding per device (`low_gpu_utilization` on 80,000 device processes) shares one what-if,
    // and a set per finding had been a replay, and a factor per edge, each.
    let mut set_of: Vec<Option<usize>> = vec![None; findings.len()];
    let mut distinct: Vec<usize> = Vec::new();
    let mut seen: rustc_hash::FxHashMap<&[String], usize> = Default::default();
    for (k, f) in findings.iter().enumerate() {
        if edits[k].is_empty() {
            continue;
        }
        set_of[k] = Some(*seen.entry(f.whatif.as_slice()).or_insert_with(|| {
            distinct.push(k);
            distinct.len() - 1
        }));
    }
    let sets: Vec<&[Edit]> = distinct.iter().map(|&k| edits[k].as_slice()).collect();
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
    // Each distinct set's predictions (none where its edits matched nothing).
    let predicted: Vec<Option<Vec<whatif::Prediction>>> = used
        .iter()
        .map(|u| {
            if u.is_empty() {
                None
            } else {
                predictions.next()
            }
        })
        .collect();
    // A trace without steps is priced as one window: its sentences say "the trace".
    let whole = a.windows.first().is_some_and(|w| w.name == "(whole trace)");
    (0..findings.len())
        .map(|k| {
            let d = set_of[k]?;
            let p = predicted[d].as_ref()?;
            Some(saving(p, used[d].clone(), pricing(findings[k].id), whole))
        })
        .collect()
}

/// Whether a priced finding is kept: a hotspot is a finding only where its bound is worth one.
fn kept(f: &Finding, saving: Option<&Saving>) -> bool {
    !hotspot::IDS.contains(&f.id) || saving.is_some_and(|s| s.pct >= hotspot::HOTSPOT_PCT)
}

/// Whether a priced finding is a cause the symptoms ([`CONTEXT`]) are told under: kept, no
/// symptom nor recording note itself, and saving at least [`MIN_WARNING_PCT`] of the step. The
/// one test of both where the symptoms are priced and where they are folded, so that a symptom
/// is never left unpriced for a cause that is then dropped.
fn is_cause(f: &Finding, saving: Option<&Saving>) -> bool {
    kept(f, saving)
        && !CONTEXT.contains(&f.id)
        && !f.is_recording()
        && saving.is_some_and(|s| s.pct >= MIN_WARNING_PCT)
}

/// The finding that says what no figure can be trusted for (the devices lost their events): it
/// ranks first, whatever the others save.
const DAMAGE: &str = DEVICE_EVENTS_LOST.id;

/// Whether a saving per step reads as more than nothing (half a ns, the page's last digit).
fn measurable(per_step_us: f64) -> bool {
    per_step_us * 1e3 >= 0.5
}

/// What a finding's what-if stands for, as its rule declares it.
fn pricing(id: &str) -> Pricing {
    reference::rule(id).map_or(Pricing::Fix, |r| r.pricing)
}

fn saving(
    predictions: &[whatif::Prediction],
    edits: Vec<String>,
    pricing: Pricing,
    whole: bool,
) -> Saving {
    let n = predictions.len() as f64;
    let measured: f64 = predictions.iter().map(|p| p.measured_us).sum();
    let saved: f64 = predictions.iter().map(|p| p.saving_us).sum();
    let per_step_us = saved / n;
    let pct = if measured > 0.0 {
        100.0 * saved / measured
    } else {
        0.0
    };
    let d = crate::units::duration(per_step_us * 1e3);
    let (per, each) = if whole {
        ("over the trace", "the trace")
    } else {
        ("per step", "each step")
    };
    Saving {
        sentence: match (measurable(per_step_us), pricing) {
            (false, _) => format!("Fixing this saves nothing measurable {per}."),
            // A rule priced without declaring it reads as a fix (the reference's test fails).
            (true, Pricing::Fix | Pricing::None) => {
                format!("Fixing this saves about {d} {per} ({pct:.1}%).")
            }
            (true, Pricing::Bound) => format!(
                "If this took no time, {each} would be about {d} shorter ({pct:.1}%): a bound \
                 on what a fix saves, not a fix's saving."
            ),
            (true, Pricing::Estimate) => format!(
                "Batching the launches as a graph would save about {d} {per} ({pct:.1}%): an \
                 estimate (each launch's CPU call and delay taken as gone)."
            ),
        },
        bound: matches!(pricing, Pricing::Bound | Pricing::Estimate),
        edits,
        per_step_us,
        pct,
    }
}

/// Launch-bound is told from time, never from a count: where the steps' critical paths spend at
/// least [`LAUNCH_BOUND_PCT`] of the step in launch calls and launch delays, `small_kernels`
/// says so.
fn launch_bound(trace: &Trace, a: &Analysis, findings: &mut [Finding]) {
    let Some(f) = findings.iter_mut().find(|f| f.id == SMALL_KERNELS.id) else {
        return;
    };
    let g = &a.graph;
    let is_launch = trace.strings.each(|n| n.contains("Launch"));
    let (mut launch, mut total) = (0i64, 0i64);
    for w in &a.windows {
        total += g.time[w.end as usize] - g.time[w.start as usize];
        super::binding_edges(g, w, |e, from, to| {
            let named =
                |r: crate::model::SliceRef| is_launch[trace.columns.name[trace.row(r)].0 as usize];
            let launching = match (e.kind, g.slice(e)) {
                (EdgeKind::Launch, _) => true,
                (EdgeKind::Cpu, Some(r)) => !trace.lanes[r.lane as usize].is_gpu() && named(r),
                _ => false,
            };
            if launching {
                launch += to - from;
            }
        });
    }
    let pct = 100.0 * launch as f64 / total.max(1) as f64;
    if pct >= LAUNCH_BOUND_PCT {
        f.title = "Many tiny kernels: launch-bound".into();
        f.detail += &format!(
            " On the steps' critical path, launch calls and launch delays take {pct:.1}% of the \
             step: the launches, not the kernels, set the pace."
        );
    }
}
