//! The call tree: the [`Forest`]'s nodes aggregated by path, top-down and bottom-up, for a tree table.
//!
//! Top-down: a node per distinct path of (name, kind) from a thread's root, threads merged; its
//! calls, CPU total and self, and device total and self, summed over the instances on that path.
//! Python frames are nodes here (their self time is where the Python code ran), so at every node
//! self plus the children's totals is the total.
//!
//! Bottom-up: a root per (name, kind) holding all its self time; below it, its callers, then
//! theirs: the node for `[f, g, h]` holds the self time of `f` when called by `g` called by `h`.
//! Totals there count a recursive call only at its outermost frame, so nothing counts twice.
//! Bottom-up nodes are made level by level on request ([`CallTree::bottom_up_roots`],
//! [`CallTree::callers`]): with Python stacks, a full bottom-up tree has tens of times more nodes
//! than the top-down one (525 000 against 15 000 on `tracelens_h100_owlv2_stack_mem`), and a
//! tree table only ever shows the levels a user opens.

use super::tree::{EventKind, Forest, NameKey, NO_NODE};
use super::us;
use crate::analysis::columns::{Column, Row, Sort, Type, Unit};
use crate::model::Trace;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The top-down tree, flat: `roots` and each node's `children` index into `nodes`, by total time,
/// most first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallTree {
    pub nodes: Vec<CallNode>,
    pub roots: Vec<u32>,
    /// Per node: (name, kind) and parent, for the bottom-up views.
    #[serde(skip)]
    paths: Vec<(Key, u32)>,
    /// Per node: no node above it has its (name, kind), so its total counts in bottom-up totals.
    #[serde(skip)]
    outermost: Vec<bool>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallNode {
    pub name: String,
    pub kind: EventKind,
    pub parent: Option<u32>,
    pub children: Vec<u32>,
    pub calls: u64,
    pub total_us: f64,
    pub self_us: f64,
    pub device_total_us: f64,
    pub device_self_us: f64,
}

impl Row for CallNode {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Name",
            Unit::Text,
            "The operator's, label's, runtime call's or Python frame's name",
        ),
        Column::new(
            "kind",
            "Kind",
            Unit::Text,
            "op, annotation (record_function), runtime, python or memory",
        ),
        Column::new(
            "parent",
            "Parent",
            Unit::Count,
            "The index in `nodes` of the node above it; null for a root (listed in `roots`)",
        ),
        Column::new(
            "children",
            "Children",
            Unit::Data,
            "The indices in `nodes` of the nodes below it, by total time, most first",
        )
        .typed(Type::List(&Type::Int)),
        Column::new(
            "calls",
            "Calls",
            Unit::Count,
            "Calls on this path, threads merged",
        ),
        Column::new(
            "total_us",
            "Total",
            Unit::Us,
            "CPU time of the calls on this path, their children's included",
        ),
        Column::new(
            "self_us",
            "Self",
            Unit::Us,
            "CPU time of the calls on this path less their children's: self plus the \
             children's totals is the total",
        ),
        Column::new(
            "device_total_us",
            "{device} total",
            Unit::Us,
            "Time of the device ops launched on this path and below it",
        ),
        Column::new(
            "device_self_us",
            "{device} self",
            Unit::Us,
            "Time of the device ops launched by the calls on this path themselves",
        ),
    ];
    const SORT: Sort = Sort::Tree;
}

/// A bottom-up node: a function and a chain of its callers, standing for the top-down paths that
/// end in that chain.
#[derive(Debug, Clone, Serialize)]
pub struct BottomUpNode {
    pub name: String,
    pub kind: EventKind,
    pub calls: u64,
    pub self_us: f64,
    pub device_self_us: f64,
    /// Inclusive time of the calls, the outermost of recursive calls only.
    pub total_us: f64,
    pub device_total_us: f64,
    /// Some of the calls have a caller: [`CallTree::callers`] has something to show.
    pub has_callers: bool,
    /// (top-down path where the time is, its ancestor at this node's depth), to expand the node.
    #[serde(skip)]
    members: Vec<(u32, u32)>,
}

type Key = (NameKey, EventKind);

/// Sums of one path, in integers until the end.
struct PathSums {
    key: Key,
    parent: u32,
    calls: u64,
    total_ns: i64,
    self_ns: i64,
    device_total_ns: i64,
    device_self_ns: i64,
}

