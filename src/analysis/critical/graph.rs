//! The dependency graph of one trace: time points of the CPU threads and device streams, joined by
//! edges whose weights reproduce the measured times exactly (every node's time is the maximum over
//! its incoming edges of source time plus weight, and at least one edge reaches it exactly).
//!
//! - A CPU thread is a chain of its slice boundaries (operators, labels, runtime calls; not Python
//!   frames). The edge between two boundaries weighs the time between them and is charged to the
//!   innermost slice open then (none: nothing recorded). A blocking call (`*Synchronize`,
//!   `cudaMemcpy*`/`hipMemcpy*`) that returned after device work ended inside it weighs 0; a sync
//!   edge from that device op's end carries the wait instead, so a faster device shortens it.
//! - A device op is a start and an end node with its duration between. It follows the op before
//!   it on its stream and its launch (the runtime call, [`Links::launch`]): when the stream was
//!   idle at the launch, the launch edge weighs the measured launch delay and the stream edge 0
//!   (launch overhead); when work was queued, the stream edge weighs the gap after the op before
//!   (kernel-kernel overhead) and the launch edge at most the call's duration, so that in a replay
//!   an op never starts before its launch.
//! - A virtual source at the trace's start reaches each chain's and stream's first node.
//!
//! - A cross-stream wait (`cudaStreamWaitEvent`, where `cuda_sync` events record it) joins the
//!   op that the recorded event followed to the next op launched on the waiting stream.

use super::threads;
use crate::analysis::idle::{op_class, OpClass};
use crate::analysis::links::{Kind, Links};
use crate::analysis::slicing::{self, block_on, Slicer, LOOKUP};
use crate::model::category::Kinds;
use crate::model::{PerLane, SliceRef, Trace};
use crate::ordered::grouped;
use rustc_hash::FxHashMap;

/// What an edge stands for; with its attributed slice, what a path segment is bound by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// Time on a CPU thread inside a slice (or in no slice).
    Cpu,
    /// A blocking call's return after the device op it waited for.
    Sync,
    /// A device op's duration.
    Device(OpClass),
    /// From a launch call to its device op, the stream idle meanwhile.
    Launch,
    /// From one device op to the next on its stream.
    Stream,
    /// From the source to a chain's or stream's first node.
    Start,
    /// From another rank's arrival at a collective to this rank's end of it: the transfer after
    /// the last arrival ([`super::job`]).
    Collective,
}

#[derive(Debug, Clone, Copy)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub weight: i64,
    pub kind: EdgeKind,
    /// The slice the time is charged to: the innermost open CPU slice, the device op, or the
    /// device op a launch or stream edge leads to. Read through [`Graph::slice`].
    pub slice: EdgeSlice,
}

/// An edge's slice, on the lane of the node the edge leads to (every edge's is), so its index
/// alone: an edge is 24 bytes where an `Option<SliceRef>` made it 32, and edges are the graph's
/// largest column (64 MB of 10^6 slices on 10^5 threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeSlice(u32);

const _: () = assert!(std::mem::size_of::<Edge>() == 24);

impl EdgeSlice {
    pub const NONE: EdgeSlice = EdgeSlice(u32::MAX);
}

impl From<SliceRef> for EdgeSlice {
    fn from(r: SliceRef) -> EdgeSlice {
        EdgeSlice(r.index)
    }
}

pub struct Graph {
    /// Measured time of each node (ns from the trace's start); node 0 is the source.
    pub time: Vec<i64>,
    /// The lane of each node (`u32::MAX` for the source).
    pub lane: Vec<u32>,
    pub edges: Vec<Edge>,
    /// Incoming edges of each node, as ranges into `in_edges`.
    pub in_start: Vec<u32>,
    pub in_edges: Vec<u32>,
    /// Nodes in an order where every edge goes forward.
    pub order: Vec<u32>,
    /// For each CPU slice that is a chain boundary: its start and end nodes; per lane, by index.
    pub cpu_nodes: PerLane<(u32, u32)>,
    /// For each device op: its start and end nodes; per lane, by index.
    pub device_nodes: PerLane<(u32, u32)>,
    /// Per CPU lane and slice, the innermost enclosing chain slice (`u32::MAX` for none).
    pub parent: PerLane<u32>,
    /// Per CPU lane and chain slice, whether it or a chain slice holding it is a DataLoader's
    /// `__next__` (settled as the chain is built: a climb from every path segment was quadratic
    /// in the nesting).
    pub loading: PerLane<bool>,
    /// Per device lane and op, the runtime call that launched it (lane `u32::MAX` for none): an
    /// edit on an operator carries the device work it launched ([`super::whatif`]).
    pub launched_by: PerLane<SliceRef>,
}

