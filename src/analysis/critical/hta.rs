//! `--compat hta`: the critical path as HTA 0.5.0 computes it
//! (`hta/analyzers/critical_path_analysis.py`), for comparing with its `summary()`.
//!
//! HTA's graph differs from ours ([`super::graph`]) on purpose-worthy points, kept here as HTA has
//! them:
//! - Only operators and runtime calls are nodes (not `record_function` labels nor `ProfilerStep`),
//!   and consecutive top-level operators of a thread are joined by a zero-weight dependency, so
//!   time between them (Python, the DataLoader outside any operator) is on no path.
//! - The path is the longest weighted path anywhere in the window, not one that spans the step:
//!   its length is the sum of its edges, which is less than the step's span.
//! - Blocking calls (`cudaDeviceSynchronize`, `cudaStreamSynchronize`, `cudaEventQuery`,
//!   `cudaEventSynchronize`, `cudaMemcpy`, `cudaMemcpyAsync`, exact names) end through a
//!   zero-weight sync edge from the device: the wait itself weighs nothing.
//! - A kernel's launch delay is an edge only when HTA's queue length says the stream was empty at
//!   the launch and at the kernel's start; otherwise the gap after the op before it on its stream
//!   (keyed by stream number alone, across devices) is kernel-kernel overhead.
//!
//! Times are HTA's whole microseconds ([`crate::analysis::idle::hta::round`]). The window is the
//! annotation's instance (CPU events by start, then device events, as in a Kineto file's order);
//! CPU events starting in it with a positive duration, and device ops whose launch does, are kept.

use super::{PathOptions, Segment, StepPath};
use crate::analysis::idle::hta::{round, stream_value};
use crate::analysis::links::{Kind, Links};
use crate::analysis::steps::StepsReport;
use crate::analysis::summary::lane_name;
use crate::model::{SliceRef, Trace};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// HTA's `CPEdgeType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Operator,
    Dependency,
    LaunchDelay,
    KernelKernel,
    SyncDependency,
}

const BLOCKING: [&str; 6] = [
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
];

/// `get_runtime_launch_events_query`: the calls that enqueue device work.
const LAUNCHES: [&str; 11] = [
    "cudaMemsetAsync",
    "cudaMemcpyAsync",
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemsetAsync",
    "hipMemcpyAsync",
    "hipMemcpyWithStream",
];

/// One event as HTA's dataframe has it: whole-us times and the `stream` arg (-1 on CPU lanes).
#[derive(Clone, Copy)]
struct Ev {
    ts: i64,
    end: i64,
    stream: i64,
}

struct Edge {
    from: u32,
    to: u32,
    weight: i64,
    ty: Ty,
    /// HTA's `edge_to_event_map`: operator and kernel-kernel edges only.
    slice: Option<SliceRef>,
}

/// The events of a trace in HTA's terms, shared by its windows.
struct Events<'t> {
    trace: &'t Trace,
    links: &'t Links,
    /// Per lane, per slice.
    ev: Vec<Vec<Ev>>,
    /// Each runtime call's device event (`index_correlation` on the CPU side).
    kernel_of: FxHashMap<SliceRef, SliceRef>,
    /// HTA's queue length just after each launch call and each device op it launched.
    queue: FxHashMap<SliceRef, i64>,
    /// `cudaStreamWaitEvent` call → the device op of the next launch on its thread and stream.
    next_launch: FxHashMap<SliceRef, SliceRef>,
    /// `cudaEventRecord` correlation → the device op of the last launch on its stream before it.
    previous_launch: FxHashMap<i64, SliceRef>,
}

fn int_arg(trace: &Trace, r: SliceRef, key: &str) -> Option<i64> {
    let s = trace.slices(r.lane as usize);
    let v = stream_value(trace.args.field(s.args[r.index as usize], key)?);
    (v != -1).then_some(v)
}

