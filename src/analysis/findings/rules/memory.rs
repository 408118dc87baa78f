//! Device memory near its capacity (growth step over step is `memory::growth`'s).

use super::super::context::{pct, share, Context};
use super::super::types::{Evidence, Finding, Severity, TimeRange};
use super::super::MEMORY_SHARE;
use crate::analysis::backend;
use crate::analysis::summary::device_name;
use crate::model::SliceRef;
use std::cmp::Reverse;

/// `memory_near_capacity`: peak allocated or reserved memory over `MEMORY_SHARE` of the device's.
pub(crate) fn memory_near_capacity(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
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
                    crate::parse::enclosing_slice(&trace.slices(lane as usize), m.ts_ns[i]).map(
                        |index| SliceRef {
                            lane,
                            index: index as u32,
                        },
                    )
                })
                .flatten();
            out.push(Finding {
                id: "memory_near_capacity",
                whatif: Vec::new(),
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
    out
}

/// `memory_growth`: a device's allocated floor rising step over step (the rule is
/// `memory::growth`'s, where the memory series are).
pub(crate) fn growth(cx: &Context) -> Vec<Finding> {
    if cx.trace.memory.is_empty() {
        return Vec::new();
    }
    let memory = crate::analysis::memory::Memory::series(cx.trace);
    crate::analysis::memory::growth::findings(cx.trace, cx.links, &memory, &cx.steps.steps)
}
