//! The operator tree that the operator, label and call-tree tables read, with GPU time charged to it.
//!
//! One tree per lane (a CPU thread, PyTorch's `(pid, tid)`), built as PyTorch's `EventList._build_tree`
//! builds it, so that self times match `prof.key_averages()`:
//! - Nodes: X slices of `cpu_op`, `user_annotation` (1.x: `Operator`), `cuda_runtime`/`cuda_driver`
//!   (1.x: `Runtime`) and `python_function`. The utility ops PyTorch drops (`aten::is_leaf`,
//!   `profiler::_record_function_enter`, ...) are not nodes: their time stays with their parent.
//! - Nesting: slices in order of start, then longer first; a slice is a child of the innermost open
//!   slice that contains it. A slice that overlaps an open one only partially closes it and is not
//!   its child (PyTorch's rule, so partial overlaps never count twice).
//! - Folding: a node whose parent has the same name and no other child is removed; its children move
//!   up to the parent, which keeps its own duration. `aten::div_ -> aten::div_` counts once.
//! - Names: `ProfilerStep#N` reads as `ProfilerStep*` before any comparison or grouping.
//!
//! GPU ops (kernels, memcpy, memset) are charged to the node that launched them ([`super::launch`]).
//! Memory: the `[memory]` events of every thread whose time lies in `[start, end]` of a node (both
//! ends included), as PyTorch counts them; CPU for device types 0/2/5, device for 1/6/12/20.
//!
//! Cost: one pass over each lane, an index sort only where a lane is not already in tree order, a
//! binary search per node for memory; no string is allocated per slice.

use super::launch::Launchers;
pub use super::node::{EventKind, GpuOp, LaneTree, Launch, NameKey, NodeMemory, NodeRef, NO_NODE};
use super::node::{Nodes, TreeSpan};
use crate::analysis::slicing::{self, block_on, Slicer, LOOKUP};
use crate::model::category::{Kind, Kinds};
use crate::model::{SliceRef, StrId, Trace};
use crate::ordered::gallop;

/// The categories of one trace as the tables read them, from the model's vocabulary
/// ([`Kinds`]): one table lookup per slice.
pub(crate) struct Categories {
    kinds: Kinds,
}

impl Categories {
    pub(crate) fn new(trace: &Trace) -> Categories {
        Categories {
            kinds: Kinds::new(trace),
        }
    }

    pub(crate) fn node_kind(&self, cat: StrId) -> Option<EventKind> {
        match self.kinds.of_cat(cat) {
            Kind::CpuOp => Some(EventKind::Op),
            Kind::Annotation => Some(EventKind::Annotation),
            Kind::Runtime => Some(EventKind::Runtime),
            Kind::Python => Some(EventKind::Python),
            _ => None,
        }
    }

    /// Kernels, memcpy and memset: the GPU ops whose time the tables account for.
    pub(crate) fn is_gpu_op(&self, cat: StrId) -> bool {
        self.kinds.of_cat(cat).is_gpu_busy()
    }

    /// `record_function` labels projected onto a GPU stream.
    pub(crate) fn is_gpu_label(&self, cat: StrId) -> bool {
        self.kinds.of_cat(cat) == Kind::GpuAnnotation
    }
}

