//! Device memory near its capacity (growth step over step is `memory::growth`'s).

use super::super::context::{pct, share, Context};
use super::super::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::backend;
use crate::analysis::memory::growth;
use crate::analysis::summary::device_name;
use crate::model::SliceRef;
use std::cmp::Reverse;

/// The peak's share of the device's memory above which it is nearly full.
const MEMORY_SHARE: f64 = 0.90;
/// Above this, the finding is critical.
const MEMORY_CRITICAL_SHARE: f64 = 0.97;

pub(crate) const MEMORY_NEAR_CAPACITY: Rule = Rule {
    id: "memory_near_capacity",
    theme: Theme::Memory,
    severity: Severity::Warning,
    recording: false,
    meaning: "a device's memory is nearly full: an out-of-memory error is one step away",
    fires: "a device's peak allocated or reserved memory over {share} of its memory (critical \
            over {critical})",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[
        Threshold::new("share", Value::Share(MEMORY_SHARE)),
        Threshold::new("critical", Value::Share(MEMORY_CRITICAL_SHARE)),
    ],
};

/// [`MEMORY_NEAR_CAPACITY`].
pub(crate) fn memory_near_capacity(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
    // The fullest device's share, told whether it is nearly full or not.
    let mut fullest: Option<f64> = None;
    for d in &trace.meta.device_properties {
        let Some(cap) = d.total_global_mem.filter(|&m| m > 0) else {
            continue;
        };
        // The device's curve (type 1: CUDA, which ROCm's devices are too). Without the trace's
        // own totals its level is unknown (a running sum of changes), and nothing is said.
        let Some(series) = cx
            .memory
            .devices
            .iter()
            .find(|x| x.device_type == 1 && x.device_id == d.id && x.totals_recorded)
        else {
            continue;
        };
        let level = |p: usize| series.allocated[p].max(series.reserved[p]);
        let peak = (0..series.events.len()).max_by_key(|&p| (level(p), Reverse(p)));
        let Some(p) = peak else { continue };
        let used = level(p);
        let m = &trace.memory;
        let i = series.events[p] as usize;
        let s = share(used, cap as i64);
        fullest = Some(fullest.map_or(s, |f| f.max(s)));
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
                id: MEMORY_NEAR_CAPACITY.id,
                whatif: Vec::new(),
                severity: if s > MEMORY_CRITICAL_SHARE {
                    Severity::Critical
                } else {
                    MEMORY_NEAR_CAPACITY.severity
                },
                title: format!("{} memory is nearly full", device_name(trace, d.id)),
                detail: format!(
                    "Memory use peaked at {:.2} GB (allocated {:.2} GB, reserved {:.2} GB) of the \
                     {:.2} GB of {} ({}).",
                    used as f64 / 1e9,
                    series.allocated[p] as f64 / 1e9,
                    series.reserved[p] as f64 / 1e9,
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
    if let Some(s) = fullest {
        cx.measure(&MEMORY_NEAR_CAPACITY, "share", Value::Share(s));
    }
    out
}

/// [`growth::MEMORY_GROWTH`] (the rule is `memory::growth`'s, where the memory series are), on
/// the memory curves `Derived` keeps.
pub(crate) fn memory_growth(cx: &Context) -> Vec<Finding> {
    growth::findings(cx.trace, cx.links, cx.memory, &cx.steps.steps)
}
