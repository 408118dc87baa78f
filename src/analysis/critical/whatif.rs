//! What-if: `NAME=0` removes, `NAME*F` scales; `rankR:` limits an edit to one rank. NAME is a
//! slice name with `*` globs and `|` between alternatives, or a kind: `DataLoader` (the CPU time
//! inside a DataLoader's `__next__`), `kernels` (computation kernels), `memcpy` (copies and fills),
//! `pageable` (copies from or to pageable host memory, Kineto's `Memcpy ... (Pageable -> Device)`),
//! `communication`, `untraced` (CPU time on a thread inside no operator, annotation or runtime
//! call: Python, I/O, `torch.save`; a step's own time counts, as the step only frames the others)
//! `float64` (CPU operators with a `double` tensor among their `Input type`s), `syncs` (the host's
//! blocking calls, `*Synchronize` and blocking copies, and their waits for the device: `syncs=0`
//! removes the waits as dependencies, the host no longer waiting there) or `launches`
//! (kernel launch calls and the delay from each to its kernel's start on an idle stream).
//! A CPU slice's edit scales every piece of CPU time inside it (its children's too) and the device
//! ops launched from inside it (an operator's kernels and copies: removing `aten::mul` removes the
//! multiplications it ran); `cpu:NAME` leaves the device work as it was. A device op's edit scales
//! its duration. `self:NAME` scales a slice's own time only (not its children's, nor what they
//! launched); `NAME+gaps`
//! scales too the untraced time between two matching slices in a row on a thread (a Python loop's
//! time between the calls it makes). Launch delays, gaps and sync returns keep their weights, and
//! the graph is replayed with its dependencies: an op still waits for its launch and the op before
//! it on its stream.

use super::graph::{is_blocking, EdgeKind, Graph};
use super::{is_data_loading, Analysis};
use crate::analysis::idle::OpClass;
use crate::analysis::slicing::{self, block_on, Slicer, LOOKUP};
use crate::cores::{both, two_cores};
use crate::model::Trace;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edit {
    /// The edit as written.
    pub text: String,
    pub rank: Option<i64>,
    pub target: Target,
    pub factor: f64,
    /// `self:`: the slices' own time only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
    /// `+gaps`: and the untraced time between two matching slices in a row.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gaps: bool,
    /// `cpu:`: the CPU time only, not the device work the slices launched.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cpu: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A slice name, `*` matching any run of characters, `|` between alternatives.
    Name(String),
    DataLoader,
    Kernels,
    Memcpy,
    /// Host-device copies from or to pageable memory.
    Pageable,
    Communication,
    Untraced,
    Float64,
    /// The host's waits for the device: blocking calls (`*Synchronize`, blocking `cudaMemcpy`)
    /// and the time they waited.
    Syncs,
    /// Kernel launches: the launch calls' CPU time and the delay from a call to its kernel's
    /// start on an idle stream.
    Launches,
}

