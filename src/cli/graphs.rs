//! `sightline graphs FILE [--capture FILE] [--json]`: the CUDA/HIP graphs a trace replays (their
//! launches, replayed ops, device and launch time, instantiation), and with the trace recorded
//! while they were captured, the operators that issued each replayed op
//! ([`sightline::analysis::graphs`]).

use super::args::GraphsArgs;
use super::table::{fmt_time, layout, name_width, truncate_name, Column};
use super::{load, print_json, Loaded};
use sightline::analysis::derived::Derived;
use sightline::analysis::graphs::{Capture, CaptureMatch, GraphsOutput as Output};
use sightline::analysis::ranks::digest::rank_in_file_name;
use sightline::analysis::ranks::is_trace_file_name;
use sightline::query::Graphs;
use std::path::{Path, PathBuf};

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

/// `--capture`'s value that reads no capture, not even one found beside the trace.
pub const NO_CAPTURE: &str = "none";

/// Gives `loaded` (read from `file`) the capture of the graphs it replays: the one `asked` names,
/// else, when it replays graphs, one found beside it ([`find_capture`]); says on stderr which
/// file a found one is. Nothing for `--capture none` or a trace that replays no graph.
pub fn apply_capture(loaded: &Loaded, file: &str, asked: Option<&str>) -> Result<(), String> {
    let d = &loaded.derived;
    let capture = match asked {
        Some(NO_CAPTURE) => return Ok(()),
        Some(path) => read_capture(path)?,
        None if d.graphs().launches == 0 => return Ok(()),
        None => match find_capture(loaded, file) {
            Some((path, capture)) => {
                eprintln!(
                    "graph capture: {} (found beside the trace; --capture FILE for another, \
                     --capture none for none)",
                    path.display()
                );
                capture
            }
            None => return Ok(()),
        },
    };
    d.set_capture(capture)?;
    Ok(())
}

/// At most this many files beside a trace are read as its possible capture.
const CANDIDATES: usize = 16;

/// The capture of `loaded`'s graphs among the files beside `file`, laid out as TraceLens' test
/// data has them (`capture_traces/*.json[.gz]` in the trace's folder, or a sibling whose name
/// holds `capture`): of those that hold a capture, the one that names most replayed ops. With
/// more than [`CANDIDATES`] files, only those whose name gives the trace's rank (`rank3`, as
/// `sightline ranks` reads a name: `rank1` is not `rank10`).
pub fn find_capture(loaded: &Loaded, file: &str) -> Option<(PathBuf, Capture)> {
    let path = Path::new(file);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let is_trace = |p: &Path| {
        p.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_trace_file_name)
    };
    let listed = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|r| {
                r.flatten()
                    .map(|e| e.path())
                    .filter(|p| is_trace(p))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut candidates = listed(&dir.join("capture_traces"));
    let own = path.file_name();
    candidates.extend(listed(dir).into_iter().filter(|p| {
        p.file_name() != own
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.to_ascii_lowercase().contains("capture"))
    }));
    if candidates.len() > CANDIDATES {
        let rank = loaded.trace().rank().max(0);
        candidates.retain(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(rank_in_file_name)
                == Some(rank)
        });
        candidates.truncate(CANDIDATES);
    }
    let d = &loaded.derived;
    candidates
        .into_iter()
        .filter_map(|p| {
            let capture = read_capture(p.to_str()?).ok()?;
            let named = CaptureMatch::pair(d.trace(), d.graphs(), &capture).attributed_ops;
            (named > 0).then_some((named, p, capture))
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, p, c)| (p, c))
}

pub fn run(opts: &GraphsArgs) -> Result<(), String> {
    let loaded = load(&opts.trace.file)?;
    apply_capture(&loaded, &opts.trace.file, opts.capture.as_deref())?;
    let out = loaded.ask(&Graphs {
        replays: true,
        ..Graphs::default()
    })?;
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
                Column::right("Calls", 9),
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
