//! Who launched what: each GPU op linked to the runtime call that launched it, and each CPU slice to the
//! slices that enclose it, so any GPU op can be charged to an operator and a label.
//!
//! Definitions:
//! - A *GPU op* is any slice on a device lane that carries a correlation id, an External id or an
//!   incoming flow from a CPU lane (kernels, memcpys, memsets, syncs, MTIA's CCP events).
//! - Its *launch* (the runtime call) and its *operator* (the innermost operator around the launch,
//!   else the innermost annotation, else the operator or annotation with its External id) follow
//!   the one rule of [`super::launch`], which the operator tree of the tables uses too.
//! - A CPU slice's *parent* is the innermost slice of the same lane that contains it (slices are sorted
//!   by start, longer first, so a stack sweep finds it). Partial overlaps, rare on CPU threads, take the
//!   slice they overlap as parent.
//! - A *label* is the innermost enclosing `user_annotation` (a `record_function` span) other than
//!   `ProfilerStep#N`; the step is found separately.
//!
//! Cost: one pass over all slices plus two sorts of the id tables, O(n log n) time and about 12 bytes
//! per slice; built once per trace and shared by the analyses that need it.

use super::launch::{LaunchIndex, Via};
use super::slicing::{self, block_on, Slicer, LOOKUP};
pub use crate::model::category::{Kind, Kinds};
use crate::model::{PerLane, SliceRef, Trace, NO_ID};
use serde::Serialize;

/// No slice: used in the per-slice tables.
const NONE: u32 = u32::MAX;

/// How many GPU ops were linked, and how.
#[derive(Debug, Default, Clone, Serialize)]
pub struct LinkStats {
    pub gpu_ops: usize,
    /// Linked to a runtime call by correlation.
    pub by_correlation: usize,
    /// Linked to a runtime call by an `ac2g` flow (no correlation matched).
    pub by_flow: usize,
    /// No runtime call found; operator found by External id.
    pub by_external_id: usize,
    pub unlinked: usize,
}

/// The link tables of one trace. Build with [`Links::build`].
pub struct Links {
    pub kinds: Kinds,
    /// Per lane, per slice: index of the parent slice on the same lane (CPU lanes; empty for GPU lanes).
    parent: PerLane<u32>,
    /// Per lane, per slice: the launching runtime call (GPU lanes; empty for CPU lanes).
    launch: PerLane<SliceRef>,
    /// Per lane, per slice: the operator that issued the GPU op (GPU lanes; empty for CPU lanes).
    op: PerLane<SliceRef>,
    pub stats: LinkStats,
}

const NO_REF: SliceRef = SliceRef {
    lane: NONE,
    index: NONE,
};

fn some(r: SliceRef) -> Option<SliceRef> {
    (r.lane != NONE).then_some(r)
}

impl Links {
    pub fn build(trace: &Trace) -> Links {
        block_on(Links::build_sliced(trace, &mut Slicer::never()))
    }