impl Edit {
    /// Parses `[rankR:][cpu:][self:]NAME[+gaps]=0` or `...*F` (F a non-negative number).
    pub fn parse(text: &str) -> Result<Edit, String> {
        let t = text.trim();
        let (rank, rest) = match t.strip_prefix("rank").and_then(|r| r.split_once(':')) {
            Some((r, rest)) if !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()) => (
                Some(r.parse::<i64>().map_err(|e| format!("'{text}': {e}"))?),
                rest,
            ),
            _ => (None, t),
        };
        let (name, factor) = if let Some(name) = rest.strip_suffix("=0") {
            (name, 0.0)
        } else if let Some((name, f)) = rest.rsplit_once('*') {
            let f: f64 = f.trim().parse().map_err(|_| {
                format!("what-if '{text}': after the last '*' comes a factor (NAME*0.5)")
            })?;
            if !f.is_finite() || f < 0.0 {
                return Err(format!("what-if '{text}': the factor must be 0 or more"));
            }
            (name, f)
        } else {
            return Err(format!(
                "what-if '{text}': write NAME=0 to remove or NAME*F to scale (e.g. 'aten::copy_=0', 'DataLoader*0.5')"
            ));
        };
        let name = name.trim();
        let (cpu, name) = match name.strip_prefix("cpu:") {
            Some(rest) => (true, rest.trim_start()),
            None => (false, name),
        };
        let (own, name) = match name.strip_prefix("self:") {
            Some(rest) => (true, rest.trim_start()),
            None => (false, name),
        };
        let (gaps, name) = match name.strip_suffix("+gaps") {
            Some(rest) => (true, rest.trim_end()),
            None => (false, name),
        };
        if name.is_empty() || name.split('|').any(str::is_empty) {
            return Err(format!("what-if '{text}': no name before '=' or '*'"));
        }
        let target = match name {
            "DataLoader" => Target::DataLoader,
            "kernels" => Target::Kernels,
            "memcpy" => Target::Memcpy,
            "pageable" => Target::Pageable,
            "communication" => Target::Communication,
            "untraced" => Target::Untraced,
            "float64" => Target::Float64,
            "syncs" => Target::Syncs,
            "launches" => Target::Launches,
            n => Target::Name(n.to_string()),
        };
        if (own || gaps || cpu) && !matches!(target, Target::Name(_)) {
            return Err(format!(
                "what-if '{text}': cpu:, self: and +gaps go with slice names, not with the kind \
                 '{name}'"
            ));
        }
        Ok(Edit {
            text: text.to_string(),
            rank,
            target,
            factor,
            own,
            gaps,
            cpu,
        })
    }
}

/// A runtime call that launches a kernel (`cudaLaunchKernel`, `hipLaunchKernel`,
/// `hipExtModuleLaunchKernel`, `cuLaunchKernel`, ...).
fn is_launch(name: &str) -> bool {
    (name.starts_with("cuda") || name.starts_with("hip") || name.starts_with("cu"))
        && name.contains("Launch")
        && !name.contains("Graph")
}

/// Kineto's name of a copy from or to pageable host memory: `Memcpy HtoD (Pageable -> Device)`.
fn is_pageable_copy(name: &str) -> bool {
    name.starts_with("Memcpy") && name.contains("Pageable")
}

/// `|` separates alternatives, each a [`glob`].
fn glob_any(pattern: &str, text: &str) -> bool {
    pattern.split('|').any(|p| glob(p, text))
}

/// Whether a step's own span: time in it outside its operators is untraced.
pub fn is_step(name: &str) -> bool {
    name.starts_with("ProfilerStep#")
}

/// `*` matches any run of characters, everything else itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(k) => rest = &rest[k + p.len()..],
            None => return false,
        }
    }
    true
}

/// The factor of each edge under `edits` (1 where none applies), and how many slices, device ops
/// or (for `untraced` and `+gaps`) stretches of untraced time each edit matched.
pub fn factors(trace: &Trace, a: &Analysis, edits: &[Edit]) -> (Vec<f64>, Vec<usize>) {
    factors_each(trace, a, &[edits]).pop().unwrap_or_default()
}

/// [`factors`] of several sets of edits (each set one what-if), in one pass over the graph's
/// edges, which each finding's what-if had walked again (the findings' savings price all theirs
/// at once).
pub fn factors_each(trace: &Trace, a: &Analysis, sets: &[&[Edit]]) -> Vec<(Vec<f64>, Vec<usize>)> {
    block_on(factors_each_sliced(trace, a, sets, &mut Slicer::never()))
}

