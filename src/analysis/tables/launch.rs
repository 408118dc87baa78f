//! Which operator launched a GPU op: the link from a kernel, memcpy or memset back to the CPU.
//!
//! Two links, tried in this order:
//! 1. Correlation: the GPU op's `correlation` is that of the runtime call that launched it
//!    (`cudaLaunchKernel`, `cudaMemcpyAsync`, `cuLaunchKernel`, ...); the innermost operator
//!    (`cpu_op`) around that call on its thread launched the op, or where none holds the call, the
//!    innermost annotation. An operator wins over an annotation inside it, as in PyTorch: in
//!    `hta_a100_nccl_rank0of2` the `nccl:all_reduce` label sits inside `record_param_comms`, and
//!    the kernel's External id names `record_param_comms`.
//! 2. External id: the GPU op's `External id` is that of the operator (PyTorch's own link, its
//!    `linked_correlation_id`), used when the runtime call is missing or sits outside any operator.
//!
//! The correlation comes first because older Kineto versions wrote the correlation itself into a
//! GPU op's `External id` (as in `hta_a100_alexnet_cuda_sync` and the `param_dlrm` traces), where
//! an External id match is a coincidence with an unrelated operator; in newer traces both links
//! lead to the same operator.

use super::tree::{LaneTree, Launch, NodeRef};
use crate::model::{Trace, NO_ID};
use rustc_hash::FxHashMap;

/// The two maps from ids to nodes that the links go through.
pub(crate) struct Launchers {
    /// Runtime calls by correlation.
    runtime_by_correlation: FxHashMap<i64, NodeRef>,
    /// Operators and annotations by External id (the innermost one where several share an id).
    op_by_external_id: FxHashMap<i64, NodeRef>,
}

impl Launchers {
    pub(crate) fn new(trace: &Trace, trees: &[LaneTree]) -> Launchers {
        let mut runtime_by_correlation = FxHashMap::default();
        let mut op_by_external_id = FxHashMap::default();
        for (ti, t) in trees.iter().enumerate() {
            let s = &trace.lanes[t.lane as usize].slices;
            for x in 0..t.len() {
                let i = t.slice[x] as usize;
                let r = NodeRef {
                    tree: ti as u32,
                    node: x as u32,
                };
                let kind = t.kind[x];
                if kind == super::EventKind::Runtime && s.correlation[i] != NO_ID {
                    runtime_by_correlation.insert(s.correlation[i], r);
                } else if kind.launches() && s.external_id[i] != NO_ID {
                    // Tree order puts a nested node after its parent: the innermost one wins.
                    op_by_external_id.insert(s.external_id[i], r);
                }
            }
        }
        Launchers {
            runtime_by_correlation,
            op_by_external_id,
        }
    }

    /// Where a GPU op with these ids was launched from, if a link leads to an operator.
    pub(crate) fn find(
        &self,
        trees: &[LaneTree],
        correlation: i64,
        external_id: i64,
    ) -> Option<Launch> {
        if correlation != NO_ID {
            if let Some(&r) = self.runtime_by_correlation.get(&correlation) {
                let t = &trees[r.tree as usize];
                if let Some(node) = t.launching_ancestor(r.node) {
                    let site = NodeRef {
                        node: t.kept(r.node),
                        ..r
                    };
                    return Some(Launch {
                        site,
                        op: NodeRef { node, ..r },
                    });
                }
            }
        }
        if external_id != NO_ID {
            if let Some(&r) = self.op_by_external_id.get(&external_id) {
                let op = NodeRef {
                    node: trees[r.tree as usize].kept(r.node),
                    ..r
                };
                return Some(Launch { site: op, op });
            }
        }
        None
    }
}
