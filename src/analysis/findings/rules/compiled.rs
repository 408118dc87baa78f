//! `torch.compile` in the recorded steps: recompilations, graph breaks, compile work inside the
//! steps ([`crate::analysis::compiled`] reads the trace; these rules judge it).

use super::super::context::{duration, pct, share, Context, MAX_EVIDENCE};
use super::super::types::{
    Evidence, Finding, Pricing, Rule, Severity, Theme, Threshold, TimeRange, Value,
};
use crate::analysis::compiled::{Compile, EagerOp, Frame, FrameCompile};
use crate::model::SliceRef;

/// The CPU spans of the steps, summed: the denominator of compile time's share (compile work is
/// host work, counted inside the steps' CPU spans).
fn steps_cpu_ns(cx: &Context) -> i64 {
    cx.steps
        .steps
        .iter()
        .map(|s| s.cpu_end_ns - s.cpu_start_ns)
        .sum()
}

/// The compile ranges inside the steps.
fn compiles_in_steps<'c>(cx: &'c Context) -> impl Iterator<Item = &'c Compile> {
    cx.compiled.compiles.iter().filter(|c| c.step.is_some())
}

fn range_of(c: &Compile) -> TimeRange {
    TimeRange {
        start_ns: c.start_ns,
        end_ns: c.start_ns + c.dur_ns,
    }
}

