//! `sightline diff BASE NEW [--json] [--per-step|--total] [--by-shape] [--top N] [--fail-if EXPR]...`:
//! two traces compared (see `sightline::analysis::diff`), and the conditions a CI job fails on.
//!
//! BASE and NEW are traces, or digests that `sightline digest` wrote (a CI job can keep the
//! digest of its reference run instead of the trace). Each trace is read, digested and dropped
//! before the next is read, so memory is that of the larger trace, not of both.
//!
//! The operators, device ops and labels are headed and formatted as their rows declare their
//! columns ([`OpDiff`], [`KernelDiff`], [`LabelDiff`]); a ratio is written as the change in
//! percent, and a row's name cell holds its status (and a device op's launcher and module). The
//! steps, the idle time and the findings are the command's own lines.

use super::args::DiffArgs;
use super::print_json;
use super::table::{declared_in, Shown, Style};
use sightline::analysis::columns::Row;
use sightline::analysis::diff::headline::{signed_time, time};
use sightline::analysis::diff::{Diff, KernelDiff, LabelDiff, Mode, OpDiff, Presence};
use sightline::analysis::digest::Digest;
use sightline::native;

/// A trace's digest, or a digest read back from the JSON `sightline digest` wrote.
fn digest_of(path: &str) -> Result<Digest, String> {
    native::digest_of(std::path::Path::new(path))
        .map_err(|e| format!("{path}: {e}"))?
        .map_err(|e| format!("{path}: {e}"))
}

/// Runs the command; `Ok(true)` when a `--fail-if` condition failed.
pub fn run(a: &DiffArgs) -> Result<bool, String> {
    let base = digest_of(&a.base)?;
    let new = digest_of(&a.new)?;
    let mut out = sightline::query::Diff {
        total: a.total,
        by_shape: a.by_shape,
        fail_if: a.fail_if.clone(),
    }
    .answer(&base, &new, &a.base, &a.new)?;
    let failed = out.failed();
    if a.json {
        if let Some(n) = a.top {
            out.keep_top(n);
        }
        print_json(&out)?;
    } else {
        let (d, verdicts) = (&out.diff, &out.fail_if);
        print(a, d, a.top.unwrap_or(15));
        if !verdicts.is_empty() {
            println!();
            println!("Conditions");
            for v in verdicts {
                println!("  {} {}", if v.failed { "FAIL" } else { "ok  " }, v.reason);
            }
        }
    }
    for v in out.fail_if.iter().filter(|v| v.failed) {
        eprintln!("sightline: --fail-if {}", v.reason);
    }
    Ok(failed)
}

