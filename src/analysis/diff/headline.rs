//! The headline of a diff: the median step before and after (the Overviews' statistic: one slow
//! step moves a mean, not a median), and the few rows that explain most of the change ("median
//! step 177.4 ms -> 122.9 ms, -54.5 ms (-30.7%): DataLoader -41.0 ms, ...").
//!
//! A change smaller than the noise, the larger of the two runs' median absolute deviations of
//! their step lengths, is told as noise: the headline says the step did not change beyond it. A
//! row is named only where it moved more than its own noise: a category more than the larger of
//! its two deviations over the steps, an operator or the idle time (the digest keeps no per-step
//! figures of them) more than the step's.
//!
//! Candidates are the step breakdown's categories, GPU idle time, and each operator's self CPU and
//! self device time (operators and runtime calls; labels and `ProfilerStep*` hold other rows'
//! time). They overlap (a DataLoader operator's time is also DataLoader time), so they explain the
//! change; they do not add up to it. The largest changes, whatever their sign, are named.

use super::explain::{self, Explained};
use super::{IdleDiff, Mode, OpDiff, StepsDiff};
use crate::analysis::digest::Digest;
use serde::Serialize;

/// Rows named in the headline.
const NAMED: usize = 3;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "DiffSummary"))]
pub struct Summary {
    /// One line, as the CLI prints it.
    pub headline: String,
    /// The statistic of the step times below: `median`.
    pub statistic: &'static str,
    /// The median step before and after, the change and the change in percent of the base.
    pub step_time_base_us: f64,
    pub step_time_new_us: f64,
    pub step_time_delta_us: f64,
    pub step_time_delta_pct: Option<f64>,
    /// The larger of the two runs' median absolute deviations of their step lengths, and
    /// whether the change is within it.
    pub noise_us: f64,
    pub noise: bool,
    /// The largest changes, largest first.
    pub contributors: Vec<Contributor>,
    /// The change explained by step category, then operator, per step whatever the mode
    /// ([`explain`]): the categories taken, largest first; empty where the change is within the
    /// noise.
    pub explained: Vec<Explained>,
    /// How much of the change the named operators account for, in percent, and what they leave
    /// (`change - explained`); absent where nothing is explained.
    pub explained_pct: Option<f64>,
    pub unexplained_us: Option<f64>,
    /// The part of the change that no category holds, within `unexplained_us`: the median step's
    /// change less the sum of the categories' median changes (a statistic's, not a cause).
    pub median_gap_us: Option<f64>,
    /// The explanation as the CLI prints it under the headline, a line each.
    pub explanation: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Contributor {
    /// `step` (a breakdown category), `idle`, `op_cpu` (self CPU) or `op_device` (self device).
    pub source: &'static str,
    pub name: String,
    /// In the diff's mode (per step or total).
    pub delta_us: f64,
}

/// A change given in µs (the digests' scale), in the words of [`crate::units::signed_duration`].
pub fn signed_time(us: f64) -> String {
    crate::units::signed_duration(us * 1e3)
}

/// A duration given in µs, in the words of [`crate::units::duration`].
pub fn time(us: f64) -> String {
    crate::units::duration(us * 1e3)
}

pub(super) fn summarize(
    (base, new): (&Digest, &Digest),
    steps: &StepsDiff,
    ops: &[OpDiff],
    idle: &IdleDiff,
    mode: Mode,
) -> Summary {
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
    let (b, n) = (&steps.base, &steps.new);
    let noise_us = b.mad_us.max(n.mad_us);
    let delta_us = n.median_us - b.median_us;
    let noise = delta_us.abs() < noise_us;
    // A row that moved less than it differs from step to step explains nothing.
    c.retain(|x| {
        let floor = if x.source == "step" {
            steps.category_noise_us(&x.name)
        } else {
            noise_us
        };
        x.delta_us != 0.0 && x.delta_us.abs() >= floor
    });
    // Largest first; ties in a fixed order so a diff and its reverse name the same rows.
    c.sort_by(|a, b| {
        b.delta_us
            .abs()
            .total_cmp(&a.delta_us.abs())
            .then_with(|| (a.source, &a.name).cmp(&(b.source, &b.name)))
    });
    c.truncate(NAMED);

    let delta_pct = (b.median_us != 0.0).then(|| 100.0 * delta_us / b.median_us);
    let pct = delta_pct.map_or(String::new(), |p| format!(" ({p:+.1}%)"));
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
        "median step {} -> {}, {}{pct} (over {} and {} steps)",
        time(b.median_us),
        time(n.median_us),
        signed_time(delta_us),
        b.steps,
        n.steps,
    );
    if noise {
        headline.push_str(&format!(
            ": within the noise (the steps of a run differ by {} about their median)",
            time(noise_us)
        ));
    }
    if !named.is_empty() {
        headline.push_str(&format!("; {per}: {}", named.join(", ")));
    }
    let why = explain::explain(base, new, steps, delta_us, noise);
    Summary {
        headline,
        statistic: "median",
        step_time_base_us: b.median_us,
        step_time_new_us: n.median_us,
        step_time_delta_us: delta_us,
        step_time_delta_pct: delta_pct,
        noise_us,
        noise,
        contributors: c,
        explained: why.categories,
        explained_pct: why.explained_pct,
        unexplained_us: why.unexplained_us,
        median_gap_us: why.median_gap_us,
        explanation: why.lines,
    }
}
