//! The hotspot: what the steps' critical paths spend most in, named as a finding where making it
//! free would save at least [`HOTSPOT_PCT`] of the step, with advice for its kind:
//! [`HOT_OPERATOR`], [`ALLOCATOR_CHURN`] and [`HOST_SYNC`]. The path charges a host wait to the
//! device work waited for, so a path through any wait makes `host_sync` a candidate, and its
//! bound (`syncs=0`: the host never waits there) decides.
//!
//! Inside the steps, or over the whole trace where it has no `ProfilerStep`s (the path's window
//! then is the whole trace). Removing a hotspot outright is no fix's saving: each what-if makes
//! it free, and the saving is told as that bound ([`super::savings::Saving::bound`]). The
//! paths are those of the kept graph, walked without their segments' names
//! (`binding_edges`).

use super::graph::{EdgeKind, Graph, NO_SLICE};
use super::{binding_edges, is_data_loading, Analysis};
use crate::analysis::backend;
use crate::analysis::findings::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::links::Links;
use crate::analysis::origin::origin;
use crate::analysis::summary::devices_word;
use crate::model::category::Kind;
use crate::model::{SliceRef, Trace};
use rustc_hash::FxHashMap;

/// Below this share of the step (in percent), a hotspot's bound names no finding.
pub const HOTSPOT_PCT: f64 = 5.0;

/// Each hotspot's threshold: its bound's share of the step.
const WORTH: Threshold = Threshold::new("saving", Value::Pct(HOTSPOT_PCT));

pub const HOT_OPERATOR: Rule = Rule {
    id: "hot_operator",
    theme: Theme::Path,
    severity: Severity::Warning,
    recording: false,
    meaning: "the operator holding the most of the steps' critical path (its CPU time and the \
              device work it launched), where it comes from (module, range or Python frame), \
              and advice for where its time goes (CPU dispatch or device work)",
    fires: "making it free saves {saving} of the step or more, and no other finding's what-if \
            names it",
    whatif: "`NAME=0`",
    pricing: Pricing::Bound,
    thresholds: &[WORTH],
};

pub const ALLOCATOR_CHURN: Rule = Rule {
    id: "allocator_churn",
    theme: Theme::Path,
    severity: Severity::Warning,
    recording: false,
    meaning: "the caching allocator calls `cudaMalloc`/`cudaFree` (`hipMalloc`/`hipFree`) inside \
              the steps: it missed its cache",
    fires: "those calls' path time, made free, saves {saving} of the step or more",
    whatif: "`cudaMalloc*|cudaFree*=0` (`hipMalloc*|hipFree*=0` on ROCm)",
    pricing: Pricing::Bound,
    thresholds: &[WORTH],
};

pub const HOST_SYNC: Rule = Rule {
    id: "host_sync",
    theme: Theme::Path,
    severity: Severity::Warning,
    recording: false,
    meaning: "the CPU waits for the device inside the steps (`.item()`, `.cpu()`, `nonzero`, \
              synchronize, blocking copies)",
    fires: "those waits, made free, save {saving} of the step or more",
    whatif: "`syncs=0`",
    pricing: Pricing::Bound,
    thresholds: &[WORTH],
};

/// The rules of this module, in the order the reference lists them.
pub const RULES: [&Rule; 3] = [&HOT_OPERATOR, &ALLOCATOR_CHURN, &HOST_SYNC];

/// The findings this module writes; their savings are bounds.
pub const IDS: [&str; 3] = [HOT_OPERATOR.id, ALLOCATOR_CHURN.id, HOST_SYNC.id];

/// Longer operator names are never a hotspot's: its what-if quotes the name whole.
const MAX_NAME: usize = 1024;

/// At most this many slices of evidence.
const MAX_EVIDENCE: usize = 20;

/// Path time charged to one candidate.
#[derive(Default)]
struct Tally {
    ns: i64,
    /// Binding edges counted (for the syncs: the waits on the path).
    count: usize,
    /// Of which on a CPU thread (the rest on the device).
    cpu_ns: i64,
    slices: Vec<SliceRef>,
}

