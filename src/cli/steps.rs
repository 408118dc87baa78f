//! `sightline steps FILE [--json]`

use super::args::Trace;
use super::idle::short;
use super::{load, print_json};
use sightline::analysis::steps::{Breakdown, StepsReport};
use sightline::query::Steps;

pub fn run(opts: &Trace) -> Result<(), String> {
    let loaded = load(&opts.file)?;
    let report = loaded.ask(&Steps {})?;
    if opts.json {
        return print_json(report);
    }
    print(report);
    Ok(())
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn row(label: &str, length_ns: i64, dur_ns: i64, b: &Breakdown) -> String {
    let mut line = format!(
        "  {:<22} {:>11} {:>11}",
        short(label, 22),
        ms(length_ns as f64),
        ms(dur_ns as f64)
    );
    for (_, ns) in b.fields() {
        line.push_str(&format!(" {:>10}", ms(ns as f64)));
    }
    line
}

/// The readable steps report (also a section of `sightline report`).
pub fn print(r: &StepsReport) {
    if r.steps.is_empty() {
        println!("Steps: none (the trace holds no events)");
        return;
    }
    if r.synthetic {
        println!("Steps: no ProfilerStep#N in this trace; the whole trace stands as one step");
    } else {
        println!(
            "Steps: {} (ms; length: the ProfilerStep span; the TensorBoard plugin's breakdown \
             covers the step with its device work)",
            r.steps.len()
        );
    }
    if r.dropped_tail_steps > 0 {
        println!(
            "  {} trailing step(s) dropped: their {} work looks incompletely captured",
            r.dropped_tail_steps, r.device_word
        );
    }
    let mut header = format!("  {:<22} {:>11} {:>11}", "step", "length", "with device");
    for (label, _) in Breakdown::default().fields() {
        let label = if label == "Communication" {
            "Comm"
        } else {
            label
        };
        header.push_str(&format!(" {:>10}", label));
    }
    println!("{header}");
    for s in &r.steps {
        println!(
            "{}",
            row(
                &super::shown_name(&s.name),
                s.length_ns,
                s.dur_ns,
                &s.breakdown
            )
        );
    }
    let total = r.total.total_ns();
    let length: i64 = r.steps.iter().map(|s| s.length_ns).sum();
    println!("{}", row("total", length, total, &r.total));
    let mut pct = format!("  {:<22} {:>11} {:>11}", "share", "", "");
    for (_, ns) in r.total.fields() {
        let p = if total > 0 {
            100.0 * ns as f64 / total as f64
        } else {
            0.0
        };
        pct.push_str(&format!(" {:>9.1}%", p));
    }
    println!("{pct}");
    if !r.devices_without_events.is_empty() {
        println!(
            "  the trace is cut short: {} {} no events left, so these shares count the host only",
            r.devices_without_events.join(", "),
            if r.devices_without_events.len() == 1 {
                "has"
            } else {
                "have"
            }
        );
    }
    for g in &r.gpu {
        let mut estimates = String::new();
        for (what, v) in [
            ("est. SM efficiency", g.est_sm_efficiency_pct),
            ("est. achieved occupancy", g.est_achieved_occupancy_pct),
            (g.matrix_units.unwrap_or("Tensor Cores"), g.tensor_core_pct),
        ] {
            if let Some(v) = v {
                estimates.push_str(&format!(", {what} {v:.1}%"));
            }
        }
        println!(
            "  {} utilization over the steps {:.1}% (kernels {} ms of {} ms){estimates}",
            g.name,
            100.0 * g.utilization,
            ms(g.kernel_ns as f64),
            ms(g.span_ns as f64)
        );
    }
    let st = &r.stats;
    println!(
        "  step time: mean {} ms, median {} ms, p90 {} ms, min {} ms, max {} ms",
        ms(st.mean_ns),
        ms(st.median_ns),
        ms(st.p90_ns),
        ms(st.min_ns as f64),
        ms(st.max_ns as f64)
    );
    if !r.synthetic {
        let first: Vec<String> = st
            .first
            .iter()
            .map(|f| format!("{} {:.2}x", f.name, f.vs_median))
            .collect();
        println!("  first steps vs median: {}", first.join(", "));
    }
}