/// [`factors_each`], pausing as `y` says.
pub async fn factors_each_sliced(
    trace: &Trace,
    a: &Analysis,
    sets: &[&[Edit]],
    y: &mut Slicer,
) -> Vec<(Vec<f64>, Vec<usize>)> {
    let g = &a.graph;
    let slices = trace.slice_count() as u64;
    // Every set's edits in one list, each knowing its set.
    let edits: Vec<&Edit> = sets.iter().flat_map(|set| set.iter()).collect();
    let set_of: Vec<usize> = sets
        .iter()
        .enumerate()
        .flat_map(|(k, set)| std::iter::repeat_n(k, set.len()))
        .collect();
    let mut factor = vec![vec![1.0; g.edges.len()]; sets.len()];
    let mut matched = vec![0usize; edits.len()];
    // Per edit, whether each interned name matches.
    let names: Vec<Option<Vec<bool>>> = edits
        .iter()
        .map(|e| match &e.target {
            Target::Name(p) => Some(trace.strings.each(|n| glob_any(p, n))),
            Target::DataLoader => Some(trace.strings.each(is_data_loading)),
            Target::Pageable => Some(trace.strings.each(is_pageable_copy)),
            Target::Syncs => Some(trace.strings.each(is_blocking)),
            Target::Launches => Some(trace.strings.each(is_launch)),
            _ => None,
        })
        .collect();
    let steps = trace.strings.each(is_step);
    // Per CPU lane and slice, whether it is an operator on float64 tensors (read from its args
    // only when an edit asks).
    let mut float64: Vec<Vec<bool>> = Vec::new();
    if edits.iter().any(|e| e.target == Target::Float64) {
        for l in &trace.lanes {
            let s = &l.slices;
            let mut lane = Vec::new();
            if !l.is_gpu() {
                lane.reserve(s.len());
                slicing::each(y, s.len(), &mut lane, |lane, i| {
                    let t = trace.args.field(s.args[i], "Input type");
                    lane.push(t.is_some_and(|t| t.contains("\"double\"")));
                    LOOKUP
                })
                .await;
            }
            float64.push(lane);
        }
    }
    let applies = |e: &Edit| e.rank.is_none_or(|r| r == a.rank);
    // Whether a slice itself is what an edit names.
    let names_slice = |k: usize, lane: usize, i: usize| -> bool {
        let l = &trace.lanes[lane];
        match (&names[k], &edits[k].target) {
            (Some(m), Target::DataLoader) => !l.is_gpu() && m[l.slices.name[i].0 as usize],
            (Some(m), Target::Pageable) => l.is_gpu() && m[l.slices.name[i].0 as usize],
            (Some(m), _) => m[l.slices.name[i].0 as usize],
            (None, Target::Float64) => !l.is_gpu() && float64[lane][i],
            (None, t) => l.is_gpu() && device_target(g, lane, i, t),
        }
    };
    // For `+gaps`: the end and start nodes of the matching CPU slices, as sets of node bits (a
    // hash set's probe for every untraced edge had been a fifth of the savings' time).
    let nodes = g.time.len();
    let mut bounds: Vec<(Bits, Bits)> = edits
        .iter()
        .map(|e| {
            let n = if e.gaps { nodes } else { 0 };
            (Bits::new(n), Bits::new(n))
        })
        .collect();
    // Count matched slices and device ops once each.
    for (k, e) in edits.iter().enumerate() {
        if !applies(e) {
            continue;
        }
        for (li, l) in trace.lanes.iter().enumerate() {
            let nodes = if l.is_gpu() {
                &g.device_nodes[li]
            } else {
                &g.cpu_nodes[li]
            };
            for (i, n) in nodes.iter().enumerate() {
                if n.0 == u32::MAX || !names_slice(k, li, i) {
                    continue;
                }
                matched[k] += 1;
                if e.gaps && !l.is_gpu() {
                    bounds[k].0.insert(n.1);
                    bounds[k].1.insert(n.0);
                }
            }
        }
        y.tick(slices).await;
    }
    // Per edit that names slices (or asks for float64), per CPU lane and slice: whether the slice
    // or (unless `self:`) a slice holding it is named, each slice settled once instead of a climb
    // to its root from every CPU edge for every edit.
    let mut held: Vec<Vec<Vec<bool>>> = Vec::with_capacity(edits.len());
    for (k, e) in edits.iter().enumerate() {
        if !applies(e) || (names[k].is_none() && e.target != Target::Float64) {
            held.push(Vec::new());
            continue;
        }
        held.push(
            (0..trace.lanes.len())
                .map(|li| {
                    if trace.lanes[li].is_gpu() {
                        return Vec::new();
                    }
                    held_by(&g.parent[li], e.own, |i| names_slice(k, li, i))
                })
                .collect(),
        );
        y.tick(slices).await;
    }
    // Whether an edit's device ops include those launched inside the slices it names.
    let carries: Vec<bool> = edits
        .iter()
        .map(|e| matches!(e.target, Target::Name(_)) && !e.cpu && !e.own)
        .collect();
    // Whether device op `r` was launched by a runtime call held by a named slice.
    let launched_in = |r: crate::model::SliceRef, held: &[Vec<bool>]| -> bool {
        let c = g.launched_by[r.lane as usize][r.index as usize];
        held.get(c.lane as usize)
            .and_then(|h| h.get(c.index as usize))
            .is_some_and(|&h| h)
    };
    // Each edge's factor under each edit, a range of edges at a time (each range writes its own
    // part of every set's factors), with the untraced stretches each range matched.
    let pass = |lo: usize, factor: &mut [&mut [f64]]| -> Vec<usize> {
        let mut matched = vec![0usize; edits.len()];
        let len = factor.first().map_or(0, |f| f.len());
        for (j, edge) in g.edges[lo..lo + len].iter().enumerate() {
            let untraced = edge.kind == EdgeKind::Cpu
                && edge.slice.is_none_or(|r| {
                    steps[trace.lanes[r.lane as usize].slices.name[r.index as usize].0 as usize]
                });
            for (k, e) in edits.iter().enumerate() {
                if !applies(e) {
                    continue;
                }
                let hit = match (edge.kind, edge.slice) {
                    (EdgeKind::Cpu, _) if e.target == Target::Untraced => untraced,
                    // A blocking call's wait (a cross-stream wait carries its op, and no time).
                    (EdgeKind::Sync, None) => e.target == Target::Syncs,
                    (EdgeKind::Launch, _) => e.target == Target::Launches,
                    (EdgeKind::Cpu, _)
                        if e.gaps
                            && untraced
                            && bounds[k].0.contains(edge.from)
                            && bounds[k].1.contains(edge.to) =>
                    {
                        true
                    }
                    (EdgeKind::Device(class), Some(r)) => match (&names[k], &e.target) {
                        (Some(_), Target::DataLoader) => false,
                        (Some(m), _) => {
                            m[trace.lanes[r.lane as usize].slices.name[r.index as usize].0 as usize]
                                || (carries[k] && launched_in(r, &held[k]))
                        }
                        (None, t) => class_target(class, t),
                    },
                    (EdgeKind::Cpu, Some(_)) if e.target == Target::Pageable => false,
                    (EdgeKind::Cpu, Some(r))
                        if names[k].is_some() || e.target == Target::Float64 =>
                    {
                        held[k][r.lane as usize]
                            .get(r.index as usize)
                            .is_some_and(|&h| h)
                    }
                    _ => false,
                };
                if hit {
                    factor[set_of[k]][j] *= e.factor;
                    matched[k] += (e.target == Target::Untraced) as usize;
                }
            }
        }
        matched
    };
    let n = g.edges.len();
    if n >= TWO_THREADS_FROM && two_cores() {
        // Two halves, on two cores.
        let (mut low, mut high): (Vec<&mut [f64]>, Vec<&mut [f64]>) =
            factor.iter_mut().map(|f| f.split_at_mut(n / 2)).unzip();
        let (m_low, m_high) = both(true, || pass(0, &mut low), || pass(n / 2, &mut high));
        for (k, m) in matched.iter_mut().enumerate() {
            *m += m_low[k] + m_high[k];
        }
    } else {
        // In ranges, pausing between them.
        for lo in (0..n).step_by(PASS_CHUNK) {
            let hi = (lo + PASS_CHUNK).min(n);
            let mut part: Vec<&mut [f64]> = factor.iter_mut().map(|f| &mut f[lo..hi]).collect();
            for (m, got) in matched.iter_mut().zip(pass(lo, &mut part)) {
                *m += got;
            }
            y.tick(((hi - lo) * edits.len().max(1)) as u64).await;
        }
    }
    let mut matched = matched.into_iter();
    factor
        .into_iter()
        .zip(sets)
        .map(|(f, set)| (f, matched.by_ref().take(set.len()).collect()))
        .collect()
}

