//! `sightline memory FILE [--json] [--points N] [--at US] [--allocations] [--top N]`: memory over
//! time per device, the peak and what held it.

use super::args::MemoryArgs;
use super::table::{fmt_memory, fmt_time, layout, truncate_name, Column};
use super::{load, print_json};
use sightline::analysis::columns::Row;
use sightline::analysis::memory::{AllocationRow, Holder};
use sightline::query::{Memory, MemoryAnswer};

pub fn run(opts: &MemoryArgs) -> Result<(), String> {
    let top = opts.top.unwrap_or(10);
    let loaded = load(&opts.trace.file)?;
    let answer = loaded.ask(&Memory {
        points: opts.points,
        at_us: opts.at,
        allocations: opts.allocations,
        top: opts.top,
    })?;
    if opts.trace.json {
        return print_json(&answer);
    }
    let MemoryAnswer(Some(report)) = answer else {
        println!("no [memory] events in this trace (recorded without profile_memory=True)");
        return Ok(());
    };
    for d in &report.devices {
        let cap = d.capacity_bytes.map_or(String::new(), |c| {
            format!(
                " of {} ({:.1}%)",
                fmt_memory(c as i64),
                100.0 * d.peak_allocated_bytes as f64 / c as f64
            )
        });
        println!(
            "{}: peak allocated {}{cap} at {}, peak reserved {} at {}; {} events, {} allocations, \
             {} never freed ({})",
            d.device,
            fmt_memory(d.peak_allocated_bytes),
            fmt_time(d.peak_at_us),
            fmt_memory(d.peak_reserved_bytes),
            fmt_time(d.peak_reserved_at_us),
            d.events,
            d.allocations,
            d.never_freed,
            fmt_memory(d.never_freed_bytes),
        );
        print_holders("Held at the peak by operator", &d.holders, top);
        print_holders("Held at the peak by Python frame", &d.frames, top);
        if let Some(at) = &d.at {
            println!(
                "  at {}: allocated {}, reserved {}",
                fmt_time(at.at_us),
                fmt_memory(at.allocated_bytes),
                fmt_memory(at.reserved_bytes)
            );
            print_holders("Held then by operator", &at.holders, top);
        }
        if !d.step_floors.is_empty() {
            let floors: Vec<String> = d
                .step_floors
                .iter()
                .map(|f| format!("#{} {}", f.step, fmt_memory(f.floor_bytes)))
                .collect();
            println!("  least allocated per step: {}", floors.join(", "));
        }
        if let Some(rows) = &d.allocation_table {
            // The declared labels; which columns and how wide is this table's.
            let label = |key| {
                AllocationRow::column(key)
                    .expect("an allocation column")
                    .label
            };
            let cols = [
                Column::right(label("addr"), 18),
                Column::right(label("bytes"), 12),
                Column::right(label("allocated_at_us"), 14),
                Column::left(label("allocated_by"), 40),
                Column::right(label("freed_at_us"), 14),
                Column::right(label("lifetime_us"), 14),
            ];
            let rows = rows.iter().map(|r| {
                let t = |x: Option<f64>| x.map_or("-".to_string(), fmt_time);
                vec![
                    format!("{:#x}", r.addr),
                    fmt_memory(r.bytes),
                    t(r.allocated_at_us),
                    truncate_name(&r.allocated_by, 40),
                    if r.never_freed {
                        "never freed".into()
                    } else {
                        t(r.freed_at_us)
                    },
                    t(r.lifetime_us),
                ]
            });
            print!("{}", layout(&cols, rows));
        }
    }
    Ok(())
}

fn print_holders(title: &str, holders: &[Holder], top: usize) {
    if holders.is_empty() {
        return;
    }
    println!("  {title}:");
    for h in holders.iter().take(top) {
        println!(
            "    {:>12}  {:>6}  {}",
            fmt_memory(h.bytes),
            h.count,
            truncate_name(&h.op, 80)
        );
    }
}
