//! `sightline kernels FILE [--json] [--top N]`: the device ops grouped by name (the kernel table).
//! The text names the device as the trace does (`GPU`, `MTIA`, `XPU`), and shows the Tensor
//! Cores column on CUDA only: it matches NVIDIA kernel names, so elsewhere it would say "no"
//! without knowing.

use super::args::KernelsArgs;
use super::table::{declared, fmt_time, name_width, share, truncate_name, Shown};
use super::{load, print_json};
use sightline::analysis::backend;
use sightline::analysis::summary::devices_word;
use sightline::analysis::tables::KernelRow;
use sightline::query::Kernels;

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
    let mut shown = vec![
        Shown::right("name", name_width),
        Shown::right("kind", 13),
        Shown::right("calls", 12),
        Shown::right("total_us", 12),
        Shown::right("avg_us", 12),
        Shown::right("min_us", 12),
        Shown::right("median_us", 12),
        Shown::right("max_us", 12),
        Shown::right("gpu_time_pct", 12).fit(),
    ];
    if let Some(units) = units {
        shown.push(Shown::right("tensor_cores", 12).titled(units));
    }
    shown.extend([
        Shown::right("mean_occupancy_pct", 12),
        Shown::right("est_sm_efficiency_pct", 8),
        Shown::right("launch_configs", 12),
        Shown::right("gflops", 12),
        Shown::right("tflops_s", 9),
        Shown::right("tb_s", 7),
    ]);
    // The path columns go before the launcher, which stays last.
    if table.rows.iter().any(|r| r.path.is_some()) {
        shown.push(Shown::right("on_path_us", 12));
        shown.push(Shown::right("slack_us", 12));
    }
    shown.push(Shown::left("launched_by", launcher_width));
    let rows = table.rows.iter().take(top.unwrap_or(30));
    let text = declared(&shown, rows, &word, |r: &KernelRow, key, _| match key {
        "name" => Some(truncate_name(&r.name, 55)),
        "gpu_time_pct" => Some(share(r.gpu_time_pct, table.gpu_time_us)),
        "launch_configs" => Some(match r.launch_configs.len() {
            0 => "-".to_string(),
            1 => "1 variant".to_string(),
            n => format!("{n} variants"),
        }),
        "launched_by" => Some(launcher(r, launcher_width)),
        _ => None,
    });
    print!("{text}");
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

/// The operator that launched most of the kernel's time, cut to `width`, and how many others did.
fn launcher(r: &KernelRow, width: usize) -> String {
    let Some(l) = r.launched_by.first() else {
        return String::new();
    };
    let name = l.name.as_deref().unwrap_or("(no operator)");
    let more = r.launched_by.len() - 1;
    if more > 0 {
        format!("{} (+{more})", truncate_name(name, width - 8))
    } else {
        truncate_name(name, width)
    }
}
