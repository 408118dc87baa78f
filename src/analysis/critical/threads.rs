//! The threads a step waits on, joined to the thread that waits ([`super::graph`] builds each
//! CPU thread's chain on its own; this module adds the hand-offs between them).
//!
//! Each process has one caller thread: the one with the `ProfilerStep`s, else the one whose first
//! recorded slice comes first (the main thread starts before any thread it hands work to). Its
//! other threads run work it hands them:
//! - gloo's collectives ([`collective_threads`]), one collective at a time;
//! - any other thread ([`helper_threads`]): the autograd engine's device thread, which runs a
//!   CUDA/ROCm backward pass while the thread that called `backward()` waits (`pt_autograd_0` in
//!   2.x traces, a nameless second thread of `*Backward` operators in 1.8-1.9), and the like (a
//!   pin-memory thread).
//!
//! A helper thread's time between two bursts of work is waiting, never CPU work: it weighs 0, and
//! the burst starts from the caller. Bursts are told apart by the caller: a gap on the helper in
//! which the caller recorded a boundary (it ran an operator, a label, a runtime call) is idle
//! time between bursts; a gap with none is the engine's own untraced work inside one (a backward
//! pass keeps it). Where the caller was waiting when a burst ended (in no recorded slice, only its
//! `ProfilerStep`, or a label such as `## backward ##` that is not the DataLoader's), it resumes
//! from the burst's end: its own time in the wait weighs 0.

use super::graph::{Edge, EdgeKind, EdgeSlice, Graph, NONE};
use super::is_data_loading;
use crate::model::category::{Kind, Kinds};
use crate::model::{PerLane, Trace};
use rustc_hash::FxHashMap;

/// The caller thread of each process, by pid (a map: a trace may hold 10^5 processes).
pub(super) type Callers = FxHashMap<i64, usize>;

/// The caller thread of each process.
pub(super) fn callers(trace: &Trace, lane_nodes: &PerLane<u32>) -> Callers {
    let is_step = trace.strings.each(|n| n.starts_with("ProfilerStep#"));
    let mut out: Callers = FxHashMap::default();
    // Processes with steps: their step thread.
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
        if trace
            .slices_of(l)
            .name
            .iter()
            .any(|n| is_step[n.0 as usize])
        {
            out.entry(l.pid).or_insert(li);
        }
    }
    // The others: the thread whose chain starts first.
    let mut first: FxHashMap<i64, (i64, usize)> = FxHashMap::default();
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
        if lane_nodes[li].is_empty() || out.contains_key(&l.pid) {
            continue;
        }
        let start = trace
            .slices_of(l)
            .start_ns
            .iter()
            .min()
            .copied()
            .unwrap_or(i64::MAX);
        let f = first.entry(l.pid).or_insert((start, li));
        *f = (*f).min((start, li));
    }
    out.extend(first.into_iter().map(|(pid, (_, li))| (pid, li)));
    out
}

/// The caller of lane `li`'s process, where that is another lane.
fn caller_of(callers: &Callers, pid: i64, li: usize) -> Option<usize> {
    callers.get(&pid).copied().filter(|&c| c != li)
}

/// Collectives run on a thread of their own (gloo's: DistributedDataParallel's reducer hands each
/// bucket's all-reduce to a gloo thread during the backward pass, and the step's thread waits for
/// it, untraced, before the optimizer). Two edges stand for that hand-off, so that a collective
/// starts when the step's thread reaches it and the step's thread resumes when it ends:
/// - from the step thread's last boundary at or before the collective's start to that start (the
///   collective thread's idle time before it weighs 0: it was waiting for the work);
/// - from the collective's end to the step thread's first boundary after it, when the step thread
///   was in no recorded slice (or only its `ProfilerStep`) then: a wait, like a blocking call's.
pub(super) fn collective_threads(
    trace: &Trace,
    g: &mut Graph,
    waits: &mut Vec<(u32, u32, i64)>,
    chain_in: &[u32],
    callers: &Callers,
    lane_nodes: &PerLane<u32>,
) {
    // Each name read once, not once per slice.
    let is_gloo = trace.strings.each(|n| n.starts_with("gloo:"));
    // Time in no recorded slice (or only the step's), or before the thread's first slice.
    let untraced = |g: &Graph, e: u32| {
        e != NONE
            && match g.edges[e as usize].kind {
                EdgeKind::Start => true,
                EdgeKind::Cpu => g
                    .slice(&g.edges[e as usize])
                    .is_none_or(|r| trace.slice_name(r).starts_with("ProfilerStep#")),
                _ => false,
            }
    };
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
        let Some(main) = caller_of(callers, l.pid, li) else {
            continue;
        };
        let s = trace.slices_of(l);
        let collectives: Vec<usize> = (0..s.len())
            .filter(|&i| is_gloo[s.name[i].0 as usize])
            .collect();
        // The step thread's boundaries in time order (its chain's nodes, one per instant).
        let nodes = &lane_nodes[main];
        for i in collectives {
            let Some(&(a, b)) = g.cpu_nodes[li].get(i) else {
                continue;
            };
            if a == NONE || b == NONE {
                continue;
            }
            let (t0, t1) = (g.time[a as usize], g.time[b as usize]);
            let k = nodes.partition_point(|&n| g.time[n as usize] <= t0);
            if k > 0 && untraced(g, chain_in[a as usize]) {
                let from = nodes[k - 1];
                g.edges[chain_in[a as usize] as usize].weight = 0;
                g.edges.push(Edge {
                    from,
                    to: a,
                    weight: t0 - g.time[from as usize],
                    kind: EdgeKind::Cpu,
                    slice: EdgeSlice::NONE,
                });
            }
            let k = nodes.partition_point(|&n| g.time[n as usize] < t1);
            if let Some(&next) = nodes.get(k) {
                let e = chain_in.get(next as usize).copied().unwrap_or(NONE);
                if untraced(g, e) && g.time[g.edges[e as usize].from as usize] < t1 {
                    waits.push((b, next, g.time[next as usize] - t1));
                }
            }
        }
    }
}

