//! Which node of the operator tree launched a GPU op: the project's one kernel-to-launcher rule
//! ([`crate::analysis::launch`]) mapped onto the tree's nodes. The launch call found there is
//! charged to its launching ancestor in the tree (the innermost operator, else annotation, after
//! folding: [`super::node::LaneTree::launching_ancestor`]); the External id fallback to the node of the slice
//! the rule names (or the node it was folded into).

use super::node::{Launch, NodeRef, Nodes, NO_NODE};
use crate::analysis::launch::LaunchIndex;
use crate::analysis::slicing::Slicer;
use crate::model::category::Kinds;
use crate::model::{SliceRef, Trace};

/// The rule's index plus, per lane, the tree node of each slice.
pub(crate) struct Launchers {
    index: LaunchIndex,
    /// Per lane: its tree ([`NO_NODE`] for none) and where its slices' nodes start in `node_of`.
    tree_of_lane: Vec<(u32, u32)>,
    /// The node of each slice of the lanes that have a tree, lane after lane ([`NO_NODE`] for a
    /// slice that is no node): one list, where a list per lane was an allocation per thread.
    node_of: Vec<u32>,
}

impl Launchers {
    pub(crate) async fn new(
        trace: &Trace,
        kinds: &Kinds,
        nodes: &Nodes,
        y: &mut Slicer,
    ) -> Launchers {
        let mut tree_of_lane = vec![(NO_NODE, 0); trace.lanes.len()];
        let mut node_of = Vec::new();
        for (ti, t) in nodes.trees().enumerate() {
            let base = node_of.len();
            tree_of_lane[t.lane as usize] = (ti as u32, base as u32);
            node_of.resize(base + trace.slices(t.lane as usize).len(), NO_NODE);
            for (x, &i) in t.slice.iter().enumerate() {
                y.tick(1).await;
                node_of[base + i as usize] = x as u32;
            }
        }
        Launchers {
            index: LaunchIndex::build_sliced(trace, kinds, y).await,
            tree_of_lane,
            node_of,
        }
    }

    fn node(&self, trace: &Trace, r: SliceRef) -> Option<NodeRef> {
        let &(tree, base) = self.tree_of_lane.get(r.lane as usize)?;
        if tree == NO_NODE || r.index as usize >= trace.slices(r.lane as usize).len() {
            return None;
        }
        let node = self.node_of[base as usize + r.index as usize];
        (node != NO_NODE).then_some(NodeRef { tree, node })
    }

    /// Where a GPU op was launched from, if the rule leads to a node.
    pub(crate) fn find(&self, trace: &Trace, nodes: &Nodes, op: SliceRef) -> Option<Launch> {
        if let Some(r) = self
            .index
            .call(trace, op)
            .and_then(|(call, _)| self.node(trace, call))
        {
            let t = nodes.tree(r.tree as usize);
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
        let r = self.node(trace, self.index.by_external_id(ext)?)?;
        let op = NodeRef {
            node: nodes.tree(r.tree as usize).kept(r.node),
            ..r
        };
        Some(Launch { site: op, op })
    }
}
