//! Where a step's CPU time goes when no single operator is slow: Python loops of tiny operators,
//! time outside every operator, annotations in tight loops, and an optimizer that updates its
//! parameters one tensor at a time.

use super::super::context::{
    duration, evidence_of, pct, share, Context, StepLane, MAX_EVIDENCE, NONE,
};
use super::super::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::backend::{self, Backend};
use crate::analysis::links::Kind;
use crate::analysis::origin::origins;
use crate::analysis::ranks::intervals;
use crate::model::{SliceRef, StrId, Trace};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;

/// What an element of a parameter costs a fused optimizer kernel on a CPU: one pass that reads
/// the parameter, its gradient and two states and writes three (28 bytes at about 30 GB/s). It
/// only matters for large tensors, whose per-tensor calls are mostly this work.
const NS_PER_ELEMENT: f64 = 1.0;

/// Elements of the first tensor of an `Input Dims` text (`[[32, 32], [32], []]`); `None` when
/// there are no shapes or the first input is not a tensor.
fn first_elements(dims: &str) -> Option<i64> {
    let inner = dims.strip_prefix("[[")?;
    let list = &inner[..inner.find(']')?];
    if list.trim().is_empty() {
        return None;
    }
    list.split(',')
        .map(|d| d.trim().parse::<i64>().ok())
        .try_fold(1i64, |acc, d| Some(acc.saturating_mul(d?)))
}

/// At most this many names in a finding's sentence.
const NAMED: usize = 4;

/// Annotations PyTorch itself writes (steps, optimizer, DataLoader, compiled regions): theirs is
/// not a user's choice of density, and other rules judge what they hold.
fn is_pytorch_annotation(name: &str) -> bool {
    name.starts_with("ProfilerStep#")
        || name.starts_with("Optimizer.")
        || name.starts_with("enumerate(Data")
        || name.starts_with("## ")
        || name.starts_with("Torch-Compiled Region")
        || name.starts_with("CompiledFunction")
}

/// A place whose direct operators a storm is counted in: a step, or a user's annotation in it.
fn is_place(trace: &Trace, cx: &Context, sl: &StepLane, i: u32) -> bool {
    let s = sl.slices(trace);
    let name = trace.str(s.name[i as usize]);
    cx.links.kinds.of_cat(s.cat[i as usize]) == Kind::Annotation
        && (name.starts_with("ProfilerStep#") || !is_pytorch_annotation(name))
}

/// The slices of one place's name (a step, or an annotation's name) in the steps, and the
/// durations of their operators by name.
type Place = (Vec<u32>, FxHashMap<StrId, Vec<i64>>);

/// A run of slices of some names among one parent's children: their summed time, with the
/// untraced time between two of them in a row.
struct Run {
    calls: usize,
    inclusive_ns: i64,
    own_ns: i64,
    between_ns: i64,
    first_ns: i64,
    last_ns: i64,
}

/// `members[i]`: whether child `i` (of one parent's time-ordered `children`) is in the run.
fn run_of(trace: &Trace, sl: &StepLane, children: &[u32], members: &[bool]) -> Run {
    let s = sl.slices(trace);
    let mut r = Run {
        calls: 0,
        inclusive_ns: 0,
        own_ns: 0,
        between_ns: 0,
        first_ns: i64::MAX,
        last_ns: i64::MIN,
    };
    for (k, &c) in children.iter().enumerate() {
        if !members[k] {
            continue;
        }
        let c = c as usize;
        r.calls += 1;
        r.inclusive_ns += s.dur_ns[c];
        r.own_ns += sl.own_ns[c];
        r.first_ns = r.first_ns.min(s.start_ns[c]);
        r.last_ns = r.last_ns.max(s.end_ns(c));
        if k > 0 && members[k - 1] {
            r.between_ns += (s.start_ns[c] - s.end_ns(children[k - 1] as usize)).max(0);
        }
    }
    r
}

/// Whether the trace trains: it holds a backward pass (autograd's nodes or engine).
fn training(trace: &Trace) -> bool {
    trace
        .strings
        .each(|n| n.contains("Backward") || n.starts_with("autograd::engine"))
        .into_iter()
        .any(|b| b)
}

