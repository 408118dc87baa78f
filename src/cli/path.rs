//! `sightline path FILE... [--step NAME] [--annotation NAME --instance K] [--compat hta] [--what-if EDIT]...
//! [--json]`: the critical path of each step of each trace (one per rank), what bounds it, and
//! what an edit of durations would buy ([`sightline::analysis::critical`]).

use super::args::PathArgs;
use super::{load, print_json, Loaded};
use sightline::analysis::critical::{PathReport, CATEGORIES, HTA_CATEGORIES};
use sightline::query::{Opened, Path};

pub fn run(args: &PathArgs) -> Result<(), String> {
    let capture = args.capture.as_deref();
    if args.files.len() > 1 && capture.is_some_and(|c| c != super::graphs::NO_CAPTURE) {
        return Err(
            "--capture names one trace's capture: give one FILE (with several, each one's is \
             found beside it)"
                .to_string(),
        );
    }
    let mut loaded = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let l = load(file)?;
        super::graphs::apply_capture(&l, file, capture)?;
        loaded.push(l);
    }
    let opened: Vec<Opened<'_>> = loaded.iter().map(Loaded::opened).collect();
    let report = Path {
        step: args.step.clone(),
        annotation: args.annotation.clone(),
        instance: args.instance,
        hta: args.compat.is_some(),
        what_if: args.what_if.clone(),
    }
    .answer_all(&opened)?;
    if args.json {
        return print_json(&report);
    }
    print(&report, args.compat.is_some());
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
        // The path covers the ProfilerStep span; the device work it launched may end later.
        if let Some(with) = p.length_with_device_us {
            println!(
                "         its device work ends {} ms after the step's start ({} ms later than the \
                 step)",
                ms(with),
                ms(with - p.length_us)
            );
        }
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