    /// [`Links::build`] pausing as `y` says (see [`super::slicing`]).
    pub async fn build_sliced(trace: &Trace, y: &mut Slicer) -> Links {
        let kinds = Kinds::new(trace);
        let cpu_lens = trace
            .lanes
            .iter()
            .map(|l| if l.is_gpu() { 0 } else { l.slice_count() });
        let mut parent = PerLane::filled(cpu_lens, NONE);
        for (li, lane) in trace.lanes.iter().enumerate() {
            if lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            let mut sweep = (&mut parent[li], Vec::<(u32, i64)>::new());
            slicing::each(y, s.len(), &mut sweep, |(p, stack), i| {
                let start = s.start_ns[i];
                while stack.last().is_some_and(|&(_, end)| end <= start) {
                    stack.pop();
                }
                if let Some(&(top, _)) = stack.last() {
                    p[i] = top;
                }
                stack.push((i as u32, s.end_ns(i)));
                1
            })
            .await;
        }
        let index = LaunchIndex::build_sliced(trace, &kinds, y).await;

        let gpu_lens = || {
            trace
                .lanes
                .iter()
                .map(|l| if l.is_gpu() { l.slice_count() } else { 0 })
        };
        let mut links = Links {
            kinds,
            parent,
            launch: PerLane::filled(gpu_lens(), NO_REF),
            op: PerLane::filled(gpu_lens(), NO_REF),
            stats: LinkStats::default(),
        };
        for (li, lane) in trace.lanes.iter().enumerate() {
            if !lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            for i in 0..s.len() {
                y.tick(LOOKUP).await;
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let call = index.call(trace, r);
                let ext = s.external_id[i];
                if call.is_none() && s.correlation[i] == NO_ID && ext == NO_ID {
                    continue;
                }
                links.stats.gpu_ops += 1;
                let mut op = NO_REF;
                if let Some((c, _)) = call {
                    links.launch[li][i] = c;
                    op = links
                        .enclosing(trace, c, Kind::CpuOp)
                        .or_else(|| links.enclosing(trace, c, Kind::Annotation))
                        .unwrap_or(NO_REF);
                }
                if op == NO_REF {
                    op = index.by_external_id(ext).unwrap_or(NO_REF);
                }
                links.op[li][i] = op;
                match call {
                    Some((_, Via::Correlation)) => links.stats.by_correlation += 1,
                    Some((_, Via::Flow)) => links.stats.by_flow += 1,
                    None if op != NO_REF => links.stats.by_external_id += 1,
                    None => links.stats.unlinked += 1,
                }
            }
        }
        links
    }

    /// The runtime call that launched a GPU op.
    pub fn launch(&self, gpu_op: SliceRef) -> Option<SliceRef> {
        self.launch
            .get(gpu_op.lane as usize)?
            .get(gpu_op.index as usize)
            .copied()
            .and_then(some)
    }

    /// The operator that issued a GPU op (see the module doc).
    pub fn op(&self, gpu_op: SliceRef) -> Option<SliceRef> {
        self.op
            .get(gpu_op.lane as usize)?
            .get(gpu_op.index as usize)
            .copied()
            .and_then(some)
    }

    /// The innermost slice containing a CPU slice, on its lane.
    pub fn parent(&self, r: SliceRef) -> Option<SliceRef> {
        let p = *self.parent.get(r.lane as usize)?.get(r.index as usize)?;
        (p != NONE).then_some(SliceRef {
            lane: r.lane,
            index: p,
        })
    }

    /// Parent index table of a CPU lane (`u32::MAX` for a root); empty for a GPU lane.
    pub fn parents_of_lane(&self, lane: usize) -> &[u32] {
        self.parent.get(lane).unwrap_or(&[])
    }

    /// The innermost strict ancestor of a CPU slice of the given kind.
    pub fn enclosing(&self, trace: &Trace, r: SliceRef, kind: Kind) -> Option<SliceRef> {
        let s = trace.slices(r.lane as usize);
        let mut cur = self.parent(r);
        while let Some(p) = cur {
            if self.kinds.of_cat(s.cat[p.index as usize]) == kind {
                return Some(p);
            }
            cur = self.parent(p);
        }
        None
    }

    /// The innermost `record_function` label (not a `ProfilerStep#N`) enclosing a CPU slice, the
    /// slice itself included.
    pub fn label(&self, trace: &Trace, r: SliceRef) -> Option<SliceRef> {
        let s = trace.slices(r.lane as usize);
        let mut cur = Some(r);
        while let Some(p) = cur {
            let i = p.index as usize;
            if self.kinds.of_cat(s.cat[i]) == Kind::Annotation
                && !trace.str(s.name[i]).starts_with("ProfilerStep#")
            {
                return Some(p);
            }
            cur = self.parent(p);
        }
        None
    }
}
