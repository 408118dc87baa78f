//! Training steps: each `ProfilerStep#N` with the TensorBoard profiler plugin's breakdown of its time,
//! GPU utilization per device, and step statistics.
//!
//! Definitions (those of the plugin's Overview page, whose numbers users know):
//! - Steps are the `ProfilerStep#N` spans on CPU threads (`user_annotation` in 2.x, `cpu_op`/`Operator`
//!   in 1.x). Without any, one synthetic step covers the CPU span (operators and Python frames), or the
//!   GPU window for a trace without CPU events.
//! - A step owns the GPU ops launched by runtime calls lying wholly inside its CPU span. When GPU ops
//!   exist, a step is extended to the end of the last GPU op it launched, and starts no earlier than the
//!   previous step's (extended) end; the first starts no earlier than the end of GPU work launched
//!   before any step that finished before step 1's first GPU op. Trailing steps that launched nothing,
//!   or fewer than 80% of the GPU ops of the step before, are dropped as incompletely captured.
//! - Within each step, time is claimed in priority order: Kernel > Memcpy > Memset > Communication >
//!   Runtime > DataLoader > CPU Exec; each category gets only time no higher one claimed, and Other is
//!   the rest. Kernel = kernels except communication ones (names `^nccl|^rccl|^hccl|^hip`, `ncclKernel`),
//!   which count as Communication with CPU spans named `nccl:*`/`gloo:*`; Runtime = CUDA/HIP runtime and
//!   driver calls; DataLoader = `enumerate(DataLoader)#*.__next__` and `enumerate(DataPipe)#*`; CPU Exec
//!   = other operators, annotations (not the steps themselves) and Python frames.
//! - GPU utilization of a device = |union of its kernels within [first step start, last step end]| /
//!   that span. Over the same span, the plugin's `docs/gpu_utilization.md` figures: estimated SM
//!   efficiency (at each instant min(sum of the running kernels' `blocks per SM`, 1), averaged over
//!   the span), estimated achieved occupancy (weighted by kernel time) and the Tensor Core share of
//!   kernel time (CUDA only). Each step has the same figures over its own span.
//! - Statistics: mean, median, p90 (linear interpolation) of step lengths, and the first steps'
//!   lengths against the median. A step's length is its `ProfilerStep#N` span as PyTorch records
//!   it (`length_ns`), the one length every view uses; the plugin's span extended to the device
//!   work (`start_ns`..`end_ns`, `dur_ns`) is the breakdown's, shown beside it and labelled.

