//! The ranks of one job as one graph: each rank's [`Analysis`] graph, moved onto one clock, joined
//! at the collectives `ranks` matches ([`crate::analysis::ranks::matching`]), so that a step's path
//! can run through another rank's work and a what-if on one rank moves the ranks that waited for it.
//!
//! A collective ends when the last participant arrives plus its own transfer: on each rank, the
//! collective's own edge (the device op's duration, or the CPU time into its end) is cut to the
//! transfer after the last arrival, and an edge of the same weight comes from every other
//! participant's start ([`EdgeKind::Collective`]). The last arrival's edge reaches the end exactly,
//! so the joined graph still reproduces every measured time; in a replay the collective ends when
//! its last participant arrives there. Clocks are the `ranks` alignment (`auto`).

use super::graph::{Edge, EdgeKind, Graph};
use super::whatif::{self, Edit, Prediction};
use super::{walk, Analysis, Part, PathOptions, StepPath, Window};
use crate::analysis::idle::{op_class, OpClass};
use crate::analysis::links::Links;
use crate::analysis::ranks::align::{self, Align};
use crate::analysis::ranks::digest::{distributed, Distributed};
use crate::analysis::ranks::matching::match_all;
use crate::analysis::steps::StepsReport;
use crate::model::{PerLane, SliceRef, Trace};
use rustc_hash::FxHashMap;

/// One rank's inputs.
pub struct Rank<'t> {
    pub trace: &'t Trace,
    pub links: &'t Links,
    pub steps: &'t StepsReport,
    /// The file's name, the rank when the trace does not say it.
    pub file: &'t str,
}

pub struct Job<'t> {
    ranks: Vec<Rank<'t>>,
    parts: Vec<Analysis>,
    /// Every part's nodes (part k's node v is `node_base[k] + v`) and edges, then the cross edges.
    pub graph: Graph,
    node_base: Vec<u32>,
    edge_base: Vec<usize>,
    /// Per cross edge, the joined edge of the collective's own duration whose edits it follows.
    cross_of: Vec<usize>,
    /// Added to each part's times.
    shift: Vec<i64>,
    /// Collectives joined across ranks.
    pub joined: usize,
    /// The joined graph's edges from before their rank's step ([`whatif::pinned_edges`]).
    pinned: whatif::Bits,
}

impl<'t> Job<'t> {
    pub fn build(ranks: Vec<Rank<'t>>, opts: &PathOptions) -> Result<Job<'t>, String> {
        let parts = ranks
            .iter()
            .map(|r| Analysis::build(r.trace, r.links, r.steps, opts))
            .collect::<Result<Vec<_>, _>>()?;
        let dists: Vec<Distributed> = ranks
            .iter()
            .map(|r| distributed(r.trace, r.links, r.steps, r.file))
            .collect();
        let dist_refs: Vec<&Distributed> = dists.iter().collect();
        let (offset, _) = align::offsets(&dist_refs, Align::Auto);
        let clock = |k: usize| dists[k].clock_origin_ns.saturating_add(offset[k]);
        let shift: Vec<i64> = (0..parts.len())
            .map(|k| clock(k).saturating_sub(clock(0)))
            .collect();

        let mut g = Graph {
            time: Vec::new(),
            lane: Vec::new(),
            edges: Vec::new(),
            in_start: Vec::new(),
            in_edges: Vec::new(),
            order: Vec::new(),
            cpu_nodes: PerLane::empty(),
            device_nodes: PerLane::empty(),
            parent: PerLane::empty(),
            loading: PerLane::empty(),
            launched_by: PerLane::empty(),
        };
        let mut node_base = Vec::with_capacity(parts.len());
        let mut edge_base = Vec::with_capacity(parts.len());
        for (k, a) in parts.iter().enumerate() {
            let base = g.time.len() as u32;
            node_base.push(base);
            edge_base.push(g.edges.len());
            g.time.extend(a.graph.time.iter().map(|t| t + shift[k]));
            g.lane.extend(&a.graph.lane);
            g.edges.extend(a.graph.edges.iter().map(|e| Edge {
                from: e.from + base,
                to: e.to + base,
                ..*e
            }));
        }

        // Each rank's collective slices by their span, to find the matched instances' nodes.
        let spans: Vec<FxHashMap<(i64, i64), Member>> = ranks
            .iter()
            .zip(&parts)
            .zip(&node_base)
            .map(|((r, a), &base)| collective_nodes(r, a, base))
            .collect();
        // Per matched collective: its participants and each one's transfer after the last arrival.
        let mut joins: Vec<(Vec<Member>, Vec<i64>)> = Vec::new();
        for m in match_all(&dist_refs, &offset) {
            if m.parts.len() < 2 {
                continue;
            }
            let found: Option<Vec<Member>> = m
                .parts
                .iter()
                .map(|&(d, i)| {
                    let c = &dists[d].collectives[i];
                    spans[d].get(&(c.start_ns, c.end_ns)).copied()
                })
                .collect();
            let transfer = (0..m.parts.len())
                .map(|p| m.end_ns[p] - m.arrival_ns[p].max(m.last_arrival_ns))
                .collect();
            if let Some(found) = found {
                joins.push((found, transfer));
            }
        }
        // The edges into the collectives' ends, found in one pass.
        let mut into: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (found, _) in &joins {
            for &(_, _, b) in found {
                into.entry(b).or_default();
            }
        }
        for (k, e) in g.edges.iter().enumerate() {
            if let Some(v) = into.get_mut(&e.to) {
                v.push(k);
            }
        }
        let mut cross_of = Vec::new();
        for (found, transfer) in &joins {
            for (p, &(slice, a, b)) in found.iter().enumerate() {
                let end = g.time[b as usize];
                // The collective's own edge into its end carries the transfer only.
                let mut own = None;
                for &k in &into[&b] {
                    let e = &mut g.edges[k];
                    let is_own = match e.kind {
                        EdgeKind::Device(_) => e.from == a,
                        EdgeKind::Cpu => true,
                        _ => false,
                    };
                    if is_own {
                        e.weight = e.weight.min(transfer[p]);
                        own = Some(k);
                    }
                }
                let Some(own) = own else { continue };
                for (q, &(_, qa, _)) in found.iter().enumerate() {
                    if q == p {
                        continue;
                    }
                    // On the joined clock: the weight that lands the last arrival on the end.
                    let arrive = g.time[qa as usize];
                    g.edges.push(Edge {
                        from: qa,
                        to: b,
                        weight: transfer[p].min(end - arrive),
                        kind: EdgeKind::Collective,
                        slice: slice.into(),
                    });
                    cross_of.push(own);
                }
            }
        }
        let joined = joins.len();
        g.index();
        // Each rank's steps pin what comes before them on that rank's own windows.
        let starts: Vec<Vec<i64>> = parts
            .iter()
            .zip(&node_base)
            .map(|(a, &base)| {
                let w = a.windows.iter();
                w.map(|w| g.time[(w.start + base) as usize]).collect()
            })
            .collect();
        let part_of = |v: u32| node_base.partition_point(|&b| b <= v) - 1;
        let pinned = whatif::pinned_edges(&g, &starts, part_of);
        Ok(Job {
            pinned,
            ranks,
            parts,
            graph: g,
            node_base,
            edge_base,
            cross_of,
            shift,
            joined,
        })
    }

    fn part_of_node(&self, v: u32) -> usize {
        self.node_base.partition_point(|&b| b <= v) - 1
    }

    fn part(&self, k: usize) -> Part<'_> {
        Part {
            trace: self.ranks[k].trace,
            links: self.ranks[k].links,
            graph: &self.parts[k].graph,
            rank: self.parts[k].rank,
            shift: self.shift[k],
        }
    }