/// Names PyTorch leaves out of its events (`torch.autograd.profiler_util._filter_name`).
const DROPPED_NAMES: [&str; 6] = [
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

impl Nodes {
    /// Appends the tree of `lane` (nothing when it has no node) and returns its node count.
    async fn push_tree(
        &mut self,
        trace: &Trace,
        lane: usize,
        cats: &Categories,
        dropped: &[StrId],
        y: &mut Slicer,
    ) -> usize {
        let s = trace.slices(lane);
        let base = self.slice.len();
        slicing::each(y, s.len(), &mut self.slice, |order, i| {
            if cats.node_kind(s.cat[i]).is_some() && !dropped.contains(&s.name[i]) {
                order.push(i as u32);
            }
            1
        })
        .await;
        // The model orders a lane by start then depth, which differs from (start, longer first)
        // only around partial overlaps; sort then (stable, so equal spans keep file order).
        let key = |i: &u32| (s.start_ns[*i as usize], -s.end_ns(*i as usize));
        if !self.slice[base..]
            .windows(2)
            .all(|w| key(&w[0]) <= key(&w[1]))
        {
            let mut order = self.slice[base..].to_vec();
            slicing::sort_by_key(&mut order, key, y).await;
            self.slice[base..].copy_from_slice(&order);
        }
        let order = &self.slice[base..];
        let n = order.len();
        let mut columns = (&mut self.kind, &mut self.name);
        slicing::each(y, n, &mut columns, |(kind, name), x| {
            let i = order[x] as usize;
            kind.push(cats.node_kind(s.cat[i]).expect("filtered above"));
            name.push(NameKey::of(trace, s.name[i]));
            1
        })
        .await;
        let name = &self.name[base..];

        // Nesting, with a stack of open nodes (PyTorch's `_populate_cpu_children`).
        self.parent.resize(base + n, NO_NODE);
        let mut nesting = (&mut self.parent[base..], Vec::<u32>::new());
        slicing::each(y, n, &mut nesting, |(parent, open), x| {
            let (start, end) = (s.start_ns[order[x] as usize], s.end_ns(order[x] as usize));
            while let Some(&p) = open.last() {
                let p_end = s.end_ns(order[p as usize] as usize);
                if start >= p_end || end > p_end {
                    open.pop();
                } else {
                    parent[x] = p;
                    break;
                }
            }
            open.push(x as u32);
            1
        })
        .await;
        let parent = &mut self.parent[base..];

        // Folding (PyTorch's `_remove_dup_nodes`). In tree order a parent's fate is settled
        // before its children are seen, so one pass reaches PyTorch's fixed point: a child's
        // parent is resolved to the node its parent was folded into, and a fold hands the
        // folded node's children count to that node.
        let mut children = vec![0u32; n];
        for &p in parent.iter() {
            if p != NO_NODE {
                children[p as usize] += 1;
            }
        }
        self.folded.resize(base + n, false);
        let mut folding = (parent, &mut self.folded[base..], children);
        slicing::each(y, n, &mut folding, |(parent, folded, children), x| {
            let mut p = parent[x];
            if p == NO_NODE {
                return 1;
            }
            if folded[p as usize] {
                p = parent[p as usize];
                parent[x] = p;
            }
            if name[p as usize] == name[x] && children[p as usize] == 1 {
                folded[x] = true;
                children[p as usize] = children[x];
            }
            1
        })
        .await;
        let (parent, folded) = (&self.parent[base..], &self.folded[base..]);

        self.self_cpu_ns
            .extend(order.iter().map(|&i| s.dur_ns[i as usize]));
        slicing::each(y, n, &mut self.self_cpu_ns[base..], |self_cpu_ns, x| {
            let p = parent[x];
            if p != NO_NODE && !folded[x] {
                self_cpu_ns[p as usize] -= s.dur_ns[order[x] as usize];
            }
            1
        })
        .await;
        self.device_self_ns.resize(base + n, 0);
        self.device_total_ns.resize(base + n, 0);
        n
    }

    /// Sums device time up the tree on `rows` and counts memory, once every GPU op has been
    /// charged.
    async fn finish_tree(
        &mut self,
        trace: &Trace,
        lane: u32,
        rows: std::ops::Range<usize>,
        mem: &MemoryIndex<'_>,
        y: &mut Slicer,
    ) {
        // `add_up`, a node at a time.
        let (parent, folded) = (&self.parent[rows.clone()], &self.folded[rows.clone()]);
        let n = parent.len();
        let device_total = &mut self.device_total_ns[rows.clone()];
        device_total.copy_from_slice(&self.device_self_ns[rows.clone()]);
        slicing::each(y, n, device_total, |device_total, k| {
            let x = n - 1 - k;
            let p = parent[x];
            if p != NO_NODE && !folded[x] {
                device_total[p as usize] += device_total[x];
            }
            1
        })
        .await;
        if mem.is_empty() {
            return;
        }
        let s = trace.slices(lane as usize);
        let slice = &self.slice[rows.clone()];
        let mut cursor = MemoryCursor::default();
        slicing::each(y, n, &mut self.memory, |memory, x| {
            let i = slice[x] as usize;
            let (cpu, device) = mem.within_from(&mut cursor, s.start_ns[i], s.end_ns(i));
            memory.push(NodeMemory {
                cpu_bytes: cpu,
                self_cpu_bytes: cpu,
                device_bytes: device,
                self_device_bytes: device,
            });
            // Two searches of the memory events: the most costly units of the forest.
            LOOKUP
        })
        .await;
        slicing::each(y, n, &mut self.memory[rows], |memory, x| {
            let p = parent[x];
            if p != NO_NODE && !folded[x] {
                let child = memory[x];
                let m = &mut memory[p as usize];
                m.self_cpu_bytes -= child.cpu_bytes;
                m.self_device_bytes -= child.device_bytes;
            }
            1
        })
        .await;
    }
}

/// `[memory]` events outside every node (PyTorch's top-level `[memory]` row).
#[derive(Debug, Clone, Copy, Default)]
pub struct StrayMemory {
    pub events: u64,
    pub cpu_bytes: i64,
    pub device_bytes: i64,
}

/// All lane trees of a trace, with the GPU ops charged to them: what every table reads.
#[derive(Debug)]
pub struct Forest {
    /// Every tree's nodes, and where each tree's rows start; [`Forest::tree`] reads one tree.
    nodes: Nodes,
    /// Every GPU op (kernel, memcpy, memset) of the trace, lane by lane.
    pub gpu_ops: Vec<GpuOp>,
    /// Sum of the durations of all GPU ops.
    pub gpu_time_ns: i64,
    /// The part of `gpu_time_ns` that no link leads to an operator for.
    pub unattributed_ns: i64,
    pub unattributed_ops: u64,
    pub stray_memory: StrayMemory,
}

impl Forest {
    pub fn build(trace: &Trace) -> Forest {
        block_on(Forest::build_sliced(trace, &mut Slicer::never()))
    }

    /// [`Forest::build`] pausing as `y` says (see [`crate::analysis::slicing`]).
    pub async fn build_sliced(trace: &Trace, y: &mut Slicer) -> Forest {
        let cats = Categories::new(trace);
        let dropped: Vec<StrId> = DROPPED_NAMES
            .iter()
            .filter_map(|n| trace.strings.find(n))
            .collect();
        let mut forest = Forest {
            nodes: Nodes::default(),
            gpu_ops: Vec::new(),
            gpu_time_ns: 0,
            unattributed_ns: 0,
            unattributed_ops: 0,
            stray_memory: StrayMemory::default(),
        };
        // Room for a node per CPU slice, the most there can be: grown by doubling, the columns
        // held up to twice their rows, and their copies as they grew.
        let most = trace.lanes.iter().filter(|l| !l.is_gpu());
        forest.nodes.reserve(most.map(|l| l.slice_count()).sum());
        for lane in 0..trace.lanes.len() {
            let start = forest.nodes.slice.len() as u32;
            if forest
                .nodes
                .push_tree(trace, lane, &cats, &dropped, y)
                .await
                > 0
            {
                forest.nodes.spans.push(TreeSpan {
                    lane: lane as u32,
                    start,
                });
            }
        }

        let launchers = Launchers::new(trace, &cats.kinds, &forest.nodes, y).await;
        for (lane, l) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(l);
            for i in 0..s.len() {
                let gpu_op = cats.is_gpu_op(s.cat[i]);
                y.tick(if gpu_op { LOOKUP } else { 1 }).await;
                if !gpu_op {
                    continue;
                }
                let dur = s.dur_ns[i];
                forest.gpu_time_ns += dur;
                let slice = SliceRef {
                    lane: lane as u32,
                    index: i as u32,
                };
                let launch = launchers.find(trace, &forest.nodes, slice);
                match launch {
                    Some(Launch { op, .. }) => {
                        let row = forest.nodes.row(op);
                        forest.nodes.device_self_ns[row] += dur
                    }
                    None => {
                        forest.unattributed_ns += dur;
                        forest.unattributed_ops += 1;
                    }
                }
                forest.gpu_ops.push(GpuOp { slice, launch });
            }
        }
        drop(launchers);

        let mem = MemoryIndex::new(trace, y).await;
        if !mem.is_empty() {
            forest.nodes.memory.reserve_exact(forest.nodes.slice.len());
        }
        for t in 0..forest.nodes.tree_count() {
            let (lane, range) = (forest.nodes.spans[t].lane, forest.nodes.rows(t));
            forest.nodes.finish_tree(trace, lane, range, &mem, y).await;
        }
        forest.stray_memory = mem.outside(trace, &forest, y).await;
        forest
    }

    /// How many trees: one per lane with a node.
    pub fn tree_count(&self) -> usize {
        self.nodes.tree_count()
    }

    /// The `t`th tree.
    pub fn tree(&self, t: usize) -> LaneTree<'_> {
        self.nodes.tree(t)
    }

    /// Every tree, in lane order.
    pub fn trees(&self) -> impl ExactSizeIterator<Item = LaneTree<'_>> + Clone {
        self.nodes.trees()
    }

    /// The trees' nodes that are rows: not folded away. Yields (tree, node).
    pub fn kept_nodes(&self) -> impl Iterator<Item = (LaneTree<'_>, usize)> {
        self.trees().flat_map(|t| {
            (0..t.len())
                .filter(move |&x| !t.folded[x])
                .map(move |x| (t, x))
        })
    }
}