use super::columns::{Column, Row, Sort, Type, Unit, SLICE_REF};
use super::idle::{op_class, OpClass};
use super::links::{Kind, Kinds, Links};
use super::slicing::{self, block_on, Slicer};
use super::tables::kernels::uses_tensor_cores;
use crate::model::category::{is_dma_transfer, DeviceName};
use crate::model::{LaneKind, SliceRef, Trace};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepsReport {
    pub steps: Vec<Step>,
    /// True when the trace has no `ProfilerStep#N` and one step stands for the whole trace.
    pub synthetic: bool,
    /// Trailing steps dropped because their GPU work looks incompletely captured.
    pub dropped_tail_steps: usize,
    /// Sum over the steps.
    pub total: Breakdown,
    pub gpu: Vec<DeviceUtilization>,
    /// In a truncated trace, the listed devices with no events left
    /// ([`super::summary::devices_without_events`]): the breakdown then counts the host only.
    pub devices_without_events: Vec<String>,
    /// What the trace's devices are called in sentences: `GPU`, `MTIA`, `XPU`
    /// ([`super::summary::devices_word`]).
    pub device_word: String,
    pub stats: StepStats,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Step {
    pub name: String,
    /// N of `ProfilerStep#N`.
    pub number: Option<i64>,
    /// The `ProfilerStep#N` slice (none for a synthetic step).
    pub slice: Option<SliceRef>,
    pub cpu_start_ns: i64,
    pub cpu_end_ns: i64,
    /// The step's span after extension to its GPU work (the TensorBoard plugin's).
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_ns: i64,
    /// The step's length: its `ProfilerStep#N` span as PyTorch records it (the synthetic step's
    /// span where there is none). Every step length Sightline shows, its statistics, the
    /// critical path's window and the findings' shares, is this one; `dur_ns` is the plugin's.
    pub length_ns: i64,
    /// GPU ops launched inside the step.
    pub gpu_ops: usize,
    pub breakdown: Breakdown,
    /// Per device, the figures of [`StepsReport::gpu`] over this step's span.
    pub gpu: Vec<DeviceUtilization>,
}

impl Row for Step {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Step",
            Unit::Text,
            "`ProfilerStep#N`, or `(whole trace)` for the one step of a trace without any",
        ),
        Column::new("number", "Number", Unit::Count, "N of `ProfilerStep#N`"),
        Column::new(
            "slice",
            "Slice",
            Unit::Data,
            "The `ProfilerStep#N` slice (none for a synthetic step)",
        )
        .typed(SLICE_REF),
        Column::new(
            "cpu_start_ns",
            "CPU start",
            Unit::Ns,
            "Start of the step's CPU span, from the trace's start",
        ),
        Column::new(
            "cpu_end_ns",
            "CPU end",
            Unit::Ns,
            "End of the step's CPU span",
        ),
        Column::new(
            "start_ns",
            "Start",
            Unit::Ns,
            "Start of the step extended to its device work (the TensorBoard plugin's span)",
        ),
        Column::new(
            "end_ns",
            "End",
            Unit::Ns,
            "End of the step extended to its device work",
        ),
        Column::new(
            "dur_ns",
            "With device work",
            Unit::Ns,
            "The step extended to the device work it launched: the breakdown's span",
        ),
        Column::new(
            "length_ns",
            "Length",
            Unit::Ns,
            "The step's length: its `ProfilerStep#N` span as PyTorch records it",
        ),
        Column::new(
            "gpu_ops",
            "{device} ops",
            Unit::Count,
            "Device ops launched inside the step",
        ),
        Column::new(
            "breakdown",
            "Breakdown",
            Unit::Ns,
            "The span's time by category, each only what no category before it claimed",
        )
        .typed(Breakdown::TYPE)
        .parts(Breakdown::PARTS),
        Column::new(
            "gpu",
            "Per device",
            Unit::Data,
            "Per device, the report's `gpu` figures (utilization, estimates) over this step's span",
        )
        .typed(Type::List(&DEVICE_UTILIZATION)),
    ];
    const SORT: Sort = Sort::Smallest("cpu_start_ns");
}

/// A [`DeviceUtilization`] as its JSON holds it.
const DEVICE_UTILIZATION: Type = Type::Struct(&[
    ("device", Type::Int),
    ("name", Type::Str),
    ("kernel_ns", Type::Int),
    ("span_ns", Type::Int),
    ("utilization", Type::Float),
    ("est_sm_efficiency_pct", Type::Float),
    ("est_achieved_occupancy_pct", Type::Float),
    ("tensor_core_pct", Type::Float),
    ("matrix_units", Type::Str),
    ("window", Type::Str),
]);

/// Time of a span by category (priority order); the fields sum to the span's duration.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Breakdown {
    pub kernel_ns: i64,
    pub memcpy_ns: i64,
    pub memset_ns: i64,
    pub communication_ns: i64,
    pub runtime_ns: i64,
    pub dataloader_ns: i64,
    pub cpu_exec_ns: i64,
    pub other_ns: i64,
}

