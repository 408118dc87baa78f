//! What the details panel and the flow arrows show for one selected slice.
//!
//! - Every arg, parsed from the stored JSON (shown as text by the page, never as HTML).
//! - The slices above it on its lane (ops, annotations, Python frames), outermost first.
//! - For a CPU slice: the GPU work it launched, found through the correlation ids of the runtime
//!   calls beneath it (`cudaLaunchKernel` and friends) and the GPU events with the same id.
//! - For a GPU slice: the runtime call with its correlation id and the innermost CPU op above that
//!   call (the launching op); a flow arrow stands in when the ids are missing.
//! - The flows (ac2g, fwdbwd, ...) touching it, and for a CPU slice those of its runtime calls.
//! - Its forward operator (for a backward one) or backward operators (for a forward one), by the
//!   `fwdbwd` flows of the slice or of its innermost ancestor that has one.
//!
//! Descendant walks stop after [`MAX_WALK`] slices and lists after [`MAX_LISTED`] entries, and say
//! so; a top-level step can hold hundreds of thousands of slices.

use super::Timeline;
use crate::analysis::graphs::{Attribution, CapturedAt, GraphReport};
use crate::analysis::summary::lane_name;
use crate::model::{SliceRef, Trace, NO_ID};
use serde::Serialize;

