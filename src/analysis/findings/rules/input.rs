//! Feeding the steps: the DataLoader, and host-device copies from pageable memory.

use super::super::context::{dur, duration, evidence_of, pct, share, Context};
use super::super::types::{Finding, Pricing, Rule, Severity, Theme, Threshold, Value};
use crate::analysis::idle::WaitKind;

/// The DataLoader's share of step time above which input loading holds up the steps.
const DATALOADER_SHARE: f64 = 0.05;

pub(crate) const DATALOADER_BOUND: Rule = Rule {
    id: "dataloader_bound",
    theme: Theme::Input,
    severity: Severity::Warning,
    recording: false,
    meaning: "input loading holds up the step, and which part: the main process waiting for \
              workers (`_MultiProcessingDataLoaderIter`), fetching samples \
              (`Dataset.__getitem__`: up to the last call of the operator repeated once per \
              sample) or collating (what follows it)",
    fires: "DataLoader time (the TensorBoard plugin's: no device work alongside) over {share} of \
            step time",
    whatif: "`DataLoader=0`",
    pricing: Pricing::Fix,
    thresholds: &[Threshold::new("share", Value::Share(DATALOADER_SHARE))],
};

/// [`DATALOADER_BOUND`].
pub(crate) fn dataloader_bound(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let idle = cx.idle;
    let c = &cx.census;
    let step_total = cx.step_total;
    let mut out = Vec::new();
    let dl = share(steps.total.dataloader_ns, step_total);
    if steps.total.dataloader_ns > 0 {
        cx.measure(&DATALOADER_BOUND, "share", Value::Share(dl));
    }
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
                duration(waited)
            )
        } else {
            String::new()
        };
        let part = part(cx);
        let spans_ns: i64 = c
            .dataloader
            .iter()
            .map(|r| trace.columns.dur_ns[trace.row(*r)])
            .sum();
        let (said, advice) = match part {
            Some(p) => (format!(" {}", p.sentence()), p.advice()),
            None => (
                String::new(),
                "Use DataLoader(num_workers>0, pin_memory=True, persistent_workers=True, \
                 prefetch_factor), and move decoding and augmentation out of the main process."
                    .into(),
            ),
        };
        out.push(Finding {
            id: DATALOADER_BOUND.id,
            severity: DATALOADER_BOUND.severity,
            whatif: vec!["DataLoader=0".into()],
            title: "Input loading takes a large share of each step".into(),
            // The whole is the `__next__` spans' own time, of which the parts below are parts;
            // the plugin's DataLoader figure (what no device work overlapped) is a part of it.
            detail: format!(
                "The DataLoader's `__next__` took {} of {} of step time ({}, over {} calls; {} \
                 of it with no device work alongside, the TensorBoard plugin's DataLoader \
                 time){also}.{said}",
                duration(spans_ns),
                duration(step_total),
                pct(share(spans_ns, step_total)),
                c.dataloader.len(),
                duration(steps.total.dataloader_ns),
            ),
            advice,
            evidence: evidence_of(trace, &c.dataloader),
        });
    }
    out
}

/// Where a DataLoader's `__next__` spends its time, summed over its calls.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// The worker processes did not keep up: the main process waits in `__next__`.
    Workers(i64),
    /// In the main process (`num_workers=0`): fetching the samples (`Dataset.__getitem__`, one
    /// call of the same operators per sample), then collating them (what follows the last
    /// per-sample call).
    InProcess { fetch_ns: i64, collate_ns: i64 },
}

impl Part {
    fn sentence(self) -> String {
        match self {
            Part::Workers(ns) => format!(
                "It is the main process waiting for the worker processes ({}).",
                duration(ns)
            ),
            Part::InProcess {
                fetch_ns,
                collate_ns,
            } => {
                let what = if collate_ns > fetch_ns {
                    "collating the batch"
                } else {
                    "fetching the samples (Dataset.__getitem__)"
                };
                format!(
                    "Most of it is {what}: {} fetching, {} collating, in the main process \
                     (told apart by the operators' order: one run of the same calls per sample, \
                     then the collate).",
                    duration(fetch_ns),
                    duration(collate_ns)
                )
            }
        }
    }

