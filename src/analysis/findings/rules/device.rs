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

/// The what-if edits that make the host work of the idle report's waits free, the largest three
/// kinds (`gpu_starved_by_cpu`'s "the named host work made free"); with `device_side`, the
/// device's own waits too, as launches batched into a graph would shorten them.
fn waits_made_free(idle: &idle::IdleReport, device_side: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in idle.waits.iter().filter(|w| w.ns > 0) {
        let edit = match w.kind {
            idle::WaitKind::DataLoader => "DataLoader=0",
            idle::WaitKind::Collate => "*collate*=0",
            idle::WaitKind::Copy => "cpu:aten::copy_|aten::to|aten::_to_copy|aten::contiguous=0",
            idle::WaitKind::Sync | idle::WaitKind::BlockingMemcpy => "syncs=0",
            idle::WaitKind::Alloc => {
                "cpu:cudaMalloc*|cudaFree*|cudaHostAlloc|hipMalloc*|hipFree*|hipHostMalloc|hipHostFree=0"
            }
            idle::WaitKind::Launch => "launches=0",
            idle::WaitKind::CpuOps => "cpu:aten::*=0",
            idle::WaitKind::Python | idle::WaitKind::Annotation | idle::WaitKind::NothingRecorded => {
                "untraced=0"
            }
            idle::WaitKind::GpuSide | idle::WaitKind::NoLaunch if device_side => "launches=0",
            idle::WaitKind::GpuSide | idle::WaitKind::NoLaunch => continue,
        };
        if !out.iter().any(|e| e == edit) {
            out.push(edit.to_string());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// Whether `gpu_starved_by_cpu` fires on a device: idle time it can price.
fn starved(d: &idle::DeviceIdle) -> bool {
    share(d.idle_ns, d.window_ns) >= STARVED_IDLE_SHARE
        && share(d.host_wait_ns, d.idle_ns) >= STARVED_HOST_SHARE
}

/// `low_gpu_utilization`: a device busy under `LOW_UTILIZATION` of the steps' span. Where the
/// device mostly waits for the host, this is context under `gpu_starved_by_cpu`, which says it
/// and prices the host work; elsewhere its what-if makes the waits' work free, the device's own
/// included (launches batched as a graph would batch them).
pub(crate) fn low_gpu_utilization(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let idle = cx.idle;
    let mut out = Vec::new();
    // A set, not a scan of the devices for each device (80,000 device processes).
    let starving: rustc_hash::FxHashSet<i64> = idle
        .devices
        .iter()
        .filter(|d| starved(d))
        .map(|d| d.device)
        .collect();
    // One what-if for every device's finding: the waits are the trace's.
    let whatif = waits_made_free(idle, true);
    for g in &steps.gpu {
        if g.utilization < LOW_UTILIZATION && !starving.contains(&g.device) {
            let gaps: Vec<&idle::Gap> = idle.gaps.iter().filter(|x| x.device == g.device).collect();
            out.push(Finding {
                id: "low_gpu_utilization",
                whatif: whatif.clone(),
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
    // Each device's figures over the steps, by device (not a scan of them for each device).
    let utilization: rustc_hash::FxHashMap<i64, &crate::analysis::steps::DeviceUtilization> =
        cx.steps.gpu.iter().map(|g| (g.device, g)).collect();
    for d in &idle.devices {
        let idle_share = share(d.idle_ns, d.window_ns);
        let host_share = share(d.host_wait_ns, d.idle_ns);
        if !starved(d) {
            continue;
        }
        // `low_gpu_utilization` of the same device, told here as context.
        let low = utilization
            .get(&d.device)
            .filter(|g| g.utilization < LOW_UTILIZATION)
            .map(|g| {
                format!(
                    " Over {} its kernels ran only {} of the time.",
                    if cx.steps.synthetic {
                        "the trace"
                    } else {
                        "the steps' span"
                    },
                    pct(g.utilization)
                )
            })
            .unwrap_or_default();
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
            whatif: waits_made_free(idle, false),
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
            ) + &low,
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
