//! What a trace holds: sizes, event counts, lanes, devices, diagnostics (`sightline summary`).
//!
//! `diagnostics` lists damage only, so it is empty for a file as the profiler wrote it;
//! `observations` lists the facts of healthy traces (flows whose start was lost, slices that
//! overlap without nesting), each with what it means (see [`crate::model::DiagKind::is_damage`]).

use crate::model::category::DeviceName;
use crate::model::{DeviceProperties, DiagKind, Diagnostic, LaneKind, Trace};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Summary {
    pub file: FileInfo,
    pub schema: String,
    pub rank: i64,
    pub world_size: Option<i64>,
    pub events: EventCounts,
    pub span_ns: i64,
    pub lanes: Vec<LaneInfo>,
    pub devices: Vec<DeviceProperties>,
    pub flows: usize,
    pub memory_events: usize,
    pub counters: usize,
    pub model: ModelSize,
    pub truncated: bool,
    /// How far a truncated file got, and what it lost (`None` for a complete file).
    pub cut: Option<Cut>,
    /// Damage: what was cut, refused or repaired.
    pub diagnostics: Vec<Diagnostic>,
    /// Facts of healthy traces, shown quietly.
    pub observations: Vec<Observation>,
}

/// A fact of a healthy trace, counted.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Observation {
    pub kind: DiagKind,
    pub count: u64,
    /// What it means, for a user.
    pub explanation: &'static str,
    /// The first occurrence.
    pub detail: String,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FileInfo {
    pub bytes: u64,
    pub json_bytes: u64,
    pub gzipped: bool,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventCounts {
    pub total: u64,
    pub by_phase: BTreeMap<String, u64>,
    pub by_category: BTreeMap<String, u64>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LaneInfo {
    pub kind: &'static str,
    pub pid: i64,
    pub tid: i64,
    pub name: String,
    pub device: Option<i64>,
    pub stream: Option<i64>,
    pub slices: usize,
    pub rows: u32,
    pub overlapping: u32,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModelSize {
    pub slices: usize,
    /// Heap bytes of the slice columns, flows and memory events.
    pub column_bytes: usize,
    /// Heap bytes of the interned strings.
    pub string_bytes: usize,
    /// Heap bytes of the args store.
    pub args_bytes: usize,
    /// Heap bytes of everything: columns, interned strings, args.
    pub total_bytes: usize,
    /// Column bytes per slice: strings and args aside.
    pub bytes_per_slice: f64,
}

/// A lane's display name: the thread name from metadata, else a name made from its ids.
pub fn lane_name(trace: &Trace, lane: usize) -> String {
    let l = &trace.lanes[lane];
    if let Some(n) = &l.name {
        return n.trim().to_string();
    }
    match l.kind {
        LaneKind::GpuStream { device, stream } => {
            format!("{} {device} stream {stream}", device_word(trace, l.process))
        }
        LaneKind::Cpu => match &l.tid_label {
            Some(t) => t.clone(),
            None => format!("thread {}", l.tid),
        },
    }
}

/// What the device of a process is called: the word of its label or name (`MTIA` for
/// `MTIA 0`), else `GPU`.
pub fn device_word(trace: &Trace, process: u32) -> &str {
    trace
        .processes
        .get(process as usize)
        .and_then(|p| {
            [p.labels.as_deref(), p.name.as_deref()]
                .into_iter()
                .flatten()
                .find_map(crate::model::category::device_label)
        })
        .map_or("GPU", |(word, _)| word)
}

/// What the trace's devices are called in sentences ("the MTIA waited ..."): the word their
/// processes are labelled with when they all share one (`MTIA`, `XPU`), `GPU` when none says
/// (CUDA and ROCm, and any trace that does not name its devices), `device` when they differ.
pub fn devices_word(trace: &Trace) -> String {
    let mut words = trace
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.device.is_some())
        .map(|(i, _)| device_word(trace, i as u32));
    let Some(first) = words.next() else {
        return "GPU".into();
    };
    if words.all(|w| w == first) {
        first.into()
    } else {
        "device".into()
    }
}

/// The devices of the trace: `deviceProperties` as the file gives them, then each device that
/// holds lanes but has no properties (MTIA and XPU traces write none), named as its process is
/// labelled (`MTIA 0`) and with nothing else known.
/// How far a truncated file got. The skipped-event count alone undercounts the loss (one event
/// cut in half is skipped; everything after it was never written), and Kineto writes the device
/// events after the host's, so a trace cut in half keeps its `deviceProperties` and loses its
/// kernels: a reader must not take it for a CPU-only trace.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Cut {
    /// Bytes of JSON read before the file ended (after decompression).
    pub json_bytes: u64,
    /// Events read.
    pub events: u64,
    /// The span the events read cover, from the first to the last.
    pub span_ns: i64,
    /// The devices the file lists (`deviceProperties`) that have no event left, by name (`GPU 0`).
    pub devices_without_events: Vec<String>,
    /// All of the above in a sentence, for the first line of a report.
    pub sentence: String,
}

/// [`Cut`] of a truncated trace; `None` for a complete one.
pub fn cut(trace: &Trace) -> Option<Cut> {
    let s = &trace.stats;
    if !s.truncated {
        return None;
    }
    let lost = devices_without_events(trace);
    let mut sentence = format!(
        "The file is truncated: it ends after {:.1} MB of JSON, {} events, {} into the trace; \
         what came after is lost.",
        s.json_bytes as f64 / 1e6,
        s.events_total,
        crate::units::duration(trace.span_ns() as f64)
    );
    if !lost.is_empty() {
        sentence.push_str(&format!(
            " Its {} listed {} ({}) {} no events left (the profiler writes device events after \
             the host's), so nothing here compares host time with device time.",
            lost.len(),
            if lost.len() == 1 { "device" } else { "devices" },
            lost.join(", "),
            if lost.len() == 1 { "has" } else { "have" }
        ));
    }
    Some(Cut {
        json_bytes: s.json_bytes,
        events: s.events_total,
        span_ns: trace.span_ns(),
        devices_without_events: lost,
        sentence,
    })
}

/// In a truncated trace, the devices listed in `deviceProperties` without a single device op
/// left, by name; empty for a complete trace (a trace recorded with CPU activities only on a
/// machine with GPUs lists them too, and is not damaged).
pub fn devices_without_events(trace: &Trace) -> Vec<String> {
    if !trace.stats.truncated {
        return Vec::new();
    }
    let with_events: rustc_hash::FxHashSet<i64> = trace
        .gpu_lanes()
        .filter(|(_, l)| !l.slice_count() == 0)
        .filter_map(|(_, l)| match l.kind {
            LaneKind::GpuStream { device, .. } => Some(device),
            LaneKind::Cpu => None,
        })
        .collect();
    trace
        .meta
        .device_properties
        .iter()
        .filter(|d| !with_events.contains(&d.id))
        .map(|d| device_name(trace, d.id).to_string())
        .collect()
}

fn devices(trace: &Trace) -> Vec<DeviceProperties> {
    let mut out = trace.meta.device_properties.clone();
    let mut listed: rustc_hash::FxHashSet<i64> = out.iter().map(|d| d.id).collect();
    for (_, lane) in trace.gpu_lanes() {
        if let LaneKind::GpuStream { device, .. } = lane.kind {
            if listed.insert(device) {
                out.push(DeviceProperties {
                    id: device,
                    name: device_name(trace, device).to_string(),
                    ..Default::default()
                });
            }
        }
    }
    out
}

/// A device as its users call it: `GPU 0`, `MTIA 0`, `XPU 1` (the word of its process's label).
pub fn device_name(trace: &Trace, device: i64) -> DeviceName {
    DeviceName::new(word_of_device(trace, device), device)
}

/// The word of a device (by its index): its process's, as [`device_word`] reads it; `GPU` when
/// no process holds the device.
pub fn word_of_device(trace: &Trace, device: i64) -> &str {
    trace
        .device_process(device)
        .map_or("GPU", |p| device_word(trace, p))
}

pub fn summarize(trace: &Trace) -> Summary {
    let s = &trace.stats;
    let slices = trace.slice_count();
    let column_bytes = trace.columns_heap_bytes();
    Summary {
        file: FileInfo {
            bytes: s.input_bytes,
            json_bytes: s.json_bytes,
            gzipped: s.gzipped,
        },
        schema: trace.meta.schema.clone(),
        rank: trace.rank(),
        world_size: trace.meta.distributed.as_ref().and_then(|d| d.world_size),
        events: EventCounts {
            total: s.events_total,
            by_phase: s.by_phase.iter().cloned().collect(),
            by_category: s.by_category.iter().cloned().collect(),
        },
        span_ns: trace.span_ns(),
        lanes: trace
            .lanes
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (kind, device, stream) = match l.kind {
                    LaneKind::Cpu => ("cpu", None, None),
                    LaneKind::GpuStream { device, stream } => ("gpu", Some(device), Some(stream)),
                };
                LaneInfo {
                    kind,
                    pid: l.pid,
                    tid: l.tid,
                    name: lane_name(trace, i),
                    device,
                    stream,
                    slices: l.slice_count(),
                    rows: l.rows,
                    overlapping: l.overlapping,
                }
            })
            .collect(),
        devices: devices(trace),
        flows: trace.flows.len(),
        memory_events: trace.memory.len(),
        counters: trace.counters.len(),
        model: ModelSize {
            slices,
            column_bytes,
            string_bytes: trace.strings.heap_bytes(),
            args_bytes: trace.args.heap_bytes(),
            total_bytes: trace.heap_bytes(),
            bytes_per_slice: if slices == 0 {
                0.0
            } else {
                column_bytes as f64 / slices as f64
            },
        },
        truncated: s.truncated,
        cut: cut(trace),
        diagnostics: trace.diagnostics.damage().cloned().collect(),
        observations: trace
            .diagnostics
            .observations()
            .map(|d| Observation {
                kind: d.kind,
                count: d.count,
                explanation: d.kind.explanation(),
                detail: d.detail.clone(),
            })
            .collect(),
    }
}
