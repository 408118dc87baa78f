//! The critical path of each step: the chain of CPU work, launches and device work that set the
//! step's length, and what-if replays that predict a step's length after a change.
//!
//! The trace becomes a dependency [`graph`] whose edges reproduce the measured times exactly. A
//! step's path is walked back from its end: at each node, through the incoming edge that arrives
//! exactly at its time (the binding dependency), preferring a device op's end or a sync over the
//! CPU chain when both do, so that a CPU thread waiting on the device is charged to the device. The
//! path is contiguous in time, so its length is the step's span; everything off it has slack.
//!
//! Segments are charged to their slice and bound by one of: `cpu_op`, `cpu_launch` (runtime calls),
//! `data_loading` (inside a DataLoader `__next__`), `sync_wait` (a blocking call's return after
//! the device op it waited for, or a blocking call that found none), `cpu_untraced` (a thread in
//! no recorded slice, or only in its `ProfilerStep`), `gpu_compute`, `gpu_memcpy`,
//! `gpu_communication`, `kernel_launch_overhead` (launch to start, the stream idle) and
//! `kernel_kernel_overhead` (the gap after the op before, work queued). HTA's five categories are
//! their sums ([`hta_category`]).
//!
//! A what-if ([`whatif`]) scales the durations of matching slices (CPU time inside them and the
//! device ops they launched, or device ops) and replays the graph: each node's time is the
//! maximum over its incoming edges, so dependencies are kept and a change off the path buys
//! nothing. A step is its `ProfilerStep`'s span and replays from its measured start: edges from
//! before it leave from their measured times ([`whatif::pinned_edges`]), so a step's prediction
//! is what its own edits save, and shrinking never lengthens it.
//!
//! Files: [`graph`] (the dependency graph: CPU thread chains of slice boundaries, device ops on
//! their streams, launches, cross-stream waits where `cuda_sync` events record them, blocking
//! calls waiting on the device op that ended inside them), `threads` (the threads a step waits
//! on joined to it: gloo's collectives, the autograd engine's backward thread and any other
//! helper of the step's process start from the caller and release its wait), [`hotspot`] (what
//! the paths spend most in, named where making it free saves 5% of the step), this module (each step's
//! path walked back, [`Analysis`]: the graph with the steps' windows, [`PathReport`]), [`whatif`]
//! (the edits' grammar; matching edges scaled and the graph replayed, max-plus in topological
//! order), [`savings`] (each finding's own edits replayed: what its fix saves), [`slack`] (per
//! slice, its time on the path and its slack: the tables' `--path` columns), [`job`] (the ranks'
//! graphs on one clock, joined at the collectives `ranks` matches, reading `Distributed` sections,
//! not whole digests, so a path crosses ranks and a what-if on one rank moves the ranks that
//! waited) and [`hta`] (`--compat hta`: HTA 0.5.0's own graph and heaviest path, for comparing
//! with its `summary()`). A loaded trace's graph for the default options is built once and kept
//! by `Derived::critical`, which the savings, `sightline path` and the page's panel share.

pub mod graph;
pub mod hotspot;
pub mod hta;
pub mod job;
pub mod savings;
pub mod slack;
mod threads;
pub mod whatif;

use crate::analysis::idle::OpClass;
use crate::analysis::links::{Kind, Links};
use crate::analysis::slicing::{block_on, Slicer};
use crate::analysis::steps::StepsReport;
use crate::analysis::summary::lane_name;
use crate::model::{SliceRef, Trace};
use graph::{EdgeKind, Graph};
use serde::Serialize;
use std::collections::BTreeMap;

