//! `sightline ranks PATH... [--json] [--align auto|none|collectives] [--whole-trace]`: the traces of
//! one distributed job, side by side. The communication/computation overlap covers HTA's steps
//! (every `ProfilerStep` but the last, as HTA's `TraceAnalysis` does by default); `--whole-trace`
//! takes every device op instead.
//!
//! Each path is a trace or a folder (searched recursively for `*.json` and `*.json.gz`). Traces are
//! parsed one per core at a time, each reduced to its [`Digest`] and dropped, so memory holds one
//! trace per core plus the digests, whatever the number of ranks.
//!
//! The per-rank table is headed and formatted as [`RankRow`] declares its columns, with each
//! rank's overlap (from the answer's `overlap`) beside them; the collectives and stragglers are
//! the command's own lines.

use super::args::RanksArgs;
use super::print_json;
use super::table::{declared_in, Shown, Style};
use sightline::analysis::ranks::{self, RankRow, RanksReport};
use sightline::native;
use sightline::query::Ranks;
use std::path::PathBuf;

pub fn run(args: &RanksArgs) -> Result<(), String> {
    let question = Ranks {
        align: Some(args.align),
        whole_trace: args.whole_trace,
    };
    let report = report(&args.paths, &question)?;
    for u in &report.unreadable_files {
        eprintln!("sightline: skipped {}: {}", u.file, u.error);
    }
    if args.json {
        return print_json(&report);
    }
    print(&report);
    Ok(())
}

/// The job's report: the traces found under `paths`, digested; the files that could not be read
/// are in its `unreadable_files`.
pub fn report(paths: &[PathBuf], question: &Ranks) -> Result<RanksReport, String> {
    let mut files = Vec::new();
    for p in paths {
        native::trace_files(p, &mut files).map_err(|(p, e)| format!("{}: {e}", p.display()))?;
    }
    native::job(files, question.align(), question.scope())
}

/// The per-rank table: indented, cells a space apart, milliseconds with two decimals and no unit.
const STYLE: Style = Style::section(" ", "").decimals(2);

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1e3)
}

fn print(r: &RanksReport) {
    println!(
        "Job: world size {}, {} rank(s) read{}",
        r.world_size,
        r.ranks.len(),
        if r.missing_ranks.is_empty() {
            String::new()
        } else {
            format!(", missing ranks {:?}", r.missing_ranks)
        }
    );
    for d in &r.duplicate_ranks {
        println!(
            "  rank {} appears twice: kept {}, ignored {}",
            d.rank, d.kept, d.dropped
        );
    }
    for f in &r.unknown_rank_files {
        println!("  {f}: no rank in distributedInfo or the file name; not compared");
    }
    for m in &r.mixed_jobs {
        println!("  traces from different jobs? {m}");
    }
    let moved: Vec<String> = r
        .clock_offsets
        .iter()
        .filter(|o| o.offset_us != 0.0)
        .map(|o| format!("rank {} {:+.1} us ({})", o.rank, o.offset_us, o.rule))
        .collect();
    let rules: Vec<&str> = {
        let mut v: Vec<&str> = r.clock_offsets.iter().map(|o| o.rule).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    println!(
        "Clocks (--align {}): {} [{}]",
        serde_json::to_value(r.align)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        if moved.is_empty() {
            "no offsets applied".to_string()
        } else {
            moved.join(", ")
        },
        rules.join(", ")
    );

    println!("\nRanks (ms)");
    let shown = [
        Shown::right("rank", 4).fit(),
        Shown::right("steps", 5).fit(),
        Shown::right("step_time_us", 9).fit(),
        Shown::right("compute_us", 9).fit(),
        Shown::right("communication_us", 9).fit(),
        Shown::right("exposed_communication_us", 9).fit(),
        Shown::right("idle_us", 9).fit(),
        Shown::right("host_wait_idle_us", 9).fit(),
        Shown::right("collective_wait_us", 9).fit(),
        Shown::right("kernels", 8).fit(),
        Shown::undeclared("comm_comp_overlap_pct", "Overlap", 8),
        Shown::left("file", 0),
    ];
    // A rank's overlap is in the answer's `overlap`, one per rank.
    let overlap = |x: &RankRow, key: &str, _| {
        (key == "comm_comp_overlap_pct").then(|| {
            r.overlap
                .iter()
                .find(|o| o.rank == x.rank)
                .and_then(|o| o.comm_comp_overlap_pct)
                .map_or("-".to_string(), |p| format!("{p:.2}%"))
        })
    };
    print!(
        "{}",
        declared_in(&STYLE, &shown, r.ranks.iter(), Vec::new(), "", overlap)
    );
    if let Some(line) = overlap_covers(&r.overlap) {
        println!("  {line}");
    }

    if !r.collectives.is_empty() {
        println!("\nCollectives (ms, summed over ranks; bandwidth from the median transfer time)");
        let shown = [
            Shown::left("name", 16),
            Shown::left("process_group", 8),
            Shown::right("bytes", 12),
            Shown::right("count", 6),
            Shown::right("partial", 7),
            Shown::right("total_us", 10),
            Shown::right("wait_us", 10),
            Shown::right("transfer_us", 10),
            Shown::right("algbw_gbps", 14),
            Shown::right("busbw_gbps", 8),
        ];
        let rows = r.collectives.iter();
        print!(
            "{}",
            declared_in(&STYLE, &shown, rows, Vec::new(), "", |_, _, _| None)
        );
    }

    if !r.stragglers.is_empty() {
        println!("\nStragglers (per step: the rank the others waited for)");
        for s in &r.stragglers {
            println!(
                "  {:<16} rank {:<3} {:>8} ms late into {}, others waited {} ms; {}",
                s.step,
                s.rank,
                ms(s.late_us),
                s.collective,
                ms(s.wait_caused_us),
                s.cause
            );
        }
    }

    println!("\nFindings");
    if r.findings.is_empty() {
        println!("  none");
    }
    for f in &r.findings {
        println!("  [{:?}] {} ({})", f.severity, f.title, f.id);
        println!("    {}", f.detail);
        println!("    {}", f.advice);
    }
}

/// What the overlap column covers, when any rank's figure leaves steps out.
fn overlap_covers(overlap: &[ranks::Overlap]) -> Option<String> {
    let steps: Vec<String> = overlap
        .iter()
        .filter_map(|o| {
            let s = o.steps.as_ref()?;
            let list: Vec<String> = s.iter().map(|n| format!("#{n}")).collect();
            Some(format!("rank {}: {}", o.rank, list.join(" ")))
        })
        .collect();
    (!steps.is_empty()).then(|| {
        format!(
            "overlap covers HTA's steps, the last ProfilerStep left out ({}); --whole-trace takes every device op",
            steps.join("; ")
        )
    })
}