    fn advice(self) -> String {
        match self {
            Part::Workers(_) => "The workers do not keep up: raise num_workers and \
                                 prefetch_factor, keep them with persistent_workers=True, make \
                                 __getitem__ cheaper (decode once, cache), and pin_memory=True."
                .into(),
            Part::InProcess {
                fetch_ns,
                collate_ns,
            } if collate_ns > fetch_ns => "Build the batch from tensors: return tensors from \
                 __getitem__ and let the default collate stack them (no .tolist(), numpy or \
                 nested Python lists in collate_fn); with DataLoader(num_workers>0) the collate \
                 runs in the workers too."
                .into(),
            Part::InProcess { .. } => "Fetching each sample costs: parse or decode once and \
                 keep the tensors (or cache decoded samples), and fetch in parallel with \
                 DataLoader(num_workers>0, persistent_workers=True, prefetch_factor), \
                 pin_memory=True where batches go to a GPU."
                .into(),
        }
    }
}

/// The costly part of the DataLoader's calls, where their threads' operators tell it.
fn part(cx: &Context) -> Option<Part> {
    let trace = cx.trace;
    let (mut workers, mut fetch_ns, mut collate_ns) = (0i64, 0i64, 0i64);
    for &r in &cx.census.dataloader {
        let s = trace.slices(r.lane as usize);
        let i = r.index as usize;
        if trace
            .slice_name(r)
            .contains("_MultiProcessingDataLoaderIter")
        {
            workers += s.dur_ns[i];
            continue;
        }
        let Some(sl) = cx.step_lanes.iter().find(|l| l.lane == r.lane as usize) else {
            continue;
        };
        let children = sl.children(i as u32);
        let mut counts: rustc_hash::FxHashMap<crate::model::StrId, usize> = Default::default();
        for &c in children {
            *counts.entry(s.name[c as usize]).or_default() += 1;
        }
        let Some((&per_sample, &n)) = counts
            .iter()
            .max_by_key(|&(n, c)| (c, std::cmp::Reverse(n)))
        else {
            continue;
        };
        if n < 4 {
            continue;
        }
        let last = children
            .iter()
            .rev()
            .find(|&&c| s.name[c as usize] == per_sample)
            .map(|&c| s.end_ns(c as usize))?;
        fetch_ns += last - s.start_ns[i];
        collate_ns += s.end_ns(i) - last;
    }
    if workers > fetch_ns + collate_ns {
        Some(Part::Workers(workers))
    } else if fetch_ns + collate_ns > 0 {
        Some(Part::InProcess {
            fetch_ns,
            collate_ns,
        })
    } else {
        None
    }
}

pub(crate) const PAGEABLE_MEMCPY: Rule = Rule {
    id: "pageable_memcpy",
    theme: Theme::Input,
    severity: Severity::Warning,
    recording: false,
    meaning: "host-device copies through pageable memory: a staging buffer, no overlap with \
              compute",
    fires: "any `Memcpy HtoD (Pageable -> Device)` (or `Device -> Pageable`)",
    whatif: "`pageable*0.5`",
    pricing: Pricing::Fix,
    thresholds: &[],
};

/// [`PAGEABLE_MEMCPY`].
pub(crate) fn pageable_memcpy(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let idle = cx.idle;
    let c = &cx.census;
    let mut out = Vec::new();
    if !c.pageable.is_empty() {
        let total: i64 = c.pageable.iter().map(|&r| dur(trace, r)).sum();
        out.push(Finding {
            id: PAGEABLE_MEMCPY.id,
            severity: PAGEABLE_MEMCPY.severity,
            whatif: vec!["pageable*0.5".into()],
            title: "Copies from pageable host memory".into(),
            detail: format!(
                "{} host-device copies ({} on the {}) used pageable memory: they go through a \
                 staging buffer and cannot overlap with compute.",
                c.pageable.len(),
                duration(total),
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