fn names_text(trace: &Trace, names: &[(StrId, usize)]) -> String {
    let mut v: Vec<String> = names
        .iter()
        .take(NAMED)
        .map(|&(n, c)| format!("{} ×{c}", trace.str(n)))
        .collect();
    if names.len() > NAMED {
        v.push(format!("{} more", names.len() - NAMED));
    }
    v.join(", ")
}

/// A what-if pattern naming exactly these slices (names hold no `*` or `|` in practice; one that
/// does is left out, as the edit would match more than it should).
fn pattern(trace: &Trace, names: &[StrId]) -> Option<String> {
    let v: Vec<&str> = names
        .iter()
        .map(|&n| trace.str(n))
        .filter(|n| !n.contains(['*', '|']))
        .collect();
    (!v.is_empty()).then(|| v.join("|"))
}

/// Three significant digits, so that an edit reads short.
fn factor_text(f: f64) -> String {
    let f = f.clamp(0.0, 1.0);
    if f == 0.0 {
        return "0".into();
    }
    let digits = (2 - f.log10().floor() as i32).max(0) as usize;
    format!("{f:.digits$}")
}

fn with_stack_hint(cx: &Context) -> &'static str {
    if cx.census.python > 0 {
        ""
    } else {
        " Record with with_stack=True to see the Python line they come from."
    }
}

/// Calls a step of one name from which a loop may be a storm.
const STORM_CALLS: usize = 100;
/// The longest median call of a storm's name.
const STORM_OP_NS: i64 = 50_000;
/// The storm's share of the steps, with the Python time between its calls, from which it counts.
const STORM_SHARE: f64 = 0.10;

pub(crate) const SMALL_OP_STORM: Rule = Rule {
    id: "small_op_storm",
    theme: Theme::Cpu,
    severity: Severity::Warning,
    recording: false,
    meaning: "a Python loop of tiny operators, one per item",
    fires: "in one place (a step's top level or a user's annotation), names called {calls} times \
            a step or more with a median of {median} or less that, with the Python time between \
            them, take {share} of the steps or more (`AccumulateGrad`, the optimizer's and the \
            DataLoader's own calls are judged elsewhere)",
    whatif: "`A|B+gaps*F`: the calls and the time between them, F = one call of each name a step \
             left",
    pricing: Pricing::Fix,
    thresholds: &[
        Threshold::new("calls", Value::Count(STORM_CALLS)),
        Threshold::new("median", Value::Ns(STORM_OP_NS)),
        Threshold::new("share", Value::Share(STORM_SHARE)),
    ],
};

