//! `sightline report FILE [--json] [--compat hta] [--top N]`: everything at once (top operators,
//! steps, idle time, findings).

use super::args::ReportArgs;
use super::Loaded;
use super::{idle as idle_cli, load, ops as ops_cli, print_json, shown_name, steps as steps_cli};
use sightline::analysis::derived::Judged;
use sightline::analysis::idle::IdleReport;
use sightline::analysis::steps::StepsReport;
use sightline::analysis::summary::{self, Cut};
use sightline::analysis::tables::{op_table, OpColumn, OpTable};
use std::sync::Arc;
use std::time::Instant;

#[derive(serde::Serialize)]
pub struct Report<'a> {
    file: &'a str,
    schema: &'a str,
    rank: i64,
    span_ns: i64,
    /// How far a truncated file got and what it lost; `None` for a complete file.
    cut: Option<Cut>,
    parse_seconds: f64,
    analysis_seconds: f64,
    /// The operator table (key_averages), sorted by self device time when GPU time was charged,
    /// else self CPU; the first rows only (`--top`, default 15).
    pub top_operators: OpTable,
    steps: &'a StepsReport,
    idle: &'a IdleReport,
    /// `findings`: what costs time, ordered by what fixing each would save per step (the
    /// critical path's what-if), where a fix is a change of durations; the others after, by
    /// severity. `recording`: notes on how the trace was recorded (no stacks, no shapes, memory
    /// profiling on, device activities only, few active steps), apart, never above a cost.
    #[serde(flatten)]
    judged: &'a Judged,
}

/// The analyses a report shows, run (or taken from the store) in `seconds`.
pub struct Analysed {
    idle: Arc<IdleReport>,
    judged: Arc<Judged>,
    seconds: f64,
}

/// Idle time (counted as `--compat` says, `--top` gaps one by one) and the findings.
pub fn analyse(loaded: &Loaded, opts: &ReportArgs) -> Analysed {
    let t = Instant::now();
    let io = idle_cli::options(opts.compat, opts.top);
    let d = &loaded.derived;
    // Two threads, along the findings' chain. The rules need the links, steps, idle time and
    // FLOPs; their savings need the rules and the critical path's graph, which needs the links
    // and steps. So this thread builds the links, the steps, the FLOPs and the graph, then the
    // savings; the other the operator forest (the tables', needed by nothing here), idle time,
    // then the rules (the getters wait for a result being built instead of building it again).
    // 1 GB scaled trace: links 0.10 s, steps 0.10, FLOPs 0.09, graph 0.24 on this side; forest
    // 0.29, idle 0.05, rules 0.20 on the other; both sides done at 0.52-0.55 s, then the savings
    // (0.17, on both cores). A trace with no what-if to replay builds the graph for nothing,
    // beside the rules.
    std::thread::scope(|s| {
        let rules = s.spawn(|| {
            d.forest();
            d.idle(&io);
            d.flops();
            d.steps();
            d.found(&io);
        });
        d.steps();
        d.flops();
        // An error (no step to follow) is kept too, and the findings' savings read it.
        let _ = d.critical();
        // The rules' results are kept per option value, which a second asker would build again:
        // the savings wait for them.
        if let Err(panic) = rules.join() {
            std::panic::resume_unwind(panic);
        }
    });
    let judged = d.findings(&io);
    Analysed {
        idle: d.idle(&io),
        judged,
        seconds: t.elapsed().as_secs_f64(),
    }
}

/// The report of `loaded`, read from `file`, with every operator (`--top` is the caller's).
pub fn report<'a>(loaded: &'a Loaded, a: &'a Analysed, file: &'a str) -> Report<'a> {
    let d = &loaded.derived;
    let trace = d.trace();
    let mut top_operators = op_table(trace, d.forest(), false);
    top_operators.sort_by(if top_operators.has_device_time() {
        OpColumn::SelfDevice
    } else {
        OpColumn::SelfCpu
    });
    Report {
        file,
        schema: &trace.meta.schema,
        rank: trace.rank(),
        span_ns: trace.span_ns(),
        cut: summary::cut(trace),
        parse_seconds: loaded.parse_seconds,
        analysis_seconds: a.seconds,
        top_operators,
        steps: d.steps(),
        idle: &a.idle,
        judged: &a.judged,
    }
}

pub fn run(opts: &ReportArgs) -> Result<(), String> {
    let loaded = load(&opts.trace.file)?;
    let trace = loaded.trace();
    let analysed = analyse(&loaded, opts);
    let mut report = report(&loaded, &analysed, &opts.trace.file);
    let top = opts.top.unwrap_or(15);
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
    idle_cli::print(report.idle);
    Ok(())
}