/// Kernel names run to hundreds of characters (templates); the text table keeps each name's
/// start, and `--json` has them whole.
fn short(names: &str) -> String {
    const MAX: usize = 60;
    names
        .split(" | ")
        .map(|n| {
            if n.chars().count() > MAX {
                format!("{}...", n.chars().take(MAX).collect::<String>())
            } else {
                n.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The tables of operators, device ops and labels.
const STYLE: Style = Style::comparison();

fn status(p: Presence) -> &'static str {
    match p {
        Presence::Both => "",
        Presence::Added => " (added)",
        Presence::Removed => " (removed)",
    }
}

fn print(a: &DiffArgs, d: &Diff, top: usize) {
    let per = match d.mode {
        Mode::PerStep => "per step",
        Mode::Total => "totals",
    };
    println!("base: {}", a.base);
    println!("new:  {}", a.new);
    println!("{}", d.summary.headline);
    for line in &d.summary.explanation {
        println!("{line}");
    }
    println!();
    // Per step, the categories are means over the steps (they add up to the mean step); the
    // median step, the headline's figure, stands above them so the two are not confused.
    let of = match d.mode {
        Mode::PerStep => "per step, categories as means",
        Mode::Total => "totals",
    };
    println!(
        "Steps ({of}; base {} steps, new {})",
        d.steps.base.steps, d.steps.new.steps
    );
    println!("  {:<16}{:>14}{:>14}{:>14}", "", "base", "new", "delta");
    let s = &d.steps;
    let row = |label: &str, base: f64, new: f64| {
        println!(
            "  {:<16}{:>14}{:>14}{:>14}",
            label,
            time(base),
            time(new),
            signed_time(new - base)
        );
    };
    match d.mode {
        Mode::PerStep => {
            row("median step", s.base.median_us, s.new.median_us);
            row("mean step", s.base.step_time_us, s.new.step_time_us);
        }
        Mode::Total => row("step time", s.base.total_us, s.new.total_us),
    }
    for c in &s.delta.breakdown {
        let get = |side: &sightline::analysis::diff::StepSide| {
            side.breakdown
                .iter()
                .find(|k| k.category == c.category)
                .map_or(0.0, |k| k.us)
        };
        if get(&s.base) == 0.0 && get(&s.new) == 0.0 {
            continue;
        }
        println!(
            "  {:<16}{:>14}{:>14}{:>14}",
            c.category,
            time(get(&s.base)),
            time(get(&s.new)),
            signed_time(c.us)
        );
    }
    println!();
    println!(
        "Operators ({per}, largest change first; {} of {} rows)",
        top.min(d.ops.len()),
        d.ops.len()
    );
    let shown = [
        Shown::right("base", 12).side("self_cpu_us").fit(),
        Shown::right("new", 12).side("self_cpu_us").fit(),
        Shown::right("delta_self_cpu_us", 12).signed().fit(),
        Shown::right("ratio_self_cpu", 9).fit(),
        Shown::right("base", 12).side("self_device_us").fit(),
        Shown::right("new", 12).side("self_device_us").fit(),
        Shown::right("delta_self_device_us", 12).signed().fit(),
        Shown::left("name", 0),
    ];
    let own = |o: &OpDiff, key: &str, _| match key {
        "name" => {
            let shapes = o
                .input_shapes
                .as_ref()
                .map_or(String::new(), |s| format!(" {s}"));
            Some(format!("{}{shapes}{}", o.name, status(o.status)))
        }
        _ => None,
    };
    let rows = d.ops.iter().take(top);
    print!("{}", declared_in(&STYLE, &shown, rows, Vec::new(), "", own));
    if !d.kernels.is_empty() {
        println!();
        println!(
            "Device ops ({per}, by name, launching operator and module; {} of {} rows)",
            top.min(d.kernels.len()),
            d.kernels.len()
        );
        let label = |key| KernelDiff::column(key).map_or("", |c| c.label);
        let name = format!(
            "{} [{}, {}]",
            label("name"),
            label("launcher"),
            label("module")
        );
        let shown = [
            Shown::right("base", 12).side("total_us").fit(),
            Shown::right("new", 12).side("total_us").fit(),
            Shown::right("delta_us", 12).signed().fit(),
            Shown::right("ratio", 9).fit(),
            Shown::left("name", 0).titled(&name),
        ];
        let own = |k: &KernelDiff, key: &str, _| match key {
            "name" => {
                let via = match (&k.launcher, &k.module) {
                    (Some(l), Some(m)) => format!(" [{l}, {m}]"),
                    (Some(l), None) => format!(" [{l}]"),
                    _ => " [no launcher]".to_string(),
                };
                Some(format!("{}{via}{}", short(&k.name), status(k.status)))
            }
            _ => None,
        };
        let rows = d.kernels.iter().take(top);
        print!("{}", declared_in(&STYLE, &shown, rows, Vec::new(), "", own));
    }
    if !d.labels.is_empty() {
        println!();
        println!(
            "Labels ({per}, CPU total; {} of {} rows)",
            top.min(d.labels.len()),
            d.labels.len()
        );
        let shown = [
            Shown::right("base", 12).side("cpu_total_us").fit(),
            Shown::right("new", 12).side("cpu_total_us").fit(),
            Shown::right("delta_cpu_total_us", 12).signed().fit(),
            Shown::right("ratio_cpu_total", 9).fit(),
            Shown::left("name", 0),
        ];
        let own = |l: &LabelDiff, key: &str, _| match key {
            "name" => Some(format!("{}{}", l.name, status(l.status))),
            _ => None,
        };
        let rows = d.labels.iter().take(top);
        print!("{}", declared_in(&STYLE, &shown, rows, Vec::new(), "", own));
    }
    let i = &d.idle;
    if i.base.devices + i.new.devices > 0 {
        println!();
        println!("Device idle ({per}, summed over devices)");
        println!("  {:<42}{:>12}{:>12}{:>12}", "", "base", "new", "delta");
        for (what, b, n) in [
            ("idle", i.base.idle_us, i.new.idle_us),
            (
                "  waiting for the host",
                i.base.host_wait_us,
                i.new.host_wait_us,
            ),
        ] {
            println!(
                "  {what:<42}{:>12}{:>12}{:>12}",
                time(b),
                time(n),
                signed_time(n - b)
            );
        }
        for w in &i.waits {
            println!(
                "    {:<40}{:>12}{:>12}{:>12}",
                w.phrase,
                time(w.base_us),
                time(w.new_us),
                signed_time(w.delta_us)
            );
        }
    }
    println!();
    println!("Findings");
    let f = &d.findings;
    if f.added.is_empty() && f.removed.is_empty() && f.changed.is_empty() {
        println!("  no change");
    }
    for (sign, list) in [('+', &f.added), ('-', &f.removed)] {
        for x in list {
            let crossed = x.crossed.as_ref().map_or(String::new(), |c| {
                format!(": crossed its threshold, {}", c.text())
            });
            let f = &x.finding;
            println!("  {sign} [{}] {} ({}){crossed}", f.severity, f.title, f.id);
        }
    }
    for x in &f.changed {
        let moved = x
            .measured
            .as_ref()
            .map_or(String::new(), |m| format!(": {}", m.text()));
        println!(
            "  ~ [{} -> {}] {} ({}){moved}",
            x.base_severity, x.new_severity, x.title, x.id
        );
    }
}