/// [`SMALL_OP_STORM`], in the place where it costs the most.
pub(crate) fn small_op_storm(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut best: Option<(f64, Finding)> = None;
    // The costliest loop's share, whether it weighs enough or not.
    let mut largest: Option<f64> = None;
    for sl in &cx.step_lanes {
        let s = sl.slices(trace);
        let n_steps = sl.steps.len().max(1);
        let steps_ns = sl.steps_ns(trace);
        // Per place name: per child name, its durations; and the places' children.
        let mut places: FxHashMap<StrId, Place> = FxHashMap::default();
        for &st in &sl.steps {
            let end = s.end_ns(st as usize);
            let mut stack = vec![st];
            while let Some(p) = stack.pop() {
                if !is_place(trace, cx, sl, p) {
                    continue;
                }
                let key = if p == st {
                    StrId::NONE
                } else {
                    s.name[p as usize]
                };
                let entry = places.entry(key).or_default();
                entry.0.push(p);
                for &c in sl.children(p) {
                    let ci = c as usize;
                    if s.start_ns[ci] >= end {
                        break;
                    }
                    match cx.links.kinds.of_cat(s.cat[ci]) {
                        Kind::CpuOp => entry.1.entry(s.name[ci]).or_default().push(s.dur_ns[ci]),
                        Kind::Annotation => stack.push(c),
                        _ => {}
                    }
                }
            }
        }
        for (place, (parents, by_name)) in places {
            let mut tiny: Vec<(StrId, usize)> = by_name
                .into_iter()
                .filter(|(n, _)| !trace.str(*n).contains("AccumulateGrad"))
                .filter_map(|(n, mut d)| {
                    let calls = d.len() / n_steps;
                    d.sort_unstable();
                    (calls >= STORM_CALLS && d[d.len() / 2] <= STORM_OP_NS).then_some((n, d.len()))
                })
                .collect();
            if tiny.is_empty() {
                continue;
            }
            tiny.sort_by_key(|&(n, c)| (Reverse(c), n));
            let names: Vec<StrId> = tiny.iter().map(|t| t.0).collect();
            let (mut calls, mut cost, mut all_ops) = (0usize, 0i64, 0usize);
            let (mut evidence, mut durations) = (Vec::new(), Vec::new());
            // Every call of the loop, to tell where they run.
            let mut calls_at: Vec<SliceRef> = Vec::new();
            // Per place (a step, or an annotation in one), the span of its loop.
            let mut ranges: Vec<TimeRange> = Vec::new();
            for &p in &parents {
                let children = sl.children(p);
                let members: Vec<bool> = children
                    .iter()
                    .map(|&c| names.contains(&s.name[c as usize]))
                    .collect();
                let r = run_of(trace, sl, children, &members);
                calls += r.calls;
                cost += r.inclusive_ns + r.between_ns;
                if r.calls > 0 && ranges.len() < MAX_EVIDENCE {
                    ranges.push(TimeRange {
                        start_ns: r.first_ns,
                        end_ns: r.last_ns,
                    });
                }
                let mut shown = 0;
                for (k, &c) in children.iter().enumerate() {
                    if members[k] {
                        calls_at.push(sl.at(c));
                        all_ops += 1 + sl.descendants(trace, c).len();
                        durations.push(s.dur_ns[c as usize]);
                        // A couple of calls from each place.
                        if shown < 2 && evidence.len() < MAX_EVIDENCE {
                            evidence.push(sl.at(c));
                            shown += 1;
                        }
                    }
                }
            }
            let sh = share(cost, steps_ns);
            largest = Some(largest.map_or(sh, |l| l.max(sh)));
            if sh < STORM_SHARE || best.as_ref().is_some_and(|b| b.0 >= sh) {
                continue;
            }
            let per_step = |x: i64| x / n_steps as i64;
            durations.sort_unstable();
            let median_us = durations[durations.len() / 2] as f64 / 1e3;
            // Where the loop runs: the annotation holding it, else the modules or Python frames
            // its calls run in; the steps' top level only where nothing names a place.
            let place_text = if place != StrId::NONE {
                format!("all from the annotation `{}`", trace.str(place))
            } else if let Some(o) = origins(trace, &calls_at) {
                format!("from {o}")
            } else {
                "all from the steps' top level (Python code calling operators one by one)"
                    .to_string()
            };
            // Totals over the steps, told a step at a time as the rest of the sentence is.
            let tiny_per_step: Vec<(StrId, usize)> =
                tiny.iter().map(|&(n, c)| (n, c / n_steps)).collect();
            // A loss over the batch is advice for a training step only.
            let batched = if training(trace) {
                "index or mask the whole tensor, torch.vmap, one loss over the batch with \
                 reduction='none' and weights"
            } else {
                "index or mask the whole tensor, torch.vmap, one call over the stacked inputs"
            };
            let whatif = pattern(trace, &names)
                .map(|p| {
                    // Vectorized, the loop leaves about one call of each name a step; its CPU
                    // time, that is (`cpu:`): one batched call still does the device work.
                    let left = (names.len() * n_steps) as f64 / calls as f64;
                    vec![format!("cpu:{p}+gaps*{}", factor_text(left))]
                })
                .unwrap_or_default();
            let graphs = backend::of_trace(trace)
                .and_then(backend::graphs)
                .filter(|_| !cx.uses_graphs())
                .map(|g| format!(", or capture the step in {g} so a replay costs one launch"))
                .unwrap_or_default();
            let f = Finding {
                id: SMALL_OP_STORM.id,
                severity: SMALL_OP_STORM.severity,
                whatif,
                title: "A Python loop of tiny operators".into(),
                detail: format!(
                    "{} operators a step ({} calls at the top: {}), median {} a \
                     call, take {} a step with the Python time between them ({} of the steps), \
                     {place_text}.",
                    per_step(all_ops as i64),
                    per_step(calls as i64),
                    names_text(trace, &tiny_per_step),
                    crate::units::duration(median_us * 1e3),
                    duration(per_step(cost)),
                    pct(sh),
                ),
                advice: format!(
                    "Each call costs the dispatcher and autograd a few µs whatever its size: \
                     replace the loop by one batched call ({batched}), or fuse it with \
                     torch.compile{graphs}.{}",
                    with_stack_hint(cx)
                ),
                evidence: Evidence {
                    slices: evidence,
                    ranges,
                },
            };
            best = Some((sh, f));
        }
    }
    if let Some(sh) = largest {
        cx.measure(&SMALL_OP_STORM, "share", Value::Share(sh));
    }
    best.map(|b| b.1).into_iter().collect()
}

