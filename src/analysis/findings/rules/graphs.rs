//! What CUDA/HIP graphs cost inside the steps: instantiating one.

use super::super::context::{duration, evidence_of, pct, share, Context};
use super::super::types::{Finding, Pricing, Rule, Severity, Theme, Threshold, Value};

/// The instantiations' share of the steps from which they are worth a finding.
const GRAPH_INSTANTIATION_SHARE: f64 = 0.01;

pub(crate) const GRAPH_INSTANTIATION: Rule = Rule {
    id: "graph_instantiation",
    theme: Theme::Graphs,
    severity: Severity::Warning,
    recording: false,
    meaning: "CUDA/HIP graphs instantiated inside the steps",
    fires: "`*GraphInstantiate*` calls in the steps take {share} of them or more",
    whatif: "`NAME=0` (the instantiation calls)",
    pricing: Pricing::Fix,
    thresholds: &[Threshold::new(
        "share",
        Value::Share(GRAPH_INSTANTIATION_SHARE),
    )],
};

/// [`GRAPH_INSTANTIATION`]. Instantiation (`cudaGraphInstantiate`) costs milliseconds
/// and belongs to warm-up: a graph instantiated in every step is captured again each time (a
/// changed shape or a cache that does not hold it) and saves nothing.
pub(crate) fn graph_instantiation(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let in_steps: Vec<_> = cx
        .graphs
        .instantiated
        .iter()
        .copied()
        .filter(|r| {
            let t = trace.columns.start_ns[trace.row(*r)];
            cx.steps
                .steps
                .iter()
                .any(|s| s.start_ns <= t && t < s.end_ns)
        })
        .collect();
    let ns: i64 = in_steps
        .iter()
        .map(|r| trace.columns.dur_ns[trace.row(*r)])
        .sum();
    let sh = share(ns, cx.step_total);
    if !in_steps.is_empty() {
        cx.measure(&GRAPH_INSTANTIATION, "share", Value::Share(sh));
    }
    if in_steps.is_empty() || sh < GRAPH_INSTANTIATION_SHARE {
        return Vec::new();
    }
    let names: Vec<String> = in_steps
        .iter()
        .map(|&r| trace.slice_name(r).to_string())
        .collect();
    let per_step = cx.steps.steps.len().max(1);
    vec![Finding {
        id: GRAPH_INSTANTIATION.id,
        severity: GRAPH_INSTANTIATION.severity,
        // The instantiation calls removed: what the steps cost once the graphs are reused.
        whatif: vec![format!("{}=0", names[0])],
        title: "Graphs are instantiated inside the steps".into(),
        detail: format!(
            "{} graph instantiations ({}) take {} inside the steps ({} of them, {:.1} a step).",
            in_steps.len(),
            names[0],
            duration(ns),
            pct(sh),
            in_steps.len() as f64 / per_step as f64,
        ),
        advice: "Capture and instantiate each graph once, before the measured steps, and replay \
                 it: keep the shapes a graph was captured for (pad to a few bucket sizes), and \
                 keep the graphs (torch.cuda.CUDAGraph, torch.compile's mode=\"reduce-overhead\") \
                 alive between steps."
            .into(),
        evidence: evidence_of(trace, &in_steps),
    }]
}
