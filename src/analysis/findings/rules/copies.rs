//! Implicit tensor copies on the CPU.

use super::super::context::{evidence_of, ms, pct, share, Context};
use super::super::types::{Finding, Severity};
use super::super::{COPY_SELF_SHARE, COPY_TOP_RANK};

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
