//! What the rules read: the trace, its analyses, and counts gathered in one pass over the slices
//! ([`Census`]), so each rule is a plain function of them.

use super::types::{Evidence, Measure, Rule, TimeRange, Value};
use crate::analysis::compiled::Compiled;
use crate::analysis::graphs::GraphReport;
use crate::analysis::idle::{self, IdleReport};
use crate::analysis::links::{Kind, Links};
use crate::analysis::memory::Memory;
use crate::analysis::slicing::{self, Slicer, LOOKUP};
use crate::analysis::steps::StepsReport;
use crate::model::{SliceRef, Slices, Trace};
use crate::ordered::grouped;
use std::cell::RefCell;
use std::cmp::Reverse;

/// At most this many slices and ranges per finding.
pub(super) const MAX_EVIDENCE: usize = 10;

/// The analyses the rules read besides the trace (those `Derived` keeps).
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub links: &'a Links,
    pub steps: &'a StepsReport,
    pub idle: &'a IdleReport,
    pub flops: &'a crate::analysis::flops::Flops,
    pub graphs: &'a GraphReport,
    pub compiled: &'a Compiled,
    /// The memory curves (`Derived::memory_curves`).
    pub memory: &'a Memory,
}

/// Everything a rule is given.
pub(crate) struct Context<'a> {
    pub trace: &'a Trace,
    pub links: &'a Links,
    pub steps: &'a StepsReport,
    pub idle: &'a IdleReport,
    /// The CUDA/HIP graph replays: advice against launch overhead does not name graphs to a
    /// trace whose device work they already replay.
    pub graphs: &'a GraphReport,
    pub compiled: &'a Compiled,
    /// The memory curves, as `Derived` keeps them.
    pub memory: &'a Memory,
    pub census: Census,
    /// The steps' summed length (their `ProfilerStep` spans), the denominator of every share of
    /// step time.
    pub step_total: i64,
    /// The copy operators' self time, walked (every CPU slice) only where `cpu_copy_overhead`
    /// can fire: CPU Exec over its share of step time (`copies_from` of [`Context::new`]), in a
    /// trace whose devices kept their events.
    pub copies: Option<CopyTime>,
    /// The threads that run the steps, with what encloses what on them.
    pub step_lanes: Vec<StepLane>,
    /// What the rules measured against their thresholds ([`Context::measure`]), fired or not.
    measured: RefCell<Vec<Measure>>,
}

impl<'a> Context<'a> {
    /// `copies_from`: the share of step time in CPU Exec above which the copies' self time is
    /// walked (`cpu_copy_overhead`'s threshold, which its rule declares).
    pub(super) async fn new(
        trace: &'a Trace,
        inputs: Inputs<'a>,
        copies_from: f64,
        y: &mut Slicer,
    ) -> Context<'a> {
        let Inputs {
            links,
            steps,
            idle,
            graphs,
            compiled,
            memory,
            ..
        } = inputs;
        let census = Census::new(trace, links, y).await;
        let step_total = steps.steps.iter().map(|s| s.length_ns).sum();
        let heavy = share(steps.total.cpu_exec_ns, step_total) > copies_from;
        let copies = if heavy && steps.devices_without_events.is_empty() {
            Some(copy_self_time(trace, links, y).await)
        } else {
            None
        };
        let step_lanes = StepLane::all(trace, links, steps, y).await;
        Context {
            trace,
            links,
            steps,
            idle,
            graphs,
            compiled,
            memory,
            census,
            step_total,
            copies,
            step_lanes,
            measured: RefCell::new(Vec::new()),
        }
    }

    /// Keeps what `rule` measured against its threshold `name`, whether it fires or not: one
    /// figure a rule, the one nearest to firing where it measures several (a thread, a device
    /// each), in the threshold's unit.
    pub fn measure(&self, rule: &Rule, name: &str, value: Value) {
        self.measured
            .borrow_mut()
            .extend(Measure::of(rule, name, value));
    }

    /// What the rules measured, in the order they ran.
    pub fn into_measured(self) -> Vec<Measure> {
        self.measured.into_inner()
    }

    /// Whether the trace uses graphs already (then a graph is not advice).
    pub fn uses_graphs(&self) -> bool {
        self.graphs.uses_graphs()
    }

    /// What the trace uses against launch overhead already: graphs, and `torch.compile` where
    /// its graphs launched at least half the device time.
    pub fn in_use(&self) -> crate::analysis::backend::InUse {
        let device = self.graphs.device_ns;
        crate::analysis::backend::InUse {
            graphs: self.uses_graphs(),
            compile: device > 0 && 2 * self.compiled.device_ns() >= device,
        }
    }

    /// The steps' spans, as evidence.
    pub fn step_ranges(&self) -> Vec<TimeRange> {
        self.steps
            .steps
            .iter()
            .map(|s| TimeRange {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
            })
            .take(MAX_EVIDENCE)
            .collect()
    }

    /// The steps' `ProfilerStep#N` slices, as evidence.
    pub fn step_slices(&self) -> Vec<SliceRef> {
        self.steps
            .steps
            .iter()
            .filter_map(|s| s.slice)
            .take(MAX_EVIDENCE)
            .collect()
    }
}

