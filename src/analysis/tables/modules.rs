//! The module table: the `nn.Module` hierarchy that `with_modules=True` records (Python frames
//! named `nn.Module: <Class>_<k>`, `k` numbering the instances of one class), as the TensorBoard
//! plugin's module view showed it.
//!
//! A row is a module path, the names of the module frames from the outermost down joined by `/`
//! (`BertModel_0/BertEncoder_0/BertLayer_1`), so one module called from two parents is two rows.
//! Per row, from the [`Forest`]'s Python nodes:
//! - calls: its frames; host total: their summed duration; host self: total minus the frames of
//!   the modules called directly inside it;
//! - device total: the GPU ops (kernels, memcpy, memset) whose launch site lies inside one of its
//!   frames on that thread; device self: those whose innermost enclosing module is this one.
//!
//! Launches outside every module frame (the backward pass, which runs on autograd's thread, the
//! optimizer, the data loader) and GPU ops no link leads to a launch for are `unattributed`, so
//! device self over all rows plus unattributed is the trace's GPU op time.
//!
//! The backward pass is charged back to modules through the autograd engine's `fwdbwd` flows
//! (forward operator -> backward node, e.g. `aten::linear` -> `AddmmBackward0`): a module's
//! backward host total is the duration of the backward nodes whose forward operator ran inside its
//! calls, and its backward device total the GPU time charged to those nodes and under them.

use super::tree::{EventKind, Forest, NO_NODE};
use super::us;
use crate::analysis::columns::{Column, Row, Sort, Unit};
use crate::analysis::graphs::Attribution;
use crate::model::Trace;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The prefix PyTorch gives module frames.
pub(crate) const MODULE_PREFIX: &str = "nn.Module: ";

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModuleTable {
    /// Rows in tree order: each module after its parent, siblings by first call.
    pub rows: Vec<ModuleRow>,
    /// GPU op time launched outside every module frame, or with no launch found.
    pub unattributed_device_us: f64,
    /// Sum of the durations of all GPU ops (device self over the rows plus unattributed).
    pub device_time_us: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModuleRow {
    /// The module path, `/`-joined frame names without the `nn.Module: ` prefix.
    pub module: String,
    /// The last part of the path (`BertLayer_1`).
    pub name: String,
    /// The parent's path; `None` for a top-level module.
    pub parent: Option<String>,
    /// 0 for a top-level module.
    pub depth: u32,
    pub calls: u64,
    pub host_self_us: f64,
    pub host_total_us: f64,
    pub device_self_us: f64,
    pub device_total_us: f64,
    /// Backward nodes linked by `fwdbwd` to the forward operators inside this module's calls.
    pub backward_calls: u64,
    pub backward_host_total_us: f64,
    pub backward_device_total_us: f64,
}

impl Row for ModuleRow {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "module",
            "Module",
            Unit::Text,
            "The module path: the frames' names from the outermost down, joined by `/`",
        ),
        Column::new(
            "name",
            "Name",
            Unit::Text,
            "The last part of the path (`BertLayer_1`)",
        ),
        Column::new(
            "parent",
            "Parent",
            Unit::Text,
            "The parent's path; null at the top",
        ),
        Column::new("depth", "Depth", Unit::Count, "0 for a top-level module"),
        Column::new(
            "calls",
            "# of Calls",
            Unit::Count,
            "Its frames (calls of `forward`)",
        ),
        Column::new(
            "host_self_us",
            "Host self",
            Unit::Us,
            "Host total minus the frames of the modules it calls",
        ),
        Column::new(
            "host_total_us",
            "Host total",
            Unit::Us,
            "Summed durations of its frames",
        ),
        Column::new(
            "device_self_us",
            "{device} self",
            Unit::Us,
            "Device time launched inside its frames and not inside a module it calls",
        ),
        Column::new(
            "device_total_us",
            "{device} total",
            Unit::Us,
            "Device time of the kernels, memcpy and memset launched inside its frames",
        ),
        Column::new(
            "backward_calls",
            "Bwd calls",
            Unit::Count,
            "Backward nodes linked by `fwdbwd` flows to the forward operators in its calls",
        ),
        Column::new(
            "backward_host_total_us",
            "Bwd host",
            Unit::Us,
            "Summed durations of those backward nodes",
        ),
        Column::new(
            "backward_device_total_us",
            "{device} bwd",
            Unit::Us,
            "Device time charged to those backward nodes and under them",
        ),
    ];
    const SORT: Sort = Sort::Tree;
}

