//! Per slice: its time on the steps' critical paths and its slack, for the operator and kernel
//! tables' `on_path_us` and `slack_us` columns.
//!
//! - Time on the path: a CPU slice's is inclusive (the path's CPU time charged to it or to a slice
//!   inside it, as `CPU total` is inclusive); a device op's is its own duration where the path runs
//!   through it (not the launch or queueing before it).
//! - Slack: how much later a slice could end without lengthening its step as the what-if measures
//!   it (to the end of the last device op the step launched): the latest time its end node can
//!   reach (a backward pass from the step's end, each node at the earliest of its successors'
//!   latest times less the edge's weight) less its measured time. 0 on the path. A slice that
//!   nothing in its step's end depends on (work after the step's last device op, in no step)
//!   has none.

use super::graph::{EdgeKind, Graph};
use super::{Analysis, StepPath};
use crate::analysis::tables::{EventKind, Forest, KernelTable, OpTable, PathColumns};
use crate::model::{SliceRef, Trace};
use rustc_hash::FxHashMap;

/// Per lane, per slice (ns).
pub struct SliceTimes {
    pub on_path_ns: Vec<Vec<i64>>,
    /// `i64::MAX` for a slice in no step.
    pub slack_ns: Vec<Vec<i64>>,
}

impl SliceTimes {
    /// The times of every slice on the step paths of `a` (`ops --path`, `kernels --path`; the
    /// trace's [`crate::analysis::derived::Derived::slice_times`] keeps them).
    pub fn of(trace: &Trace, a: &Analysis, paths: &[StepPath]) -> SliceTimes {
        let g = &a.graph;
        let mut on_path: Vec<Vec<i64>> = trace
            .lanes
            .iter()
            .map(|l| vec![0; l.slice_count()])
            .collect();
        for p in paths {
            for s in &p.segments {
                let Some(r) = s.slice else { continue };
                let ns = ((s.end_us - s.start_us) * 1e3).round() as i64;
                let gpu = trace.lanes[r.lane as usize].is_gpu();
                match s.kind {
                    "device" if gpu => on_path[r.lane as usize][r.index as usize] += ns,
                    "cpu" if !gpu => {
                        let lane = r.lane as usize;
                        let mut up = r.index;
                        while up != u32::MAX {
                            on_path[lane][up as usize] += ns;
                            up = g.parent[lane][up as usize];
                        }
                    }
                    _ => {}
                }
            }
        }
        let latest = latest(g, a);
        let slack_ns = trace
            .lanes
            .iter()
            .enumerate()
            .map(|(li, l)| {
                let nodes = if l.is_gpu() {
                    &g.device_nodes[li]
                } else {
                    &g.cpu_nodes[li]
                };
                (0..l.slice_count())
                    .map(|i| match nodes.get(i) {
                        Some(&(_, end)) if end != u32::MAX && latest[end as usize] != i64::MAX => {
                            (latest[end as usize] - g.time[end as usize]).max(0)
                        }
                        _ => i64::MAX,
                    })
                    .collect()
            })
            .collect();
        SliceTimes {
            on_path_ns: on_path,
            slack_ns,
        }
    }

    pub fn on_path(&self, r: SliceRef) -> i64 {
        self.on_path_ns[r.lane as usize][r.index as usize]
    }

    pub fn slack(&self, r: SliceRef) -> Option<i64> {
        let s = self.slack_ns[r.lane as usize][r.index as usize];
        (s != i64::MAX).then_some(s)
    }
}

/// Each node's latest time within its step (`i64::MAX` outside every step): one backward pass in
/// reverse topological order, following only edges that stay in the node's step.
fn latest(g: &Graph, a: &Analysis) -> Vec<i64> {
    let n = g.time.len();
    // The step of each node by time: the last window starting at or before it that it is in.
    let mut windows: Vec<(i64, i64, u32)> = a
        .windows
        .iter()
        .map(|w| (g.time[w.start as usize], g.time[w.end as usize], w.end))
        .collect();
    windows.sort_unstable();
    let step_of = |v: usize| -> Option<usize> {
        let t = g.time[v];
        let k = windows.partition_point(|w| w.0 <= t).checked_sub(1)?;
        (t <= windows[k].1).then_some(k)
    };
    let step: Vec<Option<usize>> = (0..n).map(step_of).collect();
    let (out_start, out) = g.outgoing();
    let mut latest = vec![i64::MAX; n];
    for &v in g.order.iter().rev() {
        let v = v as usize;
        let Some(k) = step[v] else { continue };
        let mut t = if v as u32 == windows[k].2 {
            windows[k].1
        } else {
            i64::MAX
        };
        for &e in &out[out_start[v] as usize..out_start[v + 1] as usize] {
            let e = &g.edges[e as usize];
            let to = e.to as usize;
            if step[to] == Some(k) && latest[to] != i64::MAX {
                // A start edge carries no dependency a delay could break.
                if e.kind != EdgeKind::Start {
                    t = t.min(latest[to] - e.weight);
                }
            }
        }
        latest[v] = t;
    }
    latest
}

/// Fills the operator table's path columns: each row's calls' time on the path summed, and their
/// least slack. Rows are found as [`crate::analysis::tables::op_table`] makes them.
pub fn annotate_ops(table: &mut OpTable, trace: &Trace, forest: &Forest, t: &SliceTimes) {
    let mut sums: FxHashMap<(String, EventKind, Option<String>), PathColumns> =
        FxHashMap::default();
    for (tree, x) in forest.kept_nodes() {
        if tree.kind[x] == EventKind::Python {
            continue;
        }
        let r = SliceRef {
            lane: tree.lane,
            index: tree.slice[x],
        };
        let shapes = table.by_input_shape.then(|| {
            let dims = trace.columns.input_dims[trace.row(r)];
            match trace.str(dims) {
                "" => "[]".to_string(),
                d => d.to_string(),
            }
        });
        let key = (tree.name[x].as_str(trace).to_string(), tree.kind[x], shapes);
        add(sums.entry(key).or_default(), t, r);
    }
    for row in &mut table.rows {
        let key = (row.name.clone(), row.kind, row.input_shapes.clone());
        row.path = Some(sums.get(&key).copied().unwrap_or_default());
    }
}

/// Fills the kernel table's path columns, by name over the device ops.
pub fn annotate_kernels(table: &mut KernelTable, trace: &Trace, t: &SliceTimes) {
    let mut sums: FxHashMap<&str, PathColumns> = FxHashMap::default();
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| l.is_gpu()) {
        for i in 0..l.slice_count() {
            let r = SliceRef {
                lane: li as u32,
                index: i as u32,
            };
            add(sums.entry(trace.slice_name(r)).or_default(), t, r);
        }
    }
    for row in &mut table.rows {
        row.path = Some(sums.get(row.name.as_str()).copied().unwrap_or_default());
    }
}

fn add(c: &mut PathColumns, t: &SliceTimes, r: SliceRef) {
    c.on_path_us += t.on_path(r) as f64 / 1e3;
    if let Some(s) = t.slack(r) {
        let s = s as f64 / 1e3;
        c.slack_us = Some(c.slack_us.map_or(s, |m: f64| m.min(s)));
    }
}
