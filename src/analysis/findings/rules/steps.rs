//! What the steps say: a warm-up step inside the window.

use super::super::context::{duration, Context};
use super::super::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::backend;

/// A first step's length over the median step's from which it holds warm-up work.
const WARMUP_RATIO: f64 = 1.5;

pub(crate) const WARMUP_OUTLIER: Rule = Rule {
    id: "warmup_outlier",
    theme: Theme::Steps,
    severity: Severity::Warning,
    recording: false,
    meaning: "a first step much slower than the rest: warm-up inside the recorded window",
    fires: "one of the first two of 3+ steps at {ratio} the median or more",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[Threshold::new("ratio", Value::Times(WARMUP_RATIO))],
};

/// [`WARMUP_OUTLIER`].
pub(crate) fn warmup_outlier(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let steps = cx.steps;
    let mut out = Vec::new();
    if !steps.synthetic && steps.steps.len() >= 3 {
        let median = steps.stats.median_ns;
        if let Some(ratio) = steps
            .stats
            .first
            .iter()
            .take(2)
            .map(|f| f.vs_median)
            .reduce(f64::max)
        {
            cx.measure(&WARMUP_OUTLIER, "ratio", Value::Times(ratio));
        }
        if let Some(f) = steps
            .stats
            .first
            .iter()
            .take(2)
            .zip(&steps.steps)
            .filter(|(f, _)| f.vs_median >= WARMUP_RATIO)
            .max_by(|a, b| a.0.vs_median.total_cmp(&b.0.vs_median))
        {
            let (first, step) = f;
            out.push(Finding {
                id: WARMUP_OUTLIER.id,
                severity: WARMUP_OUTLIER.severity,
                whatif: Vec::new(),
                title: "A first step is much slower than the others".into(),
                detail: format!(
                    "{} took {}, {:.1}x the median step ({}): warm-up work ({}) falls inside the \
                     recorded window.",
                    first.name,
                    duration(first.dur_ns),
                    first.vs_median,
                    duration(median as i64),
                    backend::warmup_work(backend::of_trace(trace))
                ),
                advice: "Skip warm-up iterations with schedule(wait=1, warmup=2, ...) so that the \
                         active steps show the steady state."
                    .into(),
                evidence: Evidence {
                    slices: step.slice.into_iter().collect(),
                    ranges: vec![TimeRange {
                        start_ns: step.start_ns,
                        end_ns: step.end_ns,
                    }],
                },
            });
        }
    }
    out
}
