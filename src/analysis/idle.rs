//! GPU idle time and why: HTA's temporal and idle breakdowns, the idle gaps of each device, and for each
//! gap what the CPU thread that ended it was doing meanwhile ("who waits for whom").
//!
//! Definitions (exact mode, the default; times in ns, every event):
//! - *Busy ops*: slices on GPU stream lanes of category `kernel`, `gpu_memcpy`, `gpu_memset` (1.x
//!   `Kernel`, `Memcpy`, `Memset`). `gpu_user_annotation` and `cuda_sync` are not busy time.
//! - *Op class*: memcpy/memset categories, and kernels named `^Memcpy|^Memset|^dma`, are MEMORY;
//!   kernels named `^nccl|^rccl|^hccl|^hip` or containing `ncclKernel` are COMMUNICATION; the rest is
//!   COMPUTATION.
//! - *Temporal breakdown* (per rank, all devices together, like HTA): window W = last busy end - first
//!   busy start; idle = W - |union of busy ops|; compute = |union of COMPUTATION ops|;
//!   non-compute = W - compute - idle. The same figures per device are in [`DeviceIdle`].
//! - *Stream idle breakdown*: on each stream, walking busy ops in start order with `prev_end` the
//!   latest end so far, a gap is `start - prev_end` when positive. It is *host wait* when the runtime
//!   call that launched the op started after `prev_end` (the GPU waited for the CPU), else *kernel
//!   wait* when shorter than 30 us (launch latency between back-to-back ops), else *other*.
//! - *Gaps*: the intervals inside a device's window where none of its streams is busy. The op that
//!   starts at a gap's end *ended* it; its launch (see [`super::links`]) tells on which CPU thread.
//!   When the launch started after the gap began, the gap is a host wait and is attributed:
//!   from the gap's start to the launch's start, to what that thread was doing (the deepest slice at
//!   each instant, classified with its ancestors as [`WaitKind`]); from the launch's start to the gap's
//!   end, to the launch itself ([`WaitKind::Launch`]). When the launch started before the gap, the
//!   GPU waited on its own side ([`WaitKind::GpuSide`]: a dependency on another stream, launch latency);
//!   with no launch found, [`WaitKind::NoLaunch`]. The attributed times of a gap sum to its length, and
//!   over all gaps to the devices' idle time.
//!
//! `Mode::Hta` reproduces HTA 0.5.0's temporal and stream idle numbers instead (integer us), quirks
//! included, so that they can be checked against HTA itself:
//! - Times are rounded like HTA's parser: start up and end down to whole microseconds, in f64 on the
//!   file's own timestamps (so an op shorter than a microsecond can get a negative duration).
//! - GPU events are every event with `args.stream` set and not -1 (read as Python's `int()`, -1
//!   when it raises: ROCm's runtime calls carry `"0x0"`), whatever its category or lane
//!   (HTA's parser drops only `python_function` and `Trace` events): kernels, memcpys, memsets,
//!   `cuda_sync` events, and on CPU lanes the `cpu_op` Inductor records around each Triton launch
//!   (its `stream` is the raw CUDA stream handle, 0 for the default stream). Device work without a
//!   `stream` arg (Intel XPU's kernels carry `sycl queue` instead) is not counted, as in HTA.
//!   `cuda_sync` events count in the temporal breakdown (they widen the window) but not in the
//!   stream breakdown; the stream breakdown groups events by their `stream` value, as HTA does (a
//!   stream that only CPU events carry has device -1); COMPUTATION excludes HTA's memory class
//!   (`^Memcpy|^Memset|^dma`: MTIA's DMA transfers are non-compute) and names matching
//!   `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)`.
//! - With more than one distinct `ProfilerStep#N` name, GPU events whose correlation matches no CPU
//!   event starting before the last ProfilerStep's start are dropped (HTA counts the
//!   `gpu_user_annotation` copies of the steps too). HTA merges on the correlation value, so an
//!   event without one (-1, a Triton launch op) pairs with the CPU events without one and is kept
//!   when one of them starts before the last step (HTA then also repeats it once per such event,
//!   which adds only negative gaps to its stream; that repetition is not reproduced).
//! - Stream gaps are taken between consecutive events by start, negative ones included.
//! - A GPU event whose correlation matches no CPU event takes, as launch time, the start of the file's
//!   first event (HTA joins it to row 0); the first event is recognised as the slice holding the first
//!   stored `args`.
//!
//! Gaps and their attribution are always exact.

use super::columns::{Column, Row, Sort, Type, Unit, SLICE_REF};
use super::links::{Kind, Links};
use super::slicing::{self, block_on, Slicer, LOOKUP};
use crate::model::category::DeviceName;
use crate::model::{ArgsId, LaneKind, SliceRef, Slices, StrId, Trace, NO_ID};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// HTA's threshold between kernel wait and other: gaps shorter than this are launch latency.
pub const KERNEL_WAIT_NS: i64 = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Exact,
    Hta,
}

#[derive(Debug, Clone)]
pub struct IdleOptions {
    pub mode: Mode,
    /// How many gaps (the longest) are reported one by one.
    pub max_gaps: usize,
}

impl Default for IdleOptions {
    fn default() -> Self {
        IdleOptions {
            mode: Mode::Exact,
            max_gaps: 20,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    Computation,
    Communication,
    Memory,
}

/// The class of a busy GPU op (exact mode).
pub fn op_class(kind: Kind, name: &str) -> OpClass {
    if matches!(kind, Kind::Memcpy | Kind::Memset)
        || name.starts_with("Memcpy")
        || name.starts_with("Memset")
        || crate::model::category::is_dma_transfer(name)
    {
        OpClass::Memory
    } else if ["nccl", "rccl", "hccl", "hip"]
        .iter()
        .any(|p| name.starts_with(p))
        || name.contains("ncclKernel")
    {
        OpClass::Communication
    } else {
        OpClass::Computation
    }
}

/// What the CPU thread that ended a gap was doing during it, or why no CPU work is to blame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// Inside `enumerate(DataLoader)#...__next__` / `enumerate(DataPipe)#...`.
    DataLoader,
    /// A collate function (a frame or span named `*collate*`), inside the DataLoader or not.
    Collate,
    /// `aten::copy_`, `aten::to`, `aten::_to_copy`, `aten::contiguous` outside the DataLoader.
    Copy,
    /// `cuda*Synchronize` / `hip*Synchronize` / `cu*Synchronize` calls.
    Sync,
    /// A blocking `cudaMemcpy` / `hipMemcpy` (not `Async`).
    BlockingMemcpy,
    /// Device or pinned memory allocation and release: `cudaMalloc`, `cudaFree`, `cudaHostAlloc`...
    Alloc,
    /// The launch call itself and its latency, or other runtime calls.
    Launch,
    /// Other operators.
    CpuOps,
    /// Python code outside any operator (with_stack frames).
    Python,
    /// Inside a `record_function` label or another recorded span, outside any operator.
    Annotation,
    /// Nothing recorded on the thread.
    NothingRecorded,
    /// Launched before the gap began: the GPU waited on its own side.
    GpuSide,
    /// No launch found for the op that ended the gap.
    NoLaunch,
}

impl WaitKind {
    pub const ALL: [WaitKind; 13] = [
        WaitKind::DataLoader,
        WaitKind::Collate,
        WaitKind::Copy,
        WaitKind::Sync,
        WaitKind::BlockingMemcpy,
        WaitKind::Alloc,
        WaitKind::Launch,
        WaitKind::CpuOps,
        WaitKind::Python,
        WaitKind::Annotation,
        WaitKind::NothingRecorded,
        WaitKind::GpuSide,
        WaitKind::NoLaunch,
    ];