/// No slice: [`Graph::launched_by`] of a device op without a launch.
pub const NO_SLICE: SliceRef = SliceRef {
    lane: u32::MAX,
    index: u32::MAX,
};

pub(super) const NONE: u32 = u32::MAX;

/// Names of the calls that block the CPU until device work is done.
pub fn is_blocking(name: &str) -> bool {
    name.contains("Synchronize")
        || name.starts_with("cudaMemcpy")
        || name.starts_with("hipMemcpy")
        || name == "cudaEventQuery"
}

/// Whether a CPU slice is a chain boundary (Python frames and the whole-trace span are not).
fn on_chain(kind: Kind) -> bool {
    matches!(kind, Kind::CpuOp | Kind::Annotation | Kind::Runtime)
}

pub fn build(trace: &Trace, links: &Links) -> Graph {
    block_on(build_sliced(trace, links, &mut Slicer::never()))
}

/// [`build`], pausing as `y` says: the page builds the graph between frames (1 GB scaled trace:
/// about half a second of its worker's time in one go). In passes: the graph with room for its
/// nodes (`with_room`), the device ops' nodes (`device_op_nodes`), the CPU threads' chains and
/// their blocking calls (`cpu_chains`), the edges between threads (`threads`), the blocking
/// calls' sync edges (`sync_edges`), the device ops' duration, launch and stream edges
/// (`device_edges`), the cross-stream waits (`stream_waits`), then the index.
pub async fn build_sliced(trace: &Trace, links: &Links, y: &mut Slicer) -> Graph {
    let kinds = &links.kinds;
    let mut g = with_room(trace, kinds);
    y.tick(trace.slice_count() as u64).await;
    let ops = device_op_nodes(trace, kinds, &mut g, y).await;
    let Chains {
        chain_in,
        lane_nodes,
        mut blocking_waits,
    } = cpu_chains(trace, kinds, &mut g, &ops, y).await;
    let callers = threads::callers(trace, &lane_nodes);
    threads::collective_threads(
        trace,
        &mut g,
        &mut blocking_waits,
        &chain_in,
        &callers,
        &lane_nodes,
    );
    threads::helper_threads(trace, kinds, &mut g, &chain_in, &callers, &lane_nodes);
    y.tick(LOOKUP * trace.lanes.len() as u64).await;
    sync_edges(&mut g, &chain_in, &blocking_waits);
    device_edges(trace, links, &mut g, &ops, y).await;
    stream_waits(trace, links, &mut g, &ops_nodes(&ops));
    y.tick(ops.len() as u64).await;
    // The index is the build's peak: what only the passes above read goes first (16 MB of the
    // 10^6 slices on 10^5 threads shape).
    drop((ops, chain_in, lane_nodes, callers, blocking_waits));
    g.index_sliced(y).await;
    g
}

/// The graph's source node (at the trace's first start), its per-lane tables made, and room for
/// every node and edge.
fn with_room(trace: &Trace, kinds: &Kinds) -> Graph {
    // Each lane's busy device ops (device lanes) or chain slices (CPU lanes): the room to make
    // below, and which CPU lanes have a chain.
    let counts: Vec<usize> = trace
        .lanes
        .iter()
        .map(|l| {
            let cats = trace.slices_of(l).cat.iter().map(|&c| kinds.of_cat(c));
            if l.is_gpu() {
                cats.filter(|k| k.is_gpu_busy()).count()
            } else {
                cats.filter(|&k| on_chain(k)).count()
            }
        })
        .collect();
    let lens = |device: bool| {
        trace.lanes.iter().zip(&counts).map(move |(l, &n)| {
            if l.is_gpu() == device && (device || n > 0) {
                l.slice_count()
            } else {
                0
            }
        })
    };
    let mut g = Graph {
        time: vec![trace.columns.start_ns.iter().min().copied().unwrap_or(0)],
        lane: vec![NONE],
        edges: Vec::new(),
        in_start: Vec::new(),
        in_edges: Vec::new(),
        order: Vec::new(),
        cpu_nodes: PerLane::filled(lens(false), (NONE, NONE)),
        device_nodes: PerLane::filled(lens(true), (NONE, NONE)),
        parent: PerLane::filled(lens(false), NONE),
        loading: PerLane::filled(lens(false), false),
        launched_by: PerLane::filled(lens(true), NO_SLICE),
    };
    // Room for every node and edge at once (2 nodes a device op or chain slice at most, and about
    // as many edges, a device op's launch and stream edges besides): grown by doubling, these
    // columns were copied as they grew, and faulted in twice (4% of the build at 1 GB).
    let (busy, chain) = trace
        .lanes
        .iter()
        .zip(&counts)
        .fold((0, 0), |(busy, chain), (l, &n)| {
            if l.is_gpu() {
                (busy + n, chain)
            } else {
                (busy, chain + n)
            }
        });
    drop(counts);
    let nodes = 1 + 2 * (busy + chain);
    g.time.reserve(nodes);
    g.lane.reserve(nodes);
    g.edges.reserve(nodes + busy);
    g
}

