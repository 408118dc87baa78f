//! How the trace was recorded: activities, shapes, stacks, memory profiling and the schedule.

use super::super::context::Context;
use super::super::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::backend;

pub(crate) const NO_CPU_ACTIVITY: Rule = Rule {
    id: "no_cpu_activity",
    theme: Theme::Recording,
    severity: Severity::Warning,
    recording: true,
    meaning:
        "the trace was recorded with the device activity only: no operator names, shapes or labels",
    // Runtime and driver calls do not count: PyTorch puts `CUDA_RUNTIME` and `CUDA_DRIVER` in
    // both its CPU and its CUDA activity sets (`kineto_shim.cpp`), so a CUDA-only trace still
    // holds them.
    fires: "device ops but no CPU operators (`cpu_op`), annotations (`user_annotation`) or Python \
            frames; runtime and driver calls do not count",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[],
};

/// [`NO_CPU_ACTIVITY`].
pub(crate) fn no_cpu_activity(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let idle = cx.idle;
    let c = &cx.census;
    let mut out = Vec::new();
    if c.gpu_ops > 0 && c.cpu_events == 0 {
        out.push(Finding {
            id: NO_CPU_ACTIVITY.id,
            severity: NO_CPU_ACTIVITY.severity,
            whatif: Vec::new(),
            title: "No CPU operators recorded".into(),
            detail: format!(
                "The trace has {} device ops{} but no CPU operators (cpu_op), record_function labels \
                 or Python frames: it was recorded with only the device activity. So there are no \
                 operator names, input shapes or labels, nothing says which operator launched which \
                 kernel, and the operator table lists only runtime calls: device time cannot be \
                 charged to the code that caused it.",
                c.gpu_ops,
                if c.runtime_calls > 0 {
                    format!(" and {} runtime/driver calls", c.runtime_calls)
                } else {
                    String::new()
                }
            ),
            advice: format!(
                "Profile with activities=[ProfilerActivity.CPU, {}] (and record_shapes=True for \
                 shapes) so operators and labels are recorded.",
                backend::profiler_activity(trace)
            ),
            evidence: Evidence {
                ranges: idle
                    .devices
                    .iter()
                    .map(|d| TimeRange {
                        start_ns: d.start_ns,
                        end_ns: d.end_ns,
                    })
                    .collect(),
                ..Default::default()
            },
        });
    }
    out
}

pub(crate) const NO_INPUT_SHAPES: Rule = Rule {
    id: "no_input_shapes",
    theme: Theme::Recording,
    severity: Severity::Info,
    recording: true,
    meaning: "input shapes were not recorded (`record_shapes` off)",
    fires: "operators, none with `Input Dims`",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[],
};

/// [`NO_INPUT_SHAPES`].
pub(crate) fn no_input_shapes(cx: &Context) -> Vec<Finding> {
    let c = &cx.census;
    let mut out = Vec::new();
    if c.cpu_ops > 0 && c.with_shapes == 0 {
        out.push(Finding {
            id: NO_INPUT_SHAPES.id,
            severity: NO_INPUT_SHAPES.severity,
            whatif: Vec::new(),
            title: "Input shapes were not recorded".into(),
            detail: format!(
                "None of the {} operators has Input Dims: record_shapes was off, so operators cannot \
                 be grouped by shape and shape-driven copies cannot be told apart.",
                c.cpu_ops
            ),
            advice: "Profile with record_shapes=True when looking for shape-dependent costs.".into(),
            evidence: Evidence {
                slices: c.first_ops.clone(),
                ..Default::default()
            },
        });
    }
    out
}

pub(crate) const MEMORY_PROFILING_ON: Rule = Rule {
    id: "memory_profiling_on",
    theme: Theme::Recording,
    severity: Severity::Info,
    recording: true,
    meaning: "memory profiling was on (`profile_memory=True`, roughly 15-20% overhead)",
    fires: "`[memory]` events present",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[],
};

