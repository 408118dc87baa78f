//! Implicit tensor copies on the CPU, and the float64 detours they make.

use super::super::context::{duration, evidence_of, pct, share, Context};
use super::super::types::{Finding, Pricing, Rule, Severity, Theme, Threshold, Value};
use crate::analysis::links::Kind;
use crate::model::{SliceRef, StrId, Trace};
use rustc_hash::FxHashMap;

/// CPU Exec's share of step time above which the copies' self time is walked (`Context::new`).
pub(in super::super) const CPU_EXEC_SHARE: f64 = 0.30;
/// The copies' share of the operators' self time from which they weigh.
const COPY_SELF_SHARE: f64 = 0.05;
/// The copies' rank among the other operator names' self times down to which they weigh.
const COPY_TOP_RANK: usize = 5;

pub(crate) const CPU_COPY_OVERHEAD: Rule = Rule {
    id: "cpu_copy_overhead",
    theme: Theme::Copies,
    severity: Severity::Warning,
    recording: false,
    meaning: "implicit copies weigh on the CPU",
    fires: "CPU Exec over {cpu_exec} of step time, and `aten::copy_`/`to`/`_to_copy`/`contiguous` \
            {copy_self} or more of the operators' self time and among the top {rank} names",
    whatif: "those four `=0` (inclusive: their children go too)",
    pricing: Pricing::Fix,
    thresholds: &[
        Threshold::new("cpu_exec", Value::Share(CPU_EXEC_SHARE)),
        Threshold::new("copy_self", Value::Share(COPY_SELF_SHARE)),
        Threshold::new("rank", Value::Count(COPY_TOP_RANK)),
    ],
};

/// [`CPU_COPY_OVERHEAD`].
pub(crate) fn cpu_copy_overhead(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let step_total = cx.step_total;
    let mut out = Vec::new();
    let cpu_exec = share(steps.total.cpu_exec_ns, step_total);
    // Walked only where the rule can fire (see `Context::new`).
    if let Some(copies) = &cx.copies {
        let copy_share = share(copies.copy_self_ns, copies.total_self_ns);
        if copies.copy_self_ns > 0 {
            cx.measure(&CPU_COPY_OVERHEAD, "copy_self", Value::Share(copy_share));
        }
        if copy_share >= COPY_SELF_SHARE && copies.rank <= COPY_TOP_RANK {
            out.push(Finding {
                id: CPU_COPY_OVERHEAD.id,
                severity: CPU_COPY_OVERHEAD.severity,
                whatif: ["aten::copy_=0", "aten::to=0", "aten::_to_copy=0", "aten::contiguous=0"].map(String::from).to_vec(),
                title: "Tensor copies weigh on the CPU".into(),
                detail: format!(
                    "CPU execution is {} of step time, and aten::copy_/to/_to_copy/contiguous take \
                     {} of the operators' self CPU time ({} in {} calls, #{} against the other \
                     operators).",
                    pct(cpu_exec),
                    pct(copy_share),
                    duration(copies.copy_self_ns),
                    copies.calls,
                    copies.rank
                ),
                advice: "Avoid implicit copies: keep tensors on the device and in the dtype they \
                         are used in, avoid .contiguous() after transposes where a view will do, and \
                         move data with non_blocking=True from pinned memory."
                    .into(),
                evidence: evidence_of(trace, &copies.top),
            });
        }
    }
    out
}

/// ScalarType 7 (`torch.float64`) as the second of `Concrete Inputs`: `aten::to(x, torch.float64)`.
fn converts_to_double(trace: &Trace, args: crate::model::ArgsId) -> bool {
    trace
        .args
        .field(args, "Concrete Inputs")
        .is_some_and(|c| c.starts_with("[\"\", \"7\""))
}

/// The outermost float64 operators' share of the steps from which they are worth a finding.
const DTYPE_SHARE: f64 = 0.05;

