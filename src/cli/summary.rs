//! `sightline summary FILE [--json]`

use super::args::Trace;
use super::{load, mb, print_json, shown_name};
use sightline::query::Summary;

pub fn run(opts: &Trace) -> Result<(), String> {
    let loaded = load(&opts.file)?;
    let out = loaded.ask(&Summary {})?;
    if opts.json {
        return print_json(&out);
    }
    let mb_per_s = out.mb_per_s;
    let s = &out.summary;
    println!(
        "file        {} ({}{})",
        opts.file,
        mb(s.file.bytes),
        if s.file.gzipped {
            format!(" gzipped, {} of JSON", mb(s.file.json_bytes))
        } else {
            String::new()
        }
    );
    println!(
        "schema      {}   rank {}{}",
        s.schema,
        s.rank,
        match s.world_size {
            Some(w) => format!(" of {w}"),
            None => String::new(),
        }
    );
    println!("span        {:.3} ms", s.span_ns as f64 / 1e6);
    println!(
        "parsed in   {:.3} s ({:.0} MB/s of JSON)",
        loaded.parse_seconds, mb_per_s
    );
    println!(
        "model       {} slices, {:.1} bytes/slice in columns, {} in all",
        s.model.slices,
        s.model.bytes_per_slice,
        mb(s.model.total_bytes as u64)
    );
    println!("events      {} total", s.events.total);
    let mut phases: Vec<_> = s.events.by_phase.iter().collect();
    phases.sort_by(|a, b| b.1.cmp(a.1));
    for (ph, n) in phases {
        println!(
            "  ph {:<8} {n:>10}",
            if ph.is_empty() { "(none)" } else { ph }
        );
    }
    let mut cats: Vec<_> = s.events.by_category.iter().collect();
    cats.sort_by(|a, b| b.1.cmp(a.1));
    for (cat, n) in cats {
        println!(
            "  cat {:<20} {n:>10}",
            if cat.is_empty() { "(none)" } else { cat }
        );
    }
    println!("devices     {}", s.devices.len());
    for d in &s.devices {
        let mem = d
            .total_global_mem
            .map(|m| format!(", {:.1} GB", m as f64 / 1e9))
            .unwrap_or_default();
        // A device without properties is named by its label alone ("MTIA 0").
        if sightline::model::category::device_label(&d.name).is_some() {
            println!("  {}{mem}", d.name);
        } else {
            let device = sightline::analysis::summary::device_name(loaded.trace(), d.id);
            println!("  {device}: {}{mem}", d.name);
        }
    }
    println!("lanes       {}", s.lanes.len());
    for l in &s.lanes {
        let over = if l.overlapping > 0 {
            format!(", {} overlapping", l.overlapping)
        } else {
            String::new()
        };
        println!(
            "  {:<4} {:<40} {:>9} slices, {:>3} rows{over}",
            l.kind,
            shown_name(&l.name),
            l.slices,
            l.rows
        );
    }
    println!(
        "flows       {}   memory events {}   counters {}",
        s.flows, s.memory_events, s.counters
    );
    if let Some(c) = &s.cut {
        println!(
            "TRUNCATED   {} Everything before the cut is shown.",
            c.sentence
        );
    }
    if s.diagnostics.is_empty() {
        println!("diagnostics none");
    } else {
        println!("diagnostics");
        for d in &s.diagnostics {
            println!(
                "  {:?} x{} (first at byte {}): {}",
                d.kind, d.count, d.first_offset, d.detail
            );
        }
    }
    if !s.observations.is_empty() {
        println!("observations (as profilers write them; nothing is wrong with the file)");
        for o in &s.observations {
            println!("  {:?} x{}: {}", o.kind, o.count, o.explanation);
        }
    }
    Ok(())
}
