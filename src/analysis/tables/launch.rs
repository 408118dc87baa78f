//! Which node of the operator tree launched a GPU op: the project's one kernel-to-launcher rule
//! ([`crate::analysis::launch`]) mapped onto the tree's nodes. The launch call found there is
//! charged to its launching ancestor in the tree (the innermost operator, else annotation, after
//! folding: [`LaneTree::launching_ancestor`]); the External id fallback to the node of the slice
//! the rule names (or the node it was folded into).

use super::node::{LaneTree, Launch, NodeRef, NO_NODE};
use crate::analysis::launch::LaunchIndex;
use crate::analysis::slicing::Slicer;
use crate::model::category::Kinds;
use crate::model::{SliceRef, Trace};

/// The rule's index plus, per lane, the tree node of each slice.
pub(crate) struct Launchers {
    index: LaunchIndex,
    /// Per lane: (tree, node of each slice) for the lanes that have a tree.
    nodes: Vec<Option<(u32, Vec<u32>)>>,
}

impl Launchers {
    pub(crate) async fn new(
        trace: &Trace,
        kinds: &Kinds,
        trees: &[LaneTree],
        y: &mut Slicer,
    ) -> Launchers {
        let mut nodes: Vec<Option<(u32, Vec<u32>)>> =
            (0..trace.lanes.len()).map(|_| None).collect();
        for (ti, t) in trees.iter().enumerate() {
            let mut of_slice = vec![NO_NODE; trace.slices(t.lane as usize).len()];
            for (x, &i) in t.slice.iter().enumerate() {
                y.tick(1).await;
                of_slice[i as usize] = x as u32;
            }
            nodes[t.lane as usize] = Some((ti as u32, of_slice));
        }
        Launchers {
            index: LaunchIndex::build_sliced(trace, kinds, y).await,
            nodes,
        }
    }

    fn node(&self, r: SliceRef) -> Option<NodeRef> {
        let (tree, of_slice) = self.nodes.get(r.lane as usize)?.as_ref()?;
        let node = *of_slice.get(r.index as usize)?;
        (node != NO_NODE).then_some(NodeRef { tree: *tree, node })
    }

    /// Where a GPU op was launched from, if the rule leads to a node.
    pub(crate) fn find(&self, trace: &Trace, trees: &[LaneTree], op: SliceRef) -> Option<Launch> {
        if let Some(r) = self
            .index
            .call(trace, op)
            .and_then(|(call, _)| self.node(call))
        {
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
        let ext = trace.columns.external_id[trace.row(op)];
        let r = self.node(self.index.by_external_id(ext)?)?;
        let op = NodeRef {
            node: trees[r.tree as usize].kept(r.node),
            ..r
        };
        Some(Launch { site: op, op })
    }
}