/// Slices examined below a selection, at most.
pub const MAX_WALK: usize = 200_000;
/// Entries listed (kernels, arrows), at most.
pub const MAX_LISTED: usize = 200;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Brief {
    pub lane: u32,
    pub index: u32,
    pub name: String,
    pub category: String,
    pub start_ns: i64,
    pub dur_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Launched {
    /// GPU events launched from under the slice.
    pub count: usize,
    /// Their summed duration.
    pub gpu_ns: i64,
    /// The first [`MAX_LISTED`] of them, by launch order.
    pub events: Vec<Brief>,
    /// True when the walk below the slice stopped at [`MAX_WALK`].
    pub partial: bool,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SliceLaunchedBy"))]
pub struct LaunchedBy {
    pub runtime: Option<Brief>,
    pub op: Option<Brief>,
}

/// A device op that a CUDA/HIP graph launch replayed: the graph, its launch call, and where in the
/// replay the op ran ([`crate::analysis::graphs`]).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Replayed {
    pub graph: usize,
    pub launch: Brief,
    /// 1-based, in the replay's start order, of `ops`.
    pub position: usize,
    pub ops: usize,
    /// Launches of its graph in the trace.
    pub launches: usize,
    /// Where the trace recorded while the graph was captured says it was issued, when one is
    /// given and names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub captured: Option<CapturedAt>,
}

impl Replayed {
    /// What `report` says of `r`, when a graph launch replayed it.
    pub fn of(
        trace: &Trace,
        report: &GraphReport,
        capture: Option<&Attribution>,
        r: SliceRef,
    ) -> Option<Replayed> {
        let (rp, k) = report.replay_of(r)?;
        let rp = &report.replays[rp];
        Some(Replayed {
            graph: rp.graph,
            launch: brief(trace, rp.launch),
            position: k + 1,
            ops: rp.ops.len(),
            launches: report.graphs.get(rp.graph).map_or(1, |g| g.launches),
            captured: capture.and_then(|c| c.of(r)),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Arrow {
    pub from: SliceRef,
    pub to: SliceRef,
    pub category: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SliceDetails {
    #[serde(flatten)]
    pub slice: Brief,
    pub lane_name: String,
    /// The length of the slice's name in bytes: past [`crate::model::LONG_NAME_BYTES`] the page's
    /// JSON carries it cut, and `Session::full_name` gives it whole.
    pub name_bytes: usize,
    pub gpu: bool,
    pub depth: u16,
    pub args: serde_json::Value,
    pub ancestors: Vec<Brief>,
    pub launched: Option<Launched>,
    pub launched_by: Option<LaunchedBy>,
    /// For a device op a graph launch replayed: which graph and where (set by the caller that
    /// holds the graph report; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub replayed: Option<Replayed>,
    pub flows: Vec<Arrow>,
    /// For a backward operator (or a slice inside one), the forward operator that the autograd
    /// engine's `fwdbwd` flow leads back to.
    pub forward: Option<Brief>,
    /// For a forward operator (or a slice inside one), the backward operators its `fwdbwd` flows
    /// lead to.
    pub backward: Vec<Brief>,
}

pub fn brief(trace: &Trace, r: SliceRef) -> Brief {
    let s = trace.slices(r.lane as usize);
    let i = r.index as usize;
    Brief {
        lane: r.lane,
        index: r.index,
        name: trace.str(s.name[i]).to_string(),
        category: trace.str(s.cat[i]).to_string(),
        start_ns: s.start_ns[i],
        dur_ns: s.dur_ns[i],
    }
}

/// `None` when `r` does not exist.
pub fn details(trace: &Trace, tl: &Timeline, r: SliceRef) -> Option<SliceDetails> {
    let lane = trace.lanes.get(r.lane as usize)?;
    let s = trace.slices_of(lane);
    let i = r.index as usize;
    if i >= s.len() {
        return None;
    }
    let outer = ancestors(trace, tl, r);
    let (forward, backward) = forward_backward(trace, tl, r, &outer);
    let ancestors: Vec<Brief> = outer.into_iter().map(|a| brief(trace, a)).collect();
    let (launched, launched_by) = if lane.is_gpu() {
        (None, Some(launcher(trace, tl, r)))
    } else {
        (Some(launched(trace, tl, r)), None)
    };
    Some(SliceDetails {
        slice: brief(trace, r),
        lane_name: lane_name(trace, r.lane as usize),
        name_bytes: trace.str(s.name[i]).len(),
        gpu: lane.is_gpu(),
        depth: s.depth[i],
        args: trace.args.value(s.args[i]),
        ancestors,
        launched,
        launched_by,
        replayed: None,
        flows: arrows(trace, tl, r),
        forward,
        backward,
    })
}

/// The `fwdbwd` flows of `r`, else of its innermost ancestor that has one: Kineto draws them
/// from the forward operator to the backward node (`MseLossBackward0`), so a slice selected inside
/// either finds its counterpart.
fn forward_backward(
    trace: &Trace,
    tl: &Timeline,
    r: SliceRef,
    outer: &[SliceRef],
) -> (Option<Brief>, Vec<Brief>) {
    let Some(cat) = trace.strings.find("fwdbwd") else {
        return (None, Vec::new());
    };
    // The slice, its ancestors, then its first child: the autograd engine's
    // `evaluate_function: XBackward0` holds the `XBackward0` the flow lands on.
    let child = first_child(trace, tl, r);
    for &x in std::iter::once(&r)
        .chain(outer.iter().rev())
        .chain(child.iter())
    {
        let flows = tl.flows_of(x).iter().map(|&f| trace.flows[f as usize]);
        let (mut forward, mut backward) = (None, Vec::new());
        for f in flows.filter(|f| f.cat == cat) {
            if f.to == x && f.from != x {
                forward = Some(brief(trace, f.from));
            } else if f.from == x && f.to != x && backward.len() < MAX_LISTED {
                backward.push(brief(trace, f.to));
            }
        }
        if forward.is_some() || !backward.is_empty() {
            return (forward, backward);
        }
    }
    (None, Vec::new())
}

/// The first slice directly inside `r` on its lane, if any.
fn first_child(trace: &Trace, tl: &Timeline, r: SliceRef) -> Option<SliceRef> {
    let s = trace.slices(r.lane as usize);
    let i = r.index as usize;
    let (a, b) = (s.start_ns[i], s.end_ns(i));
    let row = tl.lanes[r.lane as usize]
        .rows
        .get(s.depth[i] as usize + 1)?;
    row.overlapping(&s, a as f64, b as f64)
        .map(|k| row.idx[k] as usize)
        .find(|&j| s.start_ns[j] >= a && s.end_ns(j) <= b && j != i)
        .map(|j| SliceRef {
            lane: r.lane,
            index: j as u32,
        })
}

/// The slices containing `r` on its lane, outermost first.
pub fn ancestors(trace: &Trace, tl: &Timeline, r: SliceRef) -> Vec<SliceRef> {
    let s = trace.slices(r.lane as usize);
    let i = r.index as usize;
    let (a, b) = (s.start_ns[i], s.end_ns(i));
    let rows = &tl.lanes[r.lane as usize].rows;
    (0..s.depth[i] as usize)
        .filter_map(|d| {
            let row = rows.get(d)?;
            let k = row.at_time(&s, a as f64, 0.0)?;
            let j = row.idx[k] as usize;
            (s.start_ns[j] <= a && s.end_ns(j) >= b).then_some(SliceRef {
                lane: r.lane,
                index: j as u32,
            })
        })
        .collect()
}

/// The slices below `r` on its lane (deeper and inside it), at most [`MAX_WALK`]; the flag says
/// whether the walk was cut.
fn descendants(trace: &Trace, r: SliceRef) -> (impl Iterator<Item = usize> + '_, bool) {
    let s = trace.slices(r.lane as usize);
    let i = r.index as usize;
    let (end, depth) = (s.end_ns(i), s.depth[i]);
    let stop = s.start_ns[i + 1..].partition_point(|&t| t < end) + i + 1;
    let cut = stop - (i + 1) > MAX_WALK;
    let it = (i + 1..stop.min(i + 1 + MAX_WALK))
        .filter(move |&j| s.depth[j] > depth && s.end_ns(j) <= end);
    (it, cut)
}

fn launched(trace: &Trace, tl: &Timeline, r: SliceRef) -> Launched {
    let s = trace.slices(r.lane as usize);
    let (below, partial) = descendants(trace, r);
    let i = r.index as usize;
    let mut out = Launched {
        count: 0,
        gpu_ns: 0,
        events: Vec::new(),
        partial,
    };
    for j in std::iter::once(i).chain(below) {
        let c = s.correlation[j];
        let mut launched: Vec<SliceRef> = if c == NO_ID {
            Vec::new()
        } else {
            tl.gpu_by_correlation(c).collect()
        };
        if launched.is_empty() {
            // Backends whose device ops carry no correlation are linked by `ac2g` flows only
            // (the launch rule of `analysis::launch`).
            let d = SliceRef {
                lane: r.lane,
                index: j as u32,
            };
            launched.extend(
                tl.flows_of(d)
                    .iter()
                    .map(|&f| trace.flows[f as usize])
                    .filter(|f| f.from == d && trace.lanes[f.to.lane as usize].is_gpu())
                    .map(|f| f.to),
            );
        }
        for g in launched {
            out.count += 1;
            out.gpu_ns += trace.columns.dur_ns[trace.row(g)];
            if out.events.len() < MAX_LISTED {
                out.events.push(brief(trace, g));
            }
        }
    }
    out
}

fn launcher(trace: &Trace, tl: &Timeline, r: SliceRef) -> LaunchedBy {
    let s = trace.slices(r.lane as usize);
    let c = s.correlation[r.index as usize];
    let by_id = (c != NO_ID)
        .then(|| tl.cpu_by_correlation(c).next())
        .flatten();
    let by_flow = || {
        tl.flows_of(r)
            .iter()
            .map(|&f| trace.flows[f as usize])
            .find(|f| f.to == r && !trace.lanes[f.from.lane as usize].is_gpu())
            .map(|f| f.from)
    };
    let Some(runtime) = by_id.or_else(by_flow) else {
        return LaunchedBy {
            runtime: None,
            op: None,
        };
    };
    let ops = ["cpu_op", "Operator", "user_annotation"];
    let op = ancestors(trace, tl, runtime).into_iter().rev().find(|&a| {
        let cat = trace.columns.cat[trace.row(a)];
        ops.contains(&trace.str(cat))
    });
    LaunchedBy {
        runtime: Some(brief(trace, runtime)),
        op: op.map(|o| brief(trace, o)),
    }
}

/// Flow arrows to draw for a selection: those with the slice itself at one end, at most
/// [`MAX_LISTED`]. Flows of the slices under it are not drawn: selecting a root frame would draw a
/// fan of every launch below it. Its kernels are listed in the details through correlation ids.
pub fn arrows(trace: &Trace, tl: &Timeline, r: SliceRef) -> Vec<Arrow> {
    let Some(lane) = trace.lanes.get(r.lane as usize) else {
        return Vec::new();
    };
    if r.index as usize >= lane.slice_count() {
        return Vec::new();
    }
    let mut flows: Vec<u32> = tl.flows_of(r).to_vec();
    flows.truncate(MAX_LISTED);
    flows
        .into_iter()
        .map(|f| {
            let f = trace.flows[f as usize];
            Arrow {
                from: f.from,
                to: f.to,
                category: trace.str(f.cat).to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    /// A CPU op launching one kernel through cudaLaunchKernel, with an ac2g flow, as PyTorch 2.x
    /// writes it.
    fn trace() -> Trace {
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":100},
          {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":50,"args":{"External id":5,"Input Dims":[[2,2],[2,2]]}},
          {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":20,"dur":10,"args":{"correlation":77,"External id":5}},
          {"ph":"s","id":77,"pid":1,"tid":1,"ts":20,"cat":"ac2g","name":"ac2g"},
          {"ph":"X","name":"gemm_kernel","cat":"kernel","pid":0,"tid":7,"ts":40,"dur":30,"args":{"device":0,"stream":7,"correlation":77,"External id":5}},
          {"ph":"f","id":77,"pid":0,"tid":7,"ts":40,"cat":"ac2g","name":"ac2g","bp":"e"}
        ]}"#;
        parse_bytes(json.as_bytes()).unwrap()
    }

    fn find(t: &Trace, name: &str) -> SliceRef {
        for (l, lane) in t.lanes.iter().enumerate() {
            for i in 0..lane.slice_count() {
                if t.str(t.slices_of(lane).name[i]) == name {
                    return SliceRef {
                        lane: l as u32,
                        index: i as u32,
                    };
                }
            }
        }
        panic!("{name} not found")
    }

    /// The `fwdbwd` flow of PyTorch 2.x: from the forward op (`s`) to the backward node (`f`,
    /// `bp: "e"`) on autograd's thread; a slice inside either finds the other.
    #[test]
    fn forward_and_backward_operators_through_fwdbwd() {
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"aten::mse_loss","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":20,"args":{"Sequence number":7}},
          {"ph":"X","name":"aten::sub","cat":"cpu_op","pid":1,"tid":1,"ts":2,"dur":5},
          {"ph":"s","id":1,"pid":1,"tid":1,"ts":0,"cat":"fwdbwd","name":"fwdbwd"},
          {"ph":"X","name":"autograd::engine::evaluate_function: MseLossBackward0","cat":"cpu_op","pid":1,"tid":2,"ts":100,"dur":40},
          {"ph":"X","name":"MseLossBackward0","cat":"cpu_op","pid":1,"tid":2,"ts":102,"dur":30,"args":{"Sequence number":7}},
          {"ph":"X","name":"aten::mse_loss_backward","cat":"cpu_op","pid":1,"tid":2,"ts":104,"dur":20},
          {"ph":"f","id":1,"pid":1,"tid":2,"ts":102,"cat":"fwdbwd","name":"fwdbwd","bp":"e"}
        ]}"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let tl = Timeline::new(&t);
        let inner = details(&t, &tl, find(&t, "aten::mse_loss_backward")).unwrap();
        assert_eq!(inner.forward.unwrap().name, "aten::mse_loss");
        assert!(inner.backward.is_empty());
        let fwd = details(&t, &tl, find(&t, "aten::sub")).unwrap();
        assert_eq!(fwd.forward.map(|b| b.name), None);
        let names: Vec<String> = fwd.backward.into_iter().map(|b| b.name).collect();
        assert_eq!(names, ["MseLossBackward0"]);
        let outer = details(
            &t,
            &tl,
            find(&t, "autograd::engine::evaluate_function: MseLossBackward0"),
        )
        .unwrap();
        // The engine's wrapper finds the forward operator through its child.
        assert_eq!(outer.forward.unwrap().name, "aten::mse_loss");
    }

    #[test]
    fn cpu_op_lists_its_kernels_and_ancestors() {
        let t = trace();
        let tl = Timeline::new(&t);
        let mm = find(&t, "aten::mm");
        let d = details(&t, &tl, mm).unwrap();
        assert_eq!(d.slice.name, "aten::mm");
        assert_eq!(d.args["External id"], 5);
        assert_eq!(
            d.ancestors
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>(),
            ["ProfilerStep#1"]
        );
        let l = d.launched.unwrap();
        assert_eq!((l.count, l.gpu_ns), (1, 30_000));
        assert_eq!(l.events[0].name, "gemm_kernel");
        assert!(d.launched_by.is_none());
        assert!(
            d.flows.is_empty(),
            "the launch's arrow is the launch's, not the op's"
        );
        let launch = details(&t, &tl, find(&t, "cudaLaunchKernel")).unwrap();
        assert_eq!(launch.flows.len(), 1, "the launch's ac2g arrow");
        assert_eq!(launch.flows[0].to, find(&t, "gemm_kernel"));
        let step = details(&t, &tl, find(&t, "ProfilerStep#1")).unwrap();
        assert!(step.flows.is_empty(), "no fan of the flows under a root");
    }

    #[test]
    fn kernel_names_its_launcher() {
        let t = trace();
        let tl = Timeline::new(&t);
        let k = find(&t, "gemm_kernel");
        let d = details(&t, &tl, k).unwrap();
        assert!(d.gpu);
        let by = d.launched_by.unwrap();
        assert_eq!(by.runtime.unwrap().name, "cudaLaunchKernel");
        assert_eq!(by.op.unwrap().name, "aten::mm");
        assert_eq!(d.flows.len(), 1);
        assert!(details(&t, &tl, SliceRef { lane: 99, index: 0 }).is_none());
        assert!(details(
            &t,
            &tl,
            SliceRef {
                lane: k.lane,
                index: 99
            }
        )
        .is_none());
    }

    /// A backend whose device ops carry no correlation (a PrivateUse1 runtime): the `ac2g` flow
    /// alone says what the operator launched, both ways.
    #[test]
    fn flows_alone_link_launches() {
        let json = r#"{"traceEvents":[
          {"ph":"M","name":"process_labels","pid":1,"tid":0,"args":{"labels":"CPU"}},
          {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":50,"args":{"External id":5}},
          {"ph":"X","name":"launchKernel","cat":"privateuse1_runtime","pid":1,"tid":1,"ts":20,"dur":10},
          {"ph":"s","id":77,"pid":1,"tid":1,"ts":20,"cat":"ac2g","name":"ac2g"},
          {"ph":"X","name":"matmul_kernel","cat":"kernel","pid":0,"tid":3,"ts":40,"dur":30,"args":{"device":0,"stream":3}},
          {"ph":"f","id":77,"pid":0,"tid":3,"ts":40,"cat":"ac2g","name":"ac2g","bp":"e"}
        ]}"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let tl = Timeline::new(&t);
        let l = details(&t, &tl, find(&t, "aten::mm"))
            .unwrap()
            .launched
            .unwrap();
        assert_eq!((l.count, l.gpu_ns), (1, 30_000));
        let by = details(&t, &tl, find(&t, "matmul_kernel"))
            .unwrap()
            .launched_by
            .unwrap();
        assert_eq!(by.runtime.unwrap().name, "launchKernel");
        assert_eq!(by.op.unwrap().name, "aten::mm");
    }
}
