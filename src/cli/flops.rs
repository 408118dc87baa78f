//! `sightline flops FILE [--json] [--top N]`: FLOPs, bytes and the roofline per op and shape,
//! headed and formatted as [`FlopsRow`] declares its columns.

use super::args::Listed;
use super::table::{declared, truncate_name, Shown};
use super::{load, print_json};
use sightline::analysis::flops::FlopsRow;
use sightline::query::Flops;

pub fn run(opts: &Listed) -> Result<(), String> {
    let top = opts.top;
    let loaded = load(&opts.trace.file)?;
    let mut report = loaded.ask(&Flops {})?;
    if let Some(n) = top {
        report.rows.truncate(n);
    }
    if opts.trace.json {
        return print_json(&report);
    }
    if report.rows.is_empty() {
        println!(
            "no operator with a FLOPs model and recorded shapes (profile with record_shapes=True)"
        );
        return Ok(());
    }
    match (&report.device, &report.peaks) {
        (Some(d), Some(p)) => println!(
            "{d}: roofs of the {} ({} TB/s; bf16 {} TFLOP/s, fp32 {} TFLOP/s)",
            p.device, p.mem_tb_s, p.bf16, p.fp32
        ),
        (Some(d), None) => println!("{d}: not in the peak table; no roofline"),
        _ => println!("no deviceProperties in the trace; no roofline"),
    }
    let shown = [
        Shown::left("name", 40),
        Shown::left("input_shapes", 44),
        Shown::right("dtype", 6),
        Shown::right("calls", 6),
        Shown::right("gflops", 12),
        Shown::right("bytes", 10).fit(),
        Shown::right("kernel_us", 12),
        Shown::right("tflops_s", 9),
        Shown::right("tb_s", 7),
        Shown::right("intensity", 8),
        Shown::right("bound", 8),
        Shown::right("pct_of_peak", 7).fit(),
    ];
    let rows = report.rows.iter().take(top.unwrap_or(30));
    let text = declared(&shown, rows, "", |r: &FlopsRow, key, _| match key {
        "name" => Some(truncate_name(&r.name, 40)),
        "input_shapes" => Some(truncate_name(&r.input_shapes.to_string(), 44)),
        _ => None,
    });
    print!("{text}");
    println!(
        "Kernel: device time of all calls; % of peak: of the roof at the op's arithmetic \
         intensity"
    );
    Ok(())
}