impl Tally {
    fn add(&mut self, ns: i64, cpu: bool, slice: Option<SliceRef>) {
        self.ns += ns;
        if cpu {
            self.cpu_ns += ns;
        }
        if let Some(r) = slice {
            if self.slices.len() < MAX_EVIDENCE && !self.slices.contains(&r) {
                self.slices.push(r);
            }
        }
    }
}

/// The caching allocator's calls into the runtime.
fn is_alloc(name: &str) -> bool {
    ["cudaMalloc", "cudaFree", "hipMalloc", "hipFree"]
        .iter()
        .any(|p| name.starts_with(p))
        && !name.contains("Host")
}

/// A call that makes the host wait for the device.
fn is_host_sync(name: &str) -> bool {
    super::graph::is_blocking(name)
        || matches!(
            name,
            "aten::item" | "aten::_local_scalar_dense" | "aten::nonzero" | "aten::is_nonzero"
        )
}

/// The hotspot findings worth pricing (see the module's doc): those whose share of the steps'
/// path time reaches [`HOTSPOT_PCT`]; the caller keeps those whose bound does too.
pub fn candidates(trace: &Trace, links: &Links, a: &Analysis, others: &[Finding]) -> Vec<Finding> {
    let g = &a.graph;
    let step_ns: i64 = a
        .windows
        .iter()
        .map(|w| g.time[w.end as usize] - g.time[w.start as usize])
        .sum();
    if step_ns <= 0 {
        return Vec::new();
    }
    let alloc_name = trace.strings.each(is_alloc);
    let sync_name = trace.strings.each(is_host_sync);
    // Operators a hotspot is never: the step, the optimizer's and the DataLoader's spans, and the
    // autograd engine's wrappers (whose operator inside is the one to name).
    let wrapper = trace.strings.each(|n| {
        n.starts_with("ProfilerStep#")
            || n.starts_with("Optimizer.")
            || is_data_loading(n)
            || n.starts_with("autograd::engine::evaluate_function")
            || n.contains(['*', '|', '='])
            // A name too long to quote whole (`long_name`) makes no edit to print.
            || n.len() > MAX_NAME
    });
    let mut ops: FxHashMap<u32, Tally> = FxHashMap::default();
    let (mut alloc, mut sync) = (Tally::default(), Tally::default());
    // Per CPU lane, each chain slice's marks, settled once per lane the paths touch (a climb
    // to the root from every path edge was quadratic in the nesting: 100k nested slices).
    let mut marks: FxHashMap<u32, Marks> = FxHashMap::default();
    let make = |lane: u32| {
        Marks::of(trace, links, g, lane as usize, |n| {
            (
                alloc_name[n as usize],
                sync_name[n as usize],
                wrapper[n as usize],
            )
        })
    };
    let op_ref = |lane: u32, index: u32| SliceRef { lane, index };
    for w in &a.windows {
        binding_edges(g, w, |e, from, to| {
            let ns = to - from;
            match (e.kind, g.slice(e)) {
                (EdgeKind::Sync, None) => {
                    sync.count += 1;
                    sync.add(ns, true, None)
                }
                (EdgeKind::Cpu, Some(r)) => {
                    let m = marks.entry(r.lane).or_insert_with(|| make(r.lane));
                    let i = r.index as usize;
                    // Time in the allocator or a sync is theirs, not the operator's that
                    // called them (a backward's frees would make it the hotspot).
                    if m.alloc[i] {
                        alloc.add(ns, true, Some(r));
                    } else if m.sync[i] {
                        sync.add(ns, true, Some(r));
                    } else if m.op[i] != NONE {
                        let op = op_ref(r.lane, m.op[i]);
                        let name = trace.columns.name[trace.row(op)].0;
                        ops.entry(name).or_default().add(ns, true, Some(op));
                    }
                }
                (EdgeKind::Device(_), Some(r)) => {
                    let call = g.launched_by[r.lane as usize][r.index as usize];
                    if call == NO_SLICE {
                        return;
                    }
                    let m = marks.entry(call.lane).or_insert_with(|| make(call.lane));
                    let op = m.op.get(call.index as usize).copied().unwrap_or(NONE);
                    if op != NONE {
                        let op = op_ref(call.lane, op);
                        let name = trace.columns.name[trace.row(op)].0;
                        ops.entry(name).or_default().add(ns, false, Some(op));
                    }
                }
                _ => {}
            }
        });
    }
    let steps = a.windows.len().max(1) as i64;
    let words = Words::of(trace, a);
    let worth = |t: &Tally| 100.0 * t.ns as f64 / step_ns as f64 >= HOTSPOT_PCT;
    let mut out = Vec::new();
    // The operator with the most path time that no other finding prices already.
    let named = |name: &str| {
        others
            .iter()
            .any(|f| f.whatif.iter().any(|e| e.contains(name)))
    };
    let mut ranked: Vec<(&u32, &Tally)> = ops.iter().collect();
    ranked.sort_by_key(|(name, t)| (std::cmp::Reverse(t.ns), **name));
    if let Some((&name, t)) = ranked
        .into_iter()
        .find(|(&n, _)| !named(trace.str(crate::model::StrId(n))))
        .filter(|(_, t)| worth(t))
    {
        out.push(hot_operator(
            &words,
            trace.str(crate::model::StrId(name)),
            t,
            steps,
            step_ns,
        ));
    }
    if worth(&alloc) {
        out.push(allocator_churn(&words, &alloc, steps, step_ns));
    }
    // A wait on the path charges its time to the device work it waited for, so the syncs' own
    // path time says little: where the path holds a wait, their bound (no wait at all) decides.
    if sync.count > 0 {
        out.push(host_sync(&words, &sync, steps));
    }
    out
}