/// Sums of one row, in ns.
struct Sums {
    path: String,
    parent: Option<usize>,
    depth: u32,
    first_ns: i64,
    calls: u64,
    host_total: i64,
    host_self: i64,
    device_self: i64,
    device_total: i64,
    backward_calls: u64,
    backward_host: i64,
    backward_device: i64,
}

impl Sums {
    /// A row with nothing counted yet.
    fn new(path: String, parent: Option<usize>, depth: u32, first_ns: i64) -> Sums {
        Sums {
            path,
            parent,
            depth,
            first_ns,
            calls: 0,
            host_total: 0,
            host_self: 0,
            device_self: 0,
            device_total: 0,
            backward_calls: 0,
            backward_host: 0,
            backward_device: 0,
        }
    }
}

pub fn module_table(trace: &Trace, forest: &Forest) -> ModuleTable {
    module_table_attributed(trace, forest, None)
}

/// [`module_table`] of a trace that replays CUDA/HIP graphs, with their capture: a replayed op
/// whose issuing call ran inside module frames during capture is charged to that module path,
/// not to the module (if any) around the graph launch. A path that ran only in the capture is a
/// row with device time and no calls or host time (the CPU does not run it in a replay).
pub fn module_table_attributed(
    trace: &Trace,
    forest: &Forest,
    capture: Option<&Attribution>,
) -> ModuleTable {
    let mut index: FxHashMap<String, usize> = FxHashMap::default();
    let mut sums: Vec<Sums> = Vec::new();
    // Per tree and node: the row of the innermost module frame holding the node (itself included).
    let mut module_of: Vec<Vec<Option<usize>>> = Vec::with_capacity(forest.tree_count());
    for tree in forest.trees() {
        let s = trace.slices(tree.lane as usize);
        let mut inner: Vec<Option<usize>> = vec![None; tree.len()];
        // Tree order puts a parent before its children, so one forward pass sees every parent's
        // answer first.
        for n in 0..tree.len() {
            let parent = tree.parent[n];
            let outer = (parent != NO_NODE)
                .then(|| inner[parent as usize])
                .flatten();
            let name = tree.name[n].as_str(trace);
            let Some(leaf) = name
                .strip_prefix(MODULE_PREFIX)
                .filter(|_| tree.kind[n] == EventKind::Python)
            else {
                inner[n] = outer;
                continue;
            };
            let path = match outer {
                Some(o) => format!("{}/{leaf}", sums[o].path),
                None => leaf.to_string(),
            };
            let slice = tree.slice[n] as usize;
            let dur = s.dur_ns[slice];
            let depth = outer.map_or(0, |o| sums[o].depth + 1);
            let row = *index.entry(path.clone()).or_insert_with(|| {
                sums.push(Sums::new(path, outer, depth, s.start_ns[slice]));
                sums.len() - 1
            });
            let r = &mut sums[row];
            r.calls += 1;
            r.host_total += dur;
            r.host_self += dur;
            r.first_ns = r.first_ns.min(s.start_ns[slice]);
            if let Some(o) = outer {
                sums[o].host_self -= dur;
            }
            inner[n] = Some(row);
        }
        module_of.push(inner);
    }

    let mut unattributed = 0i64;
    for op in &forest.gpu_ops {
        let s = trace.slices(op.slice.lane as usize);
        let dur = s.dur_ns[op.slice.index as usize];
        let captured = capture.and_then(|c| c.module_path(op.slice));
        let row = match captured {
            Some(path) => Some(row_of_path(
                &mut sums,
                &mut index,
                path,
                s.start_ns[op.slice.index as usize],
            )),
            None => op
                .launch
                .and_then(|l| module_of[l.site.tree as usize][l.site.node as usize]),
        };
        let Some(row) = row else {
            unattributed += dur;
            continue;
        };
        sums[row].device_self += dur;
        let mut up = Some(row);
        while let Some(r) = up {
            sums[r].device_total += dur;
            up = sums[r].parent;
        }
    }

    if !sums.is_empty() {
        backward(trace, forest, &module_of, &mut sums);
    }

    ModuleTable {
        rows: tree_order(&sums)
            .into_iter()
            .map(|k| {
                let r = &sums[k];
                ModuleRow {
                    module: r.path.clone(),
                    name: r.path.rsplit('/').next().unwrap_or_default().to_string(),
                    parent: r.parent.map(|p| sums[p].path.clone()),
                    depth: r.depth,
                    calls: r.calls,
                    host_self_us: us(r.host_self),
                    host_total_us: us(r.host_total),
                    device_self_us: us(r.device_self),
                    device_total_us: us(r.device_total),
                    backward_calls: r.backward_calls,
                    backward_host_total_us: us(r.backward_host),
                    backward_device_total_us: us(r.backward_device),
                }
            })
            .collect(),
        unattributed_device_us: us(unattributed),
        device_time_us: us(forest.gpu_time_ns),
    }
}