/// The start and end nodes of each busy device op, lane by lane in time order: first, so that
/// blocking calls can find what they waited for. Returns the ops in that order.
async fn device_op_nodes(trace: &Trace, kinds: &Kinds, g: &mut Graph, y: &mut Slicer) -> Vec<Op> {
    let mut ops: Vec<Op> = Vec::new();
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| l.is_gpu()) {
        let s = trace.slices_of(l);
        let mut idx: Vec<usize> = (0..s.len())
            .filter(|&i| kinds.of_cat(s.cat[i]).is_gpu_busy())
            .collect();
        idx.sort_by_key(|&i| (s.start_ns[i], s.end_ns(i)));
        for i in idx {
            let a = g.push_node(s.start_ns[i], li);
            let b = g.push_node(s.end_ns(i), li);
            g.device_nodes[li][i] = (a, b);
            ops.push(Op {
                lane: li,
                index: i,
                start: a,
                end: b,
            });
        }
        y.tick(s.len() as u64).await;
    }
    ops
}

/// What the CPU chains leave for the passes after them.
struct Chains {
    /// The chain edge into each node (`NONE` for none), for every node.
    chain_in: Vec<u32>,
    /// Per CPU lane, its chain's nodes in time order.
    lane_nodes: PerLane<u32>,
    /// (device op's end node, blocking call's end node, wait): a blocking call and the device op
    /// that ended last inside it.
    blocking_waits: Vec<(u32, u32, i64)>,
}

/// Each CPU thread's chain: a node at every boundary of its chain slices, edges along it, each
/// slice's parent and DataLoader flag; and its blocking calls with the device op each waited for.
async fn cpu_chains(
    trace: &Trace,
    kinds: &Kinds,
    g: &mut Graph,
    ops: &[Op],
    y: &mut Slicer,
) -> Chains {
    // Device op ends in time order, for the blocking calls.
    let mut ends: Vec<(i64, u32)> = ops
        .iter()
        .map(|o| (g.time[o.end as usize], o.end))
        .collect();
    ends.sort_unstable();

    let loading = trace.strings.each(super::is_data_loading);
    let mut blocking_waits: Vec<(u32, u32, i64)> = Vec::new();
    let mut chain_in: Vec<u32> = Vec::new();
    // Per CPU lane, its chain's nodes in time order.
    let mut chain_nodes: Vec<(u32, u32)> = Vec::new();
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
        let s = trace.slices_of(l);
        let mut idx: Vec<usize> = (0..s.len())
            .filter(|&i| on_chain(kinds.of_cat(s.cat[i])))
            .collect();
        if idx.is_empty() {
            continue;
        }
        idx.sort_by_key(|&i| (s.start_ns[i], std::cmp::Reverse(s.end_ns(i))));
        // Boundaries in time order; the stack of open slices, each closing at its end cut to its
        // parent's (a slice that outlives its parent, in a damaged trace, ends with it).
        let chain = Chain {
            lane: li,
            last: None,
            stack: Vec::new(),
            nodes: Vec::new(),
        };
        let mut state = (&mut *g, &mut chain_in, chain);
        slicing::each(y, idx.len(), &mut state, |(g, chain_in, chain), k| {
            let i = idx[k];
            chain.close_until(g, chain_in, s.start_ns[i]);
            let parent = chain.stack.last().copied();
            g.parent[li][i] = parent.map_or(NONE, |p| p.0 as u32);
            g.loading[li][i] =
                loading[s.name[i].0 as usize] || parent.is_some_and(|p| g.loading[li][p.0]);
            let n = chain.boundary(g, chain_in, s.start_ns[i], parent.map(|p| p.0));
            g.cpu_nodes[li][i].0 = n;
            let end = s.end_ns(i).max(s.start_ns[i]);
            chain.stack.push((i, parent.map_or(end, |p| end.min(p.1))));
            1
        })
        .await;
        let (_, _, mut chain) = state;
        chain.close_until(g, &mut chain_in, i64::MAX);
        chain_nodes.extend(chain.nodes.iter().map(|&n| (li as u32, n)));
        // Blocking calls: the device op that ended last inside the call.
        let mut state = (&*g, &mut blocking_waits);
        slicing::each(y, idx.len(), &mut state, |(g, blocking_waits), k| {
            let i = idx[k];
            let (a, b) = g.cpu_nodes[li][i];
            if a == NONE || b == NONE || kinds.of_cat(s.cat[i]) != Kind::Runtime {
                return 1;
            }
            if !is_blocking(trace.str(s.name[i])) {
                return LOOKUP;
            }
            let (t0, t1) = (s.start_ns[i], s.end_ns(i));
            let k = ends.partition_point(|e| e.0 <= t1);
            if k > 0 && ends[k - 1].0 > t0 {
                blocking_waits.push((ends[k - 1].1, b, t1 - ends[k - 1].0));
            }
            LOOKUP
        })
        .await;
    }
    chain_in.resize(g.time.len(), NONE);
    let lane_nodes = PerLane::grouped(trace.lanes.len(), || {
        chain_nodes.iter().map(|&(l, n)| (l as usize, n))
    });
    drop(chain_nodes);
    Chains {
        chain_in,
        lane_nodes,
        blocking_waits,
    }
}