/// [`MEMORY_PROFILING_ON`].
pub(crate) fn memory_profiling_on(cx: &Context) -> Vec<Finding> {
    let trace = cx.trace;
    let mut out = Vec::new();
    if !trace.memory.is_empty() {
        let m = &trace.memory;
        out.push(Finding {
            id: MEMORY_PROFILING_ON.id,
            severity: MEMORY_PROFILING_ON.severity,
            whatif: Vec::new(),
            title: "Memory profiling was on".into(),
            detail: format!(
                "{} [memory] events: profile_memory=True adds roughly 15-20% overhead to the timings.",
                m.len()
            ),
            advice: "Turn profile_memory off when only timing matters; profile memory in a \
                     separate run."
                .into(),
            evidence: Evidence {
                ranges: vec![TimeRange {
                    start_ns: m.ts_ns[0],
                    end_ns: m.ts_ns[m.len() - 1],
                }],
                ..Default::default()
            },
        });
    }
    out
}

pub(crate) const NO_PYTHON_STACK: Rule = Rule {
    id: "no_python_stack",
    theme: Theme::Recording,
    severity: Severity::Info,
    recording: true,
    meaning: "no Python call stacks (`with_stack` off)",
    fires: "operators but no `python_function` frames",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[],
};

/// [`NO_PYTHON_STACK`].
pub(crate) fn no_python_stack(cx: &Context) -> Vec<Finding> {
    let c = &cx.census;
    let mut out = Vec::new();
    if c.cpu_ops > 0 && c.python == 0 {
        out.push(Finding {
            id: NO_PYTHON_STACK.id,
            severity: NO_PYTHON_STACK.severity,
            whatif: Vec::new(),
            title: "No Python call stacks".into(),
            detail: format!(
                "{} operators and no python_function frames: with_stack was off, so an operator \
                 cannot be traced back to the Python line that called it.",
                c.cpu_ops
            ),
            advice: "Profile with with_stack=True to see which Python code issues each operator."
                .into(),
            evidence: Evidence::default(),
        });
    }
    out
}

/// Active steps below which step statistics rest on too few samples.
const MIN_ACTIVE_STEPS: usize = 5;

pub(crate) const FEW_ACTIVE_STEPS: Rule = Rule {
    id: "few_active_steps",
    theme: Theme::Recording,
    severity: Severity::Warning,
    recording: true,
    meaning: "too few active steps for step statistics (no schedule, or a short one)",
    fires: "fewer than {steps} `ProfilerStep#N` (none at all included)",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[Threshold::new("steps", Value::Count(MIN_ACTIVE_STEPS))],
};

/// [`FEW_ACTIVE_STEPS`].
pub(crate) fn few_active_steps(cx: &Context) -> Vec<Finding> {
    let steps = cx.steps;
    let c = &cx.census;
    let mut out = Vec::new();
    let n_steps = if steps.synthetic {
        0
    } else {
        steps.steps.len()
    };
    if n_steps > 0 {
        cx.measure(&FEW_ACTIVE_STEPS, "steps", Value::Count(n_steps));
    }
    if n_steps < MIN_ACTIVE_STEPS && c.cpu_events + c.gpu_ops > 0 {
        let detail = if n_steps == 0 {
            "The trace has no ProfilerStep#N: it was not recorded with a schedule and prof.step(), \
             so per-step figures stand for the whole trace."
                .to_string()
        } else {
            format!(
                "Only {n_steps} active step(s) were recorded (fewer than {MIN_ACTIVE_STEPS}): step \
                 statistics and averages rest on too few samples."
            )
        };
        out.push(Finding {
            id: FEW_ACTIVE_STEPS.id,
            severity: FEW_ACTIVE_STEPS.severity,
            whatif: Vec::new(),
            title: "Few active steps".into(),
            detail,
            advice: "Use schedule(wait=1, warmup=2, active=5) (or more active steps) and call \
                     prof.step() every iteration."
                .into(),
            evidence: Evidence {
                slices: cx.step_slices(),
                ranges: cx.step_ranges(),
            },
        });
    }
    out
}
