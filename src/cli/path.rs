//! `sightline path FILE... [--step NAME] [--annotation NAME --instance K] [--compat hta] [--what-if EDIT]...
//! [--json]`: the critical path of each step of each trace (one per rank), what bounds it, and
//! what an edit of durations would buy ([`sightline::analysis::critical`]).

use super::{load, print_json};
use sightline::analysis::critical::job::Rank;
use sightline::analysis::critical::whatif::Edit;
use sightline::analysis::critical::{PathOptions, PathReport, CATEGORIES, HTA_CATEGORIES};
use sightline::analysis::links::Links;
use sightline::analysis::steps;

const USAGE: &str = "usage: sightline path FILE... [--step NAME] [--annotation NAME --instance K] \
                     [--compat hta] [--what-if EDIT]... [--json]";

pub fn run(args: &[String]) -> Result<(), String> {
    let mut files: Vec<String> = Vec::new();
    let mut opts = PathOptions::default();
    let mut annotation: Option<String> = None;
    let mut instance: Option<usize> = None;
    let mut edits: Vec<Edit> = Vec::new();
    let mut json = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--json" => json = true,
            "--step" => opts.step = Some(value("--step")?),
            "--annotation" => annotation = Some(value("--annotation")?),
            "--instance" => {
                let v = value("--instance")?;
                instance = Some(
                    v.parse()
                        .map_err(|_| format!("--instance takes a count from 0, not '{v}'"))?,
                );
            }
            "--compat" => match value("--compat")?.as_str() {
                "hta" => opts.hta = true,
                v => return Err(format!("--compat takes 'hta', not '{v}'\n{USAGE}")),
            },
            "--what-if" => edits.push(Edit::parse(&value("--what-if")?)?),
            _ if a.starts_with("--") => return Err(format!("unknown option '{a}'\n{USAGE}")),
            _ => files.push(a.clone()),
        }
    }
    if files.is_empty() {
        return Err(format!("missing FILE (a .json or .json.gz trace)\n{USAGE}"));
    }
    match (annotation, instance) {
        (Some(n), k) => opts.annotation = Some((n, k.unwrap_or(0))),
        (None, Some(_)) => return Err(format!("--instance goes with --annotation\n{USAGE}")),
        (None, None) => {}
    }

    let mut loaded = Vec::with_capacity(files.len());
    for file in &files {
        let l = load(file)?;
        let links = Links::build(&l.trace);
        let steps = steps::analyze_with(&l.trace, &links);
        loaded.push((l, links, steps));
    }
    let report = if files.len() > 1 && !opts.hta {
        // The ranks of one job: one graph, joined at their collectives.
        let ranks = loaded
            .iter()
            .zip(&files)
            .map(|((l, links, steps), file)| Rank {
                trace: &l.trace,
                links,
                steps,
                file: file_name(file),
            })
            .collect();
        PathReport::of_job(ranks, &opts, &edits)?
    } else {
        let mut report = PathReport::default();
        for ((l, links, steps), file) in loaded.iter().zip(&files) {
            let one = PathReport::of(&l.trace, links, steps, &opts, &edits)
                .map_err(|e| format!("{file}: {e}"))?;
            report.append(one);
        }
        report
    };
    if let Some(e) = report.unmatched_edit() {
        return Err(e);
    }
    if json {
        return print_json(&report);
    }
    print(&report, opts.hta);
    Ok(())
}

fn print(r: &PathReport, hta: bool) {
    if r.paths.is_empty() {
        println!("no steps to follow");
        return;
    }
    let ms = |us: f64| format!("{:.3}", us / 1e3);
    let categories: &[&str] = if hta {
        println!("Critical path per step, as HTA 0.5.0 computes it (ms; share by what bounds it)");
        &HTA_CATEGORIES
    } else {
        println!("Critical path per step (ms; share of the step by what bounds it)");
        &CATEGORIES
    };
    for p in &r.paths {
        let shares: Vec<String> = categories
            .iter()
            .filter_map(|c| {
                let v = *p.bound_by.get(c)?;
                (v >= 0.05).then(|| format!("{c} {v:.1}%"))
            })
            .collect();
        println!(
            "  rank {} {:<20} {:>10} ms  {}",
            p.rank,
            p.step,
            ms(p.length_us),
            shares.join(", ")
        );
        // The longest segments of the path.
        let mut top: Vec<_> = p.segments.iter().collect();
        top.sort_by(|a, b| (b.end_us - b.start_us).total_cmp(&(a.end_us - a.start_us)));
        for s in top.iter().take(3) {
            let name = if s.name.is_empty() {
                "(nothing recorded)"
            } else {
                s.name.as_str()
            };
            // Work of another rank that this one waited for at a collective.
            let whose = if s.rank == p.rank {
                String::new()
            } else {
                format!("rank {}, ", s.rank)
            };
            println!(
                "      {:>10} ms  {:<24} {}  [{whose}{}]",
                ms(s.end_us - s.start_us),
                s.bound_by,
                super::table::truncate_name(name, 60),
                s.lane
            );
        }
    }
    if let Some(w) = &r.what_if {
        let edits: Vec<&str> = w.edits.iter().map(|e| e.text.as_str()).collect();
        println!("\nWhat if {} (ms)", edits.join(", "));
        for s in &w.steps {
            println!(
                "  rank {} {:<20} measured {:>10}  predicted {:>10}  saves {:>10} ({:.1}%)",
                s.rank,
                s.step,
                ms(s.measured_us),
                ms(s.predicted_us),
                ms(s.saving_us),
                if s.measured_us > 0.0 {
                    100.0 * s.saving_us / s.measured_us
                } else {
                    0.0
                }
            );
        }
    }
}

/// A path's last component: the rank when the trace does not say it (`rank3.json`).
fn file_name(path: &str) -> &str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}