impl Breakdown {
    /// The categories as columns, in priority order (the fields' order), with the words the
    /// TensorBoard plugin heads them with.
    pub const PARTS: &'static [Column] = &[
        Column::new(
            "kernel_ns",
            "Kernel",
            Unit::Ns,
            "Kernels, communication ones aside",
        ),
        Column::new(
            "memcpy_ns",
            "Memcpy",
            Unit::Ns,
            "Device copies (MTIA's DMA transfers too)",
        ),
        Column::new("memset_ns", "Memset", Unit::Ns, "Device memsets"),
        Column::new(
            "communication_ns",
            "Communication",
            Unit::Ns,
            "Communication kernels and `nccl:*`/`gloo:*` CPU spans",
        ),
        Column::new(
            "runtime_ns",
            "Runtime",
            Unit::Ns,
            "CUDA/HIP runtime and driver calls",
        ),
        Column::new(
            "dataloader_ns",
            "DataLoader",
            Unit::Ns,
            "`enumerate(DataLoader)#*.__next__` and `enumerate(DataPipe)#*`",
        ),
        Column::new(
            "cpu_exec_ns",
            "CPU Exec",
            Unit::Ns,
            "Other operators, annotations and Python frames",
        ),
        Column::new("other_ns", "Other", Unit::Ns, "The rest of the span"),
    ];

    /// The JSON object of [`Breakdown::PARTS`].
    pub const TYPE: Type = Type::Struct(&[
        ("kernel_ns", Type::Int),
        ("memcpy_ns", Type::Int),
        ("memset_ns", Type::Int),
        ("communication_ns", Type::Int),
        ("runtime_ns", Type::Int),
        ("dataloader_ns", Type::Int),
        ("cpu_exec_ns", Type::Int),
        ("other_ns", Type::Int),
    ]);

    pub fn total_ns(&self) -> i64 {
        self.fields().iter().map(|f| f.1).sum()
    }

    /// (label, ns) in priority order.
    pub fn fields(&self) -> [(&'static str, i64); 8] {
        [
            ("Kernel", self.kernel_ns),
            ("Memcpy", self.memcpy_ns),
            ("Memset", self.memset_ns),
            ("Communication", self.communication_ns),
            ("Runtime", self.runtime_ns),
            ("DataLoader", self.dataloader_ns),
            ("CPU Exec", self.cpu_exec_ns),
            ("Other", self.other_ns),
        ]
    }

    fn add(&mut self, cat: usize, ns: i64) {
        match cat {
            0 => self.kernel_ns += ns,
            1 => self.memcpy_ns += ns,
            2 => self.memset_ns += ns,
            3 => self.communication_ns += ns,
            4 => self.runtime_ns += ns,
            5 => self.dataloader_ns += ns,
            6 => self.cpu_exec_ns += ns,
            _ => self.other_ns += ns,
        }
    }

    fn sum(&mut self, o: &Breakdown) {
        for (i, (_, ns)) in o.fields().iter().enumerate() {
            self.add(i, *ns);
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceUtilization {
    pub device: i64,
    /// `GPU 0`, `MTIA 0`, ... ([`super::summary::device_name`]).
    pub name: DeviceName,
    pub kernel_ns: i64,
    pub span_ns: i64,
    pub utilization: f64,
    /// The plugin's estimated SM efficiency over the span: at each instant min(sum of the running
    /// kernels' `blocks per SM`, 1), averaged over the whole span (idle counts 0), in percent;
    /// `None` when no kernel reports `blocks per SM`.
    pub est_sm_efficiency_pct: Option<f64>,
    /// `est. achieved occupancy %` of the kernels, weighted by their time within the span.
    pub est_achieved_occupancy_pct: Option<f64>,
    /// Share of kernel time (within the span) in kernels whose names say they use Tensor Cores
    /// (CUDA) or Matrix Cores (ROCm); `None` on other devices, where those names do not apply.
    pub tensor_core_pct: Option<f64>,
    /// What `tensor_core_pct` counts, in its maker's words: `Tensor Cores` on CUDA, `Matrix
    /// Cores` on ROCm, `None` where it is not given.
    pub matrix_units: Option<&'static str>,
    /// The window of `utilization` and the estimates ([`STEPS_WINDOW`] or [`STEP_WINDOW`]),
    /// unlike `idle`'s per-device window from the device's first op to its last (HTA's).
    pub window: &'static str,
}

#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepStats {
    pub count: usize,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub p90_ns: f64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// The first steps (up to 3) against the median.
    pub first: Vec<FirstStep>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FirstStep {
    pub name: String,
    pub dur_ns: i64,
    /// dur / median.
    pub vs_median: f64,
}

const CATEGORIES: usize = 7;

/// The window of the report's GPU figures: from the first step's start to the last one's end,
/// the TensorBoard plugin's.
pub const STEPS_WINDOW: &str = "steps";
/// The window of one step's GPU figures: that step.
pub const STEP_WINDOW: &str = "step";

/// A GPU op's start and end, and its launch's start and end when known.
type OpSpan = (i64, i64, Option<(i64, i64)>);

/// Category (priority index) of a kernel or a CPU operator, annotation or frame, by its name; None
/// for the steps themselves, which claim no time.
fn named_category(kind: Kind, name: &str) -> Option<usize> {
    if kind == Kind::Kernel {
        // MTIA's DMA transfers share its kernels' category: copies, as CUDA's `gpu_memcpy`.
        return Some(if is_dma_transfer(name) {
            1
        } else if op_class(kind, name) == OpClass::Communication {
            3
        } else {
            0
        });
    }
    if is_dataloader(name) {
        Some(5)
    } else if name.starts_with("ProfilerStep#") {
        None
    } else if name.starts_with("nccl:") || name.starts_with("gloo:") {
        Some(3)
    } else {
        Some(6)
    }
}

/// Whether a CPU span is the DataLoader's, whose time is the breakdown's DataLoader category.
pub fn is_dataloader(name: &str) -> bool {
    (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
        || name.starts_with("enumerate(DataPipe)#")
}

pub fn analyze(trace: &Trace) -> StepsReport {
    analyze_with(trace, &Links::build(trace))
}

pub fn analyze_with(trace: &Trace, links: &Links) -> StepsReport {
    block_on(analyze_sliced(trace, links, &mut Slicer::never()))
}

/// [`analyze_with`] pausing as `y` says (see [`super::slicing`]), in passes: the steps on
/// the host (`host_steps`), the device ops with their launches' spans (`device_ops`), one step
/// over the whole trace when there is none (`whole_trace_step`), each step's span extended to the
/// device work it launched (`step_spans`), the time breakdown of each span (`breakdowns`), the
/// steps' rows with their breakdowns' total (`step_rows`), then the device utilization of each
/// step and of all of them (`step_utilization`).
pub async fn analyze_sliced(trace: &Trace, links: &Links, y: &mut Slicer) -> StepsReport {
    let kinds = &links.kinds;
    let (mut host, cpu_span) = host_steps(trace, kinds, y).await;
    let synthetic = host.is_empty();
    let gpu_ops = device_ops(trace, links, y).await;
    if synthetic {
        host.extend(whole_trace_step(cpu_span, &gpu_ops));
    }
    let (spans, matched, dropped_tail_steps) = step_spans(&host, &gpu_ops, y).await;
    let breakdowns = breakdowns(trace, kinds, &spans, y).await;
    let (mut steps, total) = step_rows(trace, &host, synthetic, &spans, &matched, &breakdowns);
    let gpu = step_utilization(trace, links, &mut steps, &spans, synthetic, y).await;
    StepsReport {
        gpu,
        devices_without_events: super::summary::devices_without_events(trace),
        device_word: super::summary::devices_word(trace),
        stats: stats(&steps),
        steps,
        synthetic,
        dropped_tail_steps,
        total,
    }
}

/// The one step of a trace without `ProfilerStep#N`: over the CPU's span, else the device ops',
/// with no slice; none when the trace has neither.
fn whole_trace_step(
    cpu_span: Option<(i64, i64)>,
    gpu_ops: &[OpSpan],
) -> Option<(i64, i64, SliceRef)> {
    let span = cpu_span.or_else(|| {
        let first = gpu_ops.iter().map(|g| g.0).min();
        let last = gpu_ops.iter().map(|g| g.1).max();
        first.zip(last)
    });
    span.map(|(a, b)| {
        (
            a,
            b,
            SliceRef {
                lane: u32::MAX,
                index: u32::MAX,
            },
        )
    })
}

/// The steps kept (one per span), each with its name, spans, device ops and breakdown (`other_ns`
/// the rest of its span), and the sum of their breakdowns; device utilization is added later.
fn step_rows(
    trace: &Trace,
    host: &[(i64, i64, SliceRef)],
    synthetic: bool,
    spans: &[(i64, i64)],
    matched: &[usize],
    breakdowns: &[Breakdown],
) -> (Vec<Step>, Breakdown) {
    let n = spans.len();
    let mut steps = Vec::with_capacity(n);
    let mut total = Breakdown::default();
    for k in 0..n {
        let (start, end) = spans[k];
        let mut b = breakdowns[k];
        b.other_ns = (end - start) - b.total_ns();
        total.sum(&b);
        let slice = (!synthetic).then_some(host[k].2);
        let name = match slice {
            Some(r) => trace.slice_name(r).to_string(),
            None => "(whole trace)".to_string(),
        };
        let number = name
            .strip_prefix("ProfilerStep#")
            .and_then(|x| x.trim().parse().ok());
        steps.push(Step {
            name,
            number,
            slice,
            cpu_start_ns: host[k].0,
            cpu_end_ns: host[k].1,
            start_ns: start,
            end_ns: end,
            dur_ns: end - start,
            length_ns: if synthetic {
                end - start
            } else {
                host[k].1 - host[k].0
            },
            gpu_ops: matched[k],
            breakdown: b,
            gpu: Vec::new(),
        });
    }
    (steps, total)
}

/// The device utilization of each step (into its row; not for the synthetic step) and over all
/// the steps' spans (returned).
async fn step_utilization(
    trace: &Trace,
    links: &Links,
    steps: &mut [Step],
    spans: &[(i64, i64)],
    synthetic: bool,
    y: &mut Slicer,
) -> Vec<DeviceUtilization> {
    let kernels = device_kernels(trace, links, y).await;
    if !synthetic {
        for st in steps.iter_mut() {
            st.gpu = utilization(trace, &kernels, (st.start_ns, st.end_ns), STEP_WINDOW, y).await;
        }
    }
    match (spans.first(), spans.last()) {
        (Some(first), Some(last)) => {
            utilization(trace, &kernels, (first.0, last.1), STEPS_WINDOW, y).await
        }
        _ => Vec::new(),
    }
}

/// The `ProfilerStep#N` spans on the host (operators' and annotations' lanes), sorted, each once;
/// and the span of the CPU's work (operators, Python frames, the steps), if any.
async fn host_steps(
    trace: &Trace,
    kinds: &Kinds,
    y: &mut Slicer,
) -> (Vec<(i64, i64, SliceRef)>, Option<(i64, i64)>) {
    let mut host: Vec<(i64, i64, SliceRef)> = Vec::new();
    let (mut cpu_min, mut cpu_max) = (i64::MAX, i64::MIN);
    for (li, l) in trace.lanes.iter().enumerate() {
        if l.is_gpu() {
            continue;
        }
        let s = trace.slices_of(l);
        for i in 0..s.len() {
            y.tick(1).await;
            let kind = kinds.of_cat(s.cat[i]);
            if !matches!(kind, Kind::CpuOp | Kind::Annotation | Kind::Python) {
                continue;
            }
            let is_step = trace.str(s.name[i]).starts_with("ProfilerStep#");
            if kind != Kind::Annotation || is_step {
                cpu_min = cpu_min.min(s.start_ns[i]);
                cpu_max = cpu_max.max(s.end_ns(i));
            }
            if is_step && kind != Kind::Python {
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                host.push((s.start_ns[i], s.end_ns(i), r));
            }
        }
    }
    host.sort_by_key(|h| (h.0, h.1));
    host.dedup_by_key(|h| (h.0, h.1));
    (host, (cpu_min <= cpu_max).then_some((cpu_min, cpu_max)))
}

/// The device ops (kernels, memcpy, memset) with their launch's span, for the step matching.
async fn device_ops(trace: &Trace, links: &Links, y: &mut Slicer) -> Vec<OpSpan> {
    let kinds = &links.kinds;
    let mut gpu_ops: Vec<OpSpan> = Vec::new();
    for (li, l) in trace.gpu_lanes() {
        let s = trace.slices_of(l);
        for i in 0..s.len() {
            y.tick(1).await;
            if !kinds.of_cat(s.cat[i]).is_gpu_busy() {
                continue;
            }
            let r = SliceRef {
                lane: li as u32,
                index: i as u32,
            };
            let launch = links.launch(r).map(|x| {
                let ls = trace.slices(x.lane as usize);
                (ls.start_ns[x.index as usize], ls.end_ns(x.index as usize))
            });
            gpu_ops.push((s.start_ns[i], s.end_ns(i), launch));
        }
    }
    gpu_ops
}

/// Each step's span: its CPU span extended to the device ops it launched (by a runtime call
/// wholly inside it), from the end of the one before, as the TensorBoard plugin extends them.
/// Steps after the last that launched device ops are dropped, and that one too when it launched
/// fewer than 0.8 times the ops of the one before it. Returns the spans, each step's device ops
/// and how many steps were dropped.
async fn step_spans(
    host: &[(i64, i64, SliceRef)],
    gpu_ops: &[OpSpan],
    y: &mut Slicer,
) -> (Vec<(i64, i64)>, Vec<usize>, usize) {
    let n = host.len();
    let mut dev: Vec<(i64, i64)> = vec![(i64::MAX, i64::MIN); n];
    let mut matched = vec![0usize; n];
    let mut unmatched_ends: Vec<i64> = Vec::new();
    for &(start, end, launch) in gpu_ops {
        y.tick(1).await;
        let step = launch.and_then(|(ls, le)| {
            let k = host.partition_point(|h| h.0 <= ls);
            (k > 0 && le <= host[k - 1].1).then(|| k - 1)
        });
        match step {
            Some(k) => {
                dev[k].0 = dev[k].0.min(start);
                dev[k].1 = dev[k].1.max(end);
                matched[k] += 1;
            }
            None => unmatched_ends.push(end),
        }
    }
    let mut spans: Vec<(i64, i64)> = host.iter().map(|h| (h.0, h.1)).collect();
    let mut dropped_tail_steps = 0;
    if matched.iter().any(|&m| m > 0) {
        let mut prev = host[0].0;
        if matched[0] > 0 {
            for &e in &unmatched_ends {
                if e < dev[0].0 {
                    prev = prev.max(e);
                }
            }
        }
        for k in 0..n {
            let start = prev.max(host[k].0);
            let mut end = host[k].1;
            if matched[k] > 0 {
                end = end.max(dev[k].1);
            }
            end = end.max(start);
            spans[k] = (start, end);
            prev = end;
        }
        if n > 1 {
            if let Some(last) = (0..n).rev().find(|&k| matched[k] > 0) {
                let mut keep = last + 1;
                if last > 0 && matched[last - 1] as f64 * 0.8 > matched[last] as f64 {
                    keep = last;
                }
                dropped_tail_steps = n - keep;
                spans.truncate(keep);
            }
        }
    }
    (spans, matched, dropped_tail_steps)
}

/// The time breakdown of each span: each instant charged to the highest-priority category busy
/// then (kernel, memcpy, memset, communication, runtime, dataloader, CPU exec; `other_ns` is
/// left to the caller).
async fn breakdowns(
    trace: &Trace,
    kinds: &Kinds,
    spans: &[(i64, i64)],
    y: &mut Slicer,
) -> Vec<Breakdown> {
    let n = spans.len();
    // Category unions, then one sweep assigning each instant to its highest-priority category.
    let mut unions: Vec<Vec<(i64, i64)>> = vec![Vec::new(); CATEGORIES];
    // Category by name, for CPU spans [0] and kernels [1]; u8::MAX = not computed yet.
    let mut cat_of_name: Vec<[u8; 2]> = vec![[u8::MAX; 2]; trace.strings.len()];
    for l in &trace.lanes {
        let s = trace.slices_of(l);
        let on_gpu = l.is_gpu();
        let mut open: [Option<(i64, i64)>; CATEGORIES] = [None; CATEGORIES];
        for i in 0..s.len() {
            y.tick(1).await;
            let kind = kinds.of_cat(s.cat[i]);
            let c = match (kind, on_gpu) {
                (Kind::Memcpy, true) => 1,
                (Kind::Memset, true) => 2,
                (Kind::Runtime, false) => 4,
                (Kind::Kernel, true) | (Kind::CpuOp | Kind::Annotation | Kind::Python, false) => {
                    let slot = &mut cat_of_name[s.name[i].0 as usize][usize::from(on_gpu)];
                    if *slot == u8::MAX {
                        *slot = named_category(kind, trace.str(s.name[i]))
                            .map_or(CATEGORIES as u8, |c| c as u8);
                    }
                    if *slot as usize >= CATEGORIES {
                        continue;
                    }
                    *slot as usize
                }
                _ => continue,
            };
            let (a, b) = (s.start_ns[i], s.end_ns(i));
            match &mut open[c] {
                Some(cur) if a <= cur.1 => cur.1 = cur.1.max(b),
                slot => {
                    if let Some(done) = slot.replace((a, b)) {
                        unions[c].push(done);
                    }
                }
            }
        }
        for (c, o) in open.into_iter().enumerate() {
            if let Some(done) = o {
                unions[c].push(done);
            }
        }
    }
    let mut events: Vec<(i64, u8, bool)> = Vec::new();
    for (c, list) in unions.iter_mut().enumerate() {
        *list = merge(std::mem::take(list), y).await;
        // Zero-length spans claim no time (and would close before they open in the sweep).
        for &(a, b) in list.iter().filter(|(a, b)| b > a) {
            events.push((a, c as u8, true));
            events.push((b, c as u8, false));
        }
    }
    // The sweep below reads the events of one instant in any order.
    slicing::sort_by_key(&mut events, |e| (e.0, e.2), y).await;
    let mut breakdowns = vec![Breakdown::default(); n];
    let mut active = [0u32; CATEGORIES];
    let mut si = 0;
    let mut prev_t = i64::MIN;
    for &(t, c, start) in &events {
        y.tick(1).await;
        if prev_t != i64::MIN && t > prev_t {
            if let Some(w) = active.iter().position(|&x| x > 0) {
                while si < n && spans[si].1 <= prev_t {
                    si += 1;
                }
                let mut j = si;
                while j < n && spans[j].0 < t {
                    let overlap = t.min(spans[j].1) - prev_t.max(spans[j].0);
                    if overlap > 0 {
                        breakdowns[j].add(w, overlap);
                    }
                    j += 1;
                }
            }
        }
        prev_t = t;
        if start {
            active[c as usize] += 1;
        } else {
            active[c as usize] -= 1;
        }
    }
    breakdowns
}

/// Sorts and merges intervals into disjoint ones.
async fn merge(mut v: Vec<(i64, i64)>, y: &mut Slicer) -> Vec<(i64, i64)> {
    slicing::sort_by_key(&mut v, |e| *e, y).await;
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        y.tick(1).await;
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// A kernel as the plugin's GPU figures read it.
#[derive(Clone, Copy)]
struct DeviceKernel {
    start_ns: i64,
    end_ns: i64,
    /// `blocks per SM`, when positive (the plugin skips the others).
    blocks_per_sm: Option<f64>,
    /// `est. achieved occupancy %`, when not negative.
    occupancy: Option<f64>,
    tensor_cores: bool,
}

/// Per device (in order of first lane), its kernels sorted by start, and the longest one's length:
/// device `k`'s kernels are `kernels[start[k]..start[k + 1]]`, in one list (a list per device
/// was an allocation each on 80,000 devices).
struct Kernels {
    devices: Vec<(i64, i64)>,
    start: Vec<usize>,
    kernels: Vec<DeviceKernel>,
}

impl Kernels {
    /// Each device with its kernels and the longest one's length.
    fn each(&self) -> impl Iterator<Item = (i64, &[DeviceKernel], i64)> {
        self.devices
            .iter()
            .enumerate()
            .map(|(k, &(device, longest))| {
                (
                    device,
                    &self.kernels[self.start[k]..self.start[k + 1]],
                    longest,
                )
            })
    }
}

/// The kernels of each device (kernels only, as on CUDA: MTIA's DMA transfers are copies).
async fn device_kernels(trace: &Trace, links: &Links, y: &mut Slicer) -> Kernels {
    let mut devices: Vec<(i64, i64)> = Vec::new();
    let mut placed: Vec<(u32, DeviceKernel)> = Vec::new();
    // Whether each kernel name uses Tensor Cores, read once per name (the test is a dozen
    // substring searches and a lowercase copy, made for every kernel launch otherwise).
    let mut tensor_cores: Vec<Option<bool>> = vec![None; trace.strings.len()];
    // Each device's entry through a map: a scan of the entries for every lane was quadratic in
    // the devices (80,000 device processes, one stream each).
    let mut index: rustc_hash::FxHashMap<i64, usize> = Default::default();
    for (_, l) in trace.gpu_lanes() {
        let LaneKind::GpuStream { device, .. } = l.kind else {
            continue;
        };
        let idx = *index.entry(device).or_insert_with(|| {
            devices.push((device, 0));
            devices.len() - 1
        });
        let s = trace.slices_of(l);
        for i in 0..s.len() {
            y.tick(1).await;
            let name = trace.str(s.name[i]);
            if links.kinds.of_cat(s.cat[i]) != Kind::Kernel || is_dma_transfer(name) {
                continue;
            }
            let tensor_cores = match tensor_cores.get_mut(s.name[i].0 as usize) {
                Some(Some(known)) => *known,
                Some(slot) => *slot.insert(uses_tensor_cores(name)),
                None => uses_tensor_cores(name),
            };
            let [blocks, occupancy] = trace
                .args
                .fields(s.args[i], ["blocks per SM", "est. achieved occupancy %"]);
            let number = |v: Option<&str>| v.and_then(|v| v.trim().parse::<f64>().ok());
            let k = DeviceKernel {
                start_ns: s.start_ns[i],
                end_ns: s.end_ns(i),
                blocks_per_sm: number(blocks).filter(|b| *b > 0.0),
                occupancy: number(occupancy).filter(|o| *o >= 0.0),
                tensor_cores,
            };
            let d = &mut devices[idx];
            d.1 = d.1.max(k.end_ns - k.start_ns);
            placed.push((idx as u32, k));
        }
    }
    // By device, then start (a stable sort: ties keep lane order, as a sort per device did).
    slicing::sort_by_key(&mut placed, |(d, k)| (*d, k.start_ns), y).await;
    let mut start = vec![0usize; devices.len() + 1];
    for (d, _) in &placed {
        start[*d as usize + 1] += 1;
    }
    for k in 0..devices.len() {
        start[k + 1] += start[k];
    }
    Kernels {
        devices,
        start,
        kernels: placed.into_iter().map(|(_, k)| k).collect(),
    }
}

/// The plugin's GPU figures of each device over [lo, hi): utilization, estimated SM efficiency,
/// occupancy, and the Tensor Core share of kernel time.
async fn utilization(
    trace: &Trace,
    kernels: &Kernels,
    (lo, hi): (i64, i64),
    window: &'static str,
    y: &mut Slicer,
) -> Vec<DeviceUtilization> {
    let units = super::backend::matrix_units(super::backend::of_trace(trace));
    let mut out = Vec::with_capacity(kernels.devices.len());
    for (device, ks, longest) in kernels.each() {
        // Kernels overlapping the span: none starting before `lo - longest` reaches it.
        let from = ks.partition_point(|k| k.start_ns < lo.saturating_sub(longest));
        let mut clipped = Vec::new();
        let mut blocks: Vec<(i64, bool, f64)> = Vec::new();
        let (mut occ_weighted, mut occ_ns) = (0.0, 0i64);
        let (mut tc_ns, mut all_ns) = (0i64, 0i64);
        for k in ks[from..].iter().take_while(|k| k.start_ns < hi) {
            y.tick(1).await;
            let (a, b) = (k.start_ns.max(lo), k.end_ns.min(hi));
            if b <= a {
                continue;
            }
            clipped.push((a, b));
            all_ns += b - a;
            tc_ns += if k.tensor_cores { b - a } else { 0 };
            if let Some(o) = k.occupancy {
                occ_weighted += o * (b - a) as f64;
                occ_ns += b - a;
            }
            if let Some(bps) = k.blocks_per_sm {
                // The whole kernel goes into the sweep, as the plugin merges before it clips.
                blocks.push((k.start_ns, false, bps));
                blocks.push((k.end_ns, true, bps));
            }
        }
        let kernel_ns: i64 = merge(clipped, y).await.iter().map(|(a, b)| b - a).sum();
        let span = hi - lo;
        out.push(DeviceUtilization {
            name: super::summary::device_name(trace, device),
            device,
            kernel_ns,
            span_ns: span,
            utilization: if span > 0 {
                kernel_ns as f64 / span as f64
            } else {
                0.0
            },
            est_sm_efficiency_pct: (!blocks.is_empty() && span > 0)
                .then(|| 100.0 * sm_efficiency_ns(blocks, lo, hi) / span as f64),
            est_achieved_occupancy_pct: (occ_ns > 0).then(|| occ_weighted / occ_ns as f64),
            tensor_core_pct: (units.is_some() && all_ns > 0)
                .then(|| 100.0 * tc_ns as f64 / all_ns as f64),
            matrix_units: units,
            window,
        });
    }
    out
}

/// The plugin's `merge_ranges_with_value` then `intersection_ranges_lists_with_value`: sweeping
/// the kernels' starts and ends (a start before an end at the same time), each stretch while the
/// running sum of `blocks per SM` is positive counts min(sum, 1); the integral within [lo, hi).
fn sm_efficiency_ns(mut endpoints: Vec<(i64, bool, f64)>, lo: i64, hi: i64) -> f64 {
    endpoints.sort_by_key(|e| (e.0, e.1));
    let mut total = 0.0;
    let mut running = 0.0;
    let mut last = endpoints[0].0;
    for &(t, is_end, bps) in &endpoints {
        if t > last && running > 0.0 {
            let (a, b) = (last.max(lo), t.min(hi));
            if b > a {
                total += f64::min(running, 1.0) * (b - a) as f64;
            }
        }
        last = t;
        running += if is_end { -bps } else { bps };
    }
    total
}

fn stats(steps: &[Step]) -> StepStats {
    let mut d: Vec<i64> = steps.iter().map(|s| s.length_ns).collect();
    if d.is_empty() {
        return StepStats::default();
    }
    d.sort_unstable();
    let n = d.len();
    let quantile = |q: f64| {
        let pos = q * (n - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        d[lo] as f64 + (d[hi] - d[lo]) as f64 * (pos - lo as f64)
    };
    let median = quantile(0.5);
    StepStats {
        count: n,
        mean_ns: d.iter().sum::<i64>() as f64 / n as f64,
        median_ns: median,
        p90_ns: quantile(0.9),
        min_ns: d[0],
        max_ns: d[n - 1],
        first: steps
            .iter()
            .take(3)
            .map(|s| FirstStep {
                name: s.name.clone(),
                dur_ns: s.length_ns,
                vs_median: if median > 0.0 {
                    s.length_ns as f64 / median
                } else {
                    0.0
                },
            })
            .collect(),
    }
}
