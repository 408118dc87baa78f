//! CUDA/HIP graph replays: which runtime calls replay a graph, the device ops each replay ran, each
//! graph as an entity, and, given the trace recorded while the graph was captured, the operator
//! that issued each replayed op.
//!
//! Definitions:
//! - A *graph launch* is a runtime call whose name holds `GraphLaunch` (`cudaGraphLaunch`,
//!   `hipGraphLaunch`, `cuGraphLaunch`). The device ops it *replays* are those whose launch call is
//!   it ([`super::launch`]'s rule: CUPTI and ROCTracer give every replayed op the launch's
//!   correlation id). Without a capture those ops have no operator of their own: PyTorch's
//!   `key_averages` charges them to whatever encloses the launch call (often a bare
//!   `record_function` annotation), and so does the operator table here.
//! - A *graph* is what the replays of one graph share: CUPTI's `graph id` arg where the trace has
//!   it, else the sequence of replayed op names (two replays of one graph run the same ops in the
//!   same order).
//! - *Instantiation*: runtime calls holding `GraphInstantiate`, which cost milliseconds and belong
//!   before the measured steps.
//! - A *capture* is the span between a thread's `StreamBeginCapture` and `StreamEndCapture` calls
//!   in the capture trace; its *dispatches* are the runtime calls inside that launch a kernel
//!   (their `kernel` arg names it) or start a copy or a fill, in time order, each with the
//!   operators, `nn.Module` and Python frame around it.
//! - *Attribution* pairs a replay's ops with a capture's dispatches as TraceLens'
//!   `trace_capture_merge` does: per stream, in order, a dispatch takes the first op still
//!   unpaired on the stream whose name it matches (a kernel by name, a copy with a copy, a fill
//!   with a fill), dispatches that match nothing are skipped; when that leaves an op unpaired and
//!   every name occurs as often on both sides, the i-th dispatch of a name takes the i-th op of
//!   that name. A replay is paired with the capture that pairs all its ops, else the one that
//!   pairs most. A replayed op then belongs to the dispatch's innermost operator (else
//!   annotation), with the operators above it.
//!
//! Where this differs from TraceLens on purpose: TraceLens copies the captured operators into
//! the replay with the launch call's start and duration, so each has the launch's CPU time; here
//! a captured operator has no CPU time in the replay (the CPU does not run it then), only the
//! device time of its replayed ops.

use super::links::{Kind, Links};
use crate::analysis::columns::{Column, Row, Sort, Type, Unit, SLICE_REF};
use crate::model::{SliceRef, Trace};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// Whether a runtime call replays a graph.
pub fn is_graph_launch(name: &str) -> bool {
    name.contains("GraphLaunch")
}

/// Whether a runtime call instantiates a graph (`cudaGraphInstantiate*`, `hipGraphInstantiate*`).
pub fn is_instantiation(name: &str) -> bool {
    name.contains("GraphInstantiate")
}

/// The graph replays of a trace (`sightline graphs --json`).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphReport {
    pub graphs: Vec<Graph>,
    /// Graph launch calls in the trace.
    pub launches: usize,
    /// Device ops replayed by them, and their time.
    pub replayed_ops: usize,
    pub replayed_device_ns: i64,
    /// The time of every device op linked to a launch call, for the share the replays take.
    pub device_ns: i64,
    /// Stream captures begun in the trace (`StreamBeginCapture`): the trace records graphs
    /// being captured.
    pub captures: usize,
    /// Graph instantiations in the trace and their CPU time.
    pub instantiations: usize,
    pub instantiation_ns: i64,
    /// With a capture trace: how its dispatches named the replayed ops.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub capture: Option<CaptureMatch>,
    /// Each launch call, in time order.
    #[serde(skip)]
    pub replays: Vec<Replay>,
    /// The instantiation calls.
    #[serde(skip)]
    pub instantiated: Vec<SliceRef>,
}