/// The row of module `path` (`/`-joined), made with its parents' rows where missing; `at_ns`
/// orders a new row among its siblings.
fn row_of_path(
    sums: &mut Vec<Sums>,
    index: &mut FxHashMap<String, usize>,
    path: &str,
    at_ns: i64,
) -> usize {
    if let Some(&row) = index.get(path) {
        return row;
    }
    let parent = path
        .rsplit_once('/')
        .map(|(up, _)| row_of_path(sums, index, up, at_ns));
    let depth = parent.map_or(0, |p| sums[p].depth + 1);
    sums.push(Sums::new(path.to_string(), parent, depth, at_ns));
    index.insert(path.to_string(), sums.len() - 1);
    sums.len() - 1
}

/// Charges each `fwdbwd` flow's backward node to the modules holding its forward operator.
fn backward(trace: &Trace, forest: &Forest, module_of: &[Vec<Option<usize>>], sums: &mut [Sums]) {
    let Some(cat) = trace.strings.find("fwdbwd") else {
        return;
    };
    // Per lane, the tree and node of each slice that is a node.
    let mut node_of: Vec<Vec<(u32, u32)>> = vec![Vec::new(); trace.lanes.len()];
    for (t, tree) in forest.trees().enumerate() {
        let lane = &mut node_of[tree.lane as usize];
        lane.resize(trace.slices(tree.lane as usize).len(), (NO_NODE, NO_NODE));
        for n in 0..tree.len() {
            lane[tree.slice[n] as usize] = (t as u32, n as u32);
        }
    }
    let node = |r: crate::model::SliceRef| {
        node_of[r.lane as usize]
            .get(r.index as usize)
            .copied()
            .filter(|n| n.0 != NO_NODE)
    };
    for f in trace.flows.iter().filter(|f| f.cat == cat) {
        let (Some(fwd), Some(bwd)) = (node(f.from), node(f.to)) else {
            continue;
        };
        let Some(row) = module_of[fwd.0 as usize][fwd.1 as usize] else {
            continue;
        };
        let tree = forest.tree(bwd.0 as usize);
        let host = trace.slices(tree.lane as usize).dur_ns[tree.slice[bwd.1 as usize] as usize];
        let device = tree.device_total_ns[bwd.1 as usize];
        let mut up = Some(row);
        while let Some(r) = up {
            sums[r].backward_calls += 1;
            sums[r].backward_host += host;
            sums[r].backward_device += device;
            up = sums[r].parent;
        }
    }
}

/// Row indices depth first: each row after its parent, siblings by their first call.
fn tree_order(sums: &[Sums]) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); sums.len()];
    let mut roots = Vec::new();
    for (k, r) in sums.iter().enumerate() {
        match r.parent {
            Some(p) => children[p].push(k),
            None => roots.push(k),
        }
    }
    let by_first = |v: &mut Vec<usize>| v.sort_by_key(|&k| (sums[k].first_ns, k));
    by_first(&mut roots);
    children.iter_mut().for_each(by_first);
    let mut out = Vec::with_capacity(sums.len());
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(k) = stack.pop() {
        out.push(k);
        stack.extend(children[k].iter().rev());
    }
    out
}
