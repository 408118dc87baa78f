//! `sightline idle FILE [--json] [--compat hta] [--top N]`

use super::args::IdleArgs;
use super::{load, print_json};
use sightline::analysis::idle::{IdleReport, Mode};
use sightline::query::Idle;

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
    println!(
        "  device  streams  busy ops      window        busy   utilization   gaps   host-wait"
    );
    for d in &r.devices {
        println!(
            "  {:>6}  {:>7}  {:>8}  {:>12}  {:>12}  {:>10.1}%  {:>5}  {:>12}",
            d.device,
            d.streams,
            d.busy_ops,
            ms(d.window_ns),
            ms(d.busy_ns),
            100.0 * d.utilization,
            d.gaps,
            ms(d.host_wait_ns)
        );
    }
    println!();
    println!("  device  stream     host wait   kernel wait         other   gaps");
    for s in &r.idle {
        println!(
            "  {:>6}  {:>6}  {:>12}  {:>12}  {:>12}  {:>5}",
            s.device,
            s.stream,
            us_ms(s.host_wait_us),
            us_ms(s.kernel_wait_us),
            us_ms(s.other_us),
            s.gaps
        );
    }
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