impl<'t> Events<'t> {
    fn new(trace: &'t Trace, links: &'t Links) -> Events<'t> {
        let origin = trace.meta.origin_ns;
        let mut ev = Vec::with_capacity(trace.lanes.len());
        let mut kernel_of = FxHashMap::default();
        for (li, l) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(l);
            let mut v = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                let (ts, end) = round(origin, s.start_ns[i], s.dur_ns[i]);
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let stream = if l.is_gpu() {
                    int_arg(trace, r, "stream").unwrap_or(-1)
                } else {
                    -1
                };
                if let Some(call) = links.launch(r).filter(|_| stream != -1) {
                    kernel_of.insert(call, r);
                }
                v.push(Ev { ts, end, stream });
            }
            ev.push(v);
        }
        let mut e = Events {
            trace,
            links,
            ev,
            kernel_of,
            queue: FxHashMap::default(),
            next_launch: FxHashMap::default(),
            previous_launch: FxHashMap::default(),
        };
        e.queue_lengths();
        e.event_links();
        e
    }

    fn get(&self, r: SliceRef) -> Ev {
        self.ev[r.lane as usize][r.index as usize]
    }

    fn name(&self, r: SliceRef) -> &'t str {
        self.trace.slice_name(r)
    }

    /// The launch calls in time order, each with its device op (`_get_cuda_runtime_calls_df`).
    fn launches(&self) -> Vec<(SliceRef, SliceRef)> {
        let mut v: Vec<(SliceRef, SliceRef)> = self
            .kernel_of
            .iter()
            .filter(|(c, _)| LAUNCHES.contains(&self.name(**c)))
            .map(|(c, k)| (*c, *k))
            .collect();
        v.sort_by_key(|(c, _)| (self.get(*c).ts, c.lane, c.index));
        v
    }

    /// `TraceCounters._get_queue_length_time_series_for_rank`: per stream, +1 at each launch
    /// call, -1 at each device op it launched, summed in time order (a launch first on a tie).
    fn queue_lengths(&mut self) {
        let mut points: Vec<(i64, u8, SliceRef, i64)> = Vec::new();
        for (c, k) in self.launches() {
            let stream = self.get(k).stream;
            points.push((self.get(c).ts, 0, c, stream));
            points.push((self.get(k).ts, 1, k, stream));
        }
        points.sort_by_key(|p| (p.0, p.1, p.2.lane, p.2.index));
        let mut level: FxHashMap<i64, i64> = FxHashMap::default();
        for (_, which, r, stream) in points {
            let q = level.entry(stream).or_default();
            *q += if which == 0 { 1 } else { -1 };
            self.queue.insert(r, *q);
        }
    }

    /// The launches around CUDA events: the last launch on a stream before each `cudaEventRecord`
    /// (`_get_cuda_event_record_df`) and the next launch on a thread and stream after each
    /// `cudaStreamWaitEvent` (`_get_cuda_stream_wait_event_df`).
    fn event_links(&mut self) {
        let trace = self.trace;
        // The stream and device each recorded event is on, from the syncs that wait on it.
        let mut recorded_on: FxHashMap<i64, (i64, i64)> = FxHashMap::default();
        let mut records: Vec<SliceRef> = Vec::new();
        let mut waits: Vec<SliceRef> = Vec::new();
        for (li, l) in trace.lanes.iter().enumerate() {
            for i in 0..l.slice_count() {
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                if l.is_gpu() {
                    let on = int_arg(trace, r, "wait_on_stream");
                    let corr = int_arg(trace, r, "wait_on_cuda_event_record_corr_id");
                    if let (Some(on), Some(corr)) = (on, corr) {
                        recorded_on.entry(corr).or_insert((on, l.pid));
                    }
                } else {
                    match self.name(r) {
                        "cudaEventRecord" => records.push(r),
                        "cudaStreamWaitEvent" if self.kernel_of.contains_key(&r) => waits.push(r),
                        _ => {}
                    }
                }
            }
        }
        if records.is_empty() && waits.is_empty() {
            return;
        }
        let launches = self.launches();
        let pid_of = |k: SliceRef| trace.lanes[k.lane as usize].pid;
        for rec in records {
            let s = trace.slices(rec.lane as usize);
            let corr = s.correlation[rec.index as usize];
            let Some(&(stream, gpu)) = recorded_on.get(&corr) else {
                continue;
            };
            let ts = self.get(rec).ts;
            let prev = launches
                .iter()
                .take_while(|(c, _)| self.get(*c).ts <= ts)
                .filter(|(_, k)| self.get(*k).stream == stream && pid_of(*k) == gpu)
                .last();
            if let Some(&(_, k)) = prev {
                self.previous_launch.insert(corr, k);
            }
        }
        for w in waits {
            let stream = self.get(self.kernel_of[&w]).stream;
            let ts = self.get(w).ts;
            let next = launches.iter().find(|(c, k)| {
                c.lane == w.lane && self.get(*c).ts > ts && self.get(*k).stream == stream
            });
            if let Some(&(_, k)) = next {
                self.next_launch.insert(w, k);
            }
        }
    }
}

