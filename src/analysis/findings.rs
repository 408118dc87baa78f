//! Findings: what is worth telling about a trace, each with its numbers, advice, and the evidence
//! (slices and time ranges) a viewer can jump to.
//!
//! Rules and thresholds (from the profiling guides and the TensorBoard plugin's recommendations):
//! - `device_events_lost`: a truncated trace whose `deviceProperties` list devices that have no
//!   event left (Kineto writes device events after the host's); the rules that weigh host time
//!   against device time (`cpu_copy_overhead`, `communication_heavy`) are then not run.
//! - `no_cpu_activity`: device ops but no CPU operators (`cpu_op`), annotations (`user_annotation`)
//!   or Python frames (recorded with `activities=[CUDA]` only). Runtime and driver calls do not count:
//!   PyTorch puts `CUDA_RUNTIME` and `CUDA_DRIVER` in both its CPU and its CUDA activity sets
//!   (`kineto_shim.cpp`), so a CUDA-only trace still holds them.
//! - `no_input_shapes`: operators, none with `Input Dims` (`record_shapes` off).
//! - `memory_profiling_on`: `[memory]` events present (`profile_memory=True`, ~15-20% overhead).
//! - `no_python_stack`: operators but no `python_function` frames (`with_stack` off).
//! - `few_active_steps`: fewer than 5 `ProfilerStep#N` (none at all included).
//! - `warmup_outlier`: with 3 steps or more, one of the first two lasts at least 1.5x the median.
//! - `dataloader_bound`: DataLoader time over 5% of step time.
//! - `pageable_memcpy`: `Memcpy HtoD (Pageable -> Device)` (or `Device -> Pageable`) copies.
//! - `cpu_copy_overhead`: CPU Exec over 30% of step time and `aten::copy_`/`to`/`_to_copy`/`contiguous`
//!   high in self CPU time: together at least 5% of the operators' self time, and among the top 5
//!   when set against each other operator name.
//! - `low_gpu_utilization`: a device's kernel utilization over the steps under 50% (critical under 20%).
//! - `communication_heavy`: Communication over 10% of step time.
//! - `memory_near_capacity`: a device's peak allocated or reserved memory over 90% of its memory.
//! - `memory_growth`: a device's allocated floor rises step over step ([`super::memory::growth`]).
//! - `low_gemm_efficiency`, `small_kernels`, `fp32_gemm_on_tensor_core_gpu`: from the roofline
//!   ([`super::flops::rules`]).
//! - `gpu_starved_by_cpu`: a device idle at least 10% of its window, at least half of it waiting for the
//!   host (gaps whose launch came after the gap began), naming what the CPU was doing.
//!
//! Advice names only APIs the trace's device has ([`super::backend`]): CUDA graphs on CUDA, HIP
//! graphs through `torch.cuda` on ROCm, none on MTIA or XPU.

use super::backend;
use super::idle::{self, IdleOptions, IdleReport, WaitKind};
use super::links::{Kind, Links};
use super::slicing::{self, block_on, Slicer, LOOKUP};
use super::steps::{self, StepsReport};
use super::summary::device_name;
use crate::model::{SliceRef, Slices, Trace};
use serde::Serialize;
use std::cmp::Reverse;

pub const MIN_ACTIVE_STEPS: usize = 5;
pub const WARMUP_RATIO: f64 = 1.5;
pub const DATALOADER_SHARE: f64 = 0.05;
pub const CPU_EXEC_SHARE: f64 = 0.30;
pub const COPY_SELF_SHARE: f64 = 0.05;
pub const COPY_TOP_RANK: usize = 5;
pub const LOW_UTILIZATION: f64 = 0.50;
pub const VERY_LOW_UTILIZATION: f64 = 0.20;
pub const COMMUNICATION_SHARE: f64 = 0.10;
pub const MEMORY_SHARE: f64 = 0.90;
pub const STARVED_IDLE_SHARE: f64 = 0.10;
pub const STARVED_HOST_SHARE: f64 = 0.50;