/// One graph: the replays that share it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Graph {
    /// 0, 1, ... in order of first launch.
    pub index: usize,
    /// CUPTI's `graph id`, where the trace has it.
    pub graph_id: Option<i64>,
    pub launches: usize,
    /// Device ops of one replay (the first).
    pub ops_per_replay: usize,
    /// Device time of all its replays.
    pub device_ns: i64,
    /// CPU time of its launch calls.
    pub launch_cpu_ns: i64,
    /// Its first launch call, to show.
    pub first_launch: SliceRef,
    /// The replay's ops by name, most device time first (at most [`TOP_OPS`]).
    pub top_ops: Vec<NamedTime>,
}

impl Row for Graph {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "index",
            "Graph",
            Unit::Count,
            "0, 1, ... in order of first launch",
        ),
        Column::new(
            "graph_id",
            "Graph id",
            Unit::Count,
            "CUPTI's `graph id`, where the trace has it",
        ),
        Column::new("launches", "Launches", Unit::Count, "Its replays"),
        Column::new(
            "ops_per_replay",
            "Ops a replay",
            Unit::Count,
            "Device ops of one replay (the first)",
        ),
        Column::new(
            "device_ns",
            "Device time",
            Unit::Ns,
            "Device time of all its replays",
        ),
        Column::new(
            "launch_cpu_ns",
            "Launch CPU",
            Unit::Ns,
            "CPU time of its launch calls",
        ),
        Column::new(
            "first_launch",
            "First launch",
            Unit::Data,
            "Its first launch call",
        )
        .typed(SLICE_REF),
        Column::new(
            "top_ops",
            "Replayed ops",
            Unit::Data,
            "The replay's ops by name, most device time first (at most 10)",
        )
        .typed(Type::List(&Type::Struct(&[
            ("name", Type::Str),
            ("calls", Type::Int),
            ("device_ns", Type::Int),
        ]))),
    ];
    const SORT: Sort = Sort::Smallest("index");
}

/// How many of a graph's kinds of op to list.
pub const TOP_OPS: usize = 10;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NamedTime {
    pub name: String,
    pub calls: usize,
    pub device_ns: i64,
}

/// One graph launch call and the device ops it replayed, in start order.
#[derive(Debug, Clone)]
pub struct Replay {
    pub launch: SliceRef,
    pub graph: usize,
    pub ops: Vec<SliceRef>,
}

