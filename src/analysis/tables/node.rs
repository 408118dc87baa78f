//! The nodes of the operator tree as the tables and the launch rule read them: what a node is
//! ([`EventKind`]), its row name ([`NameKey`]), every tree's rows ([`Nodes`]), a lane's tree
//! column by column ([`LaneTree`]) and where a GPU op was launched from ([`Launch`]). Building the
//! tree is `tree`'s, finding the launcher `launch`'s; both read these types, and neither imports
//! the other (`tree` calls `launch`; `launch` reads the trees as [`Nodes`], not the `Forest`).

use crate::model::{SliceRef, StrId, Trace};
use serde::Serialize;

/// Marks "no node": the parent of a root.
pub const NO_NODE: u32 = u32::MAX;

/// What a CPU event is, as the tables group it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// An operator: `cpu_op` (1.x `Operator`).
    Op,
    /// A `record_function` label, `ProfilerStep#N`, a DataLoader `__next__` (`user_annotation`).
    Annotation,
    /// A CUDA/HIP runtime or driver call (`cuda_runtime`, `cuda_driver`; 1.x `Runtime`).
    Runtime,
    /// A Python frame (`python_function`): a node for self times, never a row of the operator table.
    Python,
    /// `[memory]` events outside every node, which PyTorch lists as a row of their own.
    Memory,
}

impl EventKind {
    /// Whether GPU ops can be charged to a node of this kind (the "operator" that launched them).
    pub fn launches(self) -> bool {
        matches!(self, EventKind::Op | EventKind::Annotation)
    }
}

/// A row name: an interned name, or the one `ProfilerStep*` that stands for every `ProfilerStep#N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameKey(u32);

impl NameKey {
    const PROFILER_STEP: NameKey = NameKey(u32::MAX);

    pub fn of(trace: &Trace, name: StrId) -> NameKey {
        if trace.str(name).starts_with("ProfilerStep#") {
            NameKey::PROFILER_STEP
        } else {
            NameKey(name.0)
        }
    }

    pub fn as_str(self, trace: &Trace) -> &str {
        if self == NameKey::PROFILER_STEP {
            "ProfilerStep*"
        } else {
            trace.str(StrId(self.0))
        }
    }
}

/// Memory counted for a node: inclusive of its children, and its own share ("self").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeMemory {
    pub cpu_bytes: i64,
    pub self_cpu_bytes: i64,
    pub device_bytes: i64,
    pub self_device_bytes: i64,
}

/// Every lane's tree, column by column over the whole forest: a tree is a run of rows, in tree
/// order (start, then longer first), so a parent always comes before its children. Nine vectors
/// per lane were nine allocations per thread, and 19x the file on a trace of one slice per
/// thread; a tree is read through [`LaneTree`], a view of its rows ([`Nodes::tree`]).
#[derive(Debug, Default)]
pub struct Nodes {
    /// Each tree's lane and first row, in lane order: lanes without a node have no tree.
    pub(crate) spans: Vec<TreeSpan>,
    /// Index of each node's slice in its lane.
    pub slice: Vec<u32>,
    pub kind: Vec<EventKind>,
    pub name: Vec<NameKey>,
    /// Parent after folding ([`NO_NODE`] for a root), as a node of the same tree; for a folded
    /// node, the node it went into.
    pub parent: Vec<u32>,
    /// Folded into its parent: not a row, and not a child of anything.
    pub folded: Vec<bool>,
    /// Duration minus the durations of the direct children (after folding).
    pub self_cpu_ns: Vec<i64>,
    /// GPU time of the GPU ops this node launched itself.
    pub device_self_ns: Vec<i64>,
    /// GPU time charged to this node and everything under it.
    pub device_total_ns: Vec<i64>,
    /// One per node; empty when the trace has no `[memory]` events.
    pub memory: Vec<NodeMemory>,
}

/// Where one lane's tree lies in [`Nodes`]: its rows run from `start` to the next tree's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeSpan {
    pub lane: u32,
    pub start: u32,
}