/// One window's graph.
struct Graph {
    time: Vec<i64>,
    lane: Vec<u32>,
    edges: Vec<Edge>,
    nodes: FxHashMap<SliceRef, (u32, u32)>,
}

impl Graph {
    fn node(&mut self, t: i64, lane: u32) -> u32 {
        self.time.push(t);
        self.lane.push(lane);
        (self.time.len() - 1) as u32
    }

    /// `_add_edge_helper`: dependencies and zeroed edges weigh 0, the rest the time between.
    fn edge(&mut self, from: u32, to: u32, ty: Ty, zero: bool, slice: Option<SliceRef>) {
        let weight = if zero || matches!(ty, Ty::Dependency | Ty::SyncDependency) {
            0
        } else {
            self.time[to as usize] - self.time[from as usize]
        };
        self.edges.push(Edge {
            from,
            to,
            weight,
            ty,
            slice,
        });
    }
}

/// HTA's paths for the windows the options ask for: each step (HTA's annotation `ProfilerStep#N`,
/// instance 0), the annotation's instance, or the whole trace when there are no steps.
pub fn paths(
    trace: &Trace,
    links: &Links,
    steps: &StepsReport,
    opts: &PathOptions,
) -> Result<Vec<StepPath>, String> {
    let evs = Events::new(trace, links);
    let mut windows: Vec<(String, i64, i64)> = Vec::new();
    if let Some((name, instance)) = &opts.annotation {
        let mut found: Vec<(bool, i64, SliceRef)> = Vec::new();
        for (li, l) in trace.lanes.iter().enumerate() {
            for i in 0..l.slice_count() {
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                if evs.name(r).contains(name.as_str()) {
                    found.push((l.is_gpu(), evs.get(r).ts, r));
                }
            }
        }
        found.sort_by_key(|f| (f.0, f.1));
        let count = found.len();
        let (_, _, r) = found.get(*instance).copied().ok_or_else(|| {
            format!(
                "--annotation '{name}' has {count} instance(s); --instance {instance} is not one"
            )
        })?;
        let e = evs.get(r);
        windows.push((format!("{} #{instance}", evs.name(r)), e.ts, e.end));
    } else if steps.synthetic {
        let all = evs.ev.iter().flatten();
        let a = all.clone().map(|e| e.ts).min().unwrap_or(0);
        let b = all.map(|e| e.end).max().unwrap_or(0);
        windows.push(("(whole trace)".to_string(), a, b));
    } else {
        for st in &steps.steps {
            if opts.step.as_ref().is_some_and(|n| *n != st.name) {
                continue;
            }
            if let Some(r) = st.slice {
                let e = evs.get(r);
                windows.push((st.name.clone(), e.ts, e.end));
            }
        }
        if let Some(n) = &opts.step {
            if windows.is_empty() {
                return Err(format!("no step named '{n}'"));
            }
        }
    }
    Ok(windows
        .into_iter()
        .map(|(name, a, b)| evs.path(name, a, b))
        .collect())
}