/// At least this many edges make the what-ifs use a second core ([`both`]): below, a thread's
/// start costs more than it saves.
const TWO_THREADS_FROM: usize = 1 << 16;

/// Edges the factors' pass reads between two pauses where it runs on one core; nodes a replay
/// walks between two pauses.
const PASS_CHUNK: usize = 1 << 14;

/// A set of the graph's nodes or edges, a bit each.
#[derive(Debug, Clone, Default)]
pub struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn insert(&mut self, n: u32) {
        if let Some(w) = self.0.get_mut(n as usize / 64) {
            *w |= 1 << (n % 64);
        }
    }

    fn contains(&self, n: u32) -> bool {
        self.0
            .get(n as usize / 64)
            .is_some_and(|w| w & (1 << (n % 64)) != 0)
    }
}

/// The edges whose source lies before the window their destination is in: the latest window
/// start at or before the destination's time, among the windows of the destination's group
/// (`starts[group_of(node)]`: one group for a trace, one per rank for a job). A step's prediction
/// replays what happens from its own start on: such an edge leaves from its source's measured
/// time (a device op still running keeps its measured start and takes its edited duration), so
/// that a saving in an earlier step never moves this step, and a step measured from its own start
/// never lengthens when edits only shrink.
pub fn pinned_edges(g: &Graph, starts: &[Vec<i64>], group_of: impl Fn(u32) -> usize) -> Bits {
    let starts: Vec<Vec<i64>> = starts
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.sort_unstable();
            s
        })
        .collect();
    let mut pinned = Bits::new(g.edges.len());
    // The window found last, per group: edges come a thread or a stream at a time, in time
    // order, so most fall in the window of the edge before (a search each had been a tenth of
    // the analyses at 1 GB).
    let mut last: Vec<usize> = vec![0; starts.len()];
    for (k, e) in g.edges.iter().enumerate() {
        let group = group_of(e.to);
        let Some(s) = starts.get(group) else {
            continue;
        };
        let t = g.time[e.to as usize];
        let i = last[group];
        let within =
            |i: usize| s.get(i).is_some_and(|&x| x <= t) && s.get(i + 1).is_none_or(|&x| x > t);
        let i = if within(i) {
            i
        } else {
            match s.partition_point(|&x| x <= t).checked_sub(1) {
                Some(i) => i,
                None => continue,
            }
        };
        last[group] = i;
        if g.time[e.from as usize] < s[i] {
            pinned.insert(k as u32);
        }
    }
    pinned
}

