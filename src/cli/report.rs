//! `sightline report FILE [--json] [--compat hta] [--top N] [--capture FILE]`: everything at once
//! (top operators, steps, idle time, findings), `sightline::query::Report`'s answer.

use super::args::ReportArgs;
use super::{idle as idle_cli, load, ops as ops_cli, print_json, shown_name, steps as steps_cli};
use sightline::query::Report;
use std::time::Instant;

pub fn run(opts: &ReportArgs) -> Result<(), String> {
    let loaded = load(&opts.trace.file)?;
    let trace = loaded.trace();
    super::graphs::apply_capture(&loaded, &opts.trace.file, opts.capture.as_deref())?;
    let question = Report {
        hta: opts.compat.is_some(),
        top: opts.top,
    };
    let t = Instant::now();
    let mut report = loaded.ask(&question)?;
    report.analysis_seconds = t.elapsed().as_secs_f64();
    let top = question.operators();
    let all_rows = report.top_operators.rows.len();
    if opts.trace.json {
        report.top_operators.rows.truncate(top);
        return print_json(&report);
    }
    println!(
        "{}: {}, rank {}, {:.3} ms of trace (parsed in {:.2} s, analysed in {:.2} s)",
        report.file,
        report.schema,
        report.rank,
        report.span_ns as f64 / 1e6,
        report.parse_seconds,
        report.analysis_seconds
    );
    // A cut file is said before anything computed from it.
    if let Some(c) = &report.cut {
        println!("TRUNCATED: {}", c.sentence);
    }
    println!();
    println!("Findings");
    if report.judged.findings.is_empty() {
        println!("  nothing to report");
    }
    for a in &report.judged.findings {
        let f = &a.finding;
        // Findings quote names from the trace: cut as every output cuts them.
        println!("  [{:?}] {} ({})", f.severity, shown_name(&f.title), f.id);
        println!("      {}", shown_name(&f.detail));
        if let Some(s) = &a.saving {
            println!("      {} (what-if: {})", s.sentence, s.edits.join(", "));
        }
        for c in &a.context {
            println!("      context: {}", shown_name(c));
        }
        println!("      advice: {}", shown_name(&f.advice));
    }
    if !report.judged.recording.is_empty() {
        println!();
        println!("How this trace was recorded");
        for a in &report.judged.recording {
            let f = &a.finding;
            println!("  [{:?}] {} ({})", f.severity, shown_name(&f.title), f.id);
            println!("      {}", shown_name(&f.detail));
            println!("      advice: {}", shown_name(&f.advice));
        }
    }
    println!();
    println!(
        "Top operators ({} of {all_rows}; `sightline ops` prints them all)",
        top.min(all_rows)
    );
    print!("{}", ops_cli::render(&report.top_operators, trace, top));
    println!();
    steps_cli::print(report.steps);
    println!();
    idle_cli::print(&report.idle);
    Ok(())
}