/// The wait of each blocking call moves from its chain to a sync edge from the device op it
/// waited for: the chain edges inside the call weigh 0.
fn sync_edges(g: &mut Graph, chain_in: &[u32], blocking_waits: &[(u32, u32, i64)]) {
    for &(op_end, call_end, w) in blocking_waits {
        let e = chain_in[call_end as usize];
        if e != NONE && g.edges[e as usize].kind == EdgeKind::Cpu {
            g.edges[e as usize].weight = 0;
        }
        g.edges.push(Edge {
            from: op_end,
            to: call_end,
            weight: w,
            kind: EdgeKind::Sync,
            slice: EdgeSlice::NONE,
        });
    }
}

/// Each device op's duration edge, its launch edge from the runtime call, and its stream edge
/// from the op before it on its stream (or from the source).
async fn device_edges(trace: &Trace, links: &Links, g: &mut Graph, ops: &[Op], y: &mut Slicer) {
    let kinds = &links.kinds;
    let prev_on_lane: Vec<Option<usize>> = vec![None; trace.lanes.len()];
    let mut state = (g, prev_on_lane);
    slicing::each(y, ops.len(), &mut state, |(g, prev_on_lane), k| {
        let o = &ops[k];
        let s = trace.slices(o.lane);
        let r = SliceRef {
            lane: o.lane as u32,
            index: o.index as u32,
        };
        let (t0, t1) = (s.start_ns[o.index], s.end_ns(o.index));
        let class = op_class(kinds.of_cat(s.cat[o.index]), trace.str(s.name[o.index]));
        g.edges.push(Edge {
            from: o.start,
            to: o.end,
            weight: t1 - t0,
            kind: EdgeKind::Device(class),
            slice: r.into(),
        });
        let prev = prev_on_lane[o.lane].map(|p| &ops[p]);
        let prev_end = prev.map(|p| g.time[p.end as usize]);
        let call = links.launch(r);
        if let Some(c) = call {
            g.launched_by[o.lane][o.index] = c;
        }
        let launch = call.and_then(|l| {
            let n = g.cpu_nodes.get(l.lane as usize)?.get(l.index as usize)?.0;
            let ls = trace.slices(l.lane as usize);
            let (ls0, ldur) = (ls.start_ns[l.index as usize], ls.dur_ns[l.index as usize]);
            // A device op that starts before its launch (clock skew) gets no launch edge.
            (n != NONE && ls0 <= t0).then_some((n, ls0, ldur))
        });
        let idle_at_launch = match (launch, prev_end) {
            (Some((_, ls0, _)), Some(pe)) => pe <= ls0,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if let Some((n, ls0, ldur)) = launch {
            let delay = t0 - ls0;
            g.edges.push(Edge {
                from: n,
                to: o.start,
                weight: if idle_at_launch {
                    delay
                } else {
                    delay.min(ldur)
                },
                kind: EdgeKind::Launch,
                slice: r.into(),
            });
        }
        match (prev, prev_end) {
            (Some(p), Some(pe)) => g.edges.push(Edge {
                from: p.end,
                to: o.start,
                // Overlapping ops on one stream (a damaged or unusual trace) keep the edge exact.
                weight: if idle_at_launch {
                    0.min(t0 - pe)
                } else {
                    t0 - pe
                },
                kind: EdgeKind::Stream,
                slice: r.into(),
            }),
            _ if launch.is_none() => g.edges.push(Edge {
                from: 0,
                to: o.start,
                weight: t0 - g.time[0],
                kind: EdgeKind::Start,
                slice: EdgeSlice::NONE,
            }),
            _ => {}
        }
        prev_on_lane[o.lane] = Some(k);
        LOOKUP
    })
    .await;
}

/// A device op's lane and index, and its start and end nodes.
struct Op {
    lane: usize,
    index: usize,
    start: u32,
    end: u32,
}

fn ops_nodes(ops: &[Op]) -> Vec<(SliceRef, u32, u32)> {
    ops.iter()
        .map(|o| {
            let r = SliceRef {
                lane: o.lane as u32,
                index: o.index as u32,
            };
            (r, o.start, o.end)
        })
        .collect()
}

/// Cross-stream waits, where the trace records them (`cuda_sync` events, PyTorch's
/// `enable_cuda_sync_events`): a `Stream Wait Event` makes the next op launched on its stream,
/// from the thread that called `cudaStreamWaitEvent`, wait for the last op launched on the
/// recorded stream before the `cudaEventRecord` its `wait_on_cuda_event_record_corr_id` names (as
/// HTA pairs them). The edge weighs 0 (less when the trace has the op start earlier), so the
/// measured times stay exact and a replay keeps the order.
fn stream_waits(trace: &Trace, links: &Links, g: &mut Graph, ops: &[(SliceRef, u32, u32)]) {
    let kinds = &links.kinds;
    let device_of = |lane: u32| match trace.lanes[lane as usize].kind {
        crate::model::LaneKind::GpuStream { device, stream } => Some((device, stream)),
        crate::model::LaneKind::Cpu => None,
    };
    let int = |r: SliceRef, key: &str| -> Option<i64> {
        let s = trace.slices(r.lane as usize);
        trace
            .args
            .field(s.args[r.index as usize], key)?
            .trim()
            .parse()
            .ok()
    };
    let mut waits: Vec<(SliceRef, i64)> = Vec::new();
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| l.is_gpu()) {
        let s = trace.slices_of(l);
        for i in 0..s.len() {
            let r = SliceRef {
                lane: li as u32,
                index: i as u32,
            };
            if kinds.of_cat(s.cat[i]) == Kind::Sync && trace.str(s.name[i]) == "Stream Wait Event" {
                if let Some(c) = int(r, "wait_on_cuda_event_record_corr_id") {
                    waits.push((r, c));
                }
            }
        }
    }
    if waits.is_empty() {
        return;
    }
    // Launches in call order: (call start, call, op index into `ops`).
    let mut launches: Vec<(i64, SliceRef, usize)> = ops
        .iter()
        .enumerate()
        .filter_map(|(k, &(r, _, _))| {
            let c = links.launch(r)?;
            let start = trace.columns.start_ns[trace.row(c)];
            Some((start, c, k))
        })
        .collect();
    launches.sort_by_key(|l| (l.0, l.1.lane, l.1.index));
    // cudaEventRecord calls by correlation.
    let mut records: FxHashMap<i64, SliceRef> = FxHashMap::default();
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
        let s = trace.slices_of(l);
        for i in 0..s.len() {
            if trace.str(s.name[i]) == "cudaEventRecord" {
                records.insert(
                    s.correlation[i],
                    SliceRef {
                        lane: li as u32,
                        index: i as u32,
                    },
                );
            }
        }
    }
    let start_of = |r: SliceRef| trace.columns.start_ns[trace.row(r)];
    // The launch and stream edges into each op's start.
    let mut into: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (k, e) in g.edges.iter().enumerate() {
        if matches!(e.kind, EdgeKind::Launch | EdgeKind::Stream) {
            into.entry(e.to).or_default().push(k);
        }
    }
    // A launch edge starts at its call's start node; the call's duration is the chain's time
    // from there to the call's end.
    let mut call_dur: FxHashMap<u32, i64> = FxHashMap::default();
    for &(r, _, _) in ops {
        if let Some(c) = links.launch(r) {
            if let Some(&(a, b)) = g
                .cpu_nodes
                .get(c.lane as usize)
                .and_then(|v| v.get(c.index as usize))
            {
                if a != NONE && b != NONE {
                    call_dur.insert(a, g.time[b as usize] - g.time[a as usize]);
                }
            }
        }
    }
    let launch_dur = |n: u32| call_dur.get(&n).copied().unwrap_or(0);
    for (w, corr) in waits {
        let (Some(rec), Some(call)) = (records.get(&corr).copied(), links.launch(w)) else {
            continue;
        };
        let Some(on) = int(w, "wait_on_stream") else {
            continue;
        };
        let Some((device, stream)) = device_of(w.lane) else {
            continue;
        };
        let recorded = (device, on);
        let t_rec = start_of(rec);
        let k = launches.partition_point(|l| l.0 <= t_rec);
        let src = launches[..k]
            .iter()
            .rev()
            .find(|l| device_of(ops[l.2].0.lane) == Some(recorded));
        let t_wait = start_of(call);
        let k = launches.partition_point(|l| l.0 <= t_wait);
        let dest = launches[k..].iter().find(|l| {
            l.1.lane == call.lane && device_of(ops[l.2].0.lane) == Some((device, stream))
        });
        if let (Some(src), Some(dest)) = (src, dest) {
            let (from, to) = (ops[src.2].2, ops[dest.2].1);
            if g.time[from as usize] == g.time[to as usize] {
                // The op started when the one it waited for ended: the wait, not its launch or
                // its stream, set its start. Those edges keep only what a replay must respect
                // (the launch call's duration, no overlap on the stream).
                for &e in into.get(&to).into_iter().flatten() {
                    let e = &mut g.edges[e];
                    e.weight = match e.kind {
                        EdgeKind::Launch => e.weight.min(launch_dur(e.from)),
                        EdgeKind::Stream => e.weight.min(0),
                        _ => e.weight,
                    };
                }
            }
            g.edges.push(Edge {
                from,
                to,
                weight: 0.min(g.time[to as usize] - g.time[from as usize]),
                kind: EdgeKind::Sync,
                slice: ops[dest.2].0.into(),
            });
        }
    }
}