/// A stretch of a step's own time between two of its children (or its bounds).
struct Stretch {
    /// Its time while no other thread of the process ran an operator, annotation or call.
    ns: i64,
    start_ns: i64,
    end_ns: i64,
    before: Option<u32>,
    after: Option<u32>,
}

/// The shortest stretch outside every operator that counts.
const UNTRACED_GAP_NS: i64 = 1_000_000;
/// The stretches' share of the steps from which they are worth a finding.
const UNTRACED_SHARE: f64 = 0.10;

pub(crate) const UNTRACED_CPU_TIME: Rule = Rule {
    id: "untraced_cpu_time",
    theme: Theme::Cpu,
    severity: Severity::Warning,
    recording: false,
    meaning: "CPU time outside every operator: Python, `torch.save`, logging",
    fires: "stretches of {gap} or more in a step on its thread inside no operator, annotation or \
            runtime call, while no other thread of the process runs one, together {share} of the \
            steps or more (steps whose thread runs none of their operators are left out); names \
            the Python frame over the longest where stacks were recorded",
    whatif: "`untraced=0`",
    pricing: Pricing::Fix,
    thresholds: &[
        Threshold::new("gap", Value::Ns(UNTRACED_GAP_NS)),
        Threshold::new("share", Value::Share(UNTRACED_SHARE)),
    ],
};

