//! The headline of a diff: the step time before and after, and the few rows that explain most of
//! the change ("step -18.4 ms (-23%): DataLoader -41.0 ms, aten::copy_ -3.1 ms, GPU idle -39.2 ms").
//!
//! Candidates are the step breakdown's categories, GPU idle time, and each operator's self CPU and
//! self device time (operators and runtime calls; labels and `ProfilerStep*` hold other rows'
//! time). They overlap (a DataLoader operator's time is also DataLoader time), so they explain the
//! change; they do not add up to it. The largest changes, whatever their sign, are named.

use super::{IdleDiff, Mode, OpDiff, StepsDiff};
use serde::Serialize;

/// Rows named in the headline.
const NAMED: usize = 3;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// One line, as the CLI prints it.
    pub headline: String,
    pub step_time_base_us: f64,
    pub step_time_new_us: f64,
    pub step_time_delta_us: f64,
    pub step_time_delta_pct: Option<f64>,
    /// The largest changes, largest first.
    pub contributors: Vec<Contributor>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Contributor {
    /// `step` (a breakdown category), `idle`, `op_cpu` (self CPU) or `op_device` (self device).
    pub source: &'static str,
    pub name: String,
    /// In the diff's mode (per step or total).
    pub delta_us: f64,
}

/// Milliseconds with a sign, one decimal; microseconds under a millisecond.
pub fn signed_time(us: f64) -> String {
    if us.abs() >= 1000.0 {
        format!("{:+.1} ms", us / 1000.0)
    } else {
        format!("{us:+.1} us")
    }
}

/// The same without a sign.
pub fn time(us: f64) -> String {
    if us.abs() >= 1000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.1} us")
    }
}

pub(super) fn summarize(steps: &StepsDiff, ops: &[OpDiff], idle: &IdleDiff, mode: Mode) -> Summary {
    let mut c: Vec<Contributor> = steps
        .delta
        .breakdown
        .iter()
        .map(|k| Contributor {
            source: "step",
            name: k.category.clone(),
            delta_us: k.us,
        })
        .collect();
    c.push(Contributor {
        source: "idle",
        name: "GPU idle".to_string(),
        delta_us: idle.delta.idle_us,
    });
    for o in ops.iter().filter(|o| o.kind == "op" || o.kind == "runtime") {
        c.push(Contributor {
            source: "op_cpu",
            name: o.name.clone(),
            delta_us: o.delta_self_cpu_us,
        });
        c.push(Contributor {
            source: "op_device",
            name: o.name.clone(),
            delta_us: o.delta_self_device_us,
        });
    }
    c.retain(|x| x.delta_us != 0.0);
    // Largest first; ties in a fixed order so a diff and its reverse name the same rows.
    c.sort_by(|a, b| {
        b.delta_us
            .abs()
            .total_cmp(&a.delta_us.abs())
            .then_with(|| (a.source, &a.name).cmp(&(b.source, &b.name)))
    });
    c.truncate(NAMED);

    let (b, n) = (&steps.base, &steps.new);
    let d = &steps.delta;
    let pct = d
        .step_time_pct
        .map_or(String::new(), |p| format!(" ({p:+.1}%)"));
    let named: Vec<String> = c
        .iter()
        .map(|x| {
            let what = match x.source {
                "op_cpu" => format!("{} self CPU", x.name),
                "op_device" => format!("{} self device", x.name),
                _ => x.name.clone(),
            };
            format!("{what} {}", signed_time(x.delta_us))
        })
        .collect();
    let per = match mode {
        Mode::PerStep => "per step",
        Mode::Total => "in total",
    };
    let mut headline = format!(
        "step {} -> {}, {}{pct} (over {} and {} steps)",
        time(b.step_time_us),
        time(n.step_time_us),
        signed_time(d.step_time_us),
        b.steps,
        n.steps,
    );
    if !named.is_empty() {
        headline.push_str(&format!("; {per}: {}", named.join(", ")));
    }
    Summary {
        headline,
        step_time_base_us: b.step_time_us,
        step_time_new_us: n.step_time_us,
        step_time_delta_us: d.step_time_us,
        step_time_delta_pct: d.step_time_pct,
        contributors: c,
    }
}