/// The tree of one lane, column by column, in tree order: a view of its rows of [`Nodes`]. Node
/// indices are the tree's own (0 for its first row), as [`NodeRef`] holds them.
#[derive(Debug, Clone, Copy)]
pub struct LaneTree<'a> {
    /// Index into [`Trace::lanes`].
    pub lane: u32,
    pub slice: &'a [u32],
    pub kind: &'a [EventKind],
    pub name: &'a [NameKey],
    pub parent: &'a [u32],
    pub folded: &'a [bool],
    pub self_cpu_ns: &'a [i64],
    pub device_self_ns: &'a [i64],
    pub device_total_ns: &'a [i64],
    /// Empty when the trace has no `[memory]` events.
    pub memory: &'a [NodeMemory],
}

impl Nodes {
    /// Room for `n` more nodes in every column but `memory`.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.slice.reserve_exact(n);
        self.kind.reserve_exact(n);
        self.name.reserve_exact(n);
        self.parent.reserve_exact(n);
        self.folded.reserve_exact(n);
        self.self_cpu_ns.reserve_exact(n);
        self.device_self_ns.reserve_exact(n);
        self.device_total_ns.reserve_exact(n);
    }

    /// How many trees: one per lane with a node.
    pub(crate) fn tree_count(&self) -> usize {
        self.spans.len()
    }

    /// The `t`th tree.
    pub(crate) fn tree(&self, t: usize) -> LaneTree<'_> {
        self.view(self.spans[t].lane, self.rows(t))
    }

    /// Every tree, in lane order.
    pub(crate) fn trees(&self) -> impl ExactSizeIterator<Item = LaneTree<'_>> + Clone {
        (0..self.spans.len()).map(|t| self.tree(t))
    }

    /// The rows of tree `t`.
    pub(crate) fn rows(&self, t: usize) -> std::ops::Range<usize> {
        let end = self
            .spans
            .get(t + 1)
            .map_or(self.slice.len(), |s| s.start as usize);
        self.spans[t].start as usize..end
    }

    /// The row of a node.
    pub(crate) fn row(&self, n: NodeRef) -> usize {
        self.spans[n.tree as usize].start as usize + n.node as usize
    }

    /// The tree of `lane` on rows `rows`.
    fn view(&self, lane: u32, rows: std::ops::Range<usize>) -> LaneTree<'_> {
        LaneTree {
            lane,
            slice: &self.slice[rows.clone()],
            kind: &self.kind[rows.clone()],
            name: &self.name[rows.clone()],
            parent: &self.parent[rows.clone()],
            folded: &self.folded[rows.clone()],
            self_cpu_ns: &self.self_cpu_ns[rows.clone()],
            device_self_ns: &self.device_self_ns[rows.clone()],
            device_total_ns: &self.device_total_ns[rows.clone()],
            memory: self.memory.get(rows).unwrap_or(&[]),
        }
    }
}

impl LaneTree<'_> {
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// The node that stands for `node` after folding: itself, or the node it was folded into.
    pub fn kept(&self, node: u32) -> u32 {
        if self.folded[node as usize] {
            self.parent[node as usize]
        } else {
            node
        }
    }

    /// The node charged for a GPU op launched from within `node` (itself included): the innermost
    /// operator, or where no operator holds it, the innermost annotation.
    pub fn launching_ancestor(&self, node: u32) -> Option<u32> {
        let mut annotation = None;
        let mut n = self.kept(node);
        while n != NO_NODE {
            match self.kind[n as usize] {
                EventKind::Op => return Some(n),
                EventKind::Annotation if annotation.is_none() => annotation = Some(n),
                _ => {}
            }
            n = self.parent[n as usize];
        }
        annotation
    }

    /// Turns per-node values into subtree totals: each kept node's value is added to its
    /// parent's, children first.
    pub fn add_up(&self, values: &mut [i64]) {
        for x in (0..self.len()).rev() {
            let p = self.parent[x];
            if p != NO_NODE && !self.folded[x] {
                values[p as usize] += values[x];
            }
        }
    }
}

/// A node of the forest: tree index and node index in that tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeRef {
    pub tree: u32,
    pub node: u32,
}

/// A GPU op and where it came from.
#[derive(Debug, Clone, Copy)]
pub struct GpuOp {
    pub slice: SliceRef,
    /// `None` when no link leads to an operator.
    pub launch: Option<Launch>,
}

/// Where a GPU op was launched from, and the operator it is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// The node the link found: the launch call (by correlation or flow) or the operator (by External id).
    pub site: NodeRef,
    /// The operator (or annotation) charged with the op's time: `site`, or the innermost operator
    /// holding it (the launch rule's, `tables/launch.rs`).
    pub op: NodeRef,
}