/// Nodes Kahn's algorithm orders between two ticks.
const KAHN_CHUNK: usize = 4096;

/// Kahn's algorithm's state between chunks ([`Graph::index_sliced`]): the loop runs in a
/// function of its own, whose locals the compiler keeps in registers (see [`slicing::each`]).
struct Kahn<'a> {
    edges: &'a [Edge],
    out_start: &'a [u32],
    out: &'a [u32],
    indegree: Vec<u32>,
    ready: Vec<u32>,
    order: Vec<u32>,
}

impl Kahn<'_> {
    /// Orders up to `n` more nodes; false once every reachable node is ordered.
    #[inline(never)]
    fn run(&mut self, n: usize) -> bool {
        for _ in 0..n {
            let Some(v) = self.ready.pop() else {
                return false;
            };
            self.order.push(v);
            let (a, b) = (self.out_start[v as usize], self.out_start[v as usize + 1]);
            for &e in &self.out[a as usize..b as usize] {
                let w = self.edges[e as usize].to as usize;
                self.indegree[w] -= 1;
                if self.indegree[w] == 0 {
                    self.ready.push(w as u32);
                }
            }
        }
        !self.ready.is_empty()
    }
}

/// One CPU thread's chain while it is built: its last node and the stack of open slices with the
/// time each closes (its end, cut to its parent's: a slice that outlives its parent, in a damaged
/// trace, ends with it).
struct Chain {
    lane: usize,
    last: Option<u32>,
    stack: Vec<(usize, i64)>,
    /// The chain's nodes in time order, one per instant.
    nodes: Vec<u32>,
}