impl GraphReport {
    /// The replays of `trace`'s graph launches.
    pub fn build(trace: &Trace, links: &Links) -> GraphReport {
        let mut report = GraphReport::default();
        let mut replays: Vec<Replay> = Vec::new();
        let mut of_launch: FxHashMap<SliceRef, usize> = FxHashMap::default();
        for (li, lane) in trace.lanes.iter().enumerate() {
            if lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            for i in 0..s.len() {
                if links.kinds.of_cat(s.cat[i]) != Kind::Runtime {
                    continue;
                }
                let name = trace.str(s.name[i]);
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                if is_graph_launch(name) {
                    of_launch.insert(r, replays.len());
                    replays.push(Replay {
                        launch: r,
                        graph: 0,
                        ops: Vec::new(),
                    });
                } else if name.contains("StreamBeginCapture") {
                    report.captures += 1;
                } else if is_instantiation(name) {
                    report.instantiated.push(r);
                    report.instantiations += 1;
                    report.instantiation_ns += s.dur_ns[i];
                }
            }
        }
        for (li, lane) in trace.lanes.iter().enumerate() {
            if !lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            for i in 0..s.len() {
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let Some(launch) = links.launch(r) else {
                    continue;
                };
                report.device_ns += s.dur_ns[i];
                if let Some(&k) = of_launch.get(&launch) {
                    replays[k].ops.push(r);
                    report.replayed_ops += 1;
                    report.replayed_device_ns += s.dur_ns[i];
                }
            }
        }
        let start = |r: &SliceRef| trace.columns.start_ns[trace.row(*r)];
        replays.sort_by_key(|r| start(&r.launch));
        // Graphs by CUPTI's id, else by the names the replay ran.
        let mut graphs: FxHashMap<(Option<i64>, Vec<u32>), usize> = FxHashMap::default();
        for rp in &mut replays {
            rp.ops.sort_by_key(|r| (start(r), r.lane));
            let id = rp.ops.first().and_then(|&r| graph_id(trace, r));
            let names: Vec<u32> = if id.is_some() {
                Vec::new()
            } else {
                rp.ops
                    .iter()
                    .map(|&r| trace.columns.name[trace.row(r)].0)
                    .collect()
            };
            let n = graphs.len();
            rp.graph = *graphs.entry((id, names)).or_insert(n);
            if rp.graph == n {
                report.graphs.push(Graph {
                    index: n,
                    graph_id: id,
                    launches: 0,
                    ops_per_replay: rp.ops.len(),
                    device_ns: 0,
                    launch_cpu_ns: 0,
                    first_launch: rp.launch,
                    top_ops: Vec::new(),
                });
            }
            let g = &mut report.graphs[rp.graph];
            g.launches += 1;
            g.launch_cpu_ns +=
                trace.slices(rp.launch.lane as usize).dur_ns[rp.launch.index as usize];
            let mut by_name: FxHashMap<&str, (usize, i64)> = FxHashMap::default();
            for &r in &rp.ops {
                let s = trace.slices(r.lane as usize);
                let d = s.dur_ns[r.index as usize];
                g.device_ns += d;
                let e = by_name
                    .entry(trace.str(s.name[r.index as usize]))
                    .or_default();
                e.0 += 1;
                e.1 += d;
            }
            for (name, (calls, ns)) in by_name {
                match g.top_ops.iter_mut().find(|t| t.name == name) {
                    Some(t) => {
                        t.calls += calls;
                        t.device_ns += ns;
                    }
                    None => g.top_ops.push(NamedTime {
                        name: name.to_string(),
                        calls,
                        device_ns: ns,
                    }),
                }
            }
        }
        for g in &mut report.graphs {
            g.top_ops
                .sort_by(|a, b| b.device_ns.cmp(&a.device_ns).then(a.name.cmp(&b.name)));
            g.top_ops.truncate(TOP_OPS);
        }
        report.launches = replays.len();
        report.replays = replays;
        report
    }

    /// The replay (its index) that ran device op `r`, and `r`'s place in it.
    pub fn replay_of(&self, r: SliceRef) -> Option<(usize, usize)> {
        self.replays
            .iter()
            .enumerate()
            .find_map(|(i, rp)| rp.ops.iter().position(|&o| o == r).map(|k| (i, k)))
    }

    /// Whether the trace already uses graphs against launch overhead: replays ran most of its
    /// device time, or it records graphs being captured. Then advice does not name them.
    pub fn uses_graphs(&self) -> bool {
        self.captures > 0 || self.replayed_share() >= 0.5
    }

    /// The share of the device time that graph replays ran (0 without device time).
    pub fn replayed_share(&self) -> f64 {
        if self.device_ns == 0 {
            0.0
        } else {
            self.replayed_device_ns as f64 / self.device_ns as f64
        }
    }
}

/// CUPTI's `graph id` arg of a replayed op, where the trace has it.
fn graph_id(trace: &Trace, r: SliceRef) -> Option<i64> {
    let args = trace.columns.args[trace.row(r)];
    ["graph id", "graphId"]
        .iter()
        .find_map(|k| trace.args.field(args, k))
        .and_then(|v| v.trim().parse().ok())
}

/// What a device op is, as a dispatch and a replayed op are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpClass {
    Copy,
    Fill,
    Kernel,
}

fn class(name: &str) -> OpClass {
    if name.contains("Memcpy") || name.contains("memcpy") {
        OpClass::Copy
    } else if name.contains("Memset") || name.contains("memset") || name.contains("fillBuffer") {
        OpClass::Fill
    } else {
        OpClass::Kernel
    }
}

/// The dispatches of the graphs a capture trace recorded, the operators around each.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Capture {
    pub captures: Vec<Captured>,
}