/// The other threads of a process with a caller: each burst of work starts from the caller's last
/// boundary at or before it (the idle gap before it weighs 0), and a caller waiting when a burst
/// ends resumes from its end (see the module's doc).
pub(super) fn helper_threads(
    trace: &Trace,
    kinds: &Kinds,
    g: &mut Graph,
    chain_in: &[u32],
    callers: &Callers,
    lane_nodes: &PerLane<u32>,
) {
    let is_gloo = trace.strings.each(|n| n.starts_with("gloo:"));
    let is_step = trace.strings.each(|n| n.starts_with("ProfilerStep#"));
    let is_loading = trace.strings.each(is_data_loading);
    // Whether the caller's chain edge `e` is a wait: no recorded slice, only the step's, or a
    // label that is not the DataLoader's.
    let waiting = |g: &Graph, e: u32| -> bool {
        if e == NONE {
            return false;
        }
        let edge = &g.edges[e as usize];
        match (edge.kind, g.slice(edge)) {
            (EdgeKind::Start, _) | (EdgeKind::Cpu, None) => true,
            (EdgeKind::Cpu, Some(r)) => {
                let s = trace.slices(r.lane as usize);
                let name = s.name[r.index as usize].0 as usize;
                is_step[name]
                    || (kinds.of_cat(s.cat[r.index as usize]) == Kind::Annotation
                        && !is_loading[name])
            }
            _ => false,
        }
    };
    for (li, l) in trace.lanes.iter().enumerate().filter(|(_, l)| !l.is_gpu()) {
        let Some(caller) = caller_of(callers, l.pid, li) else {
            continue;
        };
        let (helper, main) = (&lane_nodes[li], &lane_nodes[caller]);
        if helper.is_empty()
            || main.is_empty()
            || trace
                .slices_of(l)
                .name
                .iter()
                .any(|n| is_gloo[n.0 as usize])
        {
            continue;
        }
        let time = |n: u32| g.time[n as usize];
        // Each burst's first node, with the caller's boundary it starts from; each burst's last.
        let mut starts: Vec<(u32, u32)> = Vec::new();
        let mut ends: Vec<u32> = Vec::new();
        for (k, &n) in helper.iter().enumerate() {
            let e = chain_in[n as usize];
            if e == NONE {
                continue;
            }
            let edge = g.edges[e as usize];
            let gap = match edge.kind {
                EdgeKind::Start => true,
                EdgeKind::Cpu => edge.slice == EdgeSlice::NONE,
                _ => false,
            };
            if !gap {
                continue;
            }
            let (t0, t1) = (time(edge.from), time(n));
            let j = main.partition_point(|&m| time(m) <= t0);
            if main.get(j).is_none_or(|&m| time(m) >= t1) {
                continue;
            }
            if k > 0 {
                ends.push(helper[k - 1]);
            }
            let c = main.partition_point(|&m| time(m) <= t1) - 1;
            starts.push((n, main[c]));
        }
        ends.extend(helper.last());
        for (n, from) in starts {
            let e = chain_in[n as usize] as usize;
            g.edges[e].weight = 0;
            g.edges.push(Edge {
                from,
                to: n,
                weight: g.time[n as usize] - g.time[from as usize],
                kind: EdgeKind::Cpu,
                slice: EdgeSlice::NONE,
            });
        }
        for end in ends {
            let t = g.time[end as usize];
            let j = main.partition_point(|&m| g.time[m as usize] < t);
            let Some(&next) = main.get(j) else {
                continue;
            };
            let e = chain_in[next as usize];
            if !waiting(g, e) || g.time[g.edges[e as usize].from as usize] >= t {
                continue;
            }
            g.edges[e as usize].weight = 0;
            g.edges.push(Edge {
                from: end,
                to: next,
                weight: g.time[next as usize] - t,
                kind: EdgeKind::Cpu,
                slice: EdgeSlice::NONE,
            });
        }
    }
}