/// PyTorch's device types whose allocations count as CPU memory (CPU, MKLDNN, IDEEP).
const CPU_MEMORY: [i8; 3] = [0, 2, 5];
/// ... and as device memory (CUDA, HIP, XPU, PrivateUse1).
const DEVICE_MEMORY: [i8; 4] = [1, 6, 12, 20];

/// Prefix sums over the `[memory]` events, for the bytes allocated in a time window.
struct MemoryIndex<'a> {
    ts_ns: &'a [i64],
    /// `cpu[k]`: CPU bytes of the first `k` events.
    cpu: Vec<i64>,
    device: Vec<i64>,
}

/// Where the last [`MemoryIndex::within_from`] search started: its start time and the first
/// event at or after it.
#[derive(Default)]
struct MemoryCursor {
    start: i64,
    lo: usize,
}

impl<'a> MemoryIndex<'a> {
    async fn new(trace: &'a Trace, y: &mut Slicer) -> MemoryIndex<'a> {
        let m = &trace.memory;
        let mut cpu = Vec::with_capacity(m.len() + 1);
        let mut device = Vec::with_capacity(m.len() + 1);
        let (mut c, mut d) = (0, 0);
        cpu.push(0);
        device.push(0);
        for k in 0..m.len() {
            y.tick(1).await;
            if CPU_MEMORY.contains(&m.device_type[k]) {
                c += m.bytes[k];
            } else if DEVICE_MEMORY.contains(&m.device_type[k]) {
                d += m.bytes[k];
            }
            cpu.push(c);
            device.push(d);
        }
        MemoryIndex {
            ts_ns: &m.ts_ns,
            cpu,
            device,
        }
    }

    fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }

    /// (CPU bytes, device bytes) of the events at `start <= ts <= end`.
    #[cfg(test)]
    fn within(&self, start: i64, end: i64) -> (i64, i64) {
        let lo = self.ts_ns.partition_point(|&t| t < start);
        let hi = self.ts_ns.partition_point(|&t| t <= end);
        self.between(lo, hi)
    }

    /// [`MemoryIndex::within`] for spans given mostly in order of start (a lane's nodes): the
    /// first event at or after the start is searched for from the last span's, and the first
    /// after the end from there, each by an exponential search, so a span costs the log of the
    /// events it passes rather than of them all. Two binary searches over every memory event
    /// were 7.7% of the analyses `report` runs on the 1 GB scaled trace.
    fn within_from(&self, cursor: &mut MemoryCursor, start: i64, end: i64) -> (i64, i64) {
        let ts = self.ts_ns;
        // Every event before the cursor is before the last start, so before this one too.
        let lo = if start >= cursor.start {
            gallop(cursor.lo, ts.len(), |k| ts[k] < start)
        } else {
            ts.partition_point(|&t| t < start)
        };
        *cursor = MemoryCursor { start, lo };
        let hi = gallop(lo, ts.len(), |k| ts[k] <= end);
        self.between(lo, hi)
    }

    fn between(&self, lo: usize, hi: usize) -> (i64, i64) {
        if hi <= lo {
            return (0, 0);
        }
        (
            self.cpu[hi] - self.cpu[lo],
            self.device[hi] - self.device[lo],
        )
    }