/// At most this many slices and ranges per finding.
const MAX_EVIDENCE: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub id: &'static str,
    pub severity: Severity,
    pub title: String,
    /// A sentence with the numbers.
    pub detail: String,
    pub advice: String,
    pub evidence: Evidence,
}

/// What the viewer can jump to.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    pub slices: Vec<SliceRef>,
    pub ranges: Vec<TimeRange>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct TimeRange {
    pub start_ns: i64,
    pub end_ns: i64,
}

fn ms(ns: i64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn share(a: i64, b: i64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

/// Everything at once: links, steps, idle (exact) and the findings.
pub fn analyze(trace: &Trace) -> Vec<Finding> {
    let links = Links::build(trace);
    let steps = steps::analyze_with(trace, &links);
    let idle = idle::analyze_with(trace, &links, &IdleOptions::default());
    analyze_with(trace, &links, &steps, &idle)
}

pub fn analyze_with(
    trace: &Trace,
    links: &Links,
    steps: &StepsReport,
    idle: &IdleReport,
) -> Vec<Finding> {
    let flops = super::flops::Flops::build(trace, links);
    analyze_with_flops(trace, links, steps, idle, &flops)
}

/// [`analyze_with`] given the FLOPs too (a page keeps them for its roofline).
pub fn analyze_with_flops(
    trace: &Trace,
    links: &Links,
    steps: &StepsReport,
    idle: &IdleReport,
    flops: &super::flops::Flops,
) -> Vec<Finding> {
    let y = &mut Slicer::never();
    block_on(analyze_sliced(trace, links, steps, idle, flops, y))
}

/// [`analyze_with_flops`] pausing as `y` says (see [`super::slicing`]).
pub async fn analyze_sliced(
    trace: &Trace,
    links: &Links,
    steps: &StepsReport,
    idle: &IdleReport,
    flops: &super::flops::Flops,
    y: &mut Slicer,
) -> Vec<Finding> {
    let c = Census::new(trace, links, y).await;
    let mut out = Vec::new();
    let step_total = steps.total.total_ns();
    let step_ranges = || -> Vec<TimeRange> {
        steps
            .steps
            .iter()
            .map(|s| TimeRange {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
            })
            .take(MAX_EVIDENCE)
            .collect()
    };
    let step_slices = || -> Vec<SliceRef> {
        steps
            .steps
            .iter()
            .filter_map(|s| s.slice)
            .take(MAX_EVIDENCE)
            .collect()
    };

    // A cut trace whose listed devices lost every event (Kineto writes them last) holds the
    // host's side only: its shares of host against device time would blame the CPU for all of it.
    let lost = &steps.devices_without_events;
    if !lost.is_empty() {
        out.push(Finding {
            id: "device_events_lost",
            severity: Severity::Critical,
            title: format!(
                "The trace is cut short: its {} listed {} no events left",
                lost.len(),
                if lost.len() == 1 {
                    "device has"
                } else {
                    "devices have"
                }
            ),
            detail: format!(
                "The file ends after {:.1} MB of JSON, {:.3} ms into the trace. The profiler \
                 writes device events after the host's, so {} lost all of theirs: no figure \
                 here compares host time with device time, and the step breakdown counts the \
                 host only.",
                trace.stats.json_bytes as f64 / 1e6,
                trace.span_ns() as f64 / 1e6,
                lost.join(", ")
            ),
            advice: "Record the trace again and let the profiler finish writing it (the process \
                     was stopped, or the disk filled, while it wrote); or open a complete copy."
                .into(),
            evidence: Evidence::default(),
        });
    }
    if c.gpu_ops > 0 && c.cpu_events == 0 {
        out.push(Finding {
            id: "no_cpu_activity",
            severity: Severity::Warning,
            title: "No CPU operators recorded".into(),
            detail: format!(
                "The trace has {} device ops{} but no CPU operators (cpu_op), record_function labels \
                 or Python frames: it was recorded with only the device activity. So there are no \
                 operator names, input shapes or labels, nothing says which operator launched which \
                 kernel, and the operator table lists only runtime calls: device time cannot be \
                 charged to the code that caused it.",
                c.gpu_ops,
                if c.runtime_calls > 0 {
                    format!(" and {} runtime/driver calls", c.runtime_calls)
                } else {
                    String::new()
                }
            ),
            advice: format!(
                "Profile with activities=[ProfilerActivity.CPU, {}] (and record_shapes=True for \
                 shapes) so operators and labels are recorded.",
                backend::profiler_activity(trace)
            ),
            evidence: Evidence {
                ranges: idle
                    .devices
                    .iter()
                    .map(|d| TimeRange {
                        start_ns: d.start_ns,
                        end_ns: d.end_ns,
                    })
                    .collect(),
                ..Default::default()
            },
        });
    }
    if c.cpu_ops > 0 && c.with_shapes == 0 {
        out.push(Finding {
            id: "no_input_shapes",
            severity: Severity::Info,
            title: "Input shapes were not recorded".into(),
            detail: format!(
                "None of the {} operators has Input Dims: record_shapes was off, so operators cannot \
                 be grouped by shape and shape-driven copies cannot be told apart.",
                c.cpu_ops
            ),
            advice: "Profile with record_shapes=True when looking for shape-dependent costs.".into(),
            evidence: Evidence {
                slices: c.first_ops.clone(),
                ..Default::default()
            },
        });
    }
    if !trace.memory.is_empty() {
        let m = &trace.memory;
        out.push(Finding {
            id: "memory_profiling_on",
            severity: Severity::Info,
            title: "Memory profiling was on".into(),
            detail: format!(
                "{} [memory] events: profile_memory=True adds roughly 15-20% overhead to the timings.",
                m.len()
            ),
            advice: "Turn profile_memory off when only timing matters; profile memory in a \
                     separate run."
                .into(),
            evidence: Evidence {
                ranges: vec![TimeRange {
                    start_ns: m.ts_ns[0],
                    end_ns: m.ts_ns[m.len() - 1],
                }],
                ..Default::default()
            },
        });
    }
    if c.cpu_ops > 0 && c.python == 0 {
        out.push(Finding {
            id: "no_python_stack",
            severity: Severity::Info,
            title: "No Python call stacks".into(),
            detail: format!(
                "{} operators and no python_function frames: with_stack was off, so an operator \
                 cannot be traced back to the Python line that called it.",
                c.cpu_ops
            ),
            advice: "Profile with with_stack=True to see which Python code issues each operator."
                .into(),
            evidence: Evidence::default(),
        });
    }
    let n_steps = if steps.synthetic {
        0
    } else {
        steps.steps.len()
    };
    if n_steps < MIN_ACTIVE_STEPS && c.cpu_events + c.gpu_ops > 0 {
        let detail = if n_steps == 0 {
            "The trace has no ProfilerStep#N: it was not recorded with a schedule and prof.step(), \
             so per-step figures stand for the whole trace."
                .to_string()
        } else {
            format!(
                "Only {n_steps} active step(s) were recorded (fewer than {MIN_ACTIVE_STEPS}): step \
                 statistics and averages rest on too few samples."
            )
        };
        out.push(Finding {
            id: "few_active_steps",
            severity: Severity::Warning,
            title: "Few active steps".into(),
            detail,
            advice: "Use schedule(wait=1, warmup=2, active=5) (or more active steps) and call \
                     prof.step() every iteration."
                .into(),
            evidence: Evidence {
                slices: step_slices(),
                ranges: step_ranges(),
            },
        });
    }
    if !steps.synthetic && steps.steps.len() >= 3 {
        let median = steps.stats.median_ns;
        if let Some(f) = steps
            .stats
            .first
            .iter()
            .take(2)
            .zip(&steps.steps)
            .filter(|(f, _)| f.vs_median >= WARMUP_RATIO)
            .max_by(|a, b| a.0.vs_median.total_cmp(&b.0.vs_median))
        {
            let (first, step) = f;
            out.push(Finding {
                id: "warmup_outlier",
                severity: Severity::Warning,
                title: "A first step is much slower than the others".into(),
                detail: format!(
                    "{} took {}, {:.1}x the median step ({}): warm-up work ({}) falls inside the \
                     recorded window.",
                    first.name,
                    ms(first.dur_ns),
                    first.vs_median,
                    ms(median as i64),
                    backend::warmup_work(backend::of_trace(trace))
                ),
                advice: "Skip warm-up iterations with schedule(wait=1, warmup=2, ...) so that the \
                         active steps show the steady state."
                    .into(),
                evidence: Evidence {
                    slices: step.slice.into_iter().collect(),
                    ranges: vec![TimeRange {
                        start_ns: step.start_ns,
                        end_ns: step.end_ns,
                    }],
                },
            });
        }
    }
    let dl = share(steps.total.dataloader_ns, step_total);
    if dl > DATALOADER_SHARE {
        let waited = idle
            .waits
            .iter()
            .filter(|w| matches!(w.kind, WaitKind::DataLoader | WaitKind::Collate))
            .map(|w| w.ns)
            .sum::<i64>();
        let also = if waited > 0 {
            format!(
                "; the {} sat idle {} waiting for it",
                idle.device_word,
                ms(waited)
            )
        } else {
            String::new()
        };
        out.push(Finding {
            id: "dataloader_bound",
            severity: Severity::Warning,
            title: "Input loading takes a large share of each step".into(),
            detail: format!(
                "The DataLoader took {} of {} of step time ({}, over {} calls){also}.",
                ms(steps.total.dataloader_ns),
                ms(step_total),
                pct(dl),
                c.dataloader.len()
            ),
            advice: "Use DataLoader(num_workers>0, pin_memory=True, persistent_workers=True, \
                     prefetch_factor), and move decoding and augmentation out of the main process."
                .into(),
            evidence: evidence_of(trace, &c.dataloader),
        });
    }
    if !c.pageable.is_empty() {
        let total: i64 = c.pageable.iter().map(|&r| dur(trace, r)).sum();
        out.push(Finding {
            id: "pageable_memcpy",
            severity: Severity::Warning,
            title: "Copies from pageable host memory".into(),
            detail: format!(
                "{} host-device copies ({} on the {}) used pageable memory: they go through a \
                 staging buffer and cannot overlap with compute.",
                c.pageable.len(),
                ms(total),
                idle.device_word
            ),
            advice: "Pin host memory: DataLoader(pin_memory=True) or tensor.pin_memory(), then \
                     .to(device, non_blocking=True)."
                .into(),
            evidence: evidence_of(trace, &c.pageable),
        });
    }
    let cpu_exec = share(steps.total.cpu_exec_ns, step_total);
    if cpu_exec > CPU_EXEC_SHARE && lost.is_empty() {
        let copies = copy_self_time(trace, links, y).await;
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
    for g in &steps.gpu {
        if g.utilization < LOW_UTILIZATION {
            let gaps: Vec<&idle::Gap> = idle.gaps.iter().filter(|x| x.device == g.device).collect();
            out.push(Finding {
                id: "low_gpu_utilization",
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
                    backend::fewer_launches(backend::of_device(trace, g.device))
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
    let comm = share(steps.total.communication_ns, step_total);
    if comm > COMMUNICATION_SHARE && lost.is_empty() {
        out.push(Finding {
            id: "communication_heavy",
            severity: Severity::Warning,
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
    for d in &trace.meta.device_properties {
        let Some(cap) = d.total_global_mem.filter(|&m| m > 0) else {
            continue;
        };
        let m = &trace.memory;
        let peak = (0..m.len())
            .filter(|&i| m.device_type[i] == 1 && i64::from(m.device_id[i]) == d.id)
            .max_by_key(|&i| (m.total_allocated[i].max(m.total_reserved[i]), Reverse(i)));
        let Some(i) = peak else { continue };
        let used = m.total_allocated[i].max(m.total_reserved[i]);
        let s = share(used, cap as i64);
        if s > MEMORY_SHARE {
            let lane = m.lane[i];
            let slice = (lane != u32::MAX)
                .then(|| {
                    crate::parse::enclosing_slice(&trace.lanes[lane as usize].slices, m.ts_ns[i])
                        .map(|index| SliceRef {
                            lane,
                            index: index as u32,
                        })
                })
                .flatten();
            out.push(Finding {
                id: "memory_near_capacity",
                severity: if s > 0.97 {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                title: format!("{} memory is nearly full", device_name(trace, d.id)),
                detail: format!(
                    "Memory use peaked at {:.2} GB (allocated {:.2} GB, reserved {:.2} GB) of the \
                     {:.2} GB of {} ({}).",
                    used as f64 / 1e9,
                    m.total_allocated[i] as f64 / 1e9,
                    m.total_reserved[i] as f64 / 1e9,
                    cap as f64 / 1e9,
                    device_name(trace, d.id),
                    pct(s)
                ),
                advice: format!(
                    "Reduce peak memory (smaller batch, activation checkpointing, mixed \
                     precision){}; an out-of-memory error is one step away.",
                    backend::allocator_setting(backend::of_device(trace, d.id))
                ),
                evidence: Evidence {
                    slices: slice.into_iter().collect(),
                    ranges: vec![TimeRange {
                        start_ns: m.ts_ns[i],
                        end_ns: m.ts_ns[i],
                    }],
                },
            });
        }
    }
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
                backend::against_launch_overhead(backend::of_device(trace, d.device))
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
    if !trace.memory.is_empty() {
        let memory = super::memory::Memory::series(trace);
        out.extend(super::memory::growth::findings(
            trace,
            links,
            &memory,
            &steps.steps,
        ));
    }
    out.extend(super::flops::rules::findings(trace, links, flops, y).await);
    out.sort_by_key(|f| Reverse(f.severity));
    out
}

fn dur(trace: &Trace, r: SliceRef) -> i64 {
    trace.lanes[r.lane as usize].slices.dur_ns[r.index as usize]
}

/// The longest of some slices, with their spans.
fn evidence_of(trace: &Trace, slices: &[SliceRef]) -> Evidence {
    let mut v: Vec<SliceRef> = slices.to_vec();
    v.sort_by_key(|&r| (Reverse(dur(trace, r)), r));
    v.truncate(MAX_EVIDENCE);
    let ranges = v
        .iter()
        .map(|&r| {
            let s = &trace.lanes[r.lane as usize].slices;
            TimeRange {
                start_ns: s.start_ns[r.index as usize],
                end_ns: s.end_ns(r.index as usize),
            }
        })
        .collect();
    Evidence { slices: v, ranges }
}

/// Counts and slices the rules look at, gathered in one pass.
struct Census {
    gpu_ops: usize,
    /// Operators, annotations and Python frames (not runtime calls: see `no_cpu_activity`).
    cpu_events: usize,
    runtime_calls: usize,
    cpu_ops: usize,
    with_shapes: usize,
    python: usize,
    first_ops: Vec<SliceRef>,
    dataloader: Vec<SliceRef>,
    pageable: Vec<SliceRef>,
    comm_kernels: Vec<SliceRef>,
}

impl Census {
    async fn new(trace: &Trace, links: &Links, y: &mut Slicer) -> Census {
        let mut c = Census {
            gpu_ops: 0,
            cpu_events: 0,
            runtime_calls: 0,
            cpu_ops: 0,
            with_shapes: 0,
            python: 0,
            first_ops: Vec::new(),
            dataloader: Vec::new(),
            pageable: Vec::new(),
            comm_kernels: Vec::new(),
        };
        for (li, l) in trace.lanes.iter().enumerate() {
            let s: &Slices = &l.slices;
            for i in 0..s.len() {
                // A device op's name is read.
                y.tick(if l.is_gpu() { LOOKUP } else { 1 }).await;
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                let kind = links.kinds.of_cat(s.cat[i]);
                if l.is_gpu() {
                    if kind.is_gpu_busy() {
                        c.gpu_ops += 1;
                        let name = trace.str(s.name[i]);
                        if kind == Kind::Memcpy && name.contains("Pageable") {
                            c.pageable.push(r);
                        }
                        if kind == Kind::Kernel
                            && idle::op_class(kind, name) == idle::OpClass::Communication
                        {
                            c.comm_kernels.push(r);
                        }
                    }
                    continue;
                }
                match kind {
                    Kind::CpuOp => {
                        c.cpu_ops += 1;
                        if !s.input_dims[i].is_none() {
                            c.with_shapes += 1;
                        }
                        if c.first_ops.len() < 3 {
                            c.first_ops.push(r);
                        }
                    }
                    Kind::Python => c.python += 1,
                    Kind::Annotation => {}
                    Kind::Runtime => {
                        c.runtime_calls += 1;
                        continue;
                    }
                    _ => continue,
                }
                c.cpu_events += 1;
                if matches!(kind, Kind::CpuOp | Kind::Annotation) {
                    let name = trace.str(s.name[i]);
                    if (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
                        || name.starts_with("enumerate(DataPipe)#")
                    {
                        c.dataloader.push(r);
                    }
                }
            }
        }
        c
    }
}

struct CopyTime {
    copy_self_ns: i64,
    total_self_ns: i64,
    calls: usize,
    /// Rank (1 = first) of the copies' summed self time among the other operator names' totals.
    rank: usize,
    /// The copies with the most self time.
    top: Vec<SliceRef>,
}

/// Self CPU time (duration minus direct children's) of the copy operators and of all operators.
async fn copy_self_time(trace: &Trace, links: &Links, y: &mut Slicer) -> CopyTime {
    let mut out = CopyTime {
        copy_self_ns: 0,
        total_self_ns: 0,
        calls: 0,
        rank: 0,
        top: Vec::new(),
    };
    let mut copies: Vec<(i64, SliceRef)> = Vec::new();
    let mut by_name: rustc_hash::FxHashMap<crate::model::StrId, i64> = Default::default();
    for (li, l) in trace.lanes.iter().enumerate() {
        if l.is_gpu() {
            continue;
        }
        let s = &l.slices;
        let parents = links.parents_of_lane(li);
        let mut self_ns: Vec<i64> = Vec::with_capacity(s.len());
        for &ns in &s.dur_ns {
            y.tick(1).await;
            self_ns.push(ns);
        }
        for (i, &p) in parents.iter().enumerate() {
            y.tick(1).await;
            if p != u32::MAX {
                self_ns[p as usize] -= s.dur_ns[i];
            }
        }
        for (i, &own) in self_ns.iter().enumerate() {
            y.tick(1).await;
            if links.kinds.of_cat(s.cat[i]) != Kind::CpuOp {
                continue;
            }
            let own = own.max(0);
            out.total_self_ns += own;
            if !matches!(
                trace.str(s.name[i]),
                "aten::copy_" | "aten::to" | "aten::_to_copy" | "aten::contiguous"
            ) {
                *by_name.entry(s.name[i]).or_default() += own;
            } else {
                out.copy_self_ns += own;
                out.calls += 1;
                copies.push((
                    own,
                    SliceRef {
                        lane: li as u32,
                        index: i as u32,
                    },
                ));
            }
        }
    }
    out.rank = 1 + by_name
        .values()
        .filter(|&&ns| ns > out.copy_self_ns)
        .count();
    slicing::sort_by_key(&mut copies, |&(ns, r)| (Reverse(ns), r), y).await;
    out.top = copies.into_iter().take(MAX_EVIDENCE).map(|c| c.1).collect();
    out
}