/// Per slice of a lane, whether `named` holds for it or (unless `own`) for a slice holding it,
/// through `parent` (`u32::MAX` at a root). Each slice is settled once: a climb stops at the first
/// slice already settled, and everything it passed takes its answer.
fn held_by(parent: &[u32], own: bool, named: impl Fn(usize) -> bool) -> Vec<bool> {
    const OPEN: u8 = 0;
    const NO: u8 = 1;
    const YES: u8 = 2;
    let mut state = vec![OPEN; parent.len()];
    let mut path = Vec::new();
    for i in 0..parent.len() {
        let mut j = i;
        let answer = loop {
            match state[j] {
                NO => break NO,
                YES => break YES,
                _ => {}
            }
            if named(j) {
                state[j] = YES;
                break YES;
            }
            path.push(j);
            match parent[j] {
                p if own || p == u32::MAX => break NO,
                p => j = p as usize,
            }
        };
        for p in path.drain(..) {
            state[p] = answer;
        }
    }
    state.into_iter().map(|s| s == YES).collect()
}

fn class_target(class: OpClass, t: &Target) -> bool {
    matches!(
        (class, t),
        (OpClass::Computation, Target::Kernels)
            | (OpClass::Memory, Target::Memcpy)
            | (OpClass::Communication, Target::Communication)
    )
}

