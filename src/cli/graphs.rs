//! `sightline graphs FILE [--capture FILE] [--json]`: the CUDA/HIP graphs a trace replays (their
//! launches, replayed ops, device and launch time, instantiation), and with the trace recorded
//! while they were captured, the operators that issued each replayed op
//! ([`sightline::analysis::graphs`]).

use super::args::GraphsArgs;
use super::table::{fmt_time, layout, name_width, truncate_name, Column};
use super::{load, print_json, Loaded};
use serde::Serialize;
use sightline::analysis::derived::Derived;
use sightline::analysis::graphs::{AttributedOp, Capture, CaptureMatch, ChargedOp, GraphReport};
use sightline::analysis::tables::OpTable;

/// `graphs --json`: the report, and with a capture the captured operators as table rows (most
/// self device time first) and each graph's first replay, op by op.
#[derive(Serialize)]
pub struct Output {
    #[serde(flatten)]
    pub report: GraphReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_ops: Option<Vec<ChargedOp>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_replays: Option<Vec<AttributedOp>>,
}

/// The captures a capture trace recorded (an error when it recorded none).
pub fn read_capture(path: &str) -> Result<Capture, String> {
    let loaded = load(path)?;
    let d: &Derived = &loaded.derived;
    let capture = Capture::read(d.trace(), d.links());
    if capture.captures.is_empty() {
        return Err(format!(
            "{path}: no graph capture in this trace (no StreamBeginCapture and StreamEndCapture \
             calls): give the trace recorded while the graphs were captured"
        ));
    }
    Ok(capture)
}

/// The replays of `loaded` paired with a capture, and the operator-table rows it charges.
pub fn paired(loaded: &Loaded, capture: &Capture, by_shape: bool) -> (CaptureMatch, ChargedRows) {
    let d = &loaded.derived;
    let m = CaptureMatch::pair(d.trace(), d.graphs(), capture);
    let charges = m.charges(d.trace(), d.graphs(), capture, by_shape);
    (m, charges)
}

pub type ChargedRows = sightline::analysis::graphs::Charges;

/// The operator table of a replay with its capture (`ops --capture`).
pub fn op_table(loaded: &Loaded, capture: &Capture, by_shape: bool) -> OpTable {
    let d = &loaded.derived;
    let (_, charges) = paired(loaded, capture, by_shape);
    sightline::analysis::tables::op_table_charged(d.trace(), d.forest(), by_shape, Some(&charges))
}

/// What `graphs --json` prints: the report, and with `capture` what it names (each graph's first
/// replay op by op only when `replays`: 544 entries for one SGLang decode graph).
pub fn output(loaded: &Loaded, capture: Option<&Capture>, replays: bool) -> Output {
    let d = &loaded.derived;
    let mut out = Output {
        report: d.graphs().clone(),
        captured_ops: None,
        first_replays: None,
    };
    if let Some(c) = capture {
        let (m, charges) = paired(loaded, c, false);
        let mut rows = charges.rows;
        rows.sort_by(|a, b| {
            b.self_device_ns
                .cmp(&a.self_device_ns)
                .then(a.name.cmp(&b.name))
        });
        if replays {
            out.first_replays = Some(m.first_replays(d.trace(), &out.report, c));
        }
        out.captured_ops = Some(rows);
        out.report.capture = Some(m);
    }
    out
}

pub fn run(opts: &GraphsArgs) -> Result<(), String> {
    let loaded = load(&opts.trace.file)?;
    let capture = opts.capture.as_deref().map(read_capture).transpose()?;
    let out = output(&loaded, capture.as_ref(), true);
    if opts.trace.json {
        return print_json(&out);
    }
    let Output {
        report,
        captured_ops,
        ..
    } = out;
    if report.launches == 0 {
        println!("no CUDA/HIP graph launches in this trace");
        if report.instantiations > 0 {
            println!(
                "{} graph instantiations: {}",
                report.instantiations,
                fmt_time(report.instantiation_ns as f64 / 1e3)
            );
        }
        return Ok(());
    }
    let ms = |ns: i64| fmt_time(ns as f64 / 1e3);
    println!(
        "{} graph launches replayed {} device ops: {} of {} device time ({:.1}%)",
        report.launches,
        report.replayed_ops,
        ms(report.replayed_device_ns),
        ms(report.device_ns),
        100.0 * report.replayed_share()
    );
    if report.instantiations > 0 {
        println!(
            "{} graph instantiations in the trace: {}",
            report.instantiations,
            ms(report.instantiation_ns)
        );
    }
    println!();
    let cols = [
        Column::right("Graph", 6),
        Column::right("Launches", 10),
        Column::right("Ops/replay", 11),
        Column::right("Device time", 12),
        Column::right("Launch CPU", 12),
    ];
    let rows = report.graphs.iter().map(|g| {
        vec![
            g.index.to_string(),
            g.launches.to_string(),
            g.ops_per_replay.to_string(),
            ms(g.device_ns),
            ms(g.launch_cpu_ns),
        ]
    });
    print!("{}", layout(&cols, rows));
    match (&report.capture, captured_ops) {
        (Some(m), Some(rows)) => {
            println!(
                "\nThe capture ({} captures, {} dispatches) names {} of {} replayed ops",
                m.captures,
                m.dispatches,
                m.attributed_ops,
                m.attributed_ops + m.unattributed_ops
            );
            let w = name_width(rows.iter().map(|r| r.name.as_str())).min(60);
            let cols = [
                Column::right("Captured operator", w),
                Column::right("Replays", 9),
                Column::right("Self device", 12),
                Column::right("Device total", 12),
            ];
            let lines = rows.iter().take(opts.top.unwrap_or(20)).map(|r| {
                vec![
                    truncate_name(&r.name, w),
                    r.calls.to_string(),
                    ms(r.self_device_ns),
                    ms(r.device_total_ns),
                ]
            });
            print!("{}", layout(&cols, lines));
        }
        _ => {
            for g in &report.graphs {
                println!("\nGraph {}: its ops by device time", g.index);
                for t in &g.top_ops {
                    println!(
                        "  {:>10}  {:>5}x  {}",
                        ms(t.device_ns),
                        t.calls,
                        truncate_name(&t.name, 90)
                    );
                }
            }
            println!(
                "\nThe replayed ops have no operator of their own in this trace; give the trace \
                 recorded while the graphs were captured (--capture FILE) to name them."
            );
        }
    }
    Ok(())
}