/// What the path's steps are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathOptions {
    /// Only the steps with this name (`ProfilerStep#3`).
    pub step: Option<String>,
    /// HTA's annotation window: the `instance`-th CPU slice (from 0, in start order) whose name
    /// contains `annotation`, instead of the steps.
    pub annotation: Option<(String, usize)>,
    /// HTA 0.5.0's graph and categories ([`hta`]) instead of ours.
    pub hta: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepPath {
    pub rank: i64,
    pub step: String,
    pub start_us: f64,
    pub end_us: f64,
    /// The `ProfilerStep`'s span, which the path covers.
    pub length_us: f64,
    /// Where the step launched device work that ran past its end: the end of the last such op,
    /// and the step's length through it (the TensorBoard plugin's step span).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_end_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_with_device_us: Option<f64>,
    /// Share of the path's length by category, in percent.
    pub bound_by: BTreeMap<&'static str, f64>,
    /// The same in HTA's categories.
    pub hta_bound_by: BTreeMap<&'static str, f64>,
    /// In time order; consecutive pieces of one slice and category are one segment.
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Segment {
    pub start_us: f64,
    pub end_us: f64,
    pub rank: i64,
    pub lane: String,
    /// The slice the time is charged to (empty for time in no slice).
    pub name: String,
    /// The edge: `cpu`, `sync`, `device`, `launch`, `stream`, `start`.
    pub kind: &'static str,
    pub bound_by: &'static str,
    /// The slice, for a viewer to select (`None` for time in no slice).
    #[serde(skip)]
    pub slice: Option<SliceRef>,
    /// For a device op a CUDA/HIP graph replayed, the operator that issued it while the graph
    /// was captured, when a capture is given ([`crate::analysis::graphs::Attribution`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub captured_by: Option<String>,
}

/// A step's window on the graph: its `ProfilerStep`'s CPU span, as PyTorch records it.
#[derive(Debug, Clone)]
pub struct Window {
    pub name: String,
    pub start: u32,
    pub end: u32,
    /// The end of the last device op the step launched, where that is after `end` (the
    /// TensorBoard plugin's step ends there).
    pub device_end: Option<u32>,
}

/// The graph of a trace and its steps' windows.
pub struct Analysis {
    pub graph: Graph,
    pub windows: Vec<Window>,
    pub rank: i64,
    /// The edges whose source lies before the window their destination is in
    /// ([`whatif::pinned_edges`]): a step's prediction replays its own edits only.
    pub pinned: whatif::Bits,
}

impl Analysis {
    pub fn build(
        trace: &Trace,
        links: &Links,
        steps: &StepsReport,
        opts: &PathOptions,
    ) -> Result<Analysis, String> {
        block_on(Analysis::build_sliced(
            trace,
            links,
            steps,
            opts,
            &mut Slicer::never(),
        ))
    }

    /// [`Analysis::build`], pausing as `y` says (the page's findings price their fixes on it).
    pub async fn build_sliced(
        trace: &Trace,
        links: &Links,
        steps: &StepsReport,
        opts: &PathOptions,
        y: &mut Slicer,
    ) -> Result<Analysis, String> {
        let graph = graph::build_sliced(trace, links, y).await;
        let windows = windows(trace, &graph, steps, opts)?;
        let starts: Vec<i64> = windows
            .iter()
            .map(|w| graph.time[w.start as usize])
            .collect();
        let pinned = whatif::pinned_edges(&graph, &[starts], |_| 0);
        y.tick(graph.edges.len() as u64).await;
        Ok(Analysis {
            graph,
            windows,
            rank: trace.rank(),
            pinned,
        })
    }

    /// The critical path of each window.
    pub fn paths(&self, trace: &Trace, links: &Links) -> Vec<StepPath> {
        self.windows
            .iter()
            .map(|w| self.path(trace, links, w))
            .collect()
    }

    fn path(&self, trace: &Trace, links: &Links, w: &Window) -> StepPath {
        let part = Part {
            trace,
            links,
            graph: &self.graph,
            rank: self.rank,
            shift: 0,
        };
        walk(&self.graph, w, &|_| part)
    }
}

/// One rank's share of a graph the path walks: its trace, and how its times were moved.
#[derive(Clone, Copy)]
pub struct Part<'a> {
    pub trace: &'a Trace,
    pub links: &'a Links,
    /// The rank's own graph (parents of its CPU slices).
    pub graph: &'a Graph,
    pub rank: i64,
    /// Added to the rank's times in the walked graph (0 unless ranks were joined).
    pub shift: i64,
}