/// Per chain slice of a lane: the innermost operator holding it (itself included; `NONE` for
/// none), and whether it or a slice holding it is an allocator call or a host sync. A parent
/// comes before its children in a lane's order (sorted by start, the longer first), so one pass
/// settles every slice from its parent's marks.
struct Marks {
    op: Vec<u32>,
    alloc: Vec<bool>,
    sync: Vec<bool>,
}

impl Marks {
    /// `names(name)`: (an allocator call, a host sync, never a hotspot).
    fn of(
        trace: &Trace,
        links: &Links,
        g: &Graph,
        lane: usize,
        names: impl Fn(u32) -> (bool, bool, bool),
    ) -> Marks {
        let s = trace.slices(lane);
        let parents: &[u32] = g.parent.get(lane).unwrap_or(&[]);
        let n = parents.len();
        let mut m = Marks {
            op: vec![NONE; n],
            alloc: vec![false; n],
            sync: vec![false; n],
        };
        for (i, &parent) in parents.iter().enumerate() {
            let (is_alloc, is_sync, never) = names(s.name[i].0);
            let p = parent as usize;
            let up = |v: &[bool]| parent != NONE && v.get(p).copied().unwrap_or(false);
            m.alloc[i] = is_alloc || up(&m.alloc);
            m.sync[i] = is_sync || up(&m.sync);
            m.op[i] = if !never && links.kinds.of_cat(s.cat[i]) == Kind::CpuOp {
                i as u32
            } else if parent != NONE {
                m.op.get(p).copied().unwrap_or(NONE)
            } else {
                NONE
            };
        }
        m
    }
}

/// No slice.
const NONE: u32 = u32::MAX;

/// How the findings name their scope, the device and its runtime's calls.
struct Words<'t> {
    /// "a step", or "of the trace" where it has no steps.
    per: &'static str,
    /// "inside the steps", or "in the trace".
    scope: &'static str,
    /// "the step" or "the trace", as the whole a share is of.
    whole: &'static str,
    device: String,
    backend: backend::Backend,
    trace: &'t Trace,
}

impl Words<'_> {
    fn of<'t>(trace: &'t Trace, a: &Analysis) -> Words<'t> {
        let whole_trace = a.windows.first().is_some_and(|w| w.name == "(whole trace)");
        Words {
            per: if whole_trace {
                "of the trace"
            } else {
                "a step"
            },
            scope: if whole_trace {
                "in the trace"
            } else {
                "inside the steps"
            },
            whole: if whole_trace { "the trace" } else { "the step" },
            device: devices_word(trace),
            backend: backend::of_trace(trace).unwrap_or(backend::Backend::Other),
            trace,
        }
    }
}

/// The slices and, for a viewer to zoom to, their time ranges.
fn evidence(trace: &Trace, t: &Tally) -> Evidence {
    let ranges = t
        .slices
        .iter()
        .map(|r| {
            let s = trace.slices(r.lane as usize);
            let i = r.index as usize;
            TimeRange {
                start_ns: s.start_ns[i],
                end_ns: s.end_ns(i),
            }
        })
        .collect();
    Evidence {
        slices: t.slices.clone(),
        ranges,
    }
}