impl Chain {
    /// The node at `t` (the last one when it is at `t`), reached from the last by an edge charged
    /// to `top`, the innermost slice open since.
    fn boundary(
        &mut self,
        g: &mut Graph,
        chain_in: &mut Vec<u32>,
        t: i64,
        top: Option<usize>,
    ) -> u32 {
        if let Some(n) = self.last.filter(|&n| g.time[n as usize] == t) {
            return n;
        }
        let n = g.push_node(t, self.lane);
        let (from, kind) = match self.last {
            Some(p) => (p, EdgeKind::Cpu),
            None => (0, EdgeKind::Start),
        };
        chain_in.resize(g.time.len(), NONE);
        chain_in[n as usize] = g.edges.len() as u32;
        g.edges.push(Edge {
            from,
            to: n,
            weight: t - g.time[from as usize],
            kind,
            slice: match top {
                Some(i) if kind == EdgeKind::Cpu => EdgeSlice(i as u32),
                _ => EdgeSlice::NONE,
            },
        });
        self.last = Some(n);
        self.nodes.push(n);
        n
    }

    /// Closes the open slices that end at or before `t`.
    fn close_until(&mut self, g: &mut Graph, chain_in: &mut Vec<u32>, t: i64) {
        while let Some(&(top, end)) = self.stack.last() {
            if end > t {
                break;
            }
            let n = self.boundary(g, chain_in, end, Some(top));
            g.cpu_nodes[self.lane][top].1 = n;
            self.stack.pop();
        }
    }
}