/// [`UNTRACED_CPU_TIME`].
pub(crate) fn untraced_cpu_time(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
    let mut largest: Option<f64> = None;
    for sl in &cx.step_lanes {
        let s = sl.slices(trace);
        let steps_ns = sl.steps_ns(trace);
        let busy = Busy::of_other_threads(cx, sl.lane);
        let mut stretches: Vec<Stretch> = Vec::new();
        for &st in &sl.steps {
            // A step whose thread runs none of its operators (they run on threads the trace
            // does not tie to it) says nothing of untraced time.
            if sl.children(st).is_empty() {
                continue;
            }
            let mut at = s.start_ns[st as usize];
            let mut before = None;
            let end = s.end_ns(st as usize);
            for &c in sl.children(st).iter().chain(std::iter::once(&NONE)) {
                let (next_start, after) = if c == NONE {
                    (end, None)
                } else {
                    (s.start_ns[c as usize], Some(c))
                };
                let alone = next_start - at - busy.covered(at, next_start);
                if alone >= UNTRACED_GAP_NS {
                    stretches.push(Stretch {
                        ns: alone,
                        start_ns: at,
                        end_ns: next_start,
                        before,
                        after,
                    });
                }
                if c != NONE {
                    at = at.max(s.end_ns(c as usize));
                    before = Some(c);
                }
            }
        }
        let total: i64 = stretches.iter().map(|x| x.ns).sum();
        let sh = share(total, steps_ns);
        if total > 0 {
            largest = Some(largest.map_or(sh, |l| l.max(sh)));
        }
        if sh < UNTRACED_SHARE {
            continue;
        }
        stretches.sort_by_key(|x| (Reverse(x.ns), x.start_ns));
        let top = &stretches[0];
        let name = |i: Option<u32>, bound: &str| {
            i.map_or(bound.to_string(), |i| {
                format!("`{}`", trace.str(s.name[i as usize]))
            })
        };
        let frame = python_frame_over(cx, sl, top.start_ns, top.end_ns)
            .map(|f| format!(", in the Python frame `{f}`"))
            .unwrap_or_default();
        let n_steps = sl.steps.len().max(1) as i64;
        let mut slices: Vec<SliceRef> = Vec::new();
        for x in stretches.iter().take(3) {
            slices.extend(x.before.iter().chain(&x.after).map(|&i| sl.at(i)));
        }
        slices.dedup();
        out.push(Finding {
            id: UNTRACED_CPU_TIME.id,
            severity: UNTRACED_CPU_TIME.severity,
            whatif: vec!["untraced=0".into()],
            title: "CPU time outside every operator".into(),
            detail: format!(
                "{} a step ({} of the steps, in {} stretches of {} or more) runs on thread {} \
                 inside no operator, annotation or runtime call; the longest, {}, lies between \
                 {} and {}{frame}.",
                duration(total / n_steps),
                pct(sh),
                stretches.len(),
                duration(UNTRACED_GAP_NS),
                trace.lanes[sl.lane].tid,
                duration(top.ns),
                name(top.before, "the step's start"),
                name(top.after, "the step's end"),
            ),
            advice: format!(
                "This is Python the profiler does not break down: checkpointing (torch.save), \
                 logging and print, metrics, host-side data handling, a sleep or a lock. Move \
                 checkpoints and logging out of the step (every N steps, or to a background \
                 thread), and batch what runs per item.{}",
                if cx.census.python > 0 {
                    ""
                } else {
                    " with_stack=True shows the Python frames that run there."
                }
            ),
            evidence: Evidence {
                slices,
                ranges: stretches
                    .iter()
                    .take(MAX_EVIDENCE)
                    .map(|x| TimeRange {
                        start_ns: x.start_ns,
                        end_ns: x.end_ns,
                    })
                    .collect(),
            },
        });
    }
    if let Some(sh) = largest {
        cx.measure(&UNTRACED_CPU_TIME, "share", Value::Share(sh));
    }
    out
}

/// When the other CPU threads of a thread's process ran something on their chains (operators,
/// annotations, runtime calls): a step's thread that waits for them (autograd's or gloo's thread,
/// a DataLoader's pin thread) is not running untraced code meanwhile.
struct Busy {
    /// Merged, in time order.
    spans: Vec<(i64, i64)>,
}

impl Busy {
    fn of_other_threads(cx: &Context, lane: usize) -> Busy {
        let trace = cx.trace;
        let pid = trace.lanes[lane].pid;
        let mut spans: Vec<(i64, i64)> = Vec::new();
        for (li, l) in trace.lanes.iter().enumerate() {
            if li == lane || l.is_gpu() || l.pid != pid {
                continue;
            }
            let s = trace.slices_of(l);
            for i in 0..s.len() {
                if super::super::context::on_chain(cx.links.kinds.of_cat(s.cat[i])) {
                    spans.push((s.start_ns[i], s.end_ns(i)));
                }
            }
        }
        Busy {
            spans: intervals::union(spans),
        }
    }

    /// How much of `[a, b)` the spans cover: `intervals::length_within`, found by a binary
    /// search, as it is asked once per stretch of every step.
    fn covered(&self, a: i64, b: i64) -> i64 {
        let first = self.spans.partition_point(|&(_, e)| e <= a);
        self.spans[first..]
            .iter()
            .take_while(|&&(s, _)| s < b)
            .map(|&(s, e)| e.min(b) - s.max(a))
            .sum()
    }
}

/// The innermost Python frame on a thread that holds a whole stretch of time.
fn python_frame_over(cx: &Context, sl: &StepLane, start: i64, end: i64) -> Option<String> {
    let trace = cx.trace;
    let s = sl.slices(trace);
    let last = s.start_ns.partition_point(|&t| t <= start);
    (0..last)
        .rev()
        .take(100_000)
        .filter(|&i| cx.links.kinds.of_cat(s.cat[i]) == Kind::Python && s.end_ns(i) >= end)
        .max_by_key(|&i| (s.depth[i], Reverse(i)))
        .map(|i| trace.str(s.name[i]).to_string())
}

