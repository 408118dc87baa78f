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

use super::graph::{is_blocking, EdgeKind, Graph, NONE};
use super::{is_data_loading, Analysis};
use crate::analysis::idle::OpClass;
use crate::analysis::slicing::{block_on, Slicer};
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

/// The bits of an edit set over a slice: a byte holds 8 edits, and a what-if or the findings'
/// savings rarely have more (a byte per CPU slice, where a word had been 8 at 1 GB).
type Word = u8;
const BITS: usize = Word::BITS as usize;

/// A test of a slice name.
type NameTest<'a> = Box<dyn Fn(&str) -> bool + 'a>;

/// What an edit's target names by slice name: `None` for a kind told otherwise (by an op's class,
/// its args, or untraced time).
fn name_matcher(target: &Target) -> Option<NameTest<'_>> {
    Some(match target {
        // `|` separates alternatives, each a [`glob`].
        Target::Name(p) => Box::new(move |n| p.split('|').any(|p| glob(p, n))),
        Target::DataLoader => Box::new(is_data_loading),
        Target::Pageable => Box::new(is_pageable_copy),
        Target::Syncs => Box::new(is_blocking),
        Target::Launches => Box::new(is_launch),
        _ => return None,
    })
}

/// Whether a step's own span: time in it outside its operators is untraced.
pub fn is_step(name: &str) -> bool {
    name.starts_with("ProfilerStep#")
}