fn device_target(g: &Graph, lane: usize, i: usize, t: &Target) -> bool {
    let (a, b) = g.device_nodes[lane][i];
    g.incoming(b)
        .find(|e| e.from == a)
        .is_some_and(|e| matches!(e.kind, EdgeKind::Device(c) if class_target(c, t)))
}

/// Node times with each edge's weight multiplied by its factor: each node at the latest of its
/// incoming edges' source time plus weight, the sources at their measured times. A `pinned`
/// edge ([`pinned_edges`]) arrives at its measured time.
pub fn replay(g: &Graph, factor: &[f64], pinned: &Bits) -> Vec<f64> {
    replay_each(g, &[factor], pinned).pop().unwrap_or_default()
}

/// [`replay`] under several sets of factors in one walk of the graph, whose edges are read once
/// for all of them.
pub fn replay_each(g: &Graph, factors: &[&[f64]], pinned: &Bits) -> Vec<Vec<f64>> {
    block_on(replay_each_sliced(g, factors, pinned, &mut Slicer::never()))
}

/// [`replay_each`], pausing as `y` says.
pub async fn replay_each_sliced(
    g: &Graph,
    factors: &[&[f64]],
    pinned: &Bits,
    y: &mut Slicer,
) -> Vec<Vec<f64>> {
    // Several sets replay on two cores where the process has them, half the sets each.
    if factors.len() > 1 && g.edges.len() >= TWO_THREADS_FROM && two_cores() {
        let (a, b) = factors.split_at(factors.len() / 2);
        let (mut a, b) = both(
            true,
            || block_on(replay_sets(g, a, pinned, &mut Slicer::never())),
            || block_on(replay_sets(g, b, pinned, &mut Slicer::never())),
        );
        a.extend(b);
        return a;
    }
    replay_sets(g, factors, pinned, y).await
}

async fn replay_sets(
    g: &Graph,
    factors: &[&[f64]],
    pinned: &Bits,
    y: &mut Slicer,
) -> Vec<Vec<f64>> {
    let measured: Vec<f64> = g.time.iter().map(|&x| x as f64).collect();
    let mut t = vec![measured; factors.len()];
    let mut best: Vec<Option<f64>> = vec![None; factors.len()];
    for order in g.order.chunks(PASS_CHUNK) {
        replay_nodes(g, factors, pinned, order, &mut t, &mut best);
        y.tick((order.len() * factors.len()) as u64).await;
    }
    t
}