/// Ranges a step of one annotation name from which they may be in a tight loop.
const ANNOTATION_CALLS: usize = 100;
/// Their own time and the time between two in a row, as a share of the steps, from which they
/// cost.
const ANNOTATION_SHARE: f64 = 0.05;

pub(crate) const ANNOTATION_OVERHEAD: Rule = Rule {
    id: "annotation_overhead",
    theme: Theme::Cpu,
    severity: Severity::Warning,
    recording: false,
    meaning: "annotations (`record_function`) in a tight loop",
    fires: "a user's annotation name (`record_function`, `user_annotation`) opened {calls} times \
            a step or more, whose own time and the time between two in a row take {share} of \
            the steps or more",
    whatif: "`self:NAME+gaps=0`",
    pricing: Pricing::Fix,
    thresholds: &[
        Threshold::new("calls", Value::Count(ANNOTATION_CALLS)),
        Threshold::new("share", Value::Share(ANNOTATION_SHARE)),
    ],
};

/// [`ANNOTATION_OVERHEAD`].
pub(crate) fn annotation_overhead(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
    let mut largest: Option<f64> = None;
    for sl in &cx.step_lanes {
        let s = sl.slices(trace);
        let n_steps = sl.steps.len().max(1);
        let steps_ns = sl.steps_ns(trace);
        // Per annotation name: the parents its ranges sit in.
        let mut counts: FxHashMap<StrId, usize> = FxHashMap::default();
        let mut parents: FxHashMap<StrId, Vec<u32>> = FxHashMap::default();
        for &st in &sl.steps {
            for k in sl.descendants(trace, st) {
                if cx.links.kinds.of_cat(s.cat[k]) != Kind::Annotation
                    || is_pytorch_annotation(trace.str(s.name[k]))
                {
                    continue;
                }
                *counts.entry(s.name[k]).or_default() += 1;
                let p = parents.entry(s.name[k]).or_default();
                if p.last() != Some(&sl.up[k]) && sl.up[k] != NONE {
                    p.push(sl.up[k]);
                }
            }
        }
        let mut dense: Vec<(StrId, usize)> = counts
            .into_iter()
            .filter(|&(_, c)| c / n_steps >= ANNOTATION_CALLS)
            .collect();
        if dense.is_empty() {
            continue;
        }
        dense.sort_by_key(|&(n, c)| (Reverse(c), n));
        let names: Vec<StrId> = dense.iter().map(|d| d.0).collect();
        let (mut own, mut between, mut calls) = (0i64, 0i64, 0usize);
        let mut ranges = Vec::new();
        let mut held = Vec::new();
        let mut seen_parents: Vec<u32> = names
            .iter()
            .flat_map(|n| parents[n].iter().copied())
            .collect();
        seen_parents.sort_unstable();
        seen_parents.dedup();
        for p in seen_parents {
            let children = sl.children(p);
            let members: Vec<bool> = children
                .iter()
                .map(|&c| names.contains(&s.name[c as usize]))
                .collect();
            let r = run_of(trace, sl, children, &members);
            if r.calls == 0 {
                continue;
            }
            own += r.own_ns;
            between += r.between_ns;
            calls += r.calls;
            if ranges.len() < MAX_EVIDENCE {
                ranges.push(TimeRange {
                    start_ns: r.first_ns,
                    end_ns: r.last_ns,
                });
            }
            held.extend(
                children
                    .iter()
                    .zip(&members)
                    .filter(|(_, &m)| m)
                    .map(|(&c, _)| sl.at(c))
                    .take(3),
            );
        }
        let cost = own + between;
        let sh = share(cost, steps_ns);
        largest = Some(largest.map_or(sh, |l| l.max(sh)));
        if sh < ANNOTATION_SHARE {
            continue;
        }
        let per = (calls / n_steps).max(1);
        let whatif = pattern(trace, &names)
            .map(|p| vec![format!("self:{p}+gaps=0")])
            .unwrap_or_default();
        let mut evidence = evidence_of(trace, &held);
        evidence.ranges = ranges;
        out.push(Finding {
            id: ANNOTATION_OVERHEAD.id,
            severity: ANNOTATION_OVERHEAD.severity,
            whatif,
            title: "Annotations in a tight loop".into(),
            detail: format!(
                "{} annotation ranges a step ({}) cost {} a step ({} of the steps): {} inside \
                 them outside any operator and {} between two in a row, about {} a range.",
                per,
                names_text(trace, &dense),
                duration(cost / n_steps as i64),
                pct(sh),
                duration(own / n_steps as i64),
                duration(between / n_steps as i64),
                crate::units::duration(cost as f64 / calls.max(1) as f64),
            ),
            advice: "While profiling, each record_function range is recorded (and with \
                     with_stack, unwound): label phases such as forward, backward, optimizer and \
                     data, not loop iterations. Put one range around the loop, or keep per-item \
                     ranges behind a flag that is off when profiling the step."
                .into(),
            evidence,
        });
    }
    if let Some(sh) = largest {
        cx.measure(&ANNOTATION_OVERHEAD, "share", Value::Share(sh));
    }
    out
}

