//! `sightline compiled FILE [--json]`: what `torch.compile` ran (the analysis
//! [`sightline::analysis::compiled`]): compiled frames and their compile ids per step, each
//! compiled graph with its Inductor kernels and the eager operators they replaced, compile work,
//! and the eager operators between regions after a graph break. The frames, kernels and compile
//! work tables are headed and formatted from their declared columns; a graph's line, the
//! operators it replaced or calls, and the eager operators between regions are lists, not tables.

use super::args::Trace;
use super::table::{declared, fmt_time, name_width, truncate_name, Shown};
use super::{load, print_json};
use sightline::analysis::compiled::{Compile, Frame, Kernel};
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
        let shown = [
            Shown::right("frame", 8),
            Shown::right("calls", 12),
            Shown::right("cpu_us", 12),
            Shown::left("compiles", 60),
            Shown::left("resumes", 12),
        ];
        // A frame's compile ids each with the steps they ran in, and the frames it resumed in,
        // as lists in one cell.
        let text = declared(
            &shown,
            c.frames.iter(),
            &word,
            |f: &Frame, key, _| match key {
                "compiles" => {
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
                    Some(ids.join("; "))
                }
                "resumes" => {
                    let resumes: Vec<String> = f.resumes.iter().map(u32::to_string).collect();
                    Some(resumes.join(", "))
                }
                _ => None,
            },
        );
        print!("{text}");
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
            let mut shown = vec![
                Shown::right("name", width),
                Shown::right("kind", 20),
                Shown::right("calls", 12),
                Shown::right("cpu_us", 12),
                Shown::left("fused_ops", 40),
            ];
            if devices {
                shown.insert(4, Shown::right("device_us", 12));
            }
            let text = declared(
                &shown,
                g.kernels.iter(),
                &word,
                |k: &Kernel, key, _| match key {
                    "name" => Some(truncate_name(&k.name, 55)),
                    "fused_ops" => Some(k.fused_ops.join(", ")),
                    _ => None,
                },
            );
            print!("{text}");
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
        let shown = [
            Shown::right("name", width),
            Shown::right("compile_id", 12),
            Shown::right("autotune", 10),
            Shown::right("step", 18),
            Shown::right("dur_us", 12),
        ];
        let text = declared(&shown, c.compiles.iter(), &word, |k: &Compile, key, _| {
            (key == "name").then(|| truncate_name(&k.name, 55))
        });
        print!("{text}");
    }
    Ok(())
}
