//! Feeding the steps: the DataLoader, and host-device copies from pageable memory.

use super::super::context::{dur, evidence_of, ms, pct, share, Context};
use super::super::types::{Finding, Severity};
use super::super::DATALOADER_SHARE;
use crate::analysis::idle::WaitKind;

/// `dataloader_bound`: DataLoader time over `DATALOADER_SHARE` of step time.
pub(crate) fn dataloader_bound(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let idle = cx.idle;
    let c = &cx.census;
    let step_total = cx.step_total;
    let mut out = Vec::new();
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
    out
}

/// `pageable_memcpy`: copies from or to pageable host memory.
pub(crate) fn pageable_memcpy(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let idle = cx.idle;
    let c = &cx.census;
    let mut out = Vec::new();
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
    out
}