/// Replays `order`'s nodes under each set of factors: each node's time is the latest arrival
/// over its incoming edges. In a function of its own, whose locals stay in registers (see
/// [`crate::analysis::slicing::each`]).
#[inline(never)]
fn replay_nodes(
    g: &Graph,
    factors: &[&[f64]],
    pinned: &Bits,
    order: &[u32],
    t: &mut [Vec<f64>],
    best: &mut [Option<f64>],
) {
    for &v in order {
        best.fill(None);
        for (k, e) in g.incoming_indexed(v) {
            let w = e.weight as f64;
            if pinned.contains(k as u32) {
                // From before the step: the source at its measured time. A device op still
                // running when the step began (launched by the step before) keeps its measured
                // start and takes its edited duration, so faster kernels shorten the step that
                // waits for them; any other edge's weight is as measured.
                let from = g.time[e.from as usize] as f64;
                if matches!(e.kind, EdgeKind::Device(_)) {
                    for (b, f) in best.iter_mut().zip(factors) {
                        let arrive = from + w * f[k];
                        *b = Some(b.map_or(arrive, |b| b.max(arrive)));
                    }
                } else {
                    let arrive = from + w;
                    for b in best.iter_mut() {
                        *b = Some(b.map_or(arrive, |b| b.max(arrive)));
                    }
                }
                continue;
            }
            // A wait removed (`syncs=0`) is no dependency at all: the host does not wait there.
            let wait = e.kind == EdgeKind::Sync;
            for ((b, t), f) in best.iter_mut().zip(&*t).zip(factors) {
                if wait && f[k] == 0.0 {
                    continue;
                }
                let arrive = t[e.from as usize] + w * f[k];
                *b = Some(b.map_or(arrive, |b| b.max(arrive)));
            }
        }
        for (b, t) in best.iter().zip(t.iter_mut()) {
            if let Some(b) = *b {
                t[v as usize] = b;
            }
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WhatIf {
    pub edits: Vec<Edit>,
    pub steps: Vec<Prediction>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub rank: i64,
    pub step: String,
    pub measured_us: f64,
    pub predicted_us: f64,
    pub saving_us: f64,
}

/// Each window's measured and predicted length under `edits`; an edit that matches nothing on any
/// of the ranks is the caller's error to report (see [`factors`]' counts).
pub fn predict(a: &Analysis, factor: &[f64]) -> Vec<Prediction> {
    predict_each(a, &[factor]).pop().unwrap_or_default()
}

/// [`predict`] under several sets of factors, replayed together ([`replay_each`]).
pub fn predict_each(a: &Analysis, factors: &[&[f64]]) -> Vec<Vec<Prediction>> {
    block_on(predict_each_sliced(a, factors, &mut Slicer::never()))
}

/// [`predict_each`], pausing as `y` says.
pub async fn predict_each_sliced(
    a: &Analysis,
    factors: &[&[f64]],
    y: &mut Slicer,
) -> Vec<Vec<Prediction>> {
    let g = &a.graph;
    replay_each_sliced(g, factors, &a.pinned, y)
        .await
        .iter()
        .map(|t| {
            a.windows
                .iter()
                .map(|w| {
                    let measured = (g.time[w.end as usize] - g.time[w.start as usize]) as f64 / 1e3;
                    // From the step's measured start: what the step's own edits save.
                    let predicted = (t[w.end as usize] - g.time[w.start as usize] as f64) / 1e3;
                    Prediction {
                        rank: a.rank,
                        step: w.name.clone(),
                        measured_us: measured,
                        predicted_us: predicted,
                        saving_us: measured - predicted,
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("aten::*", "aten::copy_"));
        assert!(glob("*copy*", "aten::copy_"));
        assert!(glob("a*b*c", "aXbYc"));
        assert!(!glob("a*b*c", "aXcYb"));
        assert!(glob("exact", "exact") && !glob("exact", "exactly"));
        assert!(glob("*", ""));
    }

    #[test]
    fn edits_parse_and_say_what_is_wrong() {
        let e = Edit::parse("rank2:slow_rank_work=0").unwrap();
        assert_eq!((e.rank, e.factor), (Some(2), 0.0));
        assert_eq!(e.target, Target::Name("slow_rank_work".into()));
        let e = Edit::parse("DataLoader*0.5").unwrap();
        assert_eq!((e.target, e.factor), (Target::DataLoader, 0.5));
        let e = Edit::parse("aten::*mm*2").unwrap();
        assert_eq!(
            (e.target, e.factor),
            (Target::Name("aten::*mm".into()), 2.0)
        );
        for bad in ["copy", "=0", "x*-1", "x*fast", "rank:x=0"] {
            let r = Edit::parse(bad);
            assert!(r.is_err() || bad == "rank:x=0", "{bad}");
        }
        // "rank:" without a number is a name, not a rank.
        assert_eq!(Edit::parse("rank:x=0").unwrap().rank, None);
    }
}