    /// Words for "the GPU waited X ms for ..." (the same for every device: no device word).
    pub fn phrase(self) -> &'static str {
        match self {
            WaitKind::DataLoader => "the DataLoader",
            WaitKind::Collate => "collate",
            WaitKind::Copy => "copies (aten::copy_/to/contiguous)",
            WaitKind::Sync => "synchronizations",
            // Runtime-neutral words: the kinds are told by name on every backend (cudaMemcpy,
            // hipMemcpy, ...), and a trace of one is not to be described with another's calls.
            WaitKind::BlockingMemcpy => "blocking memcpy calls",
            WaitKind::Alloc => "memory allocation and release calls",
            WaitKind::Launch => "kernel launches",
            WaitKind::CpuOps => "other CPU operators",
            WaitKind::Python => "Python code",
            WaitKind::Annotation => "labelled code outside operators",
            WaitKind::NothingRecorded => "nothing recorded on the thread",
            WaitKind::GpuSide => "device-side dependencies and latency",
            WaitKind::NoLaunch => "ops with no launch in the trace",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// True for the kinds that are CPU work (the GPU waited for the host).
    pub fn is_host(self) -> bool {
        !matches!(self, WaitKind::GpuSide | WaitKind::NoLaunch)
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IdleReport {
    pub mode: Mode,
    pub rank: i64,
    /// What the trace's devices are called in sentences: `GPU`, `MTIA`, `XPU`
    /// ([`super::summary::devices_word`]).
    pub device_word: String,
    /// HTA's temporal breakdown, one entry per rank (a trace is one rank).
    pub temporal: Vec<Temporal>,
    /// HTA's idle breakdown, one entry per stream.
    pub idle: Vec<StreamIdle>,
    /// The temporal figures per device, with its gaps (always exact).
    pub devices: Vec<DeviceIdle>,
    /// "Who waits for whom": the devices' idle time summed by what the CPU was doing.
    pub waits: Vec<WaitTotal>,
    /// The longest gaps, longest first, each with its attribution.
    pub gaps: Vec<Gap>,
    pub gap_count: usize,
    /// What the chosen mode did that a reader should know (dropped events, fallbacks).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Temporal {
    pub rank: i64,
    pub window_us: f64,
    pub idle_us: f64,
    pub compute_us: f64,
    pub non_compute_us: f64,
    pub idle_pct: f64,
    pub compute_pct: f64,
    pub non_compute_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StreamIdle {
    pub rank: i64,
    pub device: i64,
    pub stream: i64,
    pub host_wait_us: f64,
    pub kernel_wait_us: f64,
    pub other_us: f64,
    pub gaps: usize,
}

impl Row for StreamIdle {
    const COLUMNS: &'static [Column] = &[
        Column::new("rank", "Rank", Unit::Count, "The trace's rank"),
        Column::new("device", "Device", Unit::Count, "The stream's device"),
        Column::new("stream", "Stream", Unit::Count, "The stream"),
        Column::new(
            "host_wait_us",
            "Host wait",
            Unit::Us,
            "Gaps whose op was launched after the stream's previous op ended: waits for the CPU",
        ),
        Column::new(
            "kernel_wait_us",
            "Kernel wait",
            Unit::Us,
            "Other gaps shorter than 30 us: launch latency between back-to-back ops",
        ),
        Column::new("other_us", "Other", Unit::Us, "The other gaps"),
        Column::new("gaps", "Gaps", Unit::Count, "Gaps on the stream"),
    ];
    const SORT: Sort = Sort::Smallest("device");
}

/// The window of a device's idle figures: from its first busy op's start to its last one's end
/// (HTA's temporal breakdown).
pub const DEVICE_WINDOW: &str = "device_active";

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceIdle {
    pub device: i64,
    /// `GPU 0`, `MTIA 0`, ... ([`super::summary::device_name`]).
    pub name: DeviceName,
    pub streams: usize,
    pub busy_ops: usize,
    pub start_ns: i64,
    pub end_ns: i64,
    pub window_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub compute_ns: i64,
    pub non_compute_ns: i64,
    /// busy / window.
    pub utilization: f64,
    /// The window of `utilization` ([`DEVICE_WINDOW`]), unlike the steps' GPU figures, which
    /// count over the steps' span (the TensorBoard plugin's).
    pub window: &'static str,
    pub gaps: usize,
    /// Idle time in gaps whose launch started after the gap began.
    pub host_wait_ns: i64,
}

impl Row for DeviceIdle {
    const COLUMNS: &'static [Column] = &[
        Column::new("device", "Device", Unit::Count, "The device's index"),
        Column::new("name", "Name", Unit::Text, "`GPU 0`, `MTIA 0`, ..."),
        Column::new("streams", "Streams", Unit::Count, "Its streams"),
        Column::new(
            "busy_ops",
            "Busy ops",
            Unit::Count,
            "Its kernels, memcpys and memsets",
        ),
        Column::new(
            "start_ns",
            "Start",
            Unit::Ns,
            "Start of its first busy op, from the trace's start",
        ),
        Column::new("end_ns", "End", Unit::Ns, "End of its last busy op"),
        Column::new(
            "window_ns",
            "Window",
            Unit::Ns,
            "From its first busy op's start to its last one's end (HTA's window)",
        ),
        Column::new(
            "busy_ns",
            "Busy",
            Unit::Ns,
            "Time in the window when one of its streams is busy",
        ),
        Column::new(
            "idle_ns",
            "Idle",
            Unit::Ns,
            "Time in the window when none of its streams is busy",
        ),
        Column::new(
            "compute_ns",
            "Compute",
            Unit::Ns,
            "Time in the window when a computation op runs",
        ),
        Column::new(
            "non_compute_ns",
            "Non-compute",
            Unit::Ns,
            "Busy time with only communication and memory ops running",
        ),
        Column::new(
            "utilization",
            "Utilization",
            Unit::Fraction,
            "Busy time over the window",
        )
        .digits(1),
        Column::new(
            "window",
            "Counted over",
            Unit::Text,
            "`device_active`: the window utilization counts over",
        ),
        Column::new("gaps", "Gaps", Unit::Count, "Its idle gaps"),
        Column::new(
            "host_wait_ns",
            "Host wait",
            Unit::Ns,
            "Idle time in gaps whose launch started after the gap began: waits for the CPU",
        ),
    ];
    const SORT: Sort = Sort::Smallest("device");
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WaitTotal {
    pub kind: WaitKind,
    pub ns: i64,
    /// Share of all devices' idle time.
    pub pct: f64,
    /// Gaps with some of this kind.
    pub gaps: usize,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Gap {
    pub device: i64,
    /// `GPU 0`, `MTIA 0`, ... ([`super::summary::device_name`]).
    pub device_name: DeviceName,
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_ns: i64,
    /// The launch started after the gap began.
    pub host_wait: bool,
    pub ended_by: GapEnd,
    /// The gap's time by kind, largest first; sums to `dur_ns`.
    pub cpu: Vec<KindTime>,
    /// The most specific CPU events overlapping the gap, by time covered, largest first (at most 8).
    pub events: Vec<Covered>,
}

impl Row for Gap {
    const COLUMNS: &'static [Column] = &[
        Column::new("device", "Device", Unit::Count, "The device's index"),
        Column::new(
            "device_name",
            "Device name",
            Unit::Text,
            "`GPU 0`, `MTIA 0`, ...",
        ),
        Column::new(
            "start_ns",
            "Start",
            Unit::Ns,
            "Start of the gap (end of the device's previous busy time), from the trace's start",
        ),
        Column::new(
            "end_ns",
            "End",
            Unit::Ns,
            "End of the gap: the start of the op that ended it",
        ),
        Column::new("dur_ns", "Length", Unit::Ns, "The gap's length"),
        Column::new(
            "host_wait",
            "Host wait",
            Unit::Flag,
            "The op that ended it was launched after the gap began: the device waited for the CPU",
        ),
        Column::new(
            "ended_by",
            "Ended by",
            Unit::Data,
            "The op that ended the gap (its slice, name and stream) and its launch: the runtime \
             call's slice, name, start and thread, with the operator and label around it",
        )
        .typed(GAP_END),
        Column::new(
            "cpu",
            "CPU meanwhile",
            Unit::Data,
            "The gap's time by what the launching thread was doing, largest first; sums to \
             `dur_ns`",
        )
        .typed(Type::List(&KIND_TIME)),
        Column::new(
            "events",
            "Events",
            Unit::Data,
            "The most specific CPU events overlapping the gap (no slice: nothing recorded), by \
             time covered, largest first (at most 8)",
        )
        .typed(Type::List(&COVERED)),
    ];
    const SORT: Sort = Sort::Largest("dur_ns");
}

/// A [`Named`] as its JSON holds it.
const NAMED: Type = Type::Struct(&[("slice", SLICE_REF), ("name", Type::Str)]);

/// A [`GapEnd`] as its JSON holds it.
const GAP_END: Type = Type::Struct(&[
    ("op", SLICE_REF),
    ("name", Type::Str),
    ("stream", Type::Int),
    (
        "launch",
        Type::Struct(&[
            ("slice", SLICE_REF),
            ("name", Type::Str),
            ("start_ns", Type::Int),
            ("thread", Type::Str),
            ("operator", NAMED),
            ("label", NAMED),
        ]),
    ),
]);

/// A [`KindTime`] as its JSON holds it.
const KIND_TIME: Type = Type::Struct(&[("kind", Type::Str), ("ns", Type::Int)]);

/// A [`Covered`] as its JSON holds it.
const COVERED: Type = Type::Struct(&[
    ("slice", SLICE_REF),
    ("name", Type::Str),
    ("kind", Type::Str),
    ("ns", Type::Int),
]);

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GapEnd {
    pub op: SliceRef,
    pub name: String,
    pub stream: i64,
    pub launch: Option<LaunchInfo>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LaunchInfo {
    pub slice: SliceRef,
    pub name: String,
    pub start_ns: i64,
    pub thread: String,
    pub operator: Option<Named>,
    pub label: Option<Named>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Named {
    pub slice: SliceRef,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KindTime {
    pub kind: WaitKind,
    pub ns: i64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Covered {
    /// None for time when nothing was recorded on the thread.
    pub slice: Option<SliceRef>,
    pub name: String,
    pub kind: WaitKind,
    pub ns: i64,
}

/// Computes the report, building the links on the way.
pub fn analyze(trace: &Trace, opts: &IdleOptions) -> IdleReport {
    analyze_with(trace, &Links::build(trace), opts)
}

/// Computes the report with links already built.
pub fn analyze_with(trace: &Trace, links: &Links, opts: &IdleOptions) -> IdleReport {
    block_on(analyze_sliced(trace, links, opts, &mut Slicer::never()))
}

/// [`analyze_with`] pausing as `y` says (see [`super::slicing`]); HTA mode, which the page does
/// not use, runs its breakdowns without pausing.
pub async fn analyze_sliced(
    trace: &Trace,
    links: &Links,
    opts: &IdleOptions,
    y: &mut Slicer,
) -> IdleReport {
    let rank = trace.rank();
    let mut names = NameClasses::new(trace);
    let gpu: Vec<u32> = trace.gpu_lanes().map(|(i, _)| i as u32).collect();
    // Each device's streams, devices in the order first seen: the place of each by a map (a
    // trace can hold 80,000 devices), the streams in one list by place.
    let mut devices_seen: Vec<i64> = Vec::new();
    let mut place: rustc_hash::FxHashMap<i64, u32> = rustc_hash::FxHashMap::default();
    let places: Vec<(usize, u32)> = gpu
        .iter()
        .filter_map(|&l| {
            let LaneKind::GpuStream { device, .. } = trace.lanes[l as usize].kind else {
                return None;
            };
            let at = *place.entry(device).or_insert_with(|| {
                devices_seen.push(device);
                devices_seen.len() as u32 - 1
            });
            Some((at as usize, l))
        })
        .collect();
    drop(place);
    let (at, streams) = crate::ordered::grouped(devices_seen.len(), || places.iter().copied());
    drop(places);

    // Device figures, gaps and who waits for whom (exact, always).
    let mut attr = Attribution::new(trace, links);
    // A row per device, and one per stream below: sized at once, as doubling left 80,000
    // device processes holding room for 131,072 rows.
    let mut devices = Vec::with_capacity(devices_seen.len());
    let mut raw_gaps: Vec<RawGap> = Vec::new();
    let mut totals = [(0i64, 0usize); WaitKind::ALL.len()];
    for (k, device) in devices_seen.iter().enumerate() {
        let lanes = &streams[at[k] as usize..at[k + 1] as usize];
        let mut gaps = Vec::new();
        let u = union_sweep(trace, links, &mut names, lanes, Some(&mut gaps), y).await;
        if u.ops == 0 {
            continue;
        }
        let mut host_wait_ns = 0;
        for g in &mut gaps {
            g.device = *device;
            attr.prepare(g, y).await;
            let split = attr.attribute(g, None);
            y.tick(LOOKUP + 2 * split.visited).await;
            if split.host {
                host_wait_ns += g.end - g.start;
            }
            for (k, &ns) in split.by_kind.iter().enumerate() {
                if ns > 0 {
                    totals[k].0 += ns;
                    totals[k].1 += 1;
                }
            }
        }
        devices.push(DeviceIdle {
            device: *device,
            name: super::summary::device_name(trace, *device),
            streams: lanes.len(),
            busy_ops: u.ops,
            start_ns: u.first,
            end_ns: u.last,
            window_ns: u.last - u.first,
            busy_ns: u.busy,
            idle_ns: u.last - u.first - u.busy,
            compute_ns: u.compute,
            non_compute_ns: u.busy - u.compute,
            utilization: ratio(u.busy, u.last - u.first),
            window: DEVICE_WINDOW,
            gaps: gaps.len(),
            host_wait_ns,
        });
        raw_gaps.append(&mut gaps);
    }

    let (temporal, idle, notes) = match opts.mode {
        Mode::Exact => {
            let u = union_sweep(trace, links, &mut names, &gpu, None, y).await;
            let t = if u.ops == 0 {
                Vec::new()
            } else {
                let w = u.last - u.first;
                vec![temporal_entry(rank, w, w - u.busy, u.compute, 1e-3)]
            };
            let mut idle = Vec::with_capacity(gpu.len());
            for &l in &gpu {
                idle.extend(stream_breakdown_exact(trace, links, l as usize, rank, y).await);
            }
            (t, idle, Vec::new())
        }
        Mode::Hta => hta::breakdowns(trace, links, rank),
    };

    let idle_total: i64 = raw_gaps.iter().map(|g| g.end - g.start).sum();
    let mut waits: Vec<WaitTotal> = WaitKind::ALL
        .iter()
        .filter(|k| totals[k.index()].0 > 0)
        .map(|&k| WaitTotal {
            kind: k,
            ns: totals[k.index()].0,
            pct: 100.0 * ratio(totals[k.index()].0, idle_total),
            gaps: totals[k.index()].1,
        })
        .collect();
    waits.sort_by_key(|w| (Reverse(w.ns), w.kind));

    // The longest gaps in detail.
    let gap_count = raw_gaps.len();
    slicing::sort_by_key(
        &mut raw_gaps,
        |g| (Reverse(g.end - g.start), g.start, g.device),
        y,
    )
    .await;
    raw_gaps.truncate(opts.max_gaps);
    let mut gaps = Vec::with_capacity(raw_gaps.len());
    for g in &raw_gaps {
        attr.prepare(g, y).await;
        // Each slice walked is a piece, sorted and merged, then named.
        let (gap, visited) = attr.detail(g);
        y.tick(LOOKUP * (1 + visited)).await;
        gaps.push(gap);
    }

    IdleReport {
        mode: opts.mode,
        rank,
        device_word: super::summary::devices_word(trace),
        temporal,
        idle,
        devices,
        waits,
        gaps,
        gap_count,
        notes,
    }
}

impl IdleReport {
    /// "the GPU waited 12.3 ms for the DataLoader, 4.5 ms for copies, ..." (host kinds only;
    /// "the MTIA waited" on MTIA).
    pub fn waits_sentence(&self) -> Option<String> {
        let parts: Vec<String> = self
            .waits
            .iter()
            .filter(|w| w.kind.is_host())
            .take(4)
            .map(|w| {
                format!(
                    "{} for {}",
                    crate::units::duration(w.ns as f64),
                    w.kind.phrase()
                )
            })
            .collect();
        (!parts.is_empty()).then(|| format!("the {} waited {}", self.device_word, parts.join(", ")))
    }
}

fn ratio(a: i64, b: i64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

/// A temporal entry from window, idle and compute in some unit, `to_us` converting it.
fn temporal_entry(rank: i64, window: i64, idle: i64, compute: i64, to_us: f64) -> Temporal {
    let non_compute = window - compute - idle;
    let pct = |x: i64| (10_000.0 * ratio(x, window)).round() / 100.0;
    Temporal {
        rank,
        window_us: window as f64 * to_us,
        idle_us: idle as f64 * to_us,
        compute_us: compute as f64 * to_us,
        non_compute_us: non_compute as f64 * to_us,
        idle_pct: pct(idle),
        compute_pct: pct(compute),
        non_compute_pct: pct(non_compute),
    }
}

/// Per-name classification cache: one byte per interned string, filled on first use.
struct NameClasses {
    class: Vec<u8>,
}

const UNKNOWN: u8 = u8::MAX;

impl NameClasses {
    fn new(trace: &Trace) -> Self {
        NameClasses {
            class: vec![UNKNOWN; trace.strings.len()],
        }
    }

    /// The exact op class of a busy op (by category kind and name).
    fn op_class(&mut self, trace: &Trace, kind: Kind, name: StrId) -> OpClass {
        if matches!(kind, Kind::Memcpy | Kind::Memset) {
            return OpClass::Memory;
        }
        let c = &mut self.class[name.0 as usize];
        if *c == UNKNOWN {
            *c = op_class(kind, trace.str(name)) as u8;
        }
        match *c {
            0 => OpClass::Computation,
            1 => OpClass::Communication,
            _ => OpClass::Memory,
        }
    }
}

/// Busy ops of some GPU lanes in start order (a k-way merge of the lanes, which are sorted already).
struct BusyMerge<'a> {
    trace: &'a Trace,
    links: &'a Links,
    lanes: &'a [u32],
    next: Vec<usize>,
    heap: BinaryHeap<Reverse<(i64, usize, usize)>>,
}

impl<'a> BusyMerge<'a> {
    fn new(trace: &'a Trace, links: &'a Links, lanes: &'a [u32]) -> Self {
        let mut m = BusyMerge {
            trace,
            links,
            lanes,
            next: vec![0; lanes.len()],
            heap: BinaryHeap::new(),
        };
        for k in 0..lanes.len() {
            m.refill(k);
        }
        m
    }

    fn refill(&mut self, k: usize) {
        // The columns by row, not the lane's `Slices`: one op at a time, the hottest loop here.
        let range = &self.trace.lanes[self.lanes[k] as usize].slice_range;
        let (c, base, len) = (&self.trace.columns, range.start as usize, range.len());
        let mut i = self.next[k];
        while i < len && !self.links.kinds.of_cat(c.cat[base + i]).is_gpu_busy() {
            i += 1;
        }
        if i < len {
            self.heap.push(Reverse((c.start_ns[base + i], k, i)));
            self.next[k] = i + 1;
        } else {
            self.next[k] = len;
        }
    }
}

impl Iterator for BusyMerge<'_> {
    type Item = SliceRef;
    fn next(&mut self) -> Option<SliceRef> {
        let Reverse((_, k, i)) = self.heap.pop()?;
        self.refill(k);
        Some(SliceRef {
            lane: self.lanes[k],
            index: i as u32,
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct RawGap {
    device: i64,
    start: i64,
    end: i64,
    /// The busy op that starts at the gap's end.
    ended_by: SliceRef,
}

struct Union {
    ops: usize,
    first: i64,
    last: i64,
    busy: i64,
    compute: i64,
}

/// Union of the busy ops of some lanes: its length, the COMPUTATION part, and (optionally) its gaps.
async fn union_sweep(
    trace: &Trace,
    links: &Links,
    names: &mut NameClasses,
    lanes: &[u32],
    mut gaps: Option<&mut Vec<RawGap>>,
    y: &mut Slicer,
) -> Union {
    let mut u = Union {
        ops: 0,
        first: 0,
        last: 0,
        busy: 0,
        compute: 0,
    };
    let (mut seg_start, mut seg_end) = (0i64, 0i64);
    let (mut comp_start, mut comp_end) = (0i64, i64::MIN);
    for r in BusyMerge::new(trace, links, lanes) {
        // A heap pop and push per op.
        y.tick(2).await;
        let (c, k) = (&trace.columns, trace.row(r));
        let (start, end) = (c.start_ns[k], c.start_ns[k] + c.dur_ns[k]);
        if u.ops == 0 {
            u.first = start;
            (seg_start, seg_end) = (start, end);
        } else if start > seg_end {
            u.busy += seg_end - seg_start;
            if let Some(g) = gaps.as_deref_mut() {
                g.push(RawGap {
                    device: 0,
                    start: seg_end,
                    end: start,
                    ended_by: r,
                });
            }
            (seg_start, seg_end) = (start, end);
        } else {
            seg_end = seg_end.max(end);
        }
        u.ops += 1;
        let kind = links.kinds.of_cat(c.cat[k]);
        if names.op_class(trace, kind, c.name[k]) == OpClass::Computation {
            if start > comp_end {
                if comp_end != i64::MIN {
                    u.compute += comp_end - comp_start;
                }
                (comp_start, comp_end) = (start, end);
            } else {
                comp_end = comp_end.max(end);
            }
        }
    }
    if u.ops > 0 {
        u.busy += seg_end - seg_start;
        u.last = seg_end;
    }
    if comp_end != i64::MIN {
        u.compute += comp_end - comp_start;
    }
    u
}

/// HTA's stream breakdown, exact: positive gaps against the running end of the stream.
async fn stream_breakdown_exact(
    trace: &Trace,
    links: &Links,
    lane: usize,
    rank: i64,
    y: &mut Slicer,
) -> Option<StreamIdle> {
    let LaneKind::GpuStream { device, stream } = trace.lanes[lane].kind else {
        return None;
    };
    let s = trace.slices(lane);
    let mut prev_end: Option<i64> = None;
    let (mut host, mut kernel, mut other, mut gaps) = (0i64, 0i64, 0i64, 0usize);
    for i in 0..s.len() {
        y.tick(1).await;
        if !links.kinds.of_cat(s.cat[i]).is_gpu_busy() {
            continue;
        }
        let (start, end) = (s.start_ns[i], s.end_ns(i));
        if let Some(pe) = prev_end {
            if start > pe {
                let gap = start - pe;
                gaps += 1;
                let r = SliceRef {
                    lane: lane as u32,
                    index: i as u32,
                };
                let launched_after = links
                    .launch(r)
                    .is_some_and(|l| trace.columns.start_ns[trace.row(l)] > pe);
                if launched_after {
                    host += gap;
                } else if gap < KERNEL_WAIT_NS {
                    kernel += gap;
                } else {
                    other += gap;
                }
            }
        }
        prev_end = Some(prev_end.map_or(end, |pe| pe.max(end)));
    }
    prev_end?;
    Some(StreamIdle {
        rank,
        device,
        stream,
        host_wait_us: host as f64 / 1e3,
        kernel_wait_us: kernel as f64 / 1e3,
        other_us: other as f64 / 1e3,
        gaps,
    })
}

// ---------------------------------------------------------------------------------------------
// Attribution of gaps to CPU activity.

/// The kind a slice gives to the time under it, before its ancestors are considered.
fn own_kind(kind: Kind, name: &str) -> WaitKind {
    if name.starts_with("enumerate(DataLoader)#") || name.starts_with("enumerate(DataPipe)#") {
        return WaitKind::DataLoader;
    }
    if name.contains("collate") {
        return WaitKind::Collate;
    }
    let runtime = kind == Kind::Runtime || super::launch::is_runtime_name(name);
    match kind {
        Kind::CpuOp => match name {
            "aten::copy_" | "aten::to" | "aten::_to_copy" | "aten::contiguous" => WaitKind::Copy,
            _ => WaitKind::CpuOps,
        },
        Kind::Python => WaitKind::Python,
        _ if runtime && name.contains("Synchronize") => WaitKind::Sync,
        _ if runtime && name.contains("Memcpy") && !name.contains("Async") => {
            WaitKind::BlockingMemcpy
        }
        _ if runtime
            && (name.contains("Malloc") || name.contains("Alloc") || name.contains("Free")) =>
        {
            WaitKind::Alloc
        }
        Kind::Runtime => WaitKind::Launch,
        _ => WaitKind::Annotation,
    }
}

/// Specific kinds win over what encloses them; generic ones rank Launch > CpuOps > Python > Annotation.
fn combine(parent: Option<WaitKind>, own: WaitKind) -> WaitKind {
    use WaitKind::*;
    let Some(p) = parent else { return own };
    match (p, own) {
        (DataLoader | Collate, Collate) => Collate,
        (DataLoader | Collate, _) => p,
        (_, DataLoader | Collate | Sync | BlockingMemcpy | Alloc | Copy) => own,
        (Sync | BlockingMemcpy | Alloc | Copy, _) => p,
        _ => {
            let rank = |k: WaitKind| match k {
                Launch => 3,
                CpuOps => 2,
                Python => 1,
                _ => 0,
            };
            if rank(own) >= rank(p) {
                own
            } else {
                p
            }
        }
    }
}

/// How one gap's time splits.
struct Split {
    host: bool,
    by_kind: [i64; WaitKind::ALL.len()],
    /// Slices of the launching thread walked to split it (the work done, for [`Slicer::tick`]).
    visited: u64,
}

struct Attribution<'a> {
    trace: &'a Trace,
    links: &'a Links,
    /// Per lane, the effective kind of each slice (computed when a lane is first needed).
    eff: Vec<Option<Vec<WaitKind>>>,
    own: FxHashMap<(StrId, StrId), WaitKind>,
}

impl<'a> Attribution<'a> {
    fn new(trace: &'a Trace, links: &'a Links) -> Self {
        Attribution {
            trace,
            links,
            eff: vec![None; trace.lanes.len()],
            own: FxHashMap::default(),
        }
    }

    /// Computes the effective kinds of the thread that launched the op ending `g`, when a lane is
    /// first needed, so that [`Attribution::attribute`] finds them.
    async fn prepare(&mut self, g: &RawGap, y: &mut Slicer) {
        let Some(launch) = self.links.launch(g.ended_by) else {
            return;
        };
        let lane = launch.lane as usize;
        if self.eff[lane].is_none() {
            let s = self.trace.slices(lane);
            let parents = self.links.parents_of_lane(lane);
            let mut eff = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                y.tick(1).await;
                let key = (s.cat[i], s.name[i]);
                let own = match self.own.get(&key) {
                    Some(&k) => k,
                    None => {
                        let k =
                            own_kind(self.links.kinds.of_cat(s.cat[i]), self.trace.str(s.name[i]));
                        self.own.insert(key, k);
                        k
                    }
                };
                let parent = parents
                    .get(i)
                    .filter(|&&p| p != u32::MAX)
                    .map(|&p| eff[p as usize]);
                eff.push(combine(parent, own));
            }
            self.eff[lane] = Some(eff);
        }
    }

    /// Splits a gap by kind; `covered`, when given, receives (deepest slice, ns) pieces.
    fn attribute(
        &mut self,
        g: &RawGap,
        mut covered: Option<&mut Vec<(Option<SliceRef>, WaitKind, i64)>>,
    ) -> Split {
        let mut split = Split {
            host: false,
            by_kind: [0; WaitKind::ALL.len()],
            visited: 0,
        };
        let Some(launch) = self.links.launch(g.ended_by) else {
            split.by_kind[WaitKind::NoLaunch.index()] = g.end - g.start;
            return split;
        };
        let lane = launch.lane as usize;
        let s = self.trace.slices(lane);
        let l_start = s.start_ns[launch.index as usize];
        if l_start <= g.start {
            split.by_kind[WaitKind::GpuSide.index()] = g.end - g.start;
            return split;
        }
        split.host = true;
        let cpu_end = l_start.min(g.end);
        split.by_kind[WaitKind::Launch.index()] += g.end - cpu_end;
        if let Some(c) = covered.as_deref_mut() {
            if g.end > cpu_end {
                c.push((Some(launch), WaitKind::Launch, g.end - cpu_end));
            }
        }
        // Computed by `prepare`, which is called before.
        let eff = self.eff[lane].as_deref().unwrap_or(&[]);
        let parents = self.links.parents_of_lane(lane);
        split.visited = cover(&s, parents, g.start, cpu_end, |slice, ns| {
            let kind = match slice {
                Some(i) => eff[i as usize],
                None => WaitKind::NothingRecorded,
            };
            split.by_kind[kind.index()] += ns;
            if let Some(c) = covered.as_deref_mut() {
                let r = slice.map(|i| SliceRef {
                    lane: lane as u32,
                    index: i,
                });
                c.push((r, kind, ns));
            }
        });
        split
    }

    /// The gap in detail, and the slices walked for it.
    fn detail(&mut self, g: &RawGap) -> (Gap, u64) {
        let trace = self.trace;
        let mut pieces = Vec::new();
        let split = self.attribute(g, Some(&mut pieces));
        let mut cpu: Vec<KindTime> = WaitKind::ALL
            .iter()
            .filter(|k| split.by_kind[k.index()] > 0)
            .map(|&k| KindTime {
                kind: k,
                ns: split.by_kind[k.index()],
            })
            .collect();
        cpu.sort_by_key(|k| (Reverse(k.ns), k.kind));
        pieces.sort_by_key(|p| (p.0, p.1));
        let mut merged: Vec<(Option<SliceRef>, WaitKind, i64)> = Vec::new();
        for p in pieces {
            match merged.last_mut() {
                Some(m) if m.0 == p.0 && m.1 == p.1 => m.2 += p.2,
                _ => merged.push(p),
            }
        }
        merged.sort_by_key(|m| (Reverse(m.2), m.0));
        merged.truncate(8);
        let events = merged
            .into_iter()
            .map(|(slice, kind, ns)| Covered {
                slice,
                name: slice.map_or_else(
                    || "(nothing recorded)".to_string(),
                    |r| trace.slice_name(r).to_string(),
                ),
                kind,
                ns,
            })
            .collect();
        let op = g.ended_by;
        let stream = match trace.lanes[op.lane as usize].kind {
            LaneKind::GpuStream { stream, .. } => stream,
            LaneKind::Cpu => -1,
        };
        let named = |r: SliceRef| Named {
            slice: r,
            name: trace.slice_name(r).to_string(),
        };
        let launch = self.links.launch(op).map(|l| LaunchInfo {
            slice: l,
            name: trace.slice_name(l).to_string(),
            start_ns: trace.columns.start_ns[trace.row(l)],
            thread: super::summary::lane_name(trace, l.lane as usize),
            operator: self.links.op(op).map(named),
            label: self.links.label(trace, l).map(named),
        });
        let gap = Gap {
            device: g.device,
            device_name: super::summary::device_name(trace, g.device),
            start_ns: g.start,
            end_ns: g.end,
            dur_ns: g.end - g.start,
            host_wait: split.host,
            ended_by: GapEnd {
                op,
                name: trace.slice_name(op).to_string(),
                stream,
                launch,
            },
            cpu,
            events,
        };
        (gap, split.visited)
    }
}

/// Walks a lane's timeline over [a, b) and credits each piece of time to the deepest slice covering
/// it (`None` when none does). The pieces sum to `b - a`. Returns the slices walked.
fn cover(
    s: &Slices,
    parents: &[u32],
    a: i64,
    b: i64,
    mut credit: impl FnMut(Option<u32>, i64),
) -> u64 {
    if b <= a {
        return 0;
    }
    // The deepest slice containing `a`: the last one starting at or before it, or an ancestor.
    let k = s.start_ns.partition_point(|&x| x <= a);
    let mut stack: Vec<(u32, i64)> = Vec::new();
    let mut cur = k.checked_sub(1);
    while let Some(i) = cur {
        if s.end_ns(i) > a {
            stack.push((i as u32, s.end_ns(i)));
        }
        cur = parents
            .get(i)
            .filter(|&&p| p != u32::MAX)
            .map(|&p| p as usize);
    }
    stack.reverse();
    let mut cursor = a;
    let mut advance = |to: i64, stack: &mut Vec<(u32, i64)>, cursor: &mut i64| {
        while *cursor < to {
            while stack.last().is_some_and(|&(_, end)| end <= *cursor) {
                stack.pop();
            }
            let (who, until) = match stack.last() {
                Some(&(i, end)) => (Some(i), end.min(to)),
                None => (None, to),
            };
            credit(who, until - *cursor);
            *cursor = until;
        }
    };
    let mut j = k;
    while j < s.len() && s.start_ns[j] < b {
        advance(s.start_ns[j], &mut stack, &mut cursor);
        while stack.last().is_some_and(|&(_, end)| end <= s.start_ns[j]) {
            stack.pop();
        }
        stack.push((j as u32, s.end_ns(j)));
        j += 1;
    }
    advance(b, &mut stack, &mut cursor);
    (j - k) as u64
}

// ---------------------------------------------------------------------------------------------
// HTA 0.5.0 compatibility.

pub(crate) mod hta {
    use super::*;

    /// Start and end in whole microseconds, rounded as HTA's parser does: `ts` and `dur` read as
    /// Python floats from the file's text, `end = ts + dur`, then start up and end down.
    pub(crate) fn round(origin_ns: i64, start_ns: i64, dur_ns: i64) -> (i64, i64) {
        let ts = us_as_python_float(origin_ns + start_ns);
        let end = ts + us_as_python_float(dur_ns);
        (ts.ceil() as i64, end.floor() as i64)
    }

    /// The f64 nearest to `ns / 1000`, as Python's `float()` reads the microseconds the file wrote.
    /// Epoch timestamps in ns exceed 2^53, so `ns as f64 / 1000.0` would round twice; the decimal
    /// text is rebuilt on the stack and parsed instead (correctly rounded, no allocation).
    fn us_as_python_float(ns: i64) -> f64 {
        if ns.unsigned_abs() < 1 << 53 {
            return ns as f64 / 1000.0;
        }
        use std::io::Write;
        let mut buf = [0u8; 32];
        let mut w = &mut buf[..];
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        let _ = write!(w, "{sign}{}.{:03}", a / 1000, a % 1000);
        let len = 32 - w.len();
        std::str::from_utf8(&buf[..len])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(ns as f64 / 1000.0)
    }

    /// HTA's `get_kernel_type(name) == COMPUTATION`: neither communication (`^nccl.*Kernel`) nor
    /// memory (`^Memcpy|^Memset|^dma`, MTIA's DMA transfers), and not matching
    /// `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)`. HTA tests memory before computation, so a
    /// `dma*` op is non-compute time in its temporal breakdown.
    fn is_compute(name: &str) -> bool {
        !(is_comm(name)
            || name.starts_with("dma")
            || name.contains("Memcpy")
            || name.starts_with("Memset")
            || name.contains("Sync"))
    }

    #[cfg(test)]
    #[test]
    fn stream_values_read_as_pythons_int() {
        for (json, want) in [
            ("7", 7),
            ("-1", -1),
            ("\"0x0\"", -1),
            ("\"7\"", 7),
            ("\" 12 \"", 12),
            ("\"1_000\"", 1000),
            ("\"1__0\"", -1),
            ("\"\"", -1),
            ("7.9", 7),
            ("true", 1),
            ("null", -1),
            ("[1]", -1),
        ] {
            assert_eq!(stream_value(json), want, "{json}");
        }
    }

    /// HTA's `is_comm_kernel`: `^nccl.*Kernel`.
    fn is_comm(name: &str) -> bool {
        name.starts_with("nccl") && name[4..].contains("Kernel")
    }

    /// An `args.stream` value as HTA 0.5.0 reads it: `int(value)`, and -1 when Python's `int()`
    /// raises (its `normalize_gpu_stream_numbers`). ROCm's runtime calls carry `"stream": "0x0"`,
    /// which is -1 there: those calls are CPU events whose correlation launches the device work.
    pub(crate) fn stream_value(json: &str) -> i64 {
        let v = json.trim();
        if let Some(text) = v.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            // int(str): surrounding whitespace, one sign, digits with single inner underscores.
            let t = text.trim();
            let (neg, digits) = match t.as_bytes().first() {
                Some(b'-') => (true, &t[1..]),
                Some(b'+') => (false, &t[1..]),
                _ => (false, t),
            };
            let ok = !digits.is_empty()
                && !digits.starts_with('_')
                && !digits.ends_with('_')
                && !digits.contains("__")
                && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_');
            let n = ok
                .then(|| digits.replace('_', "").parse::<i64>().ok())
                .flatten();
            return n.map_or(-1, |n| if neg { -n } else { n });
        }
        match v {
            "true" => 1,
            "false" => 0,
            // int(float) truncates toward zero; null and containers raise.
            _ => v
                .parse::<i64>()
                .ok()
                .or_else(|| {
                    v.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(|f| f as i64)
                })
                .unwrap_or(-1),
        }
    }

    struct Ev {
        ts: i64,
        end: i64,
        /// The `stream` arg (HTA's grouping of its stream breakdown).
        stream: i64,
        lane: usize,
        order: usize,
        sync: bool,
        compute: bool,
        /// HTA's COMMUNICATION class, `^nccl.*Kernel`.
        comm: bool,
        /// Launch time in us, when HTA finds one.
        runtime: Option<i64>,
    }

    /// HTA's device events of a trace, sorted by start, after its step filter.
    struct Events {
        evs: Vec<Ev>,
        notes: Vec<String>,
        /// The `ProfilerStep` numbers HTA keeps when it filters by steps (two or more step names).
        steps: Option<Vec<i64>>,
    }

    pub(super) fn breakdowns(
        trace: &Trace,
        links: &Links,
        rank: i64,
    ) -> (Vec<Temporal>, Vec<StreamIdle>, Vec<String>) {
        let Events { evs, notes, .. } = events(trace, links);
        if evs.is_empty() {
            return (Vec::new(), Vec::new(), notes);
        }
        let (w0, w1, busy) = merge(evs.iter()).unwrap_or((0, 0, 0));
        let compute = merge(evs.iter().filter(|e| e.compute)).map_or(0, |m| m.2);
        let window = w1 - w0;
        let temporal = vec![temporal_entry(rank, window, window - busy, compute, 1.0)];
        let idle = stream_idle(trace, &evs, rank);
        (temporal, idle, notes)
    }

    /// (first group start, last group end, sum of group lengths) of events sorted by start, HTA's
    /// `merge_kernel_intervals`.
    fn merge<'e>(it: impl Iterator<Item = &'e Ev>) -> Option<(i64, i64, i64)> {
        let groups = merged(it);
        let sum = groups.iter().map(|g| g.1 - g.0).sum();
        Some((groups.first()?.0, groups.last()?.1, sum))
    }

    /// HTA's `merge_kernel_intervals`: an event joins the group before it when it starts at or
    /// before the latest end so far.
    fn merged<'e>(it: impl Iterator<Item = &'e Ev>) -> Vec<(i64, i64)> {
        let mut groups: Vec<(i64, i64)> = Vec::new();
        let mut cummax: Option<i64> = None;
        for e in it {
            match (groups.last_mut(), cummax) {
                (Some(g), Some(c)) if e.ts <= c => {
                    g.0 = g.0.min(e.ts);
                    g.1 = g.1.max(e.end);
                }
                _ => groups.push((e.ts, e.end)),
            }
            cummax = Some(cummax.map_or(e.end, |c| c.max(e.end)));
        }
        groups
    }

    /// HTA 0.5.0's `get_comm_comp_overlap` for one rank over its default steps: the `ProfilerStep`
    /// numbers kept, and the communication and overlap time in whole us. `None` when HTA filters
    /// nothing (fewer than two step names), where the exact figure over the whole trace applies.
    pub(crate) fn comm_comp_overlap(trace: &Trace, links: &Links) -> Option<(Vec<i64>, i64, i64)> {
        let Events { evs, steps, .. } = events(trace, links);
        let steps = steps?;
        let comm = merged(evs.iter().filter(|e| e.comm));
        let comp = merged(evs.iter().filter(|e| e.compute));
        // HTA's status sweep: +1/-1 at communication starts/ends, +2/-2 at computation's, sorted
        // by time in melt order (stable); the time while the running sum is 3 overlaps.
        let mut status: Vec<(i64, i64)> = Vec::with_capacity(2 * (comm.len() + comp.len()));
        for (groups, w) in [(&comm, 1), (&comp, 2)] {
            status.extend(groups.iter().map(|g| (g.0, w)));
            status.extend(groups.iter().map(|g| (g.1, -w)));
        }
        status.sort_by_key(|s| s.0);
        let mut running = 0;
        let mut overlap = 0;
        for (k, &(t, w)) in status.iter().enumerate() {
            running += w;
            if running == 3 {
                overlap += status.get(k + 1).map_or(0, |n| n.0 - t);
            }
        }
        let communication = comm.iter().map(|g| g.1 - g.0).sum();
        Some((steps, communication, overlap))
    }

    fn events(trace: &Trace, links: &Links) -> Events {
        let origin = trace.meta.origin_ns;
        let kinds = &links.kinds;
        // HTA's device events: every event whose `args.stream` is set and not -1, on any lane and
        // of any category (its parser drops only `python_function` and `Trace` events), e.g. the
        // `cpu_op` of an Inductor Triton launch. Its breakdowns group them by that stream value.
        let stream_of = |lane: usize, i: usize| -> Option<i64> {
            let s = trace.slices(lane);
            if matches!(kinds.of_cat(s.cat[i]), Kind::Python | Kind::TraceSpan) {
                return None;
            }
            let stream = stream_value(trace.args.field(s.args[i], "stream")?);
            (stream != -1).then_some(stream)
        };
        let has_stream = |lane: usize, i: usize| stream_of(lane, i).is_some();
        // Step names, CPU correlations, the first event.
        let mut step_names: Vec<StrId> = Vec::new();
        let mut cpu_corr: Vec<(i64, i64)> = Vec::new();
        let mut steps: Vec<(i64, Option<i64>)> = Vec::new();
        let mut first: Option<i64> = None;
        // The earliest CPU event without a correlation: HTA's merge on `correlation` pairs a
        // device event without one (-1) with such events, e.g. a Triton launch `cpu_op`.
        let mut first_uncorrelated: Option<i64> = None;
        for (li, l) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(l);
            for i in 0..s.len() {
                if kinds.of_cat(s.cat[i]) == Kind::TraceSpan || has_stream(li, i) {
                    continue;
                }
                let name = trace.str(s.name[i]);
                let (ts, _) = round(origin, s.start_ns[i], s.dur_ns[i]);
                if name.starts_with("ProfilerStep") {
                    step_names.push(s.name[i]);
                    let number = name
                        .strip_prefix("ProfilerStep#")
                        .and_then(|n| n.parse().ok());
                    steps.push((ts, number));
                }
                if s.correlation[i] != NO_ID {
                    cpu_corr.push((s.correlation[i], ts));
                } else {
                    first_uncorrelated = Some(first_uncorrelated.map_or(ts, |f: i64| f.min(ts)));
                }
                if s.args[i] == ArgsId(0) {
                    first = Some(ts);
                }
            }
        }
        step_names.sort_unstable();
        step_names.dedup();
        cpu_corr.sort_unstable();
        let last_step = (step_names.len() > 1)
            .then(|| steps.iter().map(|s| s.0).max())
            .flatten();
        let kept_steps = last_step.map(|last| {
            let mut kept: Vec<i64> = steps
                .iter()
                .filter(|s| s.0 < last)
                .filter_map(|s| s.1)
                .collect();
            kept.sort_unstable();
            kept.dedup();
            kept
        });
        let mut notes = Vec::new();
        let first = first.filter(|&t| last_step.is_none_or(|last| t < last));

        let mut evs: Vec<Ev> = Vec::new();
        let mut dropped = 0usize;
        let mut fallback = 0usize;
        let mut streamless = 0usize;
        for (li, l) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(l);
            for i in 0..s.len() {
                if !has_stream(li, i) {
                    if l.is_gpu() && kinds.of_cat(s.cat[i]).is_gpu_busy() {
                        streamless += 1;
                    }
                    continue;
                }
                let corr = s.correlation[i];
                let k = cpu_corr.partition_point(|e| e.0 < corr);
                let matches = &cpu_corr[k..k + cpu_corr[k..].partition_point(|e| e.0 == corr)];
                let matches = if corr == NO_ID { &[][..] } else { matches };
                let runtime = match last_step {
                    // Kept (HTA also repeats it once per such CPU event, adding only negative
                    // gaps to its stream: not reproduced), with no launch time.
                    Some(last) if corr == NO_ID => {
                        if first_uncorrelated.is_none_or(|f| f >= last) {
                            dropped += 1;
                            continue;
                        }
                        None
                    }
                    Some(last) => match matches.iter().find(|m| m.1 < last) {
                        Some(m) => Some(m.1),
                        None => {
                            dropped += 1;
                            continue;
                        }
                    },
                    None => match matches.first() {
                        Some(m) => Some(m.1),
                        None if corr >= 0 && first.is_some() => {
                            fallback += 1;
                            first
                        }
                        None => None,
                    },
                };
                let (ts, end) = round(origin, s.start_ns[i], s.dur_ns[i]);
                evs.push(Ev {
                    ts,
                    end,
                    stream: stream_of(li, i).unwrap_or(-1),
                    lane: li,
                    order: i,
                    sync: kinds.of_cat(s.cat[i]) == Kind::Sync,
                    compute: is_compute(trace.str(s.name[i])),
                    comm: is_comm(trace.str(s.name[i])),
                    runtime,
                });
            }
        }
        if dropped > 0 {
            notes.push(format!(
                "hta: dropped {dropped} GPU events launched at or after the last ProfilerStep's start"
            ));
        }
        if fallback > 0 {
            notes.push(format!(
                "hta: {fallback} GPU events without a launch took the first event's start as launch time"
            ));
        }
        if streamless > 0 {
            notes.push(format!(
                "hta: {streamless} device ops (kernels, copies, fills) carry no stream arg, so \
                 HTA does not count them; the exact mode does"
            ));
        }
        evs.sort_by_key(|e| (e.ts, e.lane, e.order));
        Events {
            evs,
            notes,
            steps: kept_steps,
        }
    }

    /// HTA's stream idle breakdown of its events (sorted by start).
    fn stream_idle(trace: &Trace, evs: &[Ev], rank: i64) -> Vec<StreamIdle> {
        // Per stream: consecutive events by start, gaps against the previous event's end.
        #[derive(Default, Clone)]
        struct Acc {
            prev: Option<i64>,
            host: i64,
            kernel: i64,
            other: i64,
            gaps: usize,
            events: usize,
        }
        let mut acc: FxHashMap<i64, Acc> = FxHashMap::default();
        for e in evs.iter().filter(|e| !e.sync) {
            let a = acc.entry(e.stream).or_default();
            a.events += 1;
            if let Some(pe) = a.prev {
                let gap = e.ts - pe;
                a.gaps += 1;
                if e.runtime.is_some_and(|r| r > pe) {
                    a.host += gap;
                } else if gap < KERNEL_WAIT_NS / 1000 {
                    a.kernel += gap;
                } else {
                    a.other += gap;
                }
            }
            a.prev = Some(e.end);
        }
        // A stream is shown on the device whose lane has that stream id (-1 when only events of
        // other lanes, such as Triton launch ops, carry it).
        let device_of = |stream: i64| {
            trace.lanes.iter().find_map(|l| match l.kind {
                LaneKind::GpuStream { device, stream: s } if s == stream => Some(device),
                _ => None,
            })
        };
        let mut idle: Vec<StreamIdle> = acc
            .into_iter()
            .map(|(stream, a)| StreamIdle {
                rank,
                device: device_of(stream).unwrap_or(-1),
                stream,
                host_wait_us: a.host as f64,
                kernel_wait_us: a.kernel as f64,
                other_us: a.other as f64,
                gaps: a.gaps,
            })
            .collect();
        idle.sort_by_key(|s| (s.device < 0, s.device, s.stream));
        idle
    }
}