/// One capture: its dispatches in time order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Captured {
    pub dispatches: Vec<Dispatch>,
    /// The operator instances around the dispatches, outermost last in each dispatch's `stack`.
    pub ops: Vec<CapturedOp>,
}

/// A runtime call that put a kernel, copy or fill into the graph being captured.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Dispatch {
    /// The kernel's name (the call's `kernel` arg), else the call's own name.
    pub name: String,
    /// Indices into [`Captured::ops`], innermost first: the operators (else annotations) around
    /// the call inside the capture; the first is the one the replayed op is charged to.
    pub stack: Vec<u32>,
    /// The innermost `nn.Module` around the call, and the path of all of them (outermost first,
    /// `/`-joined, as the module table names a row).
    pub module: Option<String>,
    #[serde(default)]
    pub module_path: Option<String>,
    pub frame: Option<String>,
}

/// An operator (or annotation) instance of the capture.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CapturedOp {
    pub name: String,
    pub annotation: bool,
    /// `Input Dims` as PyTorch's table keys them (`[]` when absent).
    pub input_dims: String,
}

impl Capture {
    /// The captures of `trace` (none when it recorded no `StreamBeginCapture`).
    pub fn read(trace: &Trace, links: &Links) -> Capture {
        let mut out = Capture::default();
        for (li, lane) in trace.lanes.iter().enumerate() {
            if lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            let mut begun: Option<i64> = None;
            let mut current: Vec<usize> = Vec::new();
            for i in 0..s.len() {
                if links.kinds.of_cat(s.cat[i]) != Kind::Runtime {
                    continue;
                }
                let name = trace.str(s.name[i]);
                if name.contains("StreamBeginCapture") {
                    begun = Some(s.end_ns(i));
                    current.clear();
                } else if name.contains("StreamEndCapture") {
                    if begun.take().is_some() {
                        out.captures.push(captured(trace, links, li, &current));
                    }
                } else if begun.is_some_and(|b| s.start_ns[i] >= b)
                    && !is_graph_launch(name)
                    && (name.contains("Launch") || class(name) != OpClass::Kernel)
                {
                    current.push(i);
                }
            }
        }
        out
    }

    pub fn dispatches(&self) -> usize {
        self.captures.iter().map(|c| c.dispatches.len()).sum()
    }
}

fn captured(trace: &Trace, links: &Links, lane: usize, calls: &[usize]) -> Captured {
    let s = trace.slices(lane);
    let mut ops: Vec<CapturedOp> = Vec::new();
    let mut op_of: FxHashMap<u32, u32> = FxHashMap::default();
    let mut dispatches = Vec::with_capacity(calls.len());
    for &i in calls {
        let r = SliceRef {
            lane: lane as u32,
            index: i as u32,
        };
        let name = trace
            .args
            .field(s.args[i], "kernel")
            .and_then(|v| serde_json::from_str::<String>(v).ok())
            .unwrap_or_else(|| trace.str(s.name[i]).to_string());
        let (mut stack, mut annotations) = (Vec::new(), Vec::new());
        let (mut modules, mut frame): (Vec<&str>, _) = (Vec::new(), None);
        let mut cur = links.parent(r);
        while let Some(p) = cur {
            let j = p.index as usize;
            let kind = links.kinds.of_cat(s.cat[j]);
            let pname = trace.str(s.name[j]);
            let keep = |ops: &mut Vec<CapturedOp>, op_of: &mut FxHashMap<u32, u32>| {
                *op_of.entry(p.index).or_insert_with(|| {
                    ops.push(CapturedOp {
                        name: pname.to_string(),
                        annotation: kind == Kind::Annotation,
                        input_dims: match trace.str(s.input_dims[j]) {
                            "" => "[]".to_string(),
                            d => d.to_string(),
                        },
                    });
                    ops.len() as u32 - 1
                })
            };
            match kind {
                Kind::CpuOp => stack.push(keep(&mut ops, &mut op_of)),
                Kind::Annotation if !pname.starts_with("ProfilerStep#") => {
                    annotations.push(keep(&mut ops, &mut op_of))
                }
                Kind::Python => {
                    if let Some(m) = pname.strip_prefix("nn.Module: ") {
                        modules.push(m);
                    } else {
                        frame.get_or_insert_with(|| pname.to_string());
                    }
                }
                _ => {}
            }
            cur = links.parent(p);
        }
        // The operators first, so the innermost operator is charged, else the innermost
        // annotation (the launch rule of the operator table).
        stack.extend(annotations);
        let module = modules.first().map(|m| m.to_string());
        modules.reverse();
        dispatches.push(Dispatch {
            name,
            stack,
            module,
            module_path: (!modules.is_empty()).then(|| modules.join("/")),
            frame,
        });
    }
    Captured { dispatches, ops }
}

