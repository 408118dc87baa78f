//! `sightline compiled FILE [--json]`: what `torch.compile` ran (the analysis
//! [`sightline::analysis::compiled`]): compiled frames and their compile ids per step, each
//! compiled graph with its Inductor kernels and the eager operators they replaced, compile work,
//! and the eager operators between regions after a graph break.

use super::args::Trace;
use super::table::{fmt_time, layout, name_width, truncate_name, Column};
use super::{load, print_json};
use sightline::analysis::summary::devices_word;
use sightline::query::Compiled;

pub fn run(opts: &Trace) -> Result<(), String> {
    let loaded = load(&opts.file)?;
    let c = loaded.ask(&Compiled {})?;
    if opts.json {
        return print_json(c);
    }
    if c.frames.is_empty() && c.graphs.is_empty() && c.compiles.is_empty() {
        println!(
            "nothing compiled by torch.compile in this trace (no Torch-Compiled Region, compiled \
             graph call, Inductor kernel or compile work)"
        );
        return Ok(());
    }
    let word = devices_word(loaded.trace());
    // Device columns only where the trace has devices: a CPU trace's would be zeros.
    let devices = loaded.trace().lanes.iter().any(|l| l.is_gpu());
    if !c.frames.is_empty() {
        println!("Compiled frames (Torch-Compiled Region: F/C)");
        let cols = [
            Column::right("Frame", 8),
            Column::right("# of Calls", 12),
            Column::right("CPU total", 12),
            Column::left("Compile ids: the steps they ran in", 60),
            Column::left("Resumed in", 12),
        ];
        let rows = c.frames.iter().map(|f| {
            let ids: Vec<String> = f
                .compiles
                .iter()
                .map(|k| {
                    let steps = if k.steps.is_empty() {
                        "no step".to_string()
                    } else {
                        k.steps.join(", ")
                    };
                    format!("{}: {steps}", k.compile_id)
                })
                .collect();
            let resumes: Vec<String> = f.resumes.iter().map(u32::to_string).collect();
            vec![
                f.frame.to_string(),
                f.calls.to_string(),
                fmt_time(f.cpu_us),
                ids.join("; "),
                resumes.join(", "),
            ]
        });
        print!("{}", layout(&cols, rows));
    }
    for g in &c.graphs {
        println!();
        let regions = if g.compile_ids.is_empty() {
            "no region".to_string()
        } else {
            format!("region {}", g.compile_ids.join(", "))
        };
        let device = if devices {
            format!(", {word} {}", fmt_time(g.device_us))
        } else {
            String::new()
        };
        println!(
            "Graph {} ({}, {regions}): {} calls, CPU {}{device}",
            g.name,
            if g.backward { "backward" } else { "forward" },
            g.calls,
            fmt_time(g.cpu_us),
        );
        if !g.replaces.is_empty() {
            println!("  replaces: {}", g.replaces.join(", "));
        }
        if !g.kernels.is_empty() {
            let width = name_width(g.kernels.iter().map(|k| k.name.as_str()));
            let mut cols = vec![
                Column::right("Kernel", width),
                Column::right("Kind", 20),
                Column::right("# of Calls", 12),
                Column::right("CPU total", 12),
                Column::left("Fused ops", 40),
            ];
            if devices {
                cols.insert(4, Column::right(format!("{word} total"), 12));
            }
            let rows = g.kernels.iter().map(|k| {
                let mut row = vec![
                    truncate_name(&k.name, 55),
                    k.kind.as_str().to_string(),
                    k.calls.to_string(),
                    fmt_time(k.cpu_us),
                    k.fused_ops.join(", "),
                ];
                if devices {
                    row.insert(4, fmt_time(k.device_us));
                }
                row
            });
            print!("{}", layout(&cols, rows));
        }
        if !g.extern_ops.is_empty() {
            let ops: Vec<String> = g
                .extern_ops
                .iter()
                .map(|e| format!("{} x{} {}", e.name, e.calls, fmt_time(e.cpu_us)))
                .collect();
            println!("  other operators it calls: {}", ops.join(", "));
        }
    }
    if !c.loose_kernels.is_empty() {
        println!();
        let names: Vec<&str> = c.loose_kernels.iter().map(|k| k.name.as_str()).collect();
        println!(
            "Inductor kernels outside compiled graphs: {}",
            names.join(", ")
        );
    }
    let eager: Vec<String> = c
        .frames
        .iter()
        .filter(|f| !f.resumes.is_empty())
        .flat_map(|f| {
            f.eager_ops.iter().map(move |e| {
                format!(
                    "{} x{} {} (frame {})",
                    e.name,
                    e.calls,
                    fmt_time(e.cpu_us),
                    f.frame
                )
            })
        })
        .collect();
    if !eager.is_empty() {
        println!();
        println!(
            "Eager operators between regions (graph breaks): {}",
            eager.join(", ")
        );
    }
    if !c.compiles.is_empty() {
        println!();
        println!("Compile work (outermost ranges)");
        let width = name_width(c.compiles.iter().map(|k| k.name.as_str()));
        let cols = [
            Column::right("Name", width),
            Column::right("Compile id", 12),
            Column::right("Autotune", 10),
            Column::right("Step", 18),
            Column::right("Duration", 12),
        ];
        let rows = c.compiles.iter().map(|k| {
            vec![
                truncate_name(&k.name, 55),
                k.compile_id.clone().unwrap_or_else(|| "-".into()),
                if k.autotune { "yes" } else { "no" }.to_string(),
                k.step.clone().unwrap_or_else(|| "-".into()),
                fmt_time(k.dur_us),
            ]
        });
        print!("{}", layout(&cols, rows));
    }
    Ok(())
}