    /// The events outside every node of every lane (nodes of all threads cover memory events, as
    /// in PyTorch). Roots hold their trees, so the union of root spans is what covers.
    async fn outside(&self, trace: &Trace, forest: &Forest, y: &mut Slicer) -> StrayMemory {
        let mut out = StrayMemory::default();
        if self.is_empty() {
            return out;
        }
        let mut spans: Vec<(i64, i64)> = forest
            .trees()
            .flat_map(|t| {
                let s = trace.slices(t.lane as usize);
                (0..t.len())
                    .filter(|&x| t.parent[x] == NO_NODE)
                    .map(move |x| {
                        let i = t.slice[x] as usize;
                        (s.start_ns[i], s.end_ns(i))
                    })
            })
            .collect();
        spans.sort_unstable();
        let mut covered_until = i64::MIN;
        let mut next = 0;
        let m = &trace.memory;
        for k in 0..self.ts_ns.len() {
            y.tick(1).await;
            let ts = self.ts_ns[k];
            while next < spans.len() && spans[next].0 <= ts {
                covered_until = covered_until.max(spans[next].1);
                next += 1;
            }
            if ts <= covered_until {
                continue;
            }
            out.events += 1;
            if CPU_MEMORY.contains(&m.device_type[k]) {
                out.cpu_bytes += m.bytes[k];
            } else if DEVICE_MEMORY.contains(&m.device_type[k]) {
                out.device_bytes += m.bytes[k];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The searches from a cursor give what two binary searches give, for spans in order of
    /// start (a lane's nodes), out of order, empty, and before or after every event.
    #[test]
    fn memory_within_a_span_is_the_same_searched_from_a_cursor() {
        // Times with repeats and gaps; bytes that tell every event apart.
        let ts: Vec<i64> = (0..5000i64).map(|k| k / 3 * 7 + (k % 3) / 2).collect();
        let (mut cpu, mut device) = (vec![0], vec![0]);
        for k in 0..ts.len() as i64 {
            cpu.push(cpu.last().unwrap() + k + 1);
            device.push(device.last().unwrap() + 2 * k * k + 1);
        }
        let mem = MemoryIndex {
            ts_ns: &ts,
            cpu,
            device,
        };
        let mut seed = 7u64;
        let mut next = move |n: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as i64 % n
        };
        let mut spans: Vec<(i64, i64)> = (0..4000)
            .map(|_| {
                let start = next(12_000) - 100;
                (start, start + [0, 1, 5, 40, 3000][next(5) as usize])
            })
            .collect();
        spans.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut shuffled = spans.clone();
        for k in (1..shuffled.len()).rev() {
            shuffled.swap(k, next(k as i64 + 1) as usize);
        }
        for order in [spans, shuffled] {
            let mut cursor = MemoryCursor::default();
            for (start, end) in order {
                let want = mem.within(start, end);
                assert_eq!(
                    mem.within_from(&mut cursor, start, end),
                    want,
                    "{start}..{end}"
                );
            }
        }
    }
}