/// How a capture named the replayed ops.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CaptureMatch {
    pub captures: usize,
    pub dispatches: usize,
    /// Replayed ops paired with a dispatch, and those left without.
    pub attributed_ops: usize,
    pub unattributed_ops: usize,
    /// Per replay (launch order): the capture it was paired with, if any.
    pub replay_captures: Vec<Option<usize>>,
    /// Per replay, per op (in the replay's order): the dispatch in its capture.
    #[serde(skip)]
    pub pairs: Vec<Vec<Option<u32>>>,
}

impl CaptureMatch {
    /// Pairs every replay of `report` with the capture that names its ops.
    pub fn pair(trace: &Trace, report: &GraphReport, capture: &Capture) -> CaptureMatch {
        let mut m = CaptureMatch {
            captures: capture.captures.len(),
            dispatches: capture.dispatches(),
            ..CaptureMatch::default()
        };
        for rp in &report.replays {
            let names: Vec<&str> = rp.ops.iter().map(|r| trace.slice_name(*r)).collect();
            let lanes: Vec<u32> = rp.ops.iter().map(|r| r.lane).collect();
            let best = capture
                .captures
                .iter()
                .enumerate()
                .map(|(c, cap)| (c, align(&names, &lanes, &cap.dispatches)))
                .max_by_key(|(c, p)| (p.iter().flatten().count(), std::cmp::Reverse(*c)));
            match best {
                Some((c, pairs)) if pairs.iter().any(Option::is_some) => {
                    let n = pairs.iter().flatten().count();
                    m.attributed_ops += n;
                    m.unattributed_ops += pairs.len() - n;
                    m.replay_captures.push(Some(c));
                    m.pairs.push(pairs);
                }
                _ => {
                    m.unattributed_ops += rp.ops.len();
                    m.replay_captures.push(None);
                    m.pairs.push(vec![None; rp.ops.len()]);
                }
            }
        }
        m
    }
}

/// The device time a capture moves: the replayed ops it names (their time leaves the node the
/// graph launch charged it to) and the captured operators that take it, as operator-table rows.
#[derive(Debug, Default)]
pub struct Charges {
    pub moved: FxHashSet<SliceRef>,
    pub rows: Vec<ChargedOp>,
}

/// A captured operator (or annotation) as a row of the replay's operator table.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChargedOp {
    pub name: String,
    pub annotation: bool,
    /// `Some` when the table groups by input shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub input_dims: Option<String>,
    /// Its calls during capture that issued a replayed op, counted once per replay of their graph.
    pub calls: u64,
    /// Replayed ops it issued itself, and those issued inside it.
    pub self_device_ns: i64,
    pub device_total_ns: i64,
}

