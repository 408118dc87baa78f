//! The call tree: the [`Forest`]'s nodes aggregated by path, top-down and bottom-up, for a tree table.
//!
//! Top-down: a node per distinct path of (name, kind) from a thread's root, threads merged; its
//! calls, CPU total and self, and device total and self, summed over the instances on that path.
//! Python frames are nodes here (their self time is where the Python code ran), so at every node
//! self plus the children's totals is the total.
//!
//! Bottom-up: a root per (name, kind) holding all its self time; below it, its callers, then
//! theirs: the node at path `[f, g, h]` holds the self time of `f` when called by `g` called by `h`.
//! Totals there count a recursive call only at its outermost frame, so nothing counts twice.
//! The bottom-up tree is built from the top-down paths, not from every instance again.

use super::ops::us;
use super::tree::{EventKind, Forest, NameKey, NO_NODE};
use crate::model::Trace;
use rustc_hash::FxHashMap;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct CallTree {
    pub top_down: CallForest,
    pub bottom_up: CallForest,
}

/// Nodes in a flat list; `roots` and each node's `children` index into it.
#[derive(Debug, Clone, Serialize)]
pub struct CallForest {
    pub nodes: Vec<CallNode>,
    /// Top-down by total, bottom-up by self time, most first (children likewise).
    pub roots: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
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

type Key = (NameKey, EventKind);

/// Sums of one path, in integers until the end.
#[derive(Clone, Copy)]
struct PathSums {
    key: Key,
    parent: u32,
    calls: u64,
    total_ns: i64,
    self_ns: i64,
    device_total_ns: i64,
    device_self_ns: i64,
}

/// Paths as nodes: a child is found by (parent, key).
#[derive(Default)]
struct Paths {
    index: FxHashMap<(u32, Key), u32>,
    sums: Vec<PathSums>,
}

impl Paths {
    fn node(&mut self, parent: u32, key: Key) -> u32 {
        let sums = &mut self.sums;
        *self.index.entry((parent, key)).or_insert_with(|| {
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
        })
    }

    fn into_forest(self, trace: &Trace, order: fn(&CallNode) -> f64) -> CallForest {
        let mut nodes: Vec<CallNode> = self
            .sums
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
        for (i, p) in self.sums.iter().enumerate() {
            match p.parent {
                NO_NODE => roots.push(i as u32),
                parent => nodes[parent as usize].children.push(i as u32),
            }
        }
        let by = |nodes: &[CallNode], list: &mut Vec<u32>| {
            list.sort_by(|&a, &b| {
                let (a, b) = (&nodes[a as usize], &nodes[b as usize]);
                order(b)
                    .total_cmp(&order(a))
                    .then_with(|| a.name.cmp(&b.name))
            })
        };
        for i in 0..nodes.len() {
            let mut children = std::mem::take(&mut nodes[i].children);
            by(&nodes, &mut children);
            nodes[i].children = children;
        }
        by(&nodes, &mut roots);
        CallForest { nodes, roots }
    }
}

pub fn call_tree(trace: &Trace, forest: &Forest) -> CallTree {
    let mut top = Paths::default();
    for t in &forest.trees {
        let s = &trace.lanes[t.lane as usize].slices;
        let mut path = vec![NO_NODE; t.len()];
        for x in 0..t.len() {
            if t.folded[x] {
                continue;
            }
            let parent = match t.parent[x] {
                NO_NODE => NO_NODE,
                p => path[p as usize],
            };
            let id = top.node(parent, (t.name[x], t.kind[x]));
            path[x] = id;
            let p = &mut top.sums[id as usize];
            p.calls += 1;
            p.total_ns += s.dur_ns[t.slice[x] as usize];
            p.self_ns += t.self_cpu_ns[x];
            p.device_total_ns += t.device_total_ns[x];
            p.device_self_ns += t.device_self_ns[x];
        }
    }

    let mut bottom = Paths::default();
    let paths = &top.sums;
    for leaf in paths {
        // The keys of the path's callers, innermost first.
        let callers = || {
            let up = |a: u32| (a != NO_NODE).then(|| paths[a as usize]);
            std::iter::successors(up(leaf.parent), move |p| up(p.parent)).map(|p| p.key)
        };
        let outermost = callers().all(|k| k != leaf.key);
        let mut node = NO_NODE;
        for key in std::iter::once(leaf.key).chain(callers()) {
            node = bottom.node(node, key);
            let b = &mut bottom.sums[node as usize];
            b.calls += leaf.calls;
            b.self_ns += leaf.self_ns;
            b.device_self_ns += leaf.device_self_ns;
            if outermost {
                b.total_ns += leaf.total_ns;
                b.device_total_ns += leaf.device_total_ns;
            }
        }
    }
    CallTree {
        top_down: top.into_forest(trace, |n| n.total_us),
        bottom_up: bottom.into_forest(trace, |n| n.self_us),
    }
}