/// A window's path, walked back from its end on `g`; `part_of` says whose a node is (an edge is
/// its destination's). Times are given on the window's own rank's clock.
fn walk<'a>(g: &Graph, w: &Window, part_of: &dyn Fn(u32) -> Part<'a>) -> StepPath {
    let home = part_of(w.end);
    let (t0, t1) = (g.time[w.start as usize], g.time[w.end as usize]);
    let local = |t: i64| us(t - home.shift);
    let mut segments: Vec<Segment> = Vec::new();
    binding_edges(g, w, |e, from, tv| {
        let v = e.to;
        let p = part_of(v);
        // The edge's slice read on the walked graph: `p.graph` is the rank's own, whose nodes
        // the joined graph's are not.
        let slice = g.slice(e);
        let bound_by = category(p.trace, p.links, p.graph, e.kind, slice);
        let (name, lane) = match slice {
            Some(r) => (p.trace.slice_name(r).to_string(), r.lane as usize),
            None => (String::new(), g.lane[v as usize] as usize),
        };
        let lane = if lane == u32::MAX as usize {
            String::new()
        } else {
            lane_name(p.trace, lane)
        };
        let seg = Segment {
            start_us: local(from),
            end_us: local(tv),
            rank: p.rank,
            lane,
            name,
            kind: kind_word(e.kind),
            bound_by,
            slice,
            captured_by: None,
        };
        match segments.last_mut() {
            Some(s)
                if s.slice == seg.slice
                    && s.rank == seg.rank
                    && s.bound_by == seg.bound_by
                    && s.kind == seg.kind
                    && s.start_us == seg.end_us =>
            {
                s.start_us = seg.start_us
            }
            _ => segments.push(seg),
        }
    });
    segments.reverse();
    let length = (t1 - t0) as f64;
    let mut bound_by: BTreeMap<&'static str, f64> = BTreeMap::new();
    let mut hta: BTreeMap<&'static str, f64> = BTreeMap::new();
    for s in &segments {
        let share = 100.0 * (s.end_us - s.start_us) * 1e3 / length.max(1.0);
        *bound_by.entry(s.bound_by).or_default() += share;
        *hta.entry(hta_category(s.bound_by)).or_default() += share;
    }
    StepPath {
        rank: home.rank,
        step: w.name.clone(),
        start_us: local(t0),
        end_us: local(t1),
        length_us: length / 1e3,
        device_end_us: w.device_end.map(|n| local(g.time[n as usize])),
        length_with_device_us: w.device_end.map(|n| us(g.time[n as usize] - t0)),
        bound_by,
        hta_bound_by: hta,
        segments,
    }
}

/// The edges of a window's path, walked back from its end: at each node, the incoming edge that
/// arrives exactly at its time, the one [`preference`] puts first; `visit(edge, from, to)` with
/// the time it covers (cut at the window's start), for each edge that covers some.
pub(crate) fn binding_edges(g: &Graph, w: &Window, mut visit: impl FnMut(&graph::Edge, i64, i64)) {
    let t0 = g.time[w.start as usize];
    let mut v = w.end;
    while g.time[v as usize] > t0 {
        let tv = g.time[v as usize];
        let Some(e) = g
            .incoming(v)
            .filter(|e| g.time[e.from as usize] + e.weight == tv)
            .max_by_key(|e| preference(e.kind))
        else {
            break;
        };
        let from = g.time[e.from as usize].max(t0);
        if tv > from {
            visit(e, from, tv);
        }
        v = e.from;
    }
}

/// What `sightline path --json` prints: the paths, and the what-if when edits were given.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathReport {
    pub paths: Vec<StepPath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_if: Option<whatif::WhatIf>,
    /// Slices and device ops each edit matched (the caller reports an edit that matched none on
    /// every trace).
    #[serde(skip)]
    pub matched: Vec<usize>,
}

impl PathReport {
    /// One trace's paths and, with `edits`, their predictions.
    pub fn of(
        trace: &Trace,
        links: &Links,
        steps: &StepsReport,
        opts: &PathOptions,
        edits: &[whatif::Edit],
    ) -> Result<PathReport, String> {
        if opts.hta {
            if !edits.is_empty() {
                return Err(
                    "--what-if replays Sightline's graph: it does not go with --compat hta, \
                            whose graph weighs time between operators and sync waits as 0"
                        .to_string(),
                );
            }
            return Ok(PathReport {
                paths: hta::paths(trace, links, steps, opts)?,
                ..PathReport::default()
            });
        }
        let a = Analysis::build(trace, links, steps, opts)?;
        Ok(PathReport::of_analysis(trace, links, &a, edits))
    }

    /// [`PathReport::of`] on a graph already built (Sightline's, not HTA's).
    pub fn of_analysis(
        trace: &Trace,
        links: &Links,
        a: &Analysis,
        edits: &[whatif::Edit],
    ) -> PathReport {
        let mut report = PathReport {
            paths: a.paths(trace, links),
            what_if: None,
            matched: vec![0; edits.len()],
        };
        if !edits.is_empty() {
            let (factor, matched) = whatif::factors(trace, a, edits);
            report.matched = matched;
            report.what_if = Some(whatif::WhatIf {
                edits: edits.to_vec(),
                steps: whatif::predict(a, &factor),
            });
        }
        report
    }