impl CaptureMatch {
    /// The operator-table rows of the captured operators (grouped by input shape too when
    /// `by_shape`), from the paired replays.
    pub fn charges(
        &self,
        trace: &Trace,
        report: &GraphReport,
        capture: &Capture,
        by_shape: bool,
    ) -> Charges {
        let mut out = Charges::default();
        let mut index: FxHashMap<(String, bool, Option<String>), usize> = FxHashMap::default();
        for ((rp, pairs), c) in report
            .replays
            .iter()
            .zip(&self.pairs)
            .zip(&self.replay_captures)
        {
            let Some(cap) = c.and_then(|c| capture.captures.get(c)) else {
                continue;
            };
            let mut seen: FxHashSet<u32> = FxHashSet::default();
            for (&op, d) in rp.ops.iter().zip(pairs) {
                let Some(d) = d.and_then(|d| cap.dispatches.get(d as usize)) else {
                    continue;
                };
                if d.stack.is_empty() {
                    continue;
                }
                out.moved.insert(op);
                let dur = trace.columns.dur_ns[trace.row(op)];
                for (depth, &o) in d.stack.iter().enumerate() {
                    let c = &cap.ops[o as usize];
                    let key = (
                        c.name.clone(),
                        c.annotation,
                        by_shape.then(|| c.input_dims.clone()),
                    );
                    let row = *index.entry(key).or_insert_with(|| {
                        out.rows.push(ChargedOp {
                            name: c.name.clone(),
                            annotation: c.annotation,
                            input_dims: by_shape.then(|| c.input_dims.clone()),
                            calls: 0,
                            self_device_ns: 0,
                            device_total_ns: 0,
                        });
                        out.rows.len() - 1
                    });
                    let r = &mut out.rows[row];
                    if seen.insert(o) {
                        r.calls += 1;
                    }
                    if depth == 0 {
                        r.self_device_ns += dur;
                    }
                    r.device_total_ns += dur;
                }
            }
        }
        out
    }
}

/// A capture applied to the trace that replays its graphs: the pairing, and for each replayed op
/// the capture names, the dispatch that issued it. [`crate::analysis::derived::Derived`] keeps
/// one once a capture is given, and the operator and kernel tables and a replayed op's details
/// read it.
#[derive(Debug)]
pub struct Attribution {
    pub capture: Capture,
    pub matched: CaptureMatch,
    /// Replayed op -> (capture, dispatch).
    of: FxHashMap<SliceRef, (u32, u32)>,
}

impl Attribution {
    pub fn new(trace: &Trace, report: &GraphReport, capture: Capture) -> Attribution {
        let matched = CaptureMatch::pair(trace, report, &capture);
        let mut of = FxHashMap::default();
        for ((rp, pairs), c) in report
            .replays
            .iter()
            .zip(&matched.pairs)
            .zip(&matched.replay_captures)
        {
            let Some(c) = *c else { continue };
            for (&op, d) in rp.ops.iter().zip(pairs) {
                if let Some(d) = *d {
                    of.insert(op, (c as u32, d));
                }
            }
        }
        Attribution {
            capture,
            matched,
            of,
        }
    }

    /// The dispatch that issued replayed op `r`, with its capture.
    fn dispatch(&self, r: SliceRef) -> Option<(&Captured, &Dispatch)> {
        let &(c, d) = self.of.get(&r)?;
        let cap = self.capture.captures.get(c as usize)?;
        Some((cap, cap.dispatches.get(d as usize)?))
    }

    /// The operator (else annotation) `r` is charged to: the innermost around its dispatch.
    pub fn operator(&self, r: SliceRef) -> Option<&str> {
        let (cap, d) = self.dispatch(r)?;
        Some(cap.ops.get(*d.stack.first()? as usize)?.name.as_str())
    }

    /// [`Attribution::operator`] of a critical-path segment's slice, as its `captured_by`.
    pub fn captured_by(&self, slice: Option<SliceRef>) -> Option<String> {
        slice.and_then(|r| self.operator(r)).map(str::to_string)
    }

    /// The module path (as the module table names rows) around the call that issued `r`.
    pub fn module_path(&self, r: SliceRef) -> Option<&str> {
        self.dispatch(r)?.1.module_path.as_deref()
    }