/// A what-if that removes every slice named as these ranges are, if each such slice inside the
/// steps is one of them (else the edit would remove other work too) and no name holds the
/// grammar's own characters.
fn remove_ranges(cx: &Context, ranges: &[&Compile]) -> Vec<String> {
    let mut names: Vec<&str> = Vec::new();
    for c in ranges {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    let others = compiles_in_steps(cx)
        .filter(|c| !ranges.iter().any(|r| r.slice == c.slice))
        .any(|c| names.contains(&c.name.as_str()));
    let plain = names
        .iter()
        .all(|n| !n.is_empty() && !n.contains(['*', '|', '=', ':', '+']));
    if others || !plain || names.is_empty() {
        return Vec::new();
    }
    vec![format!("{}=0", names.join("|"))]
}

pub(crate) const RECOMPILATION: Rule = Rule {
    id: "recompilation",
    theme: Theme::Compiled,
    severity: Severity::Warning,
    recording: false,
    meaning: "a `torch.compile`d frame compiled again inside the steps (a guard failed: new \
              shape, dtype, constant)",
    fires: "a frame runs under a new compile id (`Torch-Compiled Region: F/C`) from a later step \
            on, or compile work for `F/C`, C > 0, lies in a step",
    whatif: "the recompile's compile ranges `=0` (`dynamo|entire_backward_compile=0`) where no \
             other compile work shares their names",
    pricing: Pricing::Fix,
    thresholds: &[],
};

/// [`RECOMPILATION`].
pub(crate) fn recompilation(cx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in &cx.compiled.frames {
        // Compile ids in the order the frame first ran them, each with the steps it ran in. An
        // id is new in the window when the ids before it (all older) ran only before it: ids
        // that take turns (two shapes, both compiled before the window) are cache hits.
        let ran: Vec<_> = f.compiles.iter().filter(|c| !c.steps.is_empty()).collect();
        let span = |c: &FrameCompile| {
            let at: Vec<usize> = c
                .steps
                .iter()
                .filter_map(|s| cx.compiled.steps.iter().position(|t| t.name == *s))
                .collect();
            (
                at.iter().copied().min().unwrap_or(0),
                at.iter().copied().max().unwrap_or(0),
            )
        };
        let new_ids: Vec<_> = ran
            .iter()
            .enumerate()
            .filter(|(k, c)| {
                *k > 0
                    && ran[..*k]
                        .iter()
                        .all(|e| e.compile < c.compile && span(e).1 <= span(c).0)
            })
            .map(|(_, c)| *c)
            .collect();
        let compiled_again: Vec<&Compile> = compiles_in_steps(cx)
            .filter(|c| c.id.is_some_and(|(frame, n)| frame == f.frame && n > 0))
            .collect();
        if new_ids.is_empty() && compiled_again.is_empty() {
            continue;
        }
        let runs: Vec<String> = ran
            .iter()
            .map(|c| format!("{} in {}", c.compile_id, c.steps.join(", ")))
            .collect();
        let compile_ns: i64 = compiled_again.iter().map(|c| c.dur_ns).sum();
        let compile_text = if compiled_again.is_empty() {
            "no compile work of it is recorded inside the steps".to_string()
        } else {
            let mut steps: Vec<&str> = Vec::new();
            for c in &compiled_again {
                if let Some(s) = c.step.as_deref().filter(|s| !steps.contains(s)) {
                    steps.push(s);
                }
            }
            format!(
                "compiling it again took {} inside {} ({})",
                duration(compile_ns),
                steps.join(", "),
                compiled_again
                    .iter()
                    .map(|c| format!("{} {}", c.name, duration(c.dur_ns)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut slices: Vec<SliceRef> = compiled_again.iter().map(|c| c.slice).collect();
        slices.extend(new_ids.iter().map(|c| c.first));
        slices.truncate(MAX_EVIDENCE);
        out.push(Finding {
            id: RECOMPILATION.id,
            severity: RECOMPILATION.severity,
            whatif: remove_ranges(cx, &compiled_again),
            title: format!("Compiled frame {} is recompiled inside the steps", f.frame),
            detail: format!(
                "Frame {} ran {}: {} new compile id{} inside the recorded steps; {}.",
                f.frame,
                runs.join(", then "),
                new_ids.len().max(1),
                if new_ids.len() > 1 { "s" } else { "" },
                compile_text
            ),
            advice: "A guard of the compiled frame failed (a new input shape, dtype or device, a \
                     changed Python constant or global), so Dynamo compiled it again. \
                     TORCH_LOGS=recompiles names the guard; mark sizes that change dynamic \
                     (torch._dynamo.mark_dynamic, or dynamic=True), pad inputs to a few fixed \
                     shapes, or pass changing constants as tensors. After \
                     torch._dynamo.config.recompile_limit recompilations the frame runs eagerly."
                .into(),
            evidence: Evidence {
                slices,
                ranges: compiled_again
                    .iter()
                    .map(|c| range_of(c))
                    .take(MAX_EVIDENCE)
                    .collect(),
            },
        });
    }
    out
}

pub(crate) const GRAPH_BREAK: Rule = Rule {
    id: "graph_break",
    theme: Theme::Compiled,
    severity: Severity::Warning,
    recording: false,
    meaning: "graph breaks: the compiled code split, eager operators between the pieces",
    fires: "a frame's region holds another frame's region (Dynamo's resume function) and eager \
            operators outside its graphs; names the regions per step and the top eager operators",
    whatif: "- (the fix saves fusion and Dynamo's per-region work, which no duration measures)",
    pricing: Pricing::Fix,
    thresholds: &[],
};

/// [`GRAPH_BREAK`].
pub(crate) fn graph_break(cx: &Context) -> Vec<Finding> {
    let broken: Vec<&Frame> = cx
        .compiled
        .frames
        .iter()
        .filter(|f| !f.resumes.is_empty() && !f.eager_ops.is_empty())
        .collect();
    if broken.is_empty() {
        return Vec::new();
    }
    let steps: Vec<_> = cx.compiled.steps.iter().filter(|s| s.regions > 0).collect();
    let (lo, hi) = (
        steps.iter().map(|s| s.regions).min().unwrap_or(0),
        steps.iter().map(|s| s.regions).max().unwrap_or(0),
    );
    let per_step = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo} to {hi}")
    };
    let eager_ns: i64 = steps.iter().map(|s| s.eager_between_ns).sum();
    let mut ops: Vec<&EagerOp> = broken.iter().flat_map(|f| &f.eager_ops).collect();
    ops.sort_by_key(|e| std::cmp::Reverse(e.cpu_ns));
    let top: Vec<String> = ops
        .iter()
        .take(5)
        .map(|e| format!("{} ({} calls, {})", e.name, e.calls, duration(e.cpu_ns)))
        .collect();
    let frames: Vec<String> = broken
        .iter()
        .flat_map(|f| {
            f.resumes
                .iter()
                .map(move |r| format!("frame {r} resumes inside frame {}", f.frame))
        })
        .collect();
    let steps_ns = steps_cpu_ns(cx);
    let mut slices: Vec<SliceRef> = Vec::new();
    for e in &ops {
        slices.extend(e.slices.iter().take(2));
    }
    slices.truncate(MAX_EVIDENCE);
    vec![Finding {
        id: GRAPH_BREAK.id,
        severity: GRAPH_BREAK.severity,
        // No what-if: the saving of a fix is Dynamo's per-region work and the fusion the break
        // prevents, which no duration in the trace measures; removing the eager operators would
        // claim their work disappears.
        whatif: Vec::new(),
        title: "Graph breaks split the compiled code".into(),
        detail: format!(
            "Each step runs {per_step} compiled regions ({}), with eager operators between them: \
             {} a step ({} of the steps), mostly {}.",
            frames.join("; "),
            duration(eager_ns / steps.len().max(1) as i64),
            pct(share(eager_ns, steps_ns)),
            top.join(", ")
        ),
        advice: "Dynamo stopped tracing where it could not (a branch on a tensor's value, \
                 .item(), print, a call to a disabled or unsupported function), ran that code \
                 eagerly and compiled the rest apart, without fusion across the break. \
                 TORCH_LOGS=graph_breaks or torch._dynamo.explain(fn)(*inputs) names each break; \
                 rewrite branches with torch.where or torch.cond, keep logging and .item() out of \
                 the compiled function, and compile with fullgraph=True to make a break an error."
            .into(),
        evidence: Evidence {
            slices,
            ranges: broken
                .iter()
                .flat_map(|f| &f.regions)
                .take(MAX_EVIDENCE)
                .map(|&r| {
                    let s = cx.trace.slices(r.lane as usize);
                    TimeRange {
                        start_ns: s.start_ns[r.index as usize],
                        end_ns: s.end_ns(r.index as usize),
                    }
                })
                .collect(),
        },
    }]
}

/// Compile work's share of the steps' CPU time from which they measure the compiler.
const COMPILE_SHARE: f64 = 0.05;

pub(crate) const COMPILE_IN_STEPS: Rule = Rule {
    id: "compile_in_steps",
    theme: Theme::Compiled,
    severity: Severity::Warning,
    recording: false,
    meaning: "compiling or autotuning inside the recorded steps",
    fires: "compile ranges (`... (dynamo_timed)`, or holding a `..._data: compile_id=F/C` label) \
            in steps, {share} of their CPU time or more",
    whatif: "the compile ranges `=0`",
    pricing: Pricing::Fix,
    thresholds: &[Threshold::new("share", Value::Share(COMPILE_SHARE))],
};

/// [`COMPILE_IN_STEPS`].
pub(crate) fn compile_in_steps(cx: &Context) -> Vec<Finding> {
    let inside: Vec<&Compile> = compiles_in_steps(cx).collect();
    let compile_ns: i64 = cx.compiled.steps.iter().map(|s| s.compile_ns).sum();
    let steps_ns = steps_cpu_ns(cx);
    let sh = share(compile_ns, steps_ns);
    // Measured where compiled code runs or compiles, and steps share its time: a trace without
    // torch.compile has no such share.
    let compiled = !cx.compiled.frames.is_empty() || !cx.compiled.compiles.is_empty();
    if compiled && steps_ns > 0 {
        cx.measure(&COMPILE_IN_STEPS, "share", Value::Share(sh));
    }
    if inside.is_empty() || sh < COMPILE_SHARE {
        return Vec::new();
    }
    let autotune_ns: i64 = inside.iter().filter(|c| c.autotune).map(|c| c.dur_ns).sum();
    let mut by_step: Vec<String> = Vec::new();
    for s in cx.compiled.steps.iter().filter(|s| s.compile_ns > 0) {
        by_step.push(format!("{} {}", s.name, duration(s.compile_ns)));
    }
    let mut longest = inside.clone();
    longest.sort_by_key(|c| std::cmp::Reverse(c.dur_ns));
    vec![Finding {
        id: COMPILE_IN_STEPS.id,
        severity: COMPILE_IN_STEPS.severity,
        whatif: remove_ranges(cx, &inside),
        title: "Compilation runs inside the profiled steps".into(),
        detail: format!(
            "{} of compile work{} ran inside the steps ({}), {} of their time: these steps \
             measure the compiler, not the model.",
            duration(compile_ns),
            if autotune_ns > 0 {
                format!(", {} of it autotuning,", duration(autotune_ns))
            } else {
                String::new()
            },
            by_step.join(", "),
            pct(sh)
        ),
        advice: "Run the compiled code on every input shape it will see before the profiler's \
                 active steps (schedule(wait=..., warmup=...) with enough warm-up steps), so that \
                 compiling and autotuning finish first; a recompilation inside the steps is its own \
                 finding."
            .into(),
        evidence: Evidence {
            slices: longest.iter().take(MAX_EVIDENCE).map(|c| c.slice).collect(),
            ranges: longest
                .iter()
                .take(MAX_EVIDENCE)
                .map(|c| range_of(c))
                .collect(),
        },
    }]
}