pub fn call_tree(trace: &Trace, forest: &Forest) -> CallTree {
    let mut index: FxHashMap<(u32, Key), u32> = FxHashMap::default();
    let mut sums: Vec<PathSums> = Vec::new();
    for t in forest.trees() {
        let s = trace.slices(t.lane as usize);
        let mut path = vec![NO_NODE; t.len()];
        for x in 0..t.len() {
            if t.folded[x] {
                continue;
            }
            let parent = match t.parent[x] {
                NO_NODE => NO_NODE,
                p => path[p as usize],
            };
            let key = (t.name[x], t.kind[x]);
            let id = *index.entry((parent, key)).or_insert_with(|| {
                sums.push(PathSums {
                    key,
                    parent,
                    calls: 0,
                    total_ns: 0,
                    self_ns: 0,
                    device_total_ns: 0,
                    device_self_ns: 0,
                });
                sums.len() as u32 - 1
            });
            path[x] = id;
            let p = &mut sums[id as usize];
            p.calls += 1;
            p.total_ns += s.dur_ns[t.slice[x] as usize];
            p.self_ns += t.self_cpu_ns[x];
            p.device_total_ns += t.device_total_ns[x];
            p.device_self_ns += t.device_self_ns[x];
        }
    }

    let mut nodes: Vec<CallNode> = sums
        .iter()
        .map(|p| CallNode {
            name: p.key.0.as_str(trace).to_string(),
            kind: p.key.1,
            parent: (p.parent != NO_NODE).then_some(p.parent),
            children: Vec::new(),
            calls: p.calls,
            total_us: us(p.total_ns),
            self_us: us(p.self_ns),
            device_total_us: us(p.device_total_ns),
            device_self_us: us(p.device_self_ns),
        })
        .collect();
    let mut roots = Vec::new();
    for (i, p) in sums.iter().enumerate() {
        match p.parent {
            NO_NODE => roots.push(i as u32),
            parent => nodes[parent as usize].children.push(i as u32),
        }
    }
    let by_total = |nodes: &[CallNode], list: &mut Vec<u32>| {
        list.sort_by(|&a, &b| {
            let (a, b) = (&nodes[a as usize], &nodes[b as usize]);
            b.total_us
                .total_cmp(&a.total_us)
                .then_with(|| a.name.cmp(&b.name))
        })
    };
    for i in 0..nodes.len() {
        let mut children = std::mem::take(&mut nodes[i].children);
        by_total(&nodes, &mut children);
        nodes[i].children = children;
    }
    by_total(&nodes, &mut roots);

    let paths: Vec<(Key, u32)> = sums.iter().map(|p| (p.key, p.parent)).collect();
    let outermost = (0..paths.len())
        .map(|u| {
            let key = paths[u].0;
            let mut a = paths[u].1;
            while a != NO_NODE {
                if paths[a as usize].0 == key {
                    return false;
                }
                a = paths[a as usize].1;
            }
            true
        })
        .collect();
    CallTree {
        nodes,
        roots,
        paths,
        outermost,
    }
}

impl CallTree {
    /// The bottom-up roots: every (name, kind) with all its self time, most first.
    pub fn bottom_up_roots(&self) -> Vec<BottomUpNode> {
        self.group((0..self.nodes.len() as u32).map(|u| (u, u)))
    }

    /// The next level of a bottom-up node: its callers, most self time first.
    pub fn callers(&self, node: &BottomUpNode) -> Vec<BottomUpNode> {
        self.group(node.members.iter().filter_map(|&(leaf, at)| {
            let parent = self.paths[at as usize].1;
            (parent != NO_NODE).then_some((leaf, parent))
        }))
    }

    /// Groups (leaf, ancestor) pairs by the ancestor's (name, kind), summing the leaves' numbers.
    fn group(&self, members: impl Iterator<Item = (u32, u32)>) -> Vec<BottomUpNode> {
        let mut index: FxHashMap<Key, usize> = FxHashMap::default();
        let mut out: Vec<BottomUpNode> = Vec::new();
        for (leaf, at) in members {
            let (key, parent) = self.paths[at as usize];
            let i = *index.entry(key).or_insert_with(|| {
                out.push(BottomUpNode {
                    name: self.nodes[at as usize].name.clone(),
                    kind: key.1,
                    calls: 0,
                    self_us: 0.0,
                    device_self_us: 0.0,
                    total_us: 0.0,
                    device_total_us: 0.0,
                    has_callers: false,
                    members: Vec::new(),
                });
                out.len() - 1
            });
            let (n, l) = (&mut out[i], &self.nodes[leaf as usize]);
            n.calls += l.calls;
            n.self_us += l.self_us;
            n.device_self_us += l.device_self_us;
            if self.outermost[leaf as usize] {
                n.total_us += l.total_us;
                n.device_total_us += l.device_total_us;
            }
            n.has_callers |= parent != NO_NODE;
            n.members.push((leaf, at));
        }
        out.sort_by(|a, b| {
            b.self_us
                .total_cmp(&a.self_us)
                .then_with(|| a.name.cmp(&b.name))
        });
        out
    }
}
