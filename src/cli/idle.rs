//! `sightline idle FILE [--json] [--compat hta] [--top N]`: the per-device and per-stream tables
//! headed and formatted as [`DeviceIdle`] and [`StreamIdle`] declare their columns.

use super::args::IdleArgs;
use super::table::{declared_in, Shown, Style};
use super::{load, print_json};
use sightline::analysis::idle::{DeviceIdle, IdleReport, Mode, StreamIdle};
use sightline::query::Idle;

/// Milliseconds with three decimals and their unit down every column.
const STYLE: Style = Style::section("  ", " ms");

pub fn run(opts: &IdleArgs) -> Result<(), String> {
    let loaded = load(&opts.trace.file)?;
    let report = loaded.ask(&Idle {
        hta: opts.compat.is_some(),
        top: opts.top,
    })?;
    if opts.trace.json {
        return print_json(&*report);
    }
    print(&report);
    Ok(())
}

pub fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn us_ms(us: f64) -> String {
    format!("{:.3} ms", us / 1e3)
}

/// The readable idle report (also a section of `sightline report`).
pub fn print(r: &IdleReport) {
    let mode = match r.mode {
        Mode::Exact => "exact, ns",
        Mode::Hta => "HTA 0.5.0 compatible, whole us",
    };
    println!("{} idle time ({mode}), rank {}", r.device_word, r.rank);
    if r.temporal.is_empty() {
        println!(
            "  no {} kernels, memcpys or memsets in this trace",
            r.device_word
        );
        for n in &r.notes {
            println!("  note: {n}");
        }
        return;
    }
    for t in &r.temporal {
        println!(
            "  window {}   idle {} ({:.2}%)   compute {} ({:.2}%)   non-compute {} ({:.2}%)",
            us_ms(t.window_us),
            us_ms(t.idle_us),
            t.idle_pct,
            us_ms(t.compute_us),
            t.compute_pct,
            us_ms(t.non_compute_us),
            t.non_compute_pct
        );
    }
    for n in &r.notes {
        println!("  note: {n}");
    }
    println!();
    let devices = [
        Shown::right("device", 6),
        Shown::right("streams", 7),
        Shown::right("busy_ops", 8),
        Shown::right("window_ns", 12),
        Shown::right("busy_ns", 12),
        Shown::right("utilization", 11),
        Shown::right("gaps", 5),
        Shown::right("host_wait_ns", 12),
    ];
    let none = |_: &DeviceIdle, _: &str, _| None;
    let text = declared_in(
        &STYLE,
        &devices,
        r.devices.iter(),
        Vec::new(),
        &r.device_word,
        none,
    );
    print!("{text}");
    println!();
    let streams = [
        Shown::right("device", 6),
        Shown::right("stream", 6),
        Shown::right("host_wait_us", 12),
        Shown::right("kernel_wait_us", 12),
        Shown::right("other_us", 12),
        Shown::right("gaps", 5),
    ];
    let none = |_: &StreamIdle, _: &str, _| None;
    let text = declared_in(
        &STYLE,
        &streams,
        r.idle.iter(),
        Vec::new(),
        &r.device_word,
        none,
    );
    print!("{text}");
    println!();
    println!("Who waits for whom ({} gaps)", r.gap_count);
    if let Some(s) = r.waits_sentence() {
        println!("  {s}");
    }
    for w in &r.waits {
        println!(
            "  {:<18} {:>12}  {:>5.1}%  in {} gaps",
            format!("{:?}", w.kind),
            ms(w.ns),
            w.pct,
            w.gaps
        );
    }
    if r.gaps.is_empty() {
        return;
    }
    println!();
    println!("Longest gaps");
    for (i, g) in r.gaps.iter().enumerate() {
        println!(
            "  #{:<2} {} at {} on {}, ended by {} (stream {})",
            i + 1,
            ms(g.dur_ns),
            ms(g.start_ns),
            g.device_name,
            short(&g.ended_by.name, 60),
            g.ended_by.stream
        );
        match &g.ended_by.launch {
            Some(l) => println!(
                "      launched by {} on {} at {}{}{}",
                l.name,
                l.thread,
                ms(l.start_ns),
                l.operator
                    .as_ref()
                    .map(|o| format!(" in {}", short(&o.name, 50)))
                    .unwrap_or_default(),
                l.label
                    .as_ref()
                    .map(|o| format!(" [{}]", short(&o.name, 40)))
                    .unwrap_or_default()
            ),
            None => println!("      no launch found"),
        }
        let kinds: Vec<String> = g
            .cpu
            .iter()
            .map(|k| format!("{:?} {}", k.kind, ms(k.ns)))
            .collect();
        println!("      {}", kinds.join(", "));
        for e in g.events.iter().take(4) {
            println!("        {:>12}  {}", ms(e.ns), short(&e.name, 80));
        }
    }
}

/// A name cut to `n` characters (kernel names can run to hundreds).
pub fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let cut: String = s.chars().take(n.saturating_sub(3)).collect();
        format!("{cut}...")
    }
}
