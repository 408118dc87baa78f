//! Which CPU event launched a device op: the one kernel-to-launcher rule of the project. The link
//! tables on slices ([`super::links`]) and the operator tree the tables read
//! ([`super::tables`]) both go through [`LaunchIndex`], so they always agree.
//!
//! The rule, for a device op (kernel, memcpy, memset, sync, on a device lane; see
//! [`crate::model::category`]):
//! 1. Its *launch call* is the runtime or driver call of any backend (`cuda_runtime`,
//!    `cuda_driver`, `hip_runtime`, `mtia_runtime`, `xpu_runtime`, `privateuse1_runtime`, ...,
//!    1.x `Runtime`, or a call named `cuda*`/`cu*`/`hip*`) with the op's `correlation`; when
//!    several share it, the earliest. When the op has no correlation, or none matches, the CPU
//!    slice an `ac2g` flow (any flow from a CPU lane) ends on the op from: the call the flow starts
//!    in, which is how Kineto draws the launch for every backend.
//! 2. Its *launcher* (the operator charged with its time) is the innermost operator (`cpu_op`)
//!    around the launch call on its thread, or where none holds the call, the innermost annotation
//!    (`user_annotation`). An operator wins over an annotation inside it, as in PyTorch: in
//!    `hta_a100_nccl_rank0of2` the `nccl:all_reduce` label sits inside `record_param_comms`, and
//!    the kernel's External id names `record_param_comms`. Inductor's Triton launches are
//!    operators named like their kernel (`triton_poi_fused_...`), so they are the launcher of the
//!    kernel their `cuLaunchKernel` starts.
//! 3. Where no launch call is found, or none of it has an operator or annotation around it, the
//!    launcher is the innermost operator or annotation with the op's `External id` (PyTorch's own
//!    link, its `linked_correlation_id`).
//!
//! The correlation comes before the External id because older Kineto versions wrote the
//! correlation itself into a GPU op's `External id` (as in `hta_a100_alexnet_cuda_sync` and the
//! `param_dlrm` traces), where an External id match is a coincidence with an unrelated operator;
//! in newer traces both links lead to the same operator.
//!
//! Cost: one pass over the slices and flows, two sorts; lookups are binary searches.

use super::slicing::{self, Slicer};
use crate::model::category::{Kind, Kinds};
use crate::model::{SliceRef, Trace, NO_ID};
use rustc_hash::FxHashMap;

/// True for the name of a CUDA/HIP runtime or driver call.
pub fn is_runtime_name(name: &str) -> bool {
    name.starts_with("cuda") || name.starts_with("hip") || name.starts_with("cu")
}

/// How a device op's launch call was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Correlation,
    Flow,
}

/// The ids and flows that launches are found through.
pub struct LaunchIndex {
    /// Runtime calls by correlation: (correlation, start, call), the earliest first.
    by_corr: Vec<(i64, i64, SliceRef)>,
    /// Operators and annotations by External id: (id, start, depth, slice); the innermost last.
    by_ext: Vec<(i64, i64, u16, SliceRef)>,
    /// The CPU slice a flow to a device slice starts from, by device slice.
    by_flow: FxHashMap<SliceRef, SliceRef>,
}

impl LaunchIndex {
    /// Builds the index, pausing as `y` says (see [`super::slicing`]).
    pub async fn build_sliced(trace: &Trace, kinds: &Kinds, y: &mut Slicer) -> LaunchIndex {
        let mut tables = (Vec::new(), Vec::new());
        for (li, lane) in trace.lanes.iter().enumerate() {
            if lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            slicing::each(y, s.len(), &mut tables, |(by_corr, by_ext), i| {
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let kind = kinds.of_cat(s.cat[i]);
                if s.correlation[i] != NO_ID
                    && (kind == Kind::Runtime || is_runtime_name(trace.str(s.name[i])))
                {
                    by_corr.push((s.correlation[i], s.start_ns[i], r));
                }
                if matches!(kind, Kind::CpuOp | Kind::Annotation) && s.external_id[i] != NO_ID {
                    by_ext.push((s.external_id[i], s.start_ns[i], s.depth[i], r));
                }
                1
            })
            .await;
        }
        let (mut by_corr, mut by_ext) = tables;
        // Sorted whole: the same order as `sort_unstable`, as the entries are all distinct.
        slicing::sort_by_key(&mut by_corr, |e| *e, y).await;
        by_corr.dedup_by_key(|e| e.0);
        slicing::sort_by_key(&mut by_ext, |e| *e, y).await;
        // Sized once: growing a map of this size rehashes it whole.
        let mut by_flow =
            FxHashMap::with_capacity_and_hasher(trace.flows.len(), Default::default());
        for f in &trace.flows {
            y.tick(1).await;
            if !trace.lanes[f.from.lane as usize].is_gpu()
                && trace.lanes[f.to.lane as usize].is_gpu()
            {
                by_flow.insert(f.to, f.from);
            }
        }
        LaunchIndex {
            by_corr,
            by_ext,
            by_flow,
        }
    }

    /// The launch call of a device op (rule 1), and how it was found.
    pub fn call(&self, trace: &Trace, op: SliceRef) -> Option<(SliceRef, Via)> {
        let corr = trace.columns.correlation[trace.row(op)];
        if corr != NO_ID {
            if let Ok(k) = self.by_corr.binary_search_by_key(&corr, |e| e.0) {
                return Some((self.by_corr[k].2, Via::Correlation));
            }
        }
        self.by_flow.get(&op).map(|&r| (r, Via::Flow))
    }

    /// The innermost operator or annotation with this External id (rule 3).
    pub fn by_external_id(&self, external_id: i64) -> Option<SliceRef> {
        if external_id == NO_ID {
            return None;
        }
        let k = self.by_ext.partition_point(|e| e.0 <= external_id);
        (k > 0 && self.by_ext[k - 1].0 == external_id).then(|| self.by_ext[k - 1].3)
    }
}
