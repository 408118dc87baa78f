//! `sightline kernels FILE [--json] [--top N]`: the device ops grouped by name (the kernel table).
//! The text names the device as the trace does (`GPU`, `MTIA`, `XPU`), and shows the Tensor
//! Cores column on CUDA only: it matches NVIDIA kernel names, so elsewhere it would say "no"
//! without knowing.

use super::args::KernelsArgs;
use super::table::{fmt_time, layout, name_width, share, truncate_name, Column};
use super::{load, print_json};
use sightline::analysis::backend;
use sightline::analysis::summary::devices_word;
use sightline::query::Kernels;

/// The index of the Tensor Cores column.
const TENSOR_CORES: usize = 9;

pub fn run(opts: &KernelsArgs) -> Result<(), String> {
    let top = opts.listed.top;
    let loaded = load(&opts.listed.trace.file)?;
    let trace = loaded.trace();
    super::graphs::apply_capture(&loaded, &opts.listed.trace.file, opts.capture.as_deref())?;
    let mut table = loaded.ask(&Kernels { path: opts.path })?;
    if opts.listed.trace.json {
        if let Some(n) = top {
            table.rows.truncate(n);
        }
        return print_json(&table);
    }
    if table.rows.is_empty() {
        println!("no device ops (kernels, memcpy, memset) in this trace");
        return Ok(());
    }
    let name_width = name_width(table.rows.iter().map(|r| r.name.as_str()));
    let launcher_width = 40;
    let word = devices_word(trace);
    let units = backend::matrix_units(backend::of_trace(trace));
    let tensor_cores = units.is_some();
    let share_title = format!("{word} time %");
    let mut cols = vec![
        Column::right("Name", name_width),
        Column::right("Kind", 13),
        Column::right("# of Calls", 12),
        Column::right("Total", 12),
        Column::right("Avg", 12),
        Column::right("Min", 12),
        Column::right("Median", 12),
        Column::right("Max", 12),
        Column::right(share_title.as_str(), 12.max(share_title.len())),
        Column::right(units.unwrap_or("Tensor Cores"), 12),
        Column::right("Occupancy", 12),
        Column::right("SM eff.", 8),
        Column::right("Grid/block", 12),
        Column::right("GFLOPs/call", 12),
        Column::right("TFLOP/s", 9),
        Column::right("TB/s", 7),
        Column::left("Launched by", launcher_width),
    ];
    // The path columns go before the launcher, which stays last.
    let path = table.rows.iter().any(|r| r.path.is_some());
    if path {
        let at = cols.len() - 1;
        cols.insert(at, Column::right("Slack", 12));
        cols.insert(at, Column::right("On path", 12));
    }
    if !tensor_cores {
        cols.remove(TENSOR_CORES);
    }
    let opt = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |v| format!("{v:.d$}"));
    let rows = table.rows.iter().take(top.unwrap_or(30)).map(|r| {
        let launcher = match r.launched_by.first() {
            Some(l) => {
                let name = l.name.as_deref().unwrap_or("(no operator)");
                let more = r.launched_by.len() - 1;
                let name = truncate_name(
                    name,
                    if more > 0 {
                        launcher_width - 8
                    } else {
                        launcher_width
                    },
                );
                if more > 0 {
                    format!("{name} (+{more})")
                } else {
                    name
                }
            }
            None => String::new(),
        };
        let mut cells = vec![
            truncate_name(&r.name, 55),
            r.kind.as_str().to_string(),
            r.calls.to_string(),
            fmt_time(r.total_us),
            fmt_time(r.avg_us),
            fmt_time(r.min_us),
            fmt_time(r.median_us),
            fmt_time(r.max_us),
            share(r.gpu_time_pct, table.gpu_time_us),
            if r.tensor_cores { "yes" } else { "no" }.to_string(),
            r.mean_occupancy_pct
                .map_or("-".to_string(), |o| format!("{o:.1}%")),
            r.est_sm_efficiency_pct
                .map_or("-".to_string(), |o| format!("{o:.1}%")),
            match r.launch_configs.len() {
                0 => "-".to_string(),
                1 => "1 variant".to_string(),
                n => format!("{n} variants"),
            },
            opt(r.flops.gflops, 4),
            opt(r.flops.tflops_s, 2),
            opt(r.flops.tb_s, 3),
            launcher,
        ];
        if let Some(p) = r.path.filter(|_| path) {
            let at = cells.len() - 1;
            cells.insert(at, p.slack_us.map_or_else(|| "-".to_string(), fmt_time));
            cells.insert(at, fmt_time(p.on_path_us));
        }
        if !tensor_cores {
            cells.remove(TENSOR_CORES);
        }
        cells
    });
    print!("{}", layout(&cols, rows));
    let kinds: Vec<String> = table
        .by_kind
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                k.kind.as_str(),
                share(k.gpu_time_pct, table.gpu_time_us)
            )
        })
        .collect();
    println!(
        "{word} time total: {} ({})",
        fmt_time(table.gpu_time_us),
        kinds.join(", ")
    );
    println!(
        "GFLOPs/call, TFLOP/s, TB/s: of the operator call that launched each kernel (shared by \
         time among the kernels of one call; see `sightline flops`)"
    );
    Ok(())
}