/// The optimizer's share of the steps from which it is heavy.
const OPTIMIZER_SHARE: f64 = 0.15;
/// Operators a step under the optimizer from which it loops over the parameters.
const OPTIMIZER_OPS: usize = 50;

pub(crate) const OPTIMIZER_STEP_HEAVY: Rule = Rule {
    id: "optimizer_step_heavy",
    theme: Theme::Cpu,
    severity: Severity::Warning,
    recording: false,
    meaning: "the optimizer updates its parameters one tensor at a time",
    fires: "`Optimizer.step#...` takes {share} of the steps or more, running {ops} operators a \
            step or more, none `_foreach_`/`_fused_`",
    whatif: "`Optimizer.step#X.step*F`, F = (one dispatch per kind of call + the parameters' \
             elements at a fused kernel's pace on a CPU, 0 on a GPU host) / its time",
    pricing: Pricing::Fix,
    thresholds: &[
        Threshold::new("share", Value::Share(OPTIMIZER_SHARE)),
        Threshold::new("ops", Value::Count(OPTIMIZER_OPS)),
    ],
};

/// [`OPTIMIZER_STEP_HEAVY`].
pub(crate) fn optimizer_step_heavy(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
    let mut largest: Option<f64> = None;
    for sl in &cx.step_lanes {
        let s = sl.slices(trace);
        let n_steps = sl.steps.len().max(1);
        let steps_ns = sl.steps_ns(trace);
        let mut opt_slices: Vec<u32> = Vec::new();
        let is_step = trace.strings.each(|n| n.starts_with("Optimizer.step#"));
        // Whether a slice has an `Optimizer.step#` above it, settled from its parent's answer
        // (a parent comes first in a lane): a climb from every slice was quadratic in the
        // nesting.
        let mut under: Vec<bool> = vec![false; s.len()];
        for &st in &sl.steps {
            for k in sl.descendants(trace, st) {
                let up = sl.up[k];
                let held =
                    up != NONE && (is_step[s.name[up as usize].0 as usize] || under[up as usize]);
                under[k] = held;
                // The outermost one (a wrapper's step may call the inner optimizer's).
                if is_step[s.name[k].0 as usize] && !held {
                    opt_slices.push(k as u32);
                }
            }
        }
        if opt_slices.is_empty() {
            continue;
        }
        let total: i64 = opt_slices.iter().map(|&o| s.dur_ns[o as usize]).sum();
        let sh = share(total, steps_ns);
        largest = Some(largest.map_or(sh, |l| l.max(sh)));
        let (mut ops, mut grouped, mut fused) = (0usize, false, false);
        let mut own_times: Vec<i64> = Vec::new();
        // Per name of the optimizer's own calls (its chain children): calls, and the elements
        // of their first tensors.
        let mut top: FxHashMap<StrId, (usize, i64)> = FxHashMap::default();
        let mut by_name: FxHashMap<StrId, usize> = FxHashMap::default();
        let mut python_own: i64 = 0;
        for &o in &opt_slices {
            python_own += sl.own_ns[o as usize];
            for k in sl.descendants(trace, o) {
                if cx.links.kinds.of_cat(s.cat[k]) != Kind::CpuOp {
                    continue;
                }
                let n = trace.str(s.name[k]);
                grouped |= n.starts_with("aten::_foreach_");
                fused |= n.starts_with("aten::_fused_");
                ops += 1;
                own_times.push(sl.own_ns[k].max(0));
                if sl.up[k] == o {
                    let t = top.entry(s.name[k]).or_default();
                    t.0 += 1;
                    t.1 += first_elements(trace.str(s.input_dims[k])).unwrap_or(0);
                }
                *by_name.entry(s.name[k]).or_default() += 1;
            }
        }
        if sh < OPTIMIZER_SHARE || ops / n_steps < OPTIMIZER_OPS || fused || grouped {
            continue;
        }
        // A call costs a dispatch plus its work. One fused call over all tensors does the work
        // in one pass, with one dispatch per kind of operator and no Python loop between them.
        // The parameters are counted by the optimizer's own calls (the median count of a name:
        // most run once per tensor), their elements by a name called that often; on a GPU the
        // work is the device's, and the host's fused call is dispatch only.
        own_times.sort_unstable();
        let median = own_times[own_times.len() / 2];
        let mut counts: Vec<usize> = top.values().map(|t| t.0).collect();
        counts.sort_unstable();
        let params = counts.get(counts.len() / 2).copied().unwrap_or(0);
        let elements = top
            .values()
            .filter(|t| t.0 == params)
            .map(|t| t.1)
            .max()
            .unwrap_or(0);
        let per_element = if backend::of_trace(trace).is_some() {
            0.0
        } else {
            NS_PER_ELEMENT
        };
        let after =
            (elements as f64 * per_element) as i64 + (top.len().max(1) * n_steps) as i64 * median;
        let left = (after as f64 / total.max(1) as f64).min(1.0);
        let names: Vec<StrId> = {
            let mut v: Vec<StrId> = opt_slices.iter().map(|&o| s.name[o as usize]).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let optimizer = trace.str(names[0]);
        let class = optimizer
            .strip_prefix("Optimizer.step#")
            .and_then(|r| r.split('.').next())
            .unwrap_or("the optimizer");
        let mut common: Vec<(StrId, usize)> = by_name.into_iter().collect();
        common.sort_by_key(|&(n, c)| (Reverse(c), n));
        let common: Vec<(StrId, usize)> =
            common.into_iter().map(|(n, c)| (n, c / n_steps)).collect();
        let fused_where = match backend::of_trace(trace) {
            Some(Backend::Cuda) | Some(Backend::Rocm) => "on the GPU",
            Some(Backend::Other) => "where the device supports it",
            None => "on the CPU (PyTorch 2.4 and later)",
        };
        out.push(Finding {
            id: OPTIMIZER_STEP_HEAVY.id,
            severity: OPTIMIZER_STEP_HEAVY.severity,
            // The dispatch a fused call saves is CPU time (`cpu:`): its kernels still move
            // every parameter.
            whatif: pattern(trace, &names)
                .map(|p| vec![format!("cpu:{p}*{}", factor_text(left))])
                .unwrap_or_default(),
            title: "The optimizer updates its parameters one tensor at a time".into(),
            detail: format!(
                "{} takes {} a step ({} of the steps), running {} operators a step ({}) with \
                 {} of Python between them: a per-parameter loop (foreach=False, or an \
                 optimizer without a grouped implementation).",
                optimizer,
                duration(total / n_steps as i64),
                pct(sh),
                ops / n_steps,
                names_text(trace, &common),
                duration(python_own / n_steps as i64),
            ),
            advice: format!(
                "Use torch.optim.{class}(..., foreach=True) (one kernel per operation over all \
                 tensors) or fused=True {fused_where}; or compile the step \
                 (torch.compile(opt.step)). Fewer, larger parameter tensors help too."
            ),
            evidence: evidence_of(
                trace,
                &opt_slices.iter().map(|&o| sl.at(o)).collect::<Vec<_>>(),
            ),
        });
    }
    if let Some(sh) = largest {
        cx.measure(&OPTIMIZER_STEP_HEAVY, "share", Value::Share(sh));
    }
    out
}
