//! The device: its utilization, communication, waiting for the host.

use super::super::context::{duration, evidence_of, pct, share, Context, MAX_EVIDENCE};
use super::super::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
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

/// At most this many devices get a finding of a rule each; the rest share one. A node holds 8 to
/// 16 GPUs; a file with 80,000 device processes had made 80,000 findings, most of the memory a
/// report used.
const MAX_DEVICE_FINDINGS: usize = 16;

/// `devices` split into those told one by one (the `MAX_DEVICE_FINDINGS - 1` first by `worse`,
/// kept in their own order) and the rest, told together, where there are more than
/// `MAX_DEVICE_FINDINGS`.
fn fold_devices<T>(
    devices: Vec<T>,
    worse: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> (Vec<T>, Vec<T>) {
    if devices.len() <= MAX_DEVICE_FINDINGS {
        return (devices, Vec::new());
    }
    let mut order: Vec<usize> = (0..devices.len()).collect();
    order.sort_by(|&a, &b| worse(&devices[a], &devices[b]).then(a.cmp(&b)));
    let mut one = vec![false; devices.len()];
    for &k in &order[..MAX_DEVICE_FINDINGS - 1] {
        one[k] = true;
    }
    let (mut kept, mut rest) = (Vec::new(), Vec::new());
    for (k, d) in devices.into_iter().enumerate() {
        if one[k] {
            kept.push(d);
        } else {
            rest.push(d);
        }
    }
    (kept, rest)
}

/// The first three of `names` and how many more: "GPU 3, GPU 7, GPU 9 and 41 more".
fn some_of(names: impl Iterator<Item = String>, n: usize) -> String {
    let first: Vec<String> = names.take(3).collect();
    match n.saturating_sub(first.len()) {
        0 => first.join(", "),
        more => format!("{} and {more} more", first.join(", ")),
    }
}

/// A device's idle share of its window from which it may be starved.
const STARVED_IDLE_SHARE: f64 = 0.10;
/// The share of that idle time spent waiting for the host from which it is.
const STARVED_HOST_SHARE: f64 = 0.50;

pub(crate) const GPU_STARVED_BY_CPU: Rule = Rule {
    id: "gpu_starved_by_cpu",
    theme: Theme::Device,
    severity: Severity::Warning,
    recording: false,
    meaning: "the device waits for the host, naming what the CPU was doing",
    fires: "a device idle {idle} of its window or more, {host} of it or more waiting for the \
            host (gaps whose launch came after the gap began); one finding per device for at \
            most {devices} devices, any more in one",
    whatif: "the named host work made free: up to three of `DataLoader=0`, \
             `untraced=0`, `syncs=0`, `launches=0`, the copies, allocator calls or operators as \
             `cpu:` edits",
    pricing: Pricing::Bound,
    thresholds: &[
        Threshold::new("idle", Value::Share(STARVED_IDLE_SHARE)),
        Threshold::new("host", Value::Share(STARVED_HOST_SHARE)),
        Threshold::new("devices", Value::Count(MAX_DEVICE_FINDINGS)),
    ],
};

/// Whether `gpu_starved_by_cpu` fires on a device: idle time it can price.
fn starved(d: &idle::DeviceIdle) -> bool {
    share(d.idle_ns, d.window_ns) >= STARVED_IDLE_SHARE
        && share(d.host_wait_ns, d.idle_ns) >= STARVED_HOST_SHARE
}

/// Kernel utilization over the steps under which a device is idle much of them.
const LOW_UTILIZATION: f64 = 0.50;
/// Under this, the finding is critical.
const VERY_LOW_UTILIZATION: f64 = 0.20;

pub(crate) const LOW_GPU_UTILIZATION: Rule = Rule {
    id: "low_gpu_utilization",
    theme: Theme::Device,
    severity: Severity::Warning,
    recording: false,
    meaning: "a device idle much of the steps",
    fires: "kernel utilization over the steps under {low} (critical under {critical}), the device \
            not starved by the host (then `gpu_starved_by_cpu` says it); one finding per device \
            for at most {devices} devices, any more in one",
    whatif: "the waits' work made free, launches batched included",
    pricing: Pricing::Bound,
    thresholds: &[
        Threshold::new("low", Value::Share(LOW_UTILIZATION)),
        Threshold::new("critical", Value::Share(VERY_LOW_UTILIZATION)),
        Threshold::new("devices", Value::Count(MAX_DEVICE_FINDINGS)),
    ],
};

/// [`LOW_GPU_UTILIZATION`]. Where the device mostly waits for the host, this is context under
/// `gpu_starved_by_cpu`, which says it and prices the host work; elsewhere its what-if makes the waits' work free, the device's own
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
    // The least busy device the rule judges (a starved one is `gpu_starved_by_cpu`'s).
    if let Some(least) = steps
        .gpu
        .iter()
        .filter(|g| !starving.contains(&g.device))
        .map(|g| g.utilization)
        .reduce(f64::min)
    {
        cx.measure(&LOW_GPU_UTILIZATION, "low", Value::Share(least));
    }
    let low: Vec<&crate::analysis::steps::DeviceUtilization> = steps
        .gpu
        .iter()
        .filter(|g| g.utilization < LOW_UTILIZATION && !starving.contains(&g.device))
        .collect();
    let severity = |u: f64| {
        if u < VERY_LOW_UTILIZATION {
            Severity::Critical
        } else {
            LOW_GPU_UTILIZATION.severity
        }
    };
    let (each, rest) = fold_devices(low, |a, b| a.utilization.total_cmp(&b.utilization));
    for g in each {
        let gaps: Vec<&idle::Gap> = idle.gaps.iter().filter(|x| x.device == g.device).collect();
        out.push(Finding {
            id: LOW_GPU_UTILIZATION.id,
            whatif: whatif.clone(),
            severity: severity(g.utilization),
            title: format!(
                "{} is busy only {} of the steps' span",
                device_name(trace, g.device),
                pct(g.utilization)
            ),
            detail: format!(
                "Kernels ran {} of the {} spanned by the steps on {} ({} utilization).",
                duration(g.kernel_ns),
                duration(g.span_ns),
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
    if let Some(busiest) = rest.iter().map(|g| g.utilization).reduce(f64::max) {
        let least = rest.iter().map(|g| g.utilization).fold(busiest, f64::min);
        let devices = some_of(
            rest.iter()
                .map(|g| device_name(trace, g.device).to_string()),
            rest.len(),
        );
        out.push(Finding {
            id: LOW_GPU_UTILIZATION.id,
            whatif,
            severity: severity(least),
            title: format!(
                "{} more devices are busy only {} to {} of the steps' span",
                rest.len(),
                pct(least),
                pct(busiest)
            ),
            detail: format!(
                "Kernels ran under {} of the steps' span on {devices}.",
                pct(LOW_UTILIZATION)
            ),
            advice: "See where they wait (sightline idle): feed them faster, batch more work \
                     per step."
                .into(),
            evidence: Evidence::default(),
        });
    }
    out
}

/// Communication's share of step time above which it is heavy.
const COMMUNICATION_SHARE: f64 = 0.10;

pub(crate) const COMMUNICATION_HEAVY: Rule = Rule {
    id: "communication_heavy",
    theme: Theme::Device,
    severity: Severity::Warning,
    recording: false,
    meaning: "communication not hidden behind computation",
    fires: "Communication over {share} of step time",
    whatif: "`communication=0`",
    pricing: Pricing::Fix,
    thresholds: &[Threshold::new("share", Value::Share(COMMUNICATION_SHARE))],
};

/// [`COMMUNICATION_HEAVY`].
pub(crate) fn communication_heavy(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let c = &cx.census;
    let step_total = cx.step_total;
    let mut out = Vec::new();
    let comm = share(steps.total.communication_ns, step_total);
    if steps.total.communication_ns > 0 {
        cx.measure(&COMMUNICATION_HEAVY, "share", Value::Share(comm));
    }
    if comm > COMMUNICATION_SHARE && cx.steps.devices_without_events.is_empty() {
        out.push(Finding {
            id: COMMUNICATION_HEAVY.id,
            severity: COMMUNICATION_HEAVY.severity,
            whatif: vec!["communication=0".into()],
            title: "Communication takes a large share of each step".into(),
            detail: format!(
                "Communication not hidden behind computation took {} of {} of step time ({}).",
                duration(steps.total.communication_ns),
                duration(step_total),
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

/// [`GPU_STARVED_BY_CPU`].
pub(crate) fn gpu_starved_by_cpu(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let idle = cx.idle;
    let mut out = Vec::new();
    // Each device's figures over the steps, by device (not a scan of them for each device).
    let utilization: rustc_hash::FxHashMap<i64, &crate::analysis::steps::DeviceUtilization> =
        cx.steps.gpu.iter().map(|g| (g.device, g)).collect();
    let whatif = waits_made_free(idle, false);
    let starving: Vec<&idle::DeviceIdle> = idle.devices.iter().filter(|d| starved(d)).collect();
    // The devices that waited longest for the host one by one.
    let (each, rest) = fold_devices(starving, |a, b| b.host_wait_ns.cmp(&a.host_wait_ns));
    for d in each {
        let idle_share = share(d.idle_ns, d.window_ns);
        let host_share = share(d.host_wait_ns, d.idle_ns);
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
            .map(|w| format!("{} ({})", w.kind.phrase(), duration(w.ns)))
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
            id: GPU_STARVED_BY_CPU.id,
            severity: GPU_STARVED_BY_CPU.severity,
            whatif: whatif.clone(),
            title: format!("{} waits for the CPU", device_name(trace, d.device)),
            detail: format!(
                "{} was idle {} of its {} window ({}), and {} of that idle time it waited for \
                 the host to launch work; meanwhile the CPU was in {}.",
                device_name(trace, d.device),
                duration(d.idle_ns),
                duration(d.window_ns),
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
    if !rest.is_empty() {
        let waited: i64 = rest.iter().map(|d| d.host_wait_ns).sum();
        let devices = some_of(
            rest.iter()
                .map(|d| device_name(trace, d.device).to_string()),
            rest.len(),
        );
        out.push(Finding {
            id: GPU_STARVED_BY_CPU.id,
            severity: GPU_STARVED_BY_CPU.severity,
            whatif,
            title: format!("{} more devices wait for the CPU", rest.len()),
            detail: format!(
                "{devices} were idle at least {} of their windows, mostly waiting for the host to \
                 launch work ({} in all).",
                pct(STARVED_IDLE_SHARE),
                duration(waited)
            ),
            advice: "Take the CPU work they wait for off the critical path (sightline idle names \
                     it): a faster input pipeline, fewer synchronizations."
                .into(),
            evidence: Evidence::default(),
        });
    }
    out
}
