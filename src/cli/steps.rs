//! `sightline steps FILE [--json]`: the steps headed and formatted as [`Step`] declares its
//! columns, then their totals and statistics.

use super::args::Trace;
use super::idle::short;
use super::table::{declared_in, Shown, Style};
use super::{load, print_json};
use serde_json::Value;
use sightline::analysis::columns::Unit;
use sightline::analysis::steps::{Breakdown, Step, StepsReport};
use sightline::query::Steps;

/// Milliseconds with three decimals down every column, one space apart: the title says `ms`.
const STYLE: Style = Style::section(" ", "");

fn ms(ns: f64) -> String {
    STYLE.cell(Unit::Ns, 0, &Value::from(ns))
}

pub fn run(opts: &Trace) -> Result<(), String> {
    let loaded = load(&opts.file)?;
    let report = loaded.ask(&Steps {})?;
    if opts.json {
        return print_json(report);
    }
    print(report);
    Ok(())
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
    let mut shown = vec![
        Shown::left("name", 22),
        Shown::right("length_ns", 11).fit(),
        Shown::right("dur_ns", 11).fit(),
    ];
    for p in Breakdown::PARTS {
        shown.push(Shown::right("breakdown", 10).member(p.key).fit());
    }
    let total = r.total.total_ns();
    let length: i64 = r.steps.iter().map(|s| s.length_ns).sum();
    let mut sum = vec!["total".to_string(), ms(length as f64), ms(total as f64)];
    let mut share = vec!["share".to_string(), String::new(), String::new()];
    for (_, ns) in r.total.fields() {
        sum.push(ms(ns as f64));
        let p = if total > 0 {
            100.0 * ns as f64 / total as f64
        } else {
            0.0
        };
        share.push(STYLE.cell(Unit::Pct, 1, &Value::from(p)));
    }
    // A step's name cut to its column; the device word for the labels that name it.
    let text = declared_in(
        &STYLE,
        &shown,
        r.steps.iter(),
        vec![sum, share],
        &r.device_word,
        |s: &Step, key, width| (key == "name").then(|| short(&super::shown_name(&s.name), width)),
    );
    print!("{text}");
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