    /// What the capture says of replayed op `r`, when it names it.
    pub fn of(&self, r: SliceRef) -> Option<CapturedAt> {
        let (cap, d) = self.dispatch(r)?;
        Some(CapturedAt {
            operators: d
                .stack
                .iter()
                .map(|&o| cap.ops[o as usize].name.clone())
                .collect(),
            module: d.module.clone(),
            frame: d.frame.clone(),
        })
    }

    /// The operator-table rows of the captured operators (see [`CaptureMatch::charges`]).
    pub fn charges(&self, trace: &Trace, report: &GraphReport, by_shape: bool) -> Charges {
        self.matched.charges(trace, report, &self.capture, by_shape)
    }
}

/// `sightline graphs --json`: the report, and with a capture the captured operators as table
/// rows (most self device time first) and, when asked, each graph's first replay op by op.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphsOutput {
    #[serde(flatten)]
    pub report: GraphReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub captured_ops: Option<Vec<ChargedOp>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub first_replays: Option<Vec<AttributedOp>>,
}

impl GraphsOutput {
    pub fn of(
        trace: &Trace,
        report: &GraphReport,
        capture: Option<&Attribution>,
        replays: bool,
    ) -> GraphsOutput {
        let mut out = GraphsOutput {
            report: report.clone(),
            captured_ops: None,
            first_replays: None,
        };
        if let Some(a) = capture {
            let mut rows = a.charges(trace, report, false).rows;
            rows.sort_by(|a, b| {
                b.self_device_ns
                    .cmp(&a.self_device_ns)
                    .then(a.name.cmp(&b.name))
            });
            if replays {
                out.first_replays = Some(a.matched.first_replays(trace, report, &a.capture));
            }
            out.captured_ops = Some(rows);
            out.report.capture = Some(a.matched.clone());
        }
        out
    }
}

/// Where a replayed op was issued while its graph was captured.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CapturedAt {
    /// The operators (else annotations) around its dispatch, innermost (the one charged) first.
    pub operators: Vec<String>,
    pub module: Option<String>,
    pub frame: Option<String>,
}

/// A replayed device op with the captured operators that issued it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AttributedOp {
    pub graph: usize,
    pub slice: SliceRef,
    pub name: String,
    pub start_ns: i64,
    pub dur_ns: i64,
    /// The operator it is charged to (the innermost operator, else annotation, around its
    /// dispatch) and those around it, innermost first; empty when no dispatch named it.
    pub stack: Vec<String>,
    pub module: Option<String>,
    pub frame: Option<String>,
}

impl CaptureMatch {
    /// The ops of each graph's first replay with what the capture says of them.
    pub fn first_replays(
        &self,
        trace: &Trace,
        report: &GraphReport,
        capture: &Capture,
    ) -> Vec<AttributedOp> {
        let mut out = Vec::new();
        let mut done: FxHashSet<usize> = FxHashSet::default();
        for ((rp, pairs), c) in report
            .replays
            .iter()
            .zip(&self.pairs)
            .zip(&self.replay_captures)
        {
            if !done.insert(rp.graph) {
                continue;
            }
            let cap = c.and_then(|c| capture.captures.get(c));
            for (&op, d) in rp.ops.iter().zip(pairs) {
                let d = cap
                    .zip(*d)
                    .and_then(|(cap, d)| Some((cap, cap.dispatches.get(d as usize)?)));
                let s = trace.slices(op.lane as usize);
                let i = op.index as usize;
                out.push(AttributedOp {
                    graph: rp.graph,
                    slice: op,
                    name: trace.str(s.name[i]).to_string(),
                    start_ns: s.start_ns[i],
                    dur_ns: s.dur_ns[i],
                    stack: d.map_or_else(Vec::new, |(cap, d)| {
                        d.stack
                            .iter()
                            .map(|&o| cap.ops[o as usize].name.clone())
                            .collect()
                    }),
                    module: d.and_then(|(_, d)| d.module.clone()),
                    frame: d.and_then(|(_, d)| d.frame.clone()),
                });
            }
        }
        out
    }
}