/// `*` matches any run of characters, everything else itself.
/// Reads the pattern in place: it is tried on every interned name.
pub fn glob(pattern: &str, text: &str) -> bool {
    let Some((first, after)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let (middle, last) = after.rsplit_once('*').unwrap_or(("", after));
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in middle.split('*') {
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
    // Every set's edits in one list, each knowing its set.
    let edits: Vec<&Edit> = sets.iter().flat_map(|set| set.iter()).collect();
    let set_of: Vec<usize> = sets
        .iter()
        .enumerate()
        .flat_map(|(k, set)| std::iter::repeat_n(k, set.len()))
        .collect();
    let mut factor = vec![vec![1.0; g.edges.len()]; sets.len()];
    let mut matched = vec![0usize; edits.len()];
    let applies = |e: &Edit| e.rank.is_none_or(|r| r == a.rank);
    // Per interned name, a bit per edit: whether the edit names a CPU slice, or a device op, of
    // that name (an edit of another rank names nothing). One pass over the names for all edits,
    // and one over each lane's slices, read a slice's name once for every edit (an edit's pass of
    // its own over every slice, twice, had been most of the savings' time at 1 GB).
    let words = edits.len().div_ceil(BITS).max(1);
    let by_name: Vec<Option<NameTest>> = edits.iter().map(|e| name_matcher(&e.target)).collect();
    let mut cpu_names = vec![0 as Word; trace.strings.len() * words];
    let mut device_names = vec![0 as Word; trace.strings.len() * words];
    for (s, name) in trace.strings.strings().enumerate() {
        for (k, m) in by_name.iter().enumerate() {
            let Some(m) = m.as_ref().filter(|_| applies(edits[k])) else {
                continue;
            };
            if !m(name) {
                continue;
            }
            let bit = 1 << (k % BITS);
            if edits[k].target != Target::Pageable {
                cpu_names[s * words + k / BITS] |= bit;
            }
            if edits[k].target != Target::DataLoader {
                device_names[s * words + k / BITS] |= bit;
            }
        }
    }
    let named: Vec<bool> = by_name.iter().map(Option::is_some).collect();
    drop(by_name);
    let bit =
        |bits: &[Word], at: usize, k: usize| bits[at * words + k / BITS] >> (k % BITS) & 1 == 1;
    let steps = trace.strings.each(is_step);
    let f64_edits: Vec<usize> = (0..edits.len())
        .filter(|&k| edits[k].target == Target::Float64 && applies(edits[k]))
        .collect();
    // Edits that hold what the slices under a named one run (all but `self:`).
    let mut inherit = vec![0 as Word; words];
    for (k, e) in edits.iter().enumerate() {
        if !e.own {
            inherit[k / BITS] |= 1 << (k % BITS);
        }
    }
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
    // Per CPU lane and slice, a bit per edit: whether the slice or (unless `self:`) a slice
    // holding it is named (a slice's parent comes before it in its lane). Matched slices and
    // device ops are counted on the way, once each.
    let mut held: Vec<Vec<Word>> = Vec::with_capacity(trace.lanes.len());
    for (li, l) in trace.lanes.iter().enumerate() {
        let s = trace.slices_of(l);
        if l.is_gpu() {
            held.push(Vec::new());
            for (i, n) in g.device_nodes[li].iter().enumerate() {
                if n.0 == u32::MAX {
                    continue;
                }
                let name = s.name[i].0 as usize;
                for (k, e) in edits.iter().enumerate() {
                    let hit = if named[k] {
                        bit(&device_names, name, k)
                    } else {
                        applies(e) && device_target(g, li, i, &e.target)
                    };
                    matched[k] += hit as usize;
                }
            }
            y.tick(s.len() as u64).await;
            continue;
        }
        let parent = &g.parent[li];
        let mut lane = vec![0 as Word; s.len() * words];
        let mut own = vec![0 as Word; words];
        for i in 0..s.len() {
            let name = s.name[i].0 as usize;
            own.copy_from_slice(&cpu_names[name * words..(name + 1) * words]);
            if !f64_edits.is_empty()
                && trace
                    .args
                    .field(s.args[i], "Input type")
                    .is_some_and(|t| t.contains("\"double\""))
            {
                for &k in &f64_edits {
                    own[k / BITS] |= 1 << (k % BITS);
                }
            }
            let p = parent.get(i).copied().unwrap_or(NONE);
            debug_assert!(p == NONE || (p as usize) < i);
            for w in 0..words {
                let from_parent = if p == NONE {
                    0
                } else {
                    lane[p as usize * words + w] & inherit[w]
                };
                lane[i * words + w] = own[w] | from_parent;
            }
            let Some(&node) = g.cpu_nodes[li].get(i).filter(|n| n.0 != u32::MAX) else {
                continue;
            };
            for (w, &bits) in own.iter().enumerate() {
                let mut b = bits;
                while b != 0 {
                    let k = w * BITS + b.trailing_zeros() as usize;
                    b &= b - 1;
                    matched[k] += 1;
                    if edits[k].gaps {
                        bounds[k].0.insert(node.1);
                        bounds[k].1.insert(node.0);
                    }
                }
            }
        }
        held.push(lane);
        y.tick(s.len() as u64).await;
    }
    let is_held = |k: usize, r: crate::model::SliceRef| -> bool {
        held.get(r.lane as usize)
            .and_then(|h| h.get(r.index as usize * words + k / BITS))
            .is_some_and(|w| w >> (k % BITS) & 1 == 1)
    };
    // Whether an edit's device ops include those launched inside the slices it names.
    let carries: Vec<bool> = edits
        .iter()
        .map(|e| matches!(e.target, Target::Name(_)) && !e.cpu && !e.own)
        .collect();
    // Whether device op `r` was launched by a runtime call held by a slice edit `k` names.
    let launched_in = |r: crate::model::SliceRef, k: usize| -> bool {
        is_held(k, g.launched_by[r.lane as usize][r.index as usize])
    };
    // Each edge's factor under each edit, a range of edges at a time (each range writes its own
    // part of every set's factors), with the untraced stretches each range matched.
    let pass = |lo: usize, factor: &mut [&mut [f64]]| -> Vec<usize> {
        let mut matched = vec![0usize; edits.len()];
        let len = factor.first().map_or(0, |f| f.len());
        for (j, edge) in g.edges[lo..lo + len].iter().enumerate() {
            // Read once an edge, not once an edit: it costs a read of the node's lane.
            let slice = g.slice(edge);
            let untraced = edge.kind == EdgeKind::Cpu
                && slice.is_none_or(|r| steps[trace.columns.name[trace.row(r)].0 as usize]);
            for (k, e) in edits.iter().enumerate() {
                if !applies(e) {
                    continue;
                }
                let hit = match (edge.kind, slice) {
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
                    (EdgeKind::Device(_), Some(r)) if named[k] => {
                        bit(
                            &device_names,
                            trace.columns.name[trace.row(r)].0 as usize,
                            k,
                        ) || (carries[k] && launched_in(r, k))
                    }
                    (EdgeKind::Device(class), Some(_)) => class_target(class, &e.target),
                    (EdgeKind::Cpu, Some(r)) if named[k] || e.target == Target::Float64 => {
                        is_held(k, r)
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
    // One set: node-major is set-major.
    block_on(replay_sets(g, &[factor], pinned, &mut Slicer::never())).t
}

/// Node times under several sets of factors, node-major: a node's times under every set lie side
/// by side, read together by each edge from it (set-major, the sets' reads had been apart).
pub struct Replayed {
    sets: usize,
    t: Vec<f64>,
}

impl Replayed {
    fn at(&self, set: usize, node: u32) -> f64 {
        self.t[node as usize * self.sets + set]
    }
}

/// [`replay`] under several sets of factors in one walk of the graph, whose edges are read once
/// for all of them; on two cores, each walks half the sets.
async fn replay_each_sliced(
    g: &Graph,
    factors: &[&[f64]],
    pinned: &Bits,
    y: &mut Slicer,
) -> Vec<Replayed> {
    // Several sets replay on two cores where the process has them, half the sets each.
    if factors.len() > 1 && g.edges.len() >= TWO_THREADS_FROM && two_cores() {
        let (a, b) = factors.split_at(factors.len() / 2);
        let (a, b) = both(
            true,
            || block_on(replay_sets(g, a, pinned, &mut Slicer::never())),
            || block_on(replay_sets(g, b, pinned, &mut Slicer::never())),
        );
        return vec![a, b];
    }
    vec![replay_sets(g, factors, pinned, y).await]
}

async fn replay_sets(g: &Graph, factors: &[&[f64]], pinned: &Bits, y: &mut Slicer) -> Replayed {
    let sets = factors.len();
    let mut t = Vec::with_capacity(g.time.len() * sets);
    for &x in &g.time {
        t.extend(std::iter::repeat_n(x as f64, sets));
    }
    let mut best = vec![f64::NEG_INFINITY; sets];
    for order in g.order.chunks(PASS_CHUNK) {
        replay_nodes(g, factors, pinned, order, &mut t, &mut best);
        y.tick((order.len() * sets) as u64).await;
    }
    Replayed { sets, t }
}

/// Replays `order`'s nodes under each set of factors: each node's time is the latest arrival
/// over its incoming edges (`NEG_INFINITY` while none arrived: a node whose every edge is a
/// removed wait keeps its time). In a function of its own, whose locals stay in registers (see
/// [`crate::analysis::slicing::each`]).
#[inline(never)]
fn replay_nodes(
    g: &Graph,
    factors: &[&[f64]],
    pinned: &Bits,
    order: &[u32],
    t: &mut [f64],
    best: &mut [f64],
) {
    let sets = factors.len();
    for &v in order {
        best.fill(f64::NEG_INFINITY);
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
                        *b = b.max(from + w * f[k]);
                    }
                } else {
                    for b in best.iter_mut() {
                        *b = b.max(from + w);
                    }
                }
                continue;
            }
            // A wait removed (`syncs=0`) is no dependency at all: the host does not wait there.
            let wait = e.kind == EdgeKind::Sync;
            let from = &t[e.from as usize * sets..][..sets];
            for ((b, &at), f) in best.iter_mut().zip(from).zip(factors) {
                if wait && f[k] == 0.0 {
                    continue;
                }
                *b = b.max(at + w * f[k]);
            }
        }
        for (out, &b) in t[v as usize * sets..][..sets].iter_mut().zip(&*best) {
            if b > f64::NEG_INFINITY {
                *out = b;
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    let replayed = replay_each_sliced(g, factors, &a.pinned, y).await;
    replayed
        .iter()
        .flat_map(|r| (0..r.sets).map(move |set| (r, set)))
        .map(|(r, set)| {
            a.windows
                .iter()
                .map(|w| {
                    let measured = (g.time[w.end as usize] - g.time[w.start as usize]) as f64 / 1e3;
                    // From the step's measured start: what the step's own edits save.
                    let predicted = (r.at(set, w.end) - g.time[w.start as usize] as f64) / 1e3;
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
