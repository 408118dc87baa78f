//! The device: its utilization, communication, waiting for the host.

use super::super::context::{evidence_of, ms, pct, share, Context, MAX_EVIDENCE};
use super::super::types::{Evidence, Finding, Severity, TimeRange};
use super::super::{
    COMMUNICATION_SHARE, LOW_UTILIZATION, STARVED_HOST_SHARE, STARVED_IDLE_SHARE,
    VERY_LOW_UTILIZATION,
};
use crate::analysis::backend;
use crate::analysis::idle;
use crate::analysis::summary::device_name;
use crate::model::SliceRef;

/// `low_gpu_utilization`: a device busy under `LOW_UTILIZATION` of the steps' span.
pub(crate) fn low_gpu_utilization(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let idle = cx.idle;
    let mut out = Vec::new();
    for g in &steps.gpu {
        if g.utilization < LOW_UTILIZATION {
            let gaps: Vec<&idle::Gap> = idle.gaps.iter().filter(|x| x.device == g.device).collect();
            out.push(Finding {
                id: "low_gpu_utilization",
                whatif: Vec::new(),
                severity: if g.utilization < VERY_LOW_UTILIZATION {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                title: format!(
                    "{} is busy only {} of the steps' span",
                    device_name(trace, g.device),
                    pct(g.utilization)
                ),
                detail: format!(
                    "Kernels ran {} of the {} spanned by the steps on {} ({} utilization).",
                    ms(g.kernel_ns),
                    ms(g.span_ns),
                    device_name(trace, g.device),
                    pct(g.utilization)
                ),
                advice: format!(
                    "See where {} waits (sightline idle): feed it faster, batch more work per \
                     step: larger batches, {}.",
                    device_name(trace, g.device),
                    backend::fewer_launches(backend::of_device(trace, g.device), cx.in_use())
                ),
                evidence: Evidence {
                    slices: gaps
                        .iter()
                        .map(|x| x.ended_by.op)
                        .take(MAX_EVIDENCE)
                        .collect(),
                    ranges: gaps
                        .iter()
                        .map(|x| TimeRange {
                            start_ns: x.start_ns,
                            end_ns: x.end_ns,
                        })
                        .take(MAX_EVIDENCE)
                        .collect(),
                },
            });
        }
    }
    out
}

/// `communication_heavy`: Communication over `COMMUNICATION_SHARE` of step time.
pub(crate) fn communication_heavy(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let c = &cx.census;
    let step_total = cx.step_total;
    let mut out = Vec::new();
    let comm = share(steps.total.communication_ns, step_total);
    if comm > COMMUNICATION_SHARE && cx.steps.devices_without_events.is_empty() {
        out.push(Finding {
            id: "communication_heavy",
            severity: Severity::Warning,
            whatif: vec!["communication=0".into()],
            title: "Communication takes a large share of each step".into(),
            detail: format!(
                "Communication not hidden behind computation took {} of {} of step time ({}).",
                ms(steps.total.communication_ns),
                ms(step_total),
                pct(comm)
            ),
            advice: "Overlap communication with computation (DDP bucket sizes, gradient \
                     accumulation with no_sync), or reduce it (compression, larger batches per \
                     rank, fewer parameters to all-reduce)."
                .into(),
            evidence: evidence_of(trace, &c.comm_kernels),
        });
    }
    out
}

/// `gpu_starved_by_cpu`: a device idle, mostly waiting for the host to launch.
pub(crate) fn gpu_starved_by_cpu(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let idle = cx.idle;
    let mut out = Vec::new();
    for d in &idle.devices {
        let idle_share = share(d.idle_ns, d.window_ns);
        let host_share = share(d.host_wait_ns, d.idle_ns);
        if idle_share < STARVED_IDLE_SHARE || host_share < STARVED_HOST_SHARE {
            continue;
        }
        let host_waits: Vec<String> = idle
            .waits
            .iter()
            .filter(|w| w.kind.is_host())
            .take(3)
            .map(|w| format!("{} ({})", w.kind.phrase(), ms(w.ns)))
            .collect();
        let gaps: Vec<&idle::Gap> = idle
            .gaps
            .iter()
            .filter(|g| g.device == d.device && g.host_wait)
            .collect();
        let mut slices: Vec<SliceRef> = Vec::new();
        for g in &gaps {
            slices.extend(g.events.iter().filter_map(|e| e.slice).take(2));
        }
        slices.truncate(MAX_EVIDENCE);
        out.push(Finding {
            id: "gpu_starved_by_cpu",
            severity: Severity::Warning,
            whatif: Vec::new(),
            title: format!("{} waits for the CPU", device_name(trace, d.device)),
            detail: format!(
                "{} was idle {} of its {} window ({}), and {} of that idle time it waited for \
                 the host to launch work; meanwhile the CPU was in {}.",
                device_name(trace, d.device),
                ms(d.idle_ns),
                ms(d.window_ns),
                pct(idle_share),
                pct(host_share),
                if host_waits.is_empty() {
                    "unrecorded work".to_string()
                } else {
                    host_waits.join(", ")
                }
            ),
            advice: format!(
                "Take the named CPU work off the critical path: a faster input pipeline, fewer \
                 synchronizations (.item(), .cpu(), printing tensors), {} against launch overhead.",
                backend::against_launch_overhead(backend::of_device(trace, d.device), cx.in_use(),)
            ),
            evidence: Evidence {
                slices,
                ranges: gaps
                    .iter()
                    .map(|g| TimeRange {
                        start_ns: g.start_ns,
                        end_ns: g.end_ns,
                    })
                    .take(MAX_EVIDENCE)
                    .collect(),
            },
        });
    }
    out
}
