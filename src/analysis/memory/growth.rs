//! `memory_growth`: the allocated floor of a device rises step over step.
//!
//! A step's floor is the least `Total Allocated` during its CPU span (see [`super::StepFloor`]).
//! In a steady training or inference loop every step frees what it allocated, so the floors stay
//! level; a floor that rises in every step ([`MEMORY_GROWTH`] says of how many, by how much) is
//! memory kept across steps: a tensor appended to a list, a loss summed without
//! `.item()`, a cache that grows. The evidence is the steps and the operators that allocated the
//! blocks never freed inside the trace.

use super::allocations::{pair, site_of};
use super::{Memory, NO_EVENT};
use crate::analysis::findings::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::links::Links;
use crate::analysis::steps::Step;
use crate::model::Trace;

/// Steps with a floor needed before a rise counts.
const MIN_STEPS: usize = 3;
/// Total rise of the floor, first step to last, that counts.
const MIN_RISE_BYTES: i64 = 1 << 20;

pub const MEMORY_GROWTH: Rule = Rule {
    id: "memory_growth",
    theme: Theme::Memory,
    severity: Severity::Warning,
    recording: false,
    meaning: "memory kept across steps: a device's allocated floor rises step over step",
    fires: "the least allocated memory of each step (its floor) rises in every one of {steps} \
            steps or more, by {rise} or more from the first to the last",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[
        Threshold::new("steps", Value::Count(MIN_STEPS)),
        Threshold::new("rise", Value::Bytes(MIN_RISE_BYTES)),
    ],
};

/// At most this many slices in the evidence.
const MAX_EVIDENCE: usize = 10;

/// [`MEMORY_GROWTH`]. `memory` needs only the series ([`Memory::series`]): the allocations are
/// paired here, and only when the floor rises.
pub fn findings(trace: &Trace, links: &Links, memory: &Memory, steps: &[Step]) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in &memory.devices {
        let floors = d.step_floors(trace, steps);
        if floors.len() < MIN_STEPS {
            continue;
        }
        let rising = floors
            .windows(2)
            .all(|w| w[1].floor_bytes > w[0].floor_bytes);
        let (first, last) = (&floors[0], &floors[floors.len() - 1]);
        let rise = last.floor_bytes - first.floor_bytes;
        if !rising || rise < MIN_RISE_BYTES {
            continue;
        }
        // The blocks allocated inside the steps and never freed, largest first.
        let (t0, t1) = steps
            .iter()
            .filter(|s| s.number.is_some())
            .fold((i64::MAX, i64::MIN), |(a, b), s| {
                (a.min(s.cpu_start_ns), b.max(s.cpu_end_ns))
            });
        let allocations = if d.addresses_recorded {
            pair(trace, &d.events)
        } else {
            Vec::new()
        };
        let mut kept: Vec<_> = allocations
            .iter()
            .filter(|a| {
                a.alloc_event != NO_EVENT
                    && a.free_event == NO_EVENT
                    && (t0..t1).contains(&trace.memory.ts_ns[a.alloc_event as usize])
            })
            .collect();
        kept.sort_by_key(|a| std::cmp::Reverse(a.bytes));
        let slices = kept
            .iter()
            .filter_map(|a| site_of(trace, links, a.alloc_event).op)
            .take(MAX_EVIDENCE)
            .collect();
        let per_step = rise as f64 / (floors.len() - 1) as f64;
        out.push(Finding {
            id: MEMORY_GROWTH.id,
            severity: MEMORY_GROWTH.severity,
            whatif: Vec::new(),
            title: format!("Memory on {} grows step over step", d.name()),
            detail: format!(
                "The least allocated memory of each step rose in every one of {} steps, from \
                 {:.1} MB in step {} to {:.1} MB in step {} ({:.2} MB per step); {} blocks \
                 allocated in the steps were never freed.",
                floors.len(),
                first.floor_bytes as f64 / 1e6,
                first.step,
                last.floor_bytes as f64 / 1e6,
                last.step,
                per_step / 1e6,
                kept.len()
            ),
            advice: "Something keeps tensors alive across steps: a list of outputs or losses \
                     (store loss.item() instead), a growing cache, a graph kept by \
                     retain_graph. The allocating operators of the never-freed blocks are the \
                     evidence; the memory view's live allocations show where they are held."
                .into(),
            evidence: Evidence {
                slices,
                ranges: steps
                    .iter()
                    .filter(|s| s.number.is_some())
                    .take(MAX_EVIDENCE)
                    .map(|s| TimeRange {
                        start_ns: s.cpu_start_ns,
                        end_ns: s.cpu_end_ns,
                    })
                    .collect(),
            },
        });
    }
    out
}
