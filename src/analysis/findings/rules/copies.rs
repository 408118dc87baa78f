//! Implicit tensor copies on the CPU, and the float64 detours they make.

use super::super::context::{evidence_of, ms, pct, share, Context};
use super::super::types::{Finding, Severity};
use super::super::{COPY_SELF_SHARE, COPY_TOP_RANK, DTYPE_SHARE};
use crate::analysis::links::Kind;
use crate::model::{SliceRef, StrId, Trace};
use rustc_hash::FxHashMap;

/// `cpu_copy_overhead`: CPU Exec over `CPU_EXEC_SHARE` of step time and the copy operators high in self CPU time.
pub(crate) fn cpu_copy_overhead(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let step_total = cx.step_total;
    let mut out = Vec::new();
    let cpu_exec = share(steps.total.cpu_exec_ns, step_total);
    // Walked only where the rule can fire (see `Context::new`).
    if let Some(copies) = &cx.copies {
        let copy_share = share(copies.copy_self_ns, copies.total_self_ns);
        if copy_share >= COPY_SELF_SHARE && copies.rank <= COPY_TOP_RANK {
            out.push(Finding {
                id: "cpu_copy_overhead",
                severity: Severity::Warning,
                whatif: ["aten::copy_=0", "aten::to=0", "aten::_to_copy=0", "aten::contiguous=0"].map(String::from).to_vec(),
                title: "Tensor copies weigh on the CPU".into(),
                detail: format!(
                    "CPU execution is {} of step time, and aten::copy_/to/_to_copy/contiguous take \
                     {} of the operators' self CPU time ({} in {} calls, #{} against the other \
                     operators).",
                    pct(cpu_exec),
                    pct(copy_share),
                    ms(copies.copy_self_ns),
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

/// `dtype_round_trip`: operators on float64 tensors (`double` in their `Input type`, recorded
/// with `record_shapes`) in steps whose other operators run in float32, after conversions to
/// float64: together `DTYPE_SHARE` of the steps.
pub(crate) fn dtype_round_trip(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
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
            id: "dtype_round_trip",
            severity: Severity::Warning,
            whatif: vec!["float64*0.5".into()],
            title: "Part of the model runs in float64".into(),
            detail: format!(
                "{} operators a step run on float64 tensors ({}{}) and take {} a step ({} of \
                 the steps), after {} conversions a step to float64 from a model that is float32 \
                 elsewhere.",
                doubles.len() as i64 / n_steps,
                list.join(", "),
                if named.len() > 4 { ", ..." } else { "" },
                ms(double_ns / n_steps),
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
    out
}
