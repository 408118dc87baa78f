//! A trace cut short: the listed devices that lost every event.

use super::super::context::Context;
use super::super::types::{Evidence, Finding, Pricing, Rule, Severity, Theme};

pub(crate) const DEVICE_EVENTS_LOST: Rule = Rule {
    id: "device_events_lost",
    theme: Theme::Damage,
    severity: Severity::Critical,
    recording: false,
    meaning: "a truncated trace whose listed devices lost their events (the profiler writes them \
              after the host's); the rules that weigh host time against device time \
              (`cpu_copy_overhead`, `communication_heavy`) are then not run",
    fires: "`deviceProperties` lists a device with no event left",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[],
};

/// [`DEVICE_EVENTS_LOST`]: it comes first, and the rules that weigh host against device time
/// stay silent.
pub(crate) fn device_events_lost(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let mut out = Vec::new();
    // A cut trace whose listed devices lost every event (Kineto writes them last) holds the
    // host's side only: its shares of host against device time would blame the CPU for all of it.
    let lost = &steps.devices_without_events;
    if !lost.is_empty() {
        out.push(Finding {
            id: DEVICE_EVENTS_LOST.id,
            severity: DEVICE_EVENTS_LOST.severity,
            whatif: Vec::new(),
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
                "The file ends after {:.1} MB of JSON, {} into the trace. The profiler \
                 writes device events after the host's, so {} lost all of theirs: no figure \
                 here compares host time with device time, and the step breakdown counts the \
                 host only.",
                trace.stats.json_bytes as f64 / 1e6,
                crate::units::duration(trace.span_ns() as f64),
                lost.join(", ")
            ),
            advice: "Record the trace again and let the profiler finish writing it (the process \
                     was stopped, or the disk filled, while it wrote); or open a complete copy."
                .into(),
            evidence: Evidence::default(),
        });
    }
    out
}