impl Events<'_> {
    fn path(&self, name: String, a: i64, b: i64) -> StepPath {
        let g = self.graph(a, b);
        let path = longest_path(&g);
        let origin_us = self.trace.meta.origin_ns as f64 / 1e3;
        let rank = self.trace.rank();
        let mut segments: Vec<Segment> = Vec::new();
        let mut shares: BTreeMap<&'static str, f64> = BTreeMap::new();
        let mut length = 0i64;
        for &k in &path {
            let e = &g.edges[k];
            let Some(bound_by) = self.bound_by(e) else {
                continue;
            };
            length += e.weight;
            *shares.entry(bound_by).or_default() += e.weight as f64;
            if e.weight == 0 {
                continue;
            }
            let (name, lane) = match e.slice {
                Some(r) => (
                    self.name(r).to_string(),
                    lane_name(self.trace, r.lane as usize),
                ),
                None => (
                    String::new(),
                    lane_name(self.trace, g.lane[e.to as usize] as usize),
                ),
            };
            segments.push(Segment {
                start_us: g.time[e.from as usize] as f64 - origin_us,
                end_us: g.time[e.to as usize] as f64 - origin_us,
                rank,
                lane,
                name,
                kind: match e.ty {
                    Ty::Operator if e.slice.is_some_and(|r| self.get(r).stream != -1) => "device",
                    Ty::Operator => "cpu",
                    Ty::LaunchDelay => "launch",
                    Ty::KernelKernel => "stream",
                    Ty::Dependency | Ty::SyncDependency => "sync",
                },
                bound_by,
                slice: e.slice,
                captured_by: None,
            });
        }
        for v in shares.values_mut() {
            *v *= 100.0 / length.max(1) as f64;
        }
        let (t0, t1) = match (path.first(), path.last()) {
            (Some(&f), Some(&l)) => (
                g.time[g.edges[f].from as usize],
                g.time[g.edges[l].to as usize],
            ),
            _ => (a, a),
        };
        StepPath {
            rank,
            step: name,
            start_us: t0 as f64 - origin_us,
            end_us: t1 as f64 - origin_us,
            length_us: length as f64,
            device_end_us: None,
            length_with_device_us: None,
            bound_by: shares.clone(),
            hta_bound_by: shares,
            segments,
        }
    }

    /// HTA's `bound_by` of an edge on the path; `None` for dependencies (which weigh 0).
    fn bound_by(&self, e: &Edge) -> Option<&'static str> {
        Some(match e.ty {
            Ty::KernelKernel => "gpu_kernel_kernel_overhead",
            Ty::LaunchDelay => "gpu_kernel_launch_overhead",
            Ty::Dependency | Ty::SyncDependency => return None,
            Ty::Operator => match e.slice {
                Some(r) if self.get(r).stream >= 0 => {
                    let n = self.name(r);
                    if n.starts_with("nccl") && n[4..].contains("Kernel") {
                        "gpu_communication_bound"
                    } else {
                        "gpu_compute_bound"
                    }
                }
                _ => "cpu_bound",
            },
        })
    }

    /// `CPGraph._construct_graph` for the window `[a, b]`.
    fn graph(&self, a: i64, b: i64) -> Graph {
        let trace = self.trace;
        let kinds = &self.links.kinds;
        let mut g = Graph {
            time: Vec::new(),
            lane: Vec::new(),
            edges: Vec::new(),
            nodes: FxHashMap::default(),
        };
        let in_window = |e: Ev| e.ts >= a && e.ts <= b && e.end - e.ts > 0;
        // Nodes: operators and runtime calls starting in the window, device ops launched in it.
        let mut cpu: Vec<Vec<usize>> = vec![Vec::new(); trace.lanes.len()];
        let mut device: Vec<SliceRef> = Vec::new();
        for (li, l) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(l);
            for (i, &e) in self.ev[li].iter().enumerate() {
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let kind = kinds.of_cat(s.cat[i]);
                let keep = if l.is_gpu() {
                    e.stream != -1 && self.links.launch(r).is_some_and(|c| in_window(self.get(c)))
                } else {
                    matches!(kind, Kind::CpuOp | Kind::Runtime) && in_window(e)
                };
                if !keep {
                    continue;
                }
                let n0 = g.node(e.ts, li as u32);
                let n1 = g.node(e.end, li as u32);
                g.nodes.insert(r, (n0, n1));
                if l.is_gpu() {
                    device.push(r);
                } else {
                    cpu[li].push(i);
                }
            }
        }
        for (li, idx) in cpu.iter_mut().enumerate() {
            self.call_stack(&mut g, li, idx);
        }
        self.kernels(&mut g, device);
        g
    }

    /// `_construct_graph_from_call_stack`: a thread's operators entered and exited depth first;
    /// consecutive top-level operators joined by a dependency.
    fn call_stack(&self, g: &mut Graph, lane: usize, idx: &mut [usize]) {
        let ev = &self.ev[lane];
        idx.sort_by_key(|&i| (ev[i].ts, std::cmp::Reverse(ev[i].end), i));
        let r = |i: usize| SliceRef {
            lane: lane as u32,
            index: i as u32,
        };
        let mut last: Option<(u32, bool, usize)> = None; // node, is start, its event
        let mut last_top: Option<u32> = None;
        let mut stack: Vec<usize> = Vec::new();
        let exit = |g: &mut Graph,
                    last: &mut Option<(u32, bool, usize)>,
                    stack: &mut Vec<usize>,
                    last_top: &mut Option<u32>| {
            let i = stack.pop().expect("exit of an open event");
            let (_, end) = g.nodes[&r(i)];
            if let Some((n, is_start, ev_i)) = *last {
                let zero = BLOCKING.contains(&self.name(r(i)));
                let slice = self.attribute(r(ev_i), is_start, r(i), false);
                g.edge(n, end, Ty::Operator, zero, slice);
            }
            if stack.is_empty() {
                *last = None;
                *last_top = Some(end);
            } else {
                *last = Some((end, false, i));
            }
        };
        for &i in idx.iter() {
            while stack.last().is_some_and(|&top| ev[top].end <= ev[i].ts) {
                exit(g, &mut last, &mut stack, &mut last_top);
            }
            let (start, _) = g.nodes[&r(i)];
            if stack.is_empty() {
                if let Some(t) = last_top {
                    g.edge(t, start, Ty::Dependency, false, None);
                }
            }
            if let Some((n, is_start, ev_i)) = last {
                let slice = self.attribute(r(ev_i), is_start, r(i), true);
                g.edge(n, start, Ty::Operator, false, slice);
            }
            last = Some((start, true, i));
            stack.push(i);
        }
        while !stack.is_empty() {
            exit(g, &mut last, &mut stack, &mut last_top);
        }
    }

    /// `_attribute_edge` for an operator edge from a node of `from` (its start or end) to one of
    /// `to`: the source from a start, the destination from end to end, and the source's parent
    /// from a child's end to its sibling's start.
    fn attribute(
        &self,
        from: SliceRef,
        from_start: bool,
        to: SliceRef,
        to_start: bool,
    ) -> Option<SliceRef> {
        match (from_start, to_start) {
            (true, _) => Some(from),
            (false, false) => Some(to),
            (false, true) => self.links.parent(from),
        }
    }

    /// `_construct_graph_from_kernels`: device op durations, launch delays or kernel-kernel gaps,
    /// and the sync edges of `cuda_sync` events.
    fn kernels(&self, g: &mut Graph, mut device: Vec<SliceRef>) {
        let trace = self.trace;
        let kinds = &self.links.kinds;
        let is_sync = |r: SliceRef| kinds.of_cat(trace.columns.cat[trace.row(r)]) == Kind::Sync;
        // Syncs by their end, so that one overlapping a copy comes after it.
        device.sort_by_key(|&r| {
            let e = self.get(r);
            (if is_sync(r) { e.end } else { e.ts }, r.lane, r.index)
        });
        let mut last: FxHashMap<i64, u32> = FxHashMap::default();
        let mut kernel_sync: FxHashMap<SliceRef, SliceRef> = FxHashMap::default();
        for r in device {
            let e = self.get(r);
            let call = self.links.launch(r).expect("device nodes have a launch");
            if is_sync(r) {
                let Some(&(_, call_end)) = g.nodes.get(&call) else {
                    continue;
                };
                let waited = int_arg(trace, r, "wait_on_cuda_event_record_corr_id")
                    .and_then(|c| self.previous_launch.get(&c).copied());
                match self.name(r) {
                    "Stream Wait Event" => {
                        if let (Some(src), Some(dest)) = (waited, self.next_launch.get(&call)) {
                            kernel_sync.insert(*dest, src);
                        }
                    }
                    "Event Sync" => {
                        if let Some(&(_, src_end)) = waited.and_then(|k| g.nodes.get(&k)) {
                            g.edge(src_end, call_end, Ty::SyncDependency, false, None);
                        }
                    }
                    "Context Sync" => {
                        let mut ends: Vec<u32> = last.values().copied().collect();
                        ends.sort_unstable();
                        for n in ends {
                            g.edge(n, call_end, Ty::SyncDependency, false, None);
                        }
                    }
                    "Stream Sync" => {
                        if let Some(&n) = last.get(&e.stream) {
                            g.edge(n, call_end, Ty::SyncDependency, false, None);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            let (start, end) = g.nodes[&r];
            g.edge(start, end, Ty::Operator, false, Some(r));
            let sync_end = kernel_sync
                .remove(&r)
                .and_then(|k| g.nodes.get(&k))
                .map(|n| n.1);
            if let Some(n) = sync_end {
                g.edge(n, start, Ty::SyncDependency, false, None);
            }
            let call_ts = self.get(call).ts;
            let prev = last.get(&e.stream).copied();
            let before = |n: Option<u32>, t: i64| n.is_none_or(|n| g.time[n as usize] < t);
            let idle = self.queue.get(&call) == Some(&1)
                && self.queue.get(&r) == Some(&0)
                && before(prev, call_ts)
                && before(sync_end, call_ts);
            match (g.nodes.get(&call), prev) {
                (Some(&(call_start, _)), _) if idle => {
                    g.edge(call_start, start, Ty::LaunchDelay, false, None);
                }
                (_, Some(p))
                    if sync_end.is_none_or(|s| g.time[s as usize] < g.time[p as usize]) =>
                {
                    let prev_op = g
                        .edges
                        .iter()
                        .rev()
                        .find(|x| x.to == p)
                        .and_then(|x| x.slice);
                    g.edge(p, start, Ty::KernelKernel, false, prev_op);
                }
                _ => {}
            }
            last.insert(e.stream, end);
        }
    }
}

/// `networkx.dag_longest_path` by weight: the edges of the heaviest path in the graph.
fn longest_path(g: &Graph) -> Vec<usize> {
    let n = g.time.len();
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in g.edges.iter().enumerate() {
        incoming[e.to as usize].push(k);
        outgoing[e.from as usize].push(k);
    }
    // Kahn's order, ties by time.
    let mut indegree: Vec<usize> = incoming.iter().map(|v| v.len()).collect();
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<(i64, u32)>> = (0..n as u32)
        .filter(|&v| indegree[v as usize] == 0)
        .map(|v| std::cmp::Reverse((g.time[v as usize], v)))
        .collect();
    let mut dist: Vec<(i64, Option<usize>)> = vec![(0, None); n];
    let mut best: Option<(i64, u32)> = None;
    while let Some(std::cmp::Reverse((_, v))) = ready.pop() {
        let d = incoming[v as usize]
            .iter()
            .map(|&k| (dist[g.edges[k].from as usize].0 + g.edges[k].weight, k))
            .fold(None, |m: Option<(i64, usize)>, x| match m {
                Some(m) if m.0 >= x.0 => Some(m),
                _ => Some(x),
            });
        dist[v as usize] = match d {
            Some((w, k)) if w >= 0 => (w, Some(k)),
            _ => (0, None),
        };
        if best.is_none_or(|b| dist[v as usize].0 > b.0) {
            best = Some((dist[v as usize].0, v));
        }
        for &k in &outgoing[v as usize] {
            let w = g.edges[k].to as usize;
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(std::cmp::Reverse((g.time[w], w as u32)));
            }
        }
    }
    let mut path = Vec::new();
    let mut v = best.map(|b| b.1);
    while let Some(k) = v.and_then(|v| dist[v as usize].1) {
        path.push(k);
        v = Some(g.edges[k].from);
    }
    path.reverse();
    path
}