fn matches(dispatch: &str, op: &str) -> bool {
    match (class(dispatch), class(op)) {
        (OpClass::Kernel, OpClass::Kernel) => dispatch == op,
        (a, b) => a == b,
    }
}

/// Each replayed op's dispatch (see the module doc): per stream in order, then by name.
fn align(names: &[&str], lanes: &[u32], dispatches: &[Dispatch]) -> Vec<Option<u32>> {
    let mut queues: Vec<(u32, std::collections::VecDeque<usize>)> = Vec::new();
    for (k, &l) in lanes.iter().enumerate() {
        match queues.iter_mut().find(|(lane, _)| *lane == l) {
            Some((_, q)) => q.push_back(k),
            None => queues.push((l, std::collections::VecDeque::from([k]))),
        }
    }
    let mut out = vec![None; names.len()];
    for (d, dispatch) in dispatches.iter().enumerate() {
        if let Some((_, q)) = queues.iter_mut().find(|(_, q)| {
            q.front()
                .is_some_and(|&k| matches(&dispatch.name, names[k]))
        }) {
            if let Some(k) = q.pop_front() {
                out[k] = Some(d as u32);
            }
        }
    }
    if out.iter().all(Option::is_some) {
        return out;
    }
    // By name: the i-th dispatch of a name is the i-th op of that name, when the counts agree.
    let key = |n: &str| match class(n) {
        OpClass::Kernel => n.to_string(),
        c => format!("{c:?}"),
    };
    let mut of_name: FxHashMap<String, (Vec<u32>, Vec<usize>)> = FxHashMap::default();
    for (d, dispatch) in dispatches.iter().enumerate() {
        of_name
            .entry(key(&dispatch.name))
            .or_default()
            .0
            .push(d as u32);
    }
    for (k, n) in names.iter().enumerate() {
        of_name.entry(key(n)).or_default().1.push(k);
    }
    if of_name.values().all(|(d, o)| d.len() == o.len()) {
        for (d, o) in of_name.into_values() {
            for (d, k) in d.into_iter().zip(o) {
                out[k] = Some(d);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(name: &str) -> Dispatch {
        Dispatch {
            name: name.to_string(),
            stack: Vec::new(),
            module: None,
            module_path: None,
            frame: None,
        }
    }

    #[test]
    fn dispatches_pair_in_order_per_stream_and_skip_what_matches_nothing() {
        let d: Vec<Dispatch> = ["a", "x", "b", "hipMemcpyAsync", "a"].map(dispatch).into();
        // Stream 1 runs a, Memcpy; stream 2 runs b, a.
        let names = ["a", "b", "Memcpy DtoD", "a"];
        let lanes = [1, 2, 1, 2];
        assert_eq!(
            align(&names, &lanes, &d),
            vec![Some(0), Some(2), Some(3), Some(4)]
        );
    }

    #[test]
    fn equal_counts_in_another_order_pair_by_name() {
        let d: Vec<Dispatch> = ["a", "b", "a"].map(dispatch).into();
        // One stream, replayed b first: in order, b finds no dispatch before the as run out.
        let names = ["b", "a", "a"];
        assert_eq!(
            align(&names, &[0, 0, 0], &d),
            vec![Some(1), Some(0), Some(2)]
        );
        // Counts that differ leave the unpaired op without a dispatch.
        let d: Vec<Dispatch> = ["a"].map(dispatch).into();
        assert_eq!(align(&["a", "c"], &[0, 0], &d), vec![Some(0), None]);
    }

    #[test]
    fn graph_calls_by_name() {
        assert!(is_graph_launch("cudaGraphLaunch"));
        assert!(is_graph_launch("hipGraphLaunch"));
        assert!(!is_graph_launch("cudaLaunchKernel"));
        assert!(is_instantiation("hipGraphInstantiateWithFlags"));
        assert!(matches("hipMemcpyAsync", "Memcpy DtoD (Device -> Device)"));
        assert!(matches("hipMemsetAsync", "fillBufferAligned"));
        assert!(!matches("k1", "k2"));
    }
}