/// A duration in the findings' words ([`crate::units::duration`]).
pub(super) fn duration(ns: i64) -> String {
    crate::units::duration(ns as f64)
}

pub(super) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

pub(super) fn share(a: i64, b: i64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

pub(super) fn dur(trace: &Trace, r: SliceRef) -> i64 {
    trace.columns.dur_ns[trace.row(r)]
}

/// The longest of some slices, with their spans.
pub(super) fn evidence_of(trace: &Trace, slices: &[SliceRef]) -> Evidence {
    let mut v: Vec<SliceRef> = slices.to_vec();
    v.sort_by_key(|&r| (Reverse(dur(trace, r)), r));
    v.truncate(MAX_EVIDENCE);
    let ranges = v
        .iter()
        .map(|&r| {
            let s = trace.slices(r.lane as usize);
            TimeRange {
                start_ns: s.start_ns[r.index as usize],
                end_ns: s.end_ns(r.index as usize),
            }
        })
        .collect();
    Evidence { slices: v, ranges }
}

/// Counts and slices the rules look at, gathered in one pass.
pub(crate) struct Census {
    pub(crate) gpu_ops: usize,
    /// Operators, annotations and Python frames (not runtime calls: see `no_cpu_activity`).
    pub(crate) cpu_events: usize,
    pub(crate) runtime_calls: usize,
    pub(crate) cpu_ops: usize,
    pub(crate) with_shapes: usize,
    pub(crate) python: usize,
    pub(crate) first_ops: Vec<SliceRef>,
    pub(crate) dataloader: Vec<SliceRef>,
    pub(crate) pageable: Vec<SliceRef>,
    pub(crate) comm_kernels: Vec<SliceRef>,
}

impl Census {
    pub(super) async fn new(trace: &Trace, links: &Links, y: &mut Slicer) -> Census {
        let mut c = Census {
            gpu_ops: 0,
            cpu_events: 0,
            runtime_calls: 0,
            cpu_ops: 0,
            with_shapes: 0,
            python: 0,
            first_ops: Vec::new(),
            dataloader: Vec::new(),
            pageable: Vec::new(),
            comm_kernels: Vec::new(),
        };
        for (li, l) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(l);
            for i in 0..s.len() {
                // A device op's name is read.
                y.tick(if l.is_gpu() { LOOKUP } else { 1 }).await;
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let kind = links.kinds.of_cat(s.cat[i]);
                if l.is_gpu() {
                    if kind.is_gpu_busy() {
                        c.gpu_ops += 1;
                        let name = trace.str(s.name[i]);
                        if kind == Kind::Memcpy && name.contains("Pageable") {
                            c.pageable.push(r);
                        }
                        if kind == Kind::Kernel
                            && idle::op_class(kind, name) == idle::OpClass::Communication
                        {
                            c.comm_kernels.push(r);
                        }
                    }
                    continue;
                }
                match kind {
                    Kind::CpuOp => {
                        c.cpu_ops += 1;
                        if !s.input_dims[i].is_none() {
                            c.with_shapes += 1;
                        }
                        if c.first_ops.len() < 3 {
                            c.first_ops.push(r);
                        }
                    }
                    Kind::Python => c.python += 1,
                    Kind::Annotation => {}
                    Kind::Runtime => {
                        c.runtime_calls += 1;
                        continue;
                    }
                    _ => continue,
                }
                c.cpu_events += 1;
                if matches!(kind, Kind::CpuOp | Kind::Annotation) {
                    let name = trace.str(s.name[i]);
                    if (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
                        || name.starts_with("enumerate(DataPipe)#")
                    {
                        c.dataloader.push(r);
                    }
                }
            }
        }
        c
    }
}

pub(crate) struct CopyTime {
    pub(crate) copy_self_ns: i64,
    pub(crate) total_self_ns: i64,
    pub(crate) calls: usize,
    /// Rank (1 = first) of the copies' summed self time among the other operator names' totals.
    pub(crate) rank: usize,
    /// The copies with the most self time.
    pub(crate) top: Vec<SliceRef>,
}

/// Self CPU time (duration minus direct children's) of the copy operators and of all operators.
pub(super) async fn copy_self_time(trace: &Trace, links: &Links, y: &mut Slicer) -> CopyTime {
    let mut out = CopyTime {
        copy_self_ns: 0,
        total_self_ns: 0,
        calls: 0,
        rank: 0,
        top: Vec::new(),
    };
    let mut copies: Vec<(i64, SliceRef)> = Vec::new();
    let mut by_name: rustc_hash::FxHashMap<crate::model::StrId, i64> = Default::default();
    for (li, l) in trace.lanes.iter().enumerate() {
        if l.is_gpu() {
            continue;
        }
        let s = trace.slices_of(l);
        let parents = links.parents_of_lane(li);
        let mut self_ns: Vec<i64> = Vec::with_capacity(s.len());
        for &ns in s.dur_ns {
            y.tick(1).await;
            self_ns.push(ns);
        }
        for (i, &p) in parents.iter().enumerate() {
            y.tick(1).await;
            if p != u32::MAX {
                self_ns[p as usize] -= s.dur_ns[i];
            }
        }
        for (i, &own) in self_ns.iter().enumerate() {
            y.tick(1).await;
            if links.kinds.of_cat(s.cat[i]) != Kind::CpuOp {
                continue;
            }
            let own = own.max(0);
            out.total_self_ns += own;
            if !matches!(
                trace.str(s.name[i]),
                "aten::copy_" | "aten::to" | "aten::_to_copy" | "aten::contiguous"
            ) {
                *by_name.entry(s.name[i]).or_default() += own;
            } else {
                out.copy_self_ns += own;
                out.calls += 1;
                copies.push((
                    own,
                    SliceRef {
                        lane: li as u32,
                        index: i as u32,
                    },
                ));
            }
        }
    }
    out.rank = 1 + by_name
        .values()
        .filter(|&&ns| ns > out.copy_self_ns)
        .count();
    slicing::sort_by_key(&mut copies, |&(ns, r)| (Reverse(ns), r), y).await;
    out.top = copies.into_iter().take(MAX_EVIDENCE).map(|c| c.1).collect();
    out
}

/// A CPU thread that runs steps (`ProfilerStep#N`), with each slice's place in what encloses what
/// among its operators, annotations and runtime calls (the critical path's chain: Python frames
/// are not in it, and their time is their enclosing slice's own time).
pub(crate) struct StepLane {
    pub lane: usize,
    /// The steps' slices on this thread, in time order.
    pub steps: Vec<u32>,
    /// Per slice, the nearest enclosing chain slice (`NONE`: none); a Python frame's is its own.
    pub up: Vec<u32>,
    /// The children on the chain of slice `i`, in time order, are
    /// `child[child_start[i]..child_start[i + 1]]`: one list for the thread, where a list per
    /// slice was a million small allocations on the 1 GB scaled trace (and a fifth of the rules'
    /// time, with their sorts and their drops).
    child_start: Vec<u32>,
    child: Vec<u32>,
    /// Per slice, its duration less its chain children's: for a step, the time inside no
    /// operator, annotation or runtime call.
    pub own_ns: Vec<i64>,
}

pub(crate) const NONE: u32 = u32::MAX;

/// Whether a slice of this kind is on a thread's chain (as in the critical path's graph).
pub(crate) fn on_chain(kind: Kind) -> bool {
    matches!(kind, Kind::CpuOp | Kind::Annotation | Kind::Runtime)
}

impl StepLane {
    async fn all(
        trace: &Trace,
        links: &Links,
        steps: &StepsReport,
        y: &mut Slicer,
    ) -> Vec<StepLane> {
        let mut by_lane: Vec<(usize, Vec<u32>)> = Vec::new();
        for r in steps.steps.iter().filter_map(|s| s.slice) {
            match by_lane.iter_mut().find(|(l, _)| *l == r.lane as usize) {
                Some((_, v)) => v.push(r.index),
                None => by_lane.push((r.lane as usize, vec![r.index])),
            }
        }
        let mut out = Vec::new();
        for (lane, mut step_slices) in by_lane {
            let s = trace.slices(lane);
            let parents = links.parents_of_lane(lane);
            let chain: Vec<bool> = s
                .cat
                .iter()
                .map(|&c| on_chain(links.kinds.of_cat(c)))
                .collect();
            // A parent comes before its children (slices are in start order, longer first), so
            // its own nearest chain slice is known when they are reached.
            let mut up: Vec<u32> = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                y.tick(1).await;
                let p = parents.get(i).copied().unwrap_or(NONE);
                up.push(if p == NONE || chain[p as usize] {
                    p
                } else {
                    up.get(p as usize).copied().unwrap_or(NONE)
                });
            }
            let mut own_ns = s.dur_ns.to_vec();
            for i in 0..s.len() {
                y.tick(1).await;
                if chain[i] && up[i] != NONE {
                    own_ns[up[i] as usize] -= s.dur_ns[i];
                }
            }
            // Each slice's chain children in index order, which is time order (ties in index
            // order, as a stable sort by start leaves them).
            let (child_start, child) = grouped(s.len(), || {
                let children = (0..s.len()).filter(|&i| chain[i] && up[i] != NONE);
                children.map(|i| (up[i] as usize, i as u32))
            });
            step_slices.sort_by_key(|&i| s.start_ns[i as usize]);
            out.push(StepLane {
                lane,
                steps: step_slices,
                up,
                child_start,
                child,
                own_ns,
            });
        }
        out
    }

    /// The chain children of slice `i`, in time order.
    pub fn children(&self, i: u32) -> &[u32] {
        let (a, b) = (
            self.child_start[i as usize],
            self.child_start[i as usize + 1],
        );
        &self.child[a as usize..b as usize]
    }

    pub fn slices<'t>(&self, trace: &'t Trace) -> Slices<'t> {
        trace.slices(self.lane)
    }

    pub fn at(&self, index: u32) -> SliceRef {
        SliceRef {
            lane: self.lane as u32,
            index,
        }
    }

    /// The steps' summed span on this thread.
    pub fn steps_ns(&self, trace: &Trace) -> i64 {
        let s = self.slices(trace);
        self.steps.iter().map(|&i| s.dur_ns[i as usize]).sum()
    }

    /// Every slice inside slice `i` (its descendants), in index order.
    pub fn descendants(&self, trace: &Trace, i: u32) -> std::ops::Range<usize> {
        let s = self.slices(trace);
        let end = s.end_ns(i as usize);
        let first = i as usize + 1;
        let last = (first..s.len())
            .find(|&k| s.start_ns[k] >= end)
            .unwrap_or(s.len());
        first..last
    }
}