fn hot_operator(w: &Words, name: &str, t: &Tally, steps: i64, step_ns: i64) -> Finding {
    let device = &w.device;
    let on_device = t.ns - t.cpu_ns;
    let origin = t
        .slices
        .first()
        .and_then(|&r| origin(w.trace, r))
        .map(|o| format!(" It runs inside {o}."))
        .unwrap_or_default();
    let advice = if on_device * 2 >= t.ns {
        format!(
            "The {device} work it launches sets the pace: check its efficiency (sightline \
             flops), run it in bf16 or TF32 where the model allows, give it shapes in multiples \
             of 8, or fuse it with its neighbours (torch.compile)."
        )
    } else {
        "Its CPU time sets the pace: call it fewer times with more work each (batch the calls, \
         move it out of per-item loops), or compile the code around it (torch.compile) so that \
         its dispatch leaves the step."
            .to_string()
    };
    Finding {
        id: HOT_OPERATOR.id,
        severity: HOT_OPERATOR.severity,
        title: format!("`{name}` holds the most of the critical path {}", w.scope),
        detail: format!(
            "`{name}` holds {} of the critical path {} ({:.1}% of {}): {} on the CPU and {} in \
             the {device} work it launched.{origin}",
            crate::units::duration((t.ns / steps) as f64),
            w.per,
            100.0 * t.ns as f64 / step_ns as f64,
            w.whole,
            crate::units::duration((t.cpu_ns / steps) as f64),
            crate::units::duration((on_device / steps) as f64),
        ),
        advice,
        evidence: evidence(w.trace, t),
        whatif: vec![format!("{name}=0")],
    }
}

fn allocator_churn(w: &Words, t: &Tally, steps: i64, step_ns: i64) -> Finding {
    let (calls, conf, edit) = match w.backend {
        backend::Backend::Rocm => (
            "hipMalloc/hipFree",
            "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True",
            "hipMalloc*|hipFree*=0",
        ),
        _ => (
            "cudaMalloc/cudaFree",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "cudaMalloc*|cudaFree*=0",
        ),
    };
    Finding {
        id: ALLOCATOR_CHURN.id,
        severity: ALLOCATOR_CHURN.severity,
        title: format!("The caching allocator calls {calls} {}", w.scope),
        detail: format!(
            "Device memory allocation and release calls ({calls}) hold {} of the critical path \
             {} ({:.1}% of {}): the caching allocator missed its cache and went to the \
             runtime, whose free also waits for the {}.",
            crate::units::duration((t.ns / steps) as f64),
            w.per,
            100.0 * t.ns as f64 / step_ns as f64,
            w.whole,
            w.device,
        ),
        advice: format!(
            "Keep the allocator's cache warm: set {conf}, allocate the same shapes each step \
             (pad variable lengths to a few sizes), keep torch.cuda.empty_cache() out of the \
             loop, and reserve memory up front where the peak is known."
        ),
        evidence: evidence(w.trace, t),
        whatif: vec![edit.into()],
    }
}

fn host_sync(w: &Words, t: &Tally, steps: i64) -> Finding {
    let device = &w.device;
    Finding {
        id: HOST_SYNC.id,
        severity: HOST_SYNC.severity,
        title: format!("The CPU waits for the {device} {}", w.scope),
        detail: format!(
            "The critical path runs through the CPU waiting for the {device} {} time(s) {} \
             (.item(), .cpu(), nonzero, synchronize, blocking copies): the CPU stops launching \
             until the {device} catches up, and the {device} then waits for the next launch.",
            (t.count as i64 + steps - 1) / steps,
            w.per,
        ),
        advice: format!(
            "Keep values on the {device} (accumulate losses and metrics as tensors, read them \
             every N steps), copy to the host with non_blocking=True into pinned memory, avoid \
             data-dependent shapes (nonzero, boolean masks) inside the step, and drop \
             synchronize calls left from timing code."
        ),
        evidence: evidence(w.trace, t),
        whatif: vec!["syncs=0".into()],
    }
}