impl Graph {
    /// Incoming edges and an order (Kahn's algorithm; edges follow time except a negative stream
    /// gap, so the sort by time only breaks ties). A cycle (only possible through equal times in a
    /// damaged trace) leaves nodes out: they keep their measured times in a replay.
    pub(crate) fn index(&mut self) {
        block_on(self.index_sliced(&mut Slicer::never()));
    }

    /// [`Graph::index`], pausing as `y` says.
    async fn index_sliced(&mut self, y: &mut Slicer) {
        self.order.clear();
        let n = self.time.len();
        (self.in_start, self.in_edges) = grouped(n, || {
            let edges = self.edges.iter().enumerate();
            edges.map(|(k, e)| (e.to as usize, k as u32))
        });
        y.tick(self.edges.len() as u64).await;
        let (out_start, out) = self.outgoing();
        y.tick(self.edges.len() as u64).await;
        let indegree: Vec<u32> = (0..n)
            .map(|v| self.in_start[v + 1] - self.in_start[v])
            .collect();
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|&v| indegree[v as usize] == 0)
            .collect();
        ready.sort_by_key(|&v| std::cmp::Reverse(self.time[v as usize]));
        y.tick(n as u64).await;
        let mut kahn = Kahn {
            edges: &self.edges,
            out_start: &out_start,
            out: &out,
            indegree,
            ready,
            order: std::mem::take(&mut self.order),
        };
        // A node a unit: its outgoing edges are read where they lie, mostly near it.
        while kahn.run(KAHN_CHUNK) {
            y.tick(KAHN_CHUNK as u64).await;
        }
        self.order = kahn.order;
    }

    /// The outgoing edges of every node: node v's are `out[out_start[v]..out_start[v + 1]]`,
    /// indices into `edges`.
    pub(crate) fn outgoing(&self) -> (Vec<u32>, Vec<u32>) {
        grouped(self.time.len(), || {
            let edges = self.edges.iter().enumerate();
            edges.map(|(k, e)| (e.from as usize, k as u32))
        })
    }

    /// The slice `e` is charged to: its index on the lane of the node `e` leads to.
    pub fn slice(&self, e: &Edge) -> Option<SliceRef> {
        (e.slice != EdgeSlice::NONE).then(|| SliceRef {
            lane: self.lane[e.to as usize],
            index: e.slice.0,
        })
    }

    fn push_node(&mut self, t: i64, lane: usize) -> u32 {
        self.time.push(t);
        self.lane.push(lane as u32);
        (self.time.len() - 1) as u32
    }

    pub fn incoming(&self, v: u32) -> impl Iterator<Item = &Edge> {
        self.incoming_indexed(v).map(|(_, e)| e)
    }

    /// The incoming edges of `v` with their indices into `edges`.
    pub fn incoming_indexed(&self, v: u32) -> impl Iterator<Item = (usize, &Edge)> {
        let (a, b) = (self.in_start[v as usize], self.in_start[v as usize + 1]);
        self.in_edges[a as usize..b as usize]
            .iter()
            .map(|&e| (e as usize, &self.edges[e as usize]))
    }
}