pub(crate) const DTYPE_ROUND_TRIP: Rule = Rule {
    id: "dtype_round_trip",
    theme: Theme::Copies,
    severity: Severity::Warning,
    recording: false,
    meaning: "part of a float32 model runs in float64",
    fires: "operators with a `double` input (`Input type`, with `record_shapes`) in steps whose \
            other operators run in float32, the outermost ones {share} or more of the steps, \
            after conversions to float64 (`aten::to` with dtype 7)",
    whatif: "`float64*0.5` (float64 at float32's speed, a floor on CPUs)",
    pricing: Pricing::Fix,
    thresholds: &[Threshold::new("share", Value::Share(DTYPE_SHARE))],
};

/// [`DTYPE_ROUND_TRIP`].
pub(crate) fn dtype_round_trip(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
    let mut largest: Option<f64> = None;
    for sl in &cx.step_lanes {
        let s = sl.slices(trace);
        let n_steps = sl.steps.len().max(1) as i64;
        let steps_ns = sl.steps_ns(trace);
        let (mut double_ns, mut float_ops, mut into) = (0i64, 0usize, 0usize);
        let mut doubles: Vec<SliceRef> = Vec::new();
        let mut names: FxHashMap<StrId, usize> = FxHashMap::default();
        for &st in &sl.steps {
            // Only the outermost float64 operator counts (its children are in its time).
            let mut covered_to = i64::MIN;
            for k in sl.descendants(trace, st) {
                if cx.links.kinds.of_cat(s.cat[k]) != Kind::CpuOp {
                    continue;
                }
                let Some(types) = trace.args.field(s.args[k], "Input type") else {
                    continue;
                };
                let name = trace.str(s.name[k]);
                if matches!(name, "aten::to" | "aten::_to_copy")
                    && converts_to_double(trace, s.args[k])
                {
                    into += 1;
                }
                if !types.contains("\"double\"") {
                    float_ops += types.contains("\"float\"") as usize;
                    continue;
                }
                if s.start_ns[k] >= covered_to {
                    covered_to = s.end_ns(k);
                    double_ns += s.dur_ns[k];
                    doubles.push(sl.at(k as u32));
                    *names.entry(s.name[k]).or_default() += 1;
                }
            }
        }
        let sh = share(double_ns, steps_ns);
        if double_ns > 0 {
            largest = Some(largest.map_or(sh, |l| l.max(sh)));
        }
        if sh < DTYPE_SHARE || into == 0 || float_ops == 0 {
            continue;
        }
        let mut named: Vec<(StrId, usize)> = names.into_iter().collect();
        named.sort_by_key(|&(n, c)| (std::cmp::Reverse(c), n));
        let list: Vec<String> = named
            .iter()
            .take(4)
            .map(|&(n, _)| format!("`{}`", trace.str(n)))
            .collect();
        out.push(Finding {
            id: DTYPE_ROUND_TRIP.id,
            severity: DTYPE_ROUND_TRIP.severity,
            whatif: vec!["float64*0.5".into()],
            title: "Part of the model runs in float64".into(),
            detail: format!(
                "{} operators a step run on float64 tensors ({}{}) and take {} a step ({} of \
                 the steps), after {} conversions a step to float64 from a model that is float32 \
                 elsewhere.",
                doubles.len() as i64 / n_steps,
                list.join(", "),
                if named.len() > 4 { ", ..." } else { "" },
                duration(double_ns / n_steps),
                pct(sh),
                (into as i64 / n_steps).max(1),
            ),
            advice: "Keep the activations in float32 (or bfloat16 under torch.autocast): drop \
                     the .double() or dtype=torch.float64 and the .float() after it. float64 \
                     runs at half the SIMD width on CPUs and at 1/2 to 1/64 of float32's rate on \
                     GPUs, and each conversion copies the tensor."
                .into(),
            evidence: evidence_of(trace, &doubles),
        });
    }
    if let Some(sh) = largest {
        cx.measure(&DTYPE_ROUND_TRIP, "share", Value::Share(sh));
    }
    out
}
