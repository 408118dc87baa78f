//! What a trace's memory events can show, in words, for a trace whose devices ran work: where no
//! device memory was recorded (only the CPU's, as in a ROCm trace recorded with `profile_memory`
//! whose allocator reported nothing) or next to nothing, a chart of it says nothing, so the
//! page says which devices have events, how many and how large, and what to record instead.

use super::Memory;
use crate::model::Trace;
use serde::Serialize;

/// Below this peak a device's memory is "next to nothing": a chart of it is a flat line.
pub const NEXT_TO_NOTHING_BYTES: i64 = 1 << 20;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Recorded {
    /// Whether any device's events reach [`NEXT_TO_NOTHING_BYTES`]: worth a chart.
    pub worth_a_chart: bool,
    /// The words, where the trace ran device work and recorded no device memory worth a chart;
    /// `None` otherwise (a CPU trace, a trace without memory events, or device memory recorded).
    pub note: Option<String>,
}

/// What `memory` shows of `trace`.
pub fn recorded(trace: &Trace, memory: &Memory) -> Recorded {
    let peak = |d: &super::DeviceSeries| d.peak().map_or(0, |p| d.allocated[p]);
    let worth_a_chart = memory
        .devices
        .iter()
        .any(|d| peak(d) >= NEXT_TO_NOTHING_BYTES);
    let device_work = trace.lanes.iter().any(|l| l.is_gpu());
    let device_memory = memory
        .devices
        .iter()
        .any(|d| d.device_type != 0 && peak(d) >= NEXT_TO_NOTHING_BYTES);
    if memory.devices.is_empty() || !device_work || device_memory {
        return Recorded {
            worth_a_chart,
            note: None,
        };
    }
    let had: Vec<String> = memory
        .devices
        .iter()
        .map(|d| {
            format!(
                "{} has {} memory event{}, at most {} allocated",
                d.name(),
                d.events.len(),
                if d.events.len() == 1 { "" } else { "s" },
                bytes(peak(d))
            )
        })
        .collect();
    let what = if memory.devices.iter().any(|d| d.device_type != 0) {
        "next to no device memory"
    } else {
        "no device memory"
    };
    Recorded {
        worth_a_chart,
        note: Some(format!(
            "This trace recorded {what}: {}. To see the GPUs' memory, record them with memory \
             profiling on: torch.profiler.profile(activities=[ProfilerActivity.CPU, \
             ProfilerActivity.CUDA], profile_memory=True) (CUDA stands for ROCm's GPUs too); for \
             every allocation with its stack, torch.cuda.memory._record_memory_history() and \
             _dump_snapshot().",
            had.join("; ")
        )),
    }
}

/// Bytes as the page prints them: B, kB, MB, GB in powers of 1000, a decimal below 100.
fn bytes(n: i64) -> String {
    let a = n.abs() as f64;
    let (unit, name) = if a >= 1e9 {
        (1e9, "GB")
    } else if a >= 1e6 {
        (1e6, "MB")
    } else if a >= 1e3 {
        (1e3, "kB")
    } else {
        return format!("{n} B");
    };
    let v = n as f64 / unit;
    let d = if v.abs() >= 100.0 { 0 } else { 1 };
    format!("{v:.d$} {name}")
}
