//! `sightline flops FILE [--json] [--top N]`: FLOPs, bytes and the roofline per op and shape.

use super::args::Listed;
use super::table::{fmt_time, layout, truncate_name, Column};
use super::{load, print_json};
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
    let cols = [
        Column::left("Name", 40),
        Column::left("Input shapes", 44),
        Column::right("dtype", 6),
        Column::right("Calls", 6),
        Column::right("GFLOPs", 12),
        Column::right("MB", 10),
        Column::right("Kernel", 12),
        Column::right("TFLOP/s", 9),
        Column::right("TB/s", 7),
        Column::right("FLOP/B", 8),
        Column::right("bound", 8),
        Column::right("% peak", 7),
    ];
    let opt = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |v| format!("{v:.d$}"));
    let rows = report.rows.iter().take(top.unwrap_or(30)).map(|r| {
        vec![
            truncate_name(&r.name, 40),
            truncate_name(&r.input_shapes.to_string(), 44),
            r.dtype.clone(),
            r.calls.to_string(),
            format!("{:.4}", r.gflops),
            opt(r.bytes.map(|b| b as f64 / 1e6), 2),
            fmt_time(r.kernel_us),
            opt(r.tflops_s, 2),
            opt(r.tb_s, 3),
            opt(r.intensity, 1),
            r.bound.unwrap_or("-").to_string(),
            opt(r.pct_of_peak, 1),
        ]
    });
    print!("{}", layout(&cols, rows));
    println!(
        "GFLOPs and MB per call (MB = 10^6 bytes); Kernel: device time of all calls; % peak: of the \
         roof at the op's arithmetic intensity"
    );
    Ok(())
}