    /// The ranks of one job, their graphs joined at matched collectives ([`job`]).
    pub fn of_job(
        ranks: Vec<job::Rank>,
        opts: &PathOptions,
        edits: &[whatif::Edit],
    ) -> Result<PathReport, String> {
        let j = job::Job::build(ranks, opts)?;
        let mut report = PathReport {
            paths: j.paths(),
            what_if: None,
            matched: vec![0; edits.len()],
        };
        if !edits.is_empty() {
            let (steps, matched) = j.predict(edits);
            report.matched = matched;
            report.what_if = Some(whatif::WhatIf {
                edits: edits.to_vec(),
                steps,
            });
        }
        Ok(report)
    }

    /// Another trace's report after this one's (the ranks of one job).
    pub fn append(&mut self, other: PathReport) {
        self.paths.extend(other.paths);
        for (m, o) in self.matched.iter_mut().zip(&other.matched) {
            *m += o;
        }
        if self.matched.is_empty() {
            self.matched = other.matched;
        }
        match (&mut self.what_if, other.what_if) {
            (Some(w), Some(o)) => w.steps.extend(o.steps),
            (w @ None, o) => *w = o,
            _ => {}
        }
    }

    /// An error naming the first edit that matched nothing: a misspelt name, as a misspelt
    /// `--fail-if` is.
    pub fn unmatched_edit(&self) -> Option<String> {
        let w = self.what_if.as_ref()?;
        let k = self.matched.iter().position(|&m| m == 0)?;
        Some(format!(
            "what-if '{}' matches no slice or device op in the trace(s)",
            w.edits[k].text
        ))
    }
}

/// Microseconds from the trace's start.
fn us(t: i64) -> f64 {
    t as f64 / 1e3
}

/// Which of several edges arriving exactly at a node the path takes: the dependency that explains
/// a wait (a sync, the device) before the CPU chain that merely reached the same instant.
fn preference(kind: EdgeKind) -> u8 {
    match kind {
        EdgeKind::Sync => 6,
        EdgeKind::Device(_) => 5,
        EdgeKind::Stream => 4,
        EdgeKind::Launch => 3,
        EdgeKind::Cpu => 2,
        EdgeKind::Start => 1,
        // Another rank's arrival explains the end only when this rank's own work does not.
        EdgeKind::Collective => 0,
    }
}

fn kind_word(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Cpu => "cpu",
        EdgeKind::Sync => "sync",
        EdgeKind::Device(_) => "device",
        EdgeKind::Launch => "launch",
        EdgeKind::Stream => "stream",
        EdgeKind::Start => "start",
        EdgeKind::Collective => "collective",
    }
}

/// HTA's categories, in its order.
pub const HTA_CATEGORIES: [&str; 5] = [
    "cpu_bound",
    "gpu_compute_bound",
    "gpu_communication_bound",
    "gpu_kernel_kernel_overhead",
    "gpu_kernel_launch_overhead",
];

/// The categories, in the order they are documented.
pub const CATEGORIES: [&str; 11] = [
    "cpu_op",
    "cpu_launch",
    "data_loading",
    "sync_wait",
    "cpu_untraced",
    "gpu_compute",
    "gpu_memcpy",
    "gpu_communication",
    "kernel_launch_overhead",
    "kernel_kernel_overhead",
    "other",
];

/// HTA's `bound_by` for one of ours: CPU time is `cpu_bound`, device copies are compute there.
pub fn hta_category(c: &str) -> &'static str {
    match c {
        "gpu_compute" | "gpu_memcpy" => "gpu_compute_bound",
        "gpu_communication" => "gpu_communication_bound",
        "kernel_launch_overhead" => "gpu_kernel_launch_overhead",
        "kernel_kernel_overhead" => "gpu_kernel_kernel_overhead",
        _ => "cpu_bound",
    }
}

/// Whether a name is a DataLoader's `__next__` span.
pub fn is_data_loading(name: &str) -> bool {
    name.starts_with("enumerate(DataLoader)") || name.starts_with("enumerate(DataPipe)")
}