    /// Each rank's windows, as nodes of the joined graph, with the rank's index.
    fn windows(&self) -> Vec<(usize, Window)> {
        let mut out = Vec::new();
        for (k, a) in self.parts.iter().enumerate() {
            for w in &a.windows {
                out.push((
                    k,
                    Window {
                        name: w.name.clone(),
                        start: w.start + self.node_base[k],
                        end: w.end + self.node_base[k],
                        device_end: w.device_end.map(|n| n + self.node_base[k]),
                    },
                ));
            }
        }
        out
    }

    /// The critical path of every rank's steps through the joined graph.
    pub fn paths(&self) -> Vec<StepPath> {
        let part_of = |v: u32| self.part(self.part_of_node(v));
        self.windows()
            .iter()
            .map(|(_, w)| walk(&self.graph, w, &part_of))
            .collect()
    }

    /// Each rank's steps measured and predicted under `edits`, and how many slices or device ops
    /// each edit matched over all ranks.
    pub fn predict(&self, edits: &[Edit]) -> (Vec<Prediction>, Vec<usize>) {
        let mut factor = vec![1.0; self.graph.edges.len()];
        let mut matched = vec![0usize; edits.len()];
        for (k, a) in self.parts.iter().enumerate() {
            let (f, m) = whatif::factors(self.ranks[k].trace, a, edits);
            factor[self.edge_base[k]..self.edge_base[k] + f.len()].copy_from_slice(&f);
            for (x, y) in matched.iter_mut().zip(m) {
                *x += y;
            }
        }
        let cross0 = self.graph.edges.len() - self.cross_of.len();
        for (x, &own) in self.cross_of.iter().enumerate() {
            factor[cross0 + x] = factor[own];
        }
        let t = whatif::replay(&self.graph, &factor, &self.pinned);
        let g = &self.graph;
        let steps = self
            .windows()
            .into_iter()
            .map(|(k, w)| {
                let measured = (g.time[w.end as usize] - g.time[w.start as usize]) as f64 / 1e3;
                let predicted = (t[w.end as usize] - g.time[w.start as usize] as f64) / 1e3;
                Prediction {
                    rank: self.parts[k].rank,
                    step: w.name,
                    measured_us: measured,
                    predicted_us: predicted,
                    saving_us: measured - predicted,
                }
            })
            .collect();
        (steps, matched)
    }
}

/// A collective's slice on one rank, with its start and end nodes in the joined graph.
type Member = (SliceRef, u32, u32);

/// A rank's collective slices (`gloo:*` CPU slices, communication device ops) by span, with their
/// start and end nodes in the joined graph.
fn collective_nodes(r: &Rank, a: &Analysis, base: u32) -> FxHashMap<(i64, i64), Member> {
    let mut out = FxHashMap::default();
    for (li, l) in r.trace.lanes.iter().enumerate() {
        let s = r.trace.slices_of(l);
        let nodes = if l.is_gpu() {
            &a.graph.device_nodes[li]
        } else {
            &a.graph.cpu_nodes[li]
        };
        for (i, &(n0, n1)) in nodes.iter().enumerate() {
            if n0 == u32::MAX || n1 == u32::MAX {
                continue;
            }
            let name = r.trace.str(s.name[i]);
            let collective = if l.is_gpu() {
                op_class(r.links.kinds.of_cat(s.cat[i]), name) == OpClass::Communication
            } else {
                name.starts_with("gloo:")
            };
            if collective {
                let slice = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                out.insert((s.start_ns[i], s.end_ns(i)), (slice, n0 + base, n1 + base));
            }
        }
    }
    out
}
