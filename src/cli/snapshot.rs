//! `sightline snapshot FILE [NEW] [--json] [--top N]`: a memory snapshot's peak and what holds it,
//! its segments and `oom` entries; given two, what changed from the first to the second.

use super::args::SnapshotArgs;
use super::table::fmt_memory;
use super::{json_text, mb};
use sightline::native;
use sightline::snapshot::analysis::{self, Diff, DiffRow, Group, Groups, Report};
use sightline::snapshot::Snapshot;

/// Reads one snapshot; the error names the file and says what it is instead.
pub fn load(path: &str) -> Result<Snapshot, String> {
    native::read_snapshot(std::path::Path::new(path))
        .map_err(|e| format!("{path}: {e}"))?
        .map_err(|e| format!("{path}: {e}"))
}

/// What `--json` prints for one snapshot.
pub fn report(snap: &Snapshot, top: Option<usize>) -> Report {
    analysis::report(snap, top.unwrap_or(10))
}

/// What `--json` prints for two: the diff, each group list cut to its `top` largest changes.
pub fn diff(base: &Snapshot, new: &Snapshot, top: Option<usize>) -> Diff {
    analysis::diff(base, new, top.unwrap_or(10))
}

pub fn run(a: &SnapshotArgs) -> Result<(), String> {
    let start = std::time::Instant::now();
    let base = load(&a.file)?;
    let read_seconds = start.elapsed().as_secs_f64();
    if let Some(new) = &a.new {
        // The base's figures are all the diff needs of it once the new one is read; both are
        // small beside a trace (columns of integers), so both are held.
        let new = load(new)?;
        let d = diff(&base, &new, a.top);
        if a.json {
            println!("{}", json_text(&d)?);
        } else {
            print_diff(&d);
        }
        return Ok(());
    }
    let r = report(&base, a.top);
    if a.json {
        println!("{}", json_text(&r)?);
        return Ok(());
    }
    print_report(&r, read_seconds);
    Ok(())
}

fn bytes(n: u64) -> String {
    fmt_memory(n.min(i64::MAX as u64) as i64)
}

fn print_report(r: &Report, read_seconds: f64) {
    let s = &r.stats;
    println!(
        "memory snapshot: {} ({}pickle protocol {}, read in {read_seconds:.2} s, {:.0} MB/s), {} \
         trace entries on {} device(s), {} frames in {} stacks, {} annotations",
        mb(s.input_bytes),
        if s.gzipped { "gzip, " } else { "" },
        s.protocol,
        s.pickle_bytes as f64 / 1e6 / read_seconds.max(1e-9),
        r.entries,
        r.devices.len(),
        r.frames,
        r.stacks,
        r.annotations
    );
    let g = &r.segments;
    println!(
        "segments: {}, reserved {}, allocated {}, free {} ({} inside allocations, {} between)",
        g.segments.len(),
        bytes(g.reserved_bytes),
        bytes(g.allocated_bytes),
        bytes(g.free_internal_bytes + g.free_external_bytes),
        bytes(g.free_internal_bytes),
        bytes(g.free_external_bytes)
    );
    for d in &r.devices {
        let at = match (d.peak_entry, d.peak_time_us) {
            (Some(e), Some(t)) => format!("after entry {e} (time_us {t})"),
            (Some(e), None) => format!("after entry {e}"),
            (None, _) => "at the start".into(),
        };
        println!(
            "device {}: peak live {} {at}; {} entries, {} allocs, {} frees; {} live when \
             recording began, {} at the end",
            d.device,
            bytes(d.peak_bytes),
            d.entries,
            d.allocs,
            d.frees,
            bytes(d.before_bytes),
            bytes(d.end_bytes)
        );
        print_groups("  live at the peak", &d.at_peak);
        for o in &d.ooms {
            println!(
                "  out of memory at entry {}: asked {}, the device had {} free ({} short); {} \
                 live then; from {}",
                o.entry,
                bytes(o.requested_bytes),
                bytes(o.device_free_bytes),
                bytes(o.short_bytes),
                bytes(o.live_bytes),
                o.frame.as_deref().unwrap_or("<no python frame>")
            );
            print_groups("    live then", &o.live);
        }
    }
    for d in r.diagnostics.iter().filter(|d| d.kind.is_damage()) {
        println!(
            "damage: {} ({}x, first at byte {})",
            d.detail, d.count, d.first_offset
        );
    }
}

fn print_groups(title: &str, g: &Groups) {
    for (by, rows) in [
        ("first user frame", &g.by_frame),
        ("file and line", &g.by_line),
        ("annotation", &g.by_annotation),
        ("category", &g.by_category),
        ("compile context", &g.by_compile_context),
    ] {
        if rows.is_empty() {
            continue;
        }
        println!("{title}, by {by}:");
        for Group {
            key,
            bytes: b,
            allocations,
        } in rows
        {
            println!("    {:>12}  {:>7}  {key}", bytes(*b), allocations);
        }
    }
}

fn print_diff(d: &Diff) {
    println!(
        "reserved {:+} bytes, allocated {:+} bytes",
        d.delta_reserved_bytes, d.delta_allocated_bytes
    );
    for dev in &d.devices {
        println!(
            "device {}: peak {} -> {} ({:+} bytes)",
            dev.device,
            bytes(dev.base_peak_bytes),
            bytes(dev.new_peak_bytes),
            dev.delta_peak_bytes
        );
        for (by, rows) in [
            ("first user frame", &dev.at_peak.by_frame),
            ("category", &dev.at_peak.by_category),
            ("annotation", &dev.at_peak.by_annotation),
        ] {
            println!("  at the peak, by {by}:");
            for DiffRow {
                key,
                base_bytes,
                new_bytes,
                delta_bytes,
            } in rows
            {
                println!(
                    "    {:>+14}  {:>12} -> {:>12}  {key}",
                    delta_bytes,
                    bytes(*base_bytes),
                    bytes(*new_bytes)
                );
            }
        }
    }
}