fn category(
    trace: &Trace,
    links: &Links,
    g: &Graph,
    kind: EdgeKind,
    slice: Option<SliceRef>,
) -> &'static str {
    match kind {
        EdgeKind::Sync => "sync_wait",
        EdgeKind::Device(OpClass::Computation) => "gpu_compute",
        EdgeKind::Device(OpClass::Memory) => "gpu_memcpy",
        EdgeKind::Device(OpClass::Communication) => "gpu_communication",
        EdgeKind::Launch => "kernel_launch_overhead",
        EdgeKind::Stream => "kernel_kernel_overhead",
        EdgeKind::Start => "cpu_untraced",
        // The transfer after the last rank arrived, charged to this rank's collective.
        EdgeKind::Collective => match slice {
            Some(r) if trace.lanes[r.lane as usize].is_gpu() => "gpu_communication",
            _ => "cpu_op",
        },
        EdgeKind::Cpu => {
            let Some(r) = slice else {
                return "cpu_untraced";
            };
            let lane = r.lane as usize;
            let s = trace.slices(lane);
            let i = r.index as usize;
            if g.loading.get(lane).and_then(|l| l.get(i)).copied() == Some(true) {
                return "data_loading";
            }
            let name = trace.str(s.name[i]);
            match links.kinds.of_cat(s.cat[i]) {
                Kind::Runtime if graph::is_blocking(name) => "sync_wait",
                Kind::Runtime => "cpu_launch",
                _ if name.starts_with("ProfilerStep#") => "cpu_untraced",
                _ => "cpu_op",
            }
        }
    }
}

/// The windows the options ask for: each step's `ProfilerStep` span (with the end of the last
/// device op it launched beside it), an annotation's instance, or the whole trace when it has no
/// steps.
fn windows(
    trace: &Trace,
    g: &Graph,
    steps: &StepsReport,
    opts: &PathOptions,
) -> Result<Vec<Window>, String> {
    let node_of = |r: SliceRef| {
        g.cpu_nodes
            .get(r.lane as usize)?
            .get(r.index as usize)
            .copied()
    };
    if let Some((name, instance)) = &opts.annotation {
        let mut found: Vec<(i64, SliceRef)> = Vec::new();
        for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
            for i in 0..l.slice_count() {
                if trace
                    .str(trace.slices_of(l).name[i])
                    .contains(name.as_str())
                {
                    found.push((
                        trace.slices_of(l).start_ns[i],
                        SliceRef {
                            lane: li as u32,
                            index: i as u32,
                        },
                    ));
                }
            }
        }
        found.sort_by_key(|f| f.0);
        let count = found.len();
        let (_, r) = found.get(*instance).copied().ok_or_else(|| {
            format!(
                "--annotation '{name}' has {count} instance(s); --instance {instance} is not one"
            )
        })?;
        let (a, b) = node_of(r)
            .filter(|n| n.0 != u32::MAX && n.1 != u32::MAX)
            .ok_or_else(|| format!("'{}' is not a CPU operator or label", trace.slice_name(r)))?;
        return Ok(vec![Window {
            name: format!("{} #{instance}", trace.slice_name(r)),
            start: a,
            end: b,
            device_end: None,
        }]);
    }
    // Device op ends by time, to find a step's end on the device.
    let mut ends: Vec<(i64, u32)> = g
        .device_nodes
        .iter()
        .flatten()
        .filter(|n| n.1 != u32::MAX)
        .map(|n| (g.time[n.1 as usize], n.1))
        .collect();
    ends.sort_unstable();
    let mut out = Vec::new();
    if steps.synthetic {
        let end = (0..g.time.len() as u32).max_by_key(|&v| g.time[v as usize]);
        if let Some(end) = end {
            out.push(Window {
                name: "(whole trace)".to_string(),
                start: 0,
                end,
                device_end: None,
            });
        }
        return Ok(out);
    }
    for st in &steps.steps {
        if opts.step.as_ref().is_some_and(|n| *n != st.name) {
            continue;
        }
        let Some((a, b)) = st.slice.and_then(node_of) else {
            continue;
        };
        if a == u32::MAX || b == u32::MAX {
            continue;
        }
        let k = ends.partition_point(|e| e.0 <= st.end_ns);
        let device_end = match k.checked_sub(1).map(|k| ends[k]) {
            Some((t, n)) if t == st.end_ns && t > g.time[b as usize] => Some(n),
            _ => None,
        };
        out.push(Window {
            name: st.name.clone(),
            start: a,
            end: b,
            device_end,
        });
    }
    if let Some(n) = &opts.step {
        if out.is_empty() {
            return Err(format!("no step named '{n}'"));
        }
    }
    Ok(out)
}
