//! `sightline ops FILE [--json] [--by-shape] [--sort COLUMN] [--top N]`: the operator table,
//! printed as PyTorch prints `prof.key_averages().table()`: same columns, units and widths
//! (laid out by [`super::table`]).

use super::args::OpsArgs;
use super::table::{declared, fmt_time, name_width, share, truncate_name, Shown};
use super::{load, print_json};
use sightline::analysis::backend;
use sightline::analysis::summary::devices_word;
use sightline::analysis::tables::ops::OpRow;
use sightline::analysis::tables::OpTable;
use sightline::model::Trace;
use sightline::query::Ops;

pub fn run(opts: &OpsArgs) -> Result<(), String> {
    let top = opts.top;
    let loaded = load(&opts.trace.file)?;
    let trace = loaded.trace();
    super::graphs::apply_capture(&loaded, &opts.trace.file, opts.capture.as_deref())?;
    let mut table = loaded.ask(&Ops {
        by_shape: opts.by_shape,
        path: opts.path,
        sort: opts.sort,
    })?;
    if opts.trace.json {
        if let Some(n) = top {
            table.rows.truncate(n);
        }
        return print_json(&table);
    }
    print!("{}", render(&table, trace, top.unwrap_or(30)));
    Ok(())
}

/// The table as PyTorch's `_build_table` prints it, first `limit` rows. Column widths come from
/// all rows, as PyTorch sizes them before it applies its row limit. The device columns are
/// headed as PyTorch heads them for the trace's device (`Self CUDA`, `Self XPU`, `Self MTIA`:
/// [`backend::table_word`]), 12 wide as PyTorch makes them, also where the header is longer.
/// Headers and formats are [`OpRow`]'s declarations; the order and widths are PyTorch's.
pub fn render(t: &OpTable, trace: &Trace, limit: usize) -> String {
    let device = t.has_device_time();
    let dev = backend::table_word(trace);
    let device_mem = t.rows.iter().any(|r| r.self_device_mem_bytes > 0);
    let mut shown = vec![
        Shown::right("name", name_width(t.rows.iter().map(|r| r.name.as_str()))),
        Shown::right("self_cpu_pct", 12),
        Shown::right("self_cpu_us", 12),
        Shown::right("cpu_total_pct", 12),
        Shown::right("cpu_total_us", 12),
        Shown::right("cpu_avg_us", 12),
    ];
    if device {
        for key in [
            "self_device_us",
            "self_device_pct",
            "device_total_us",
            "device_avg_us",
        ] {
            shown.push(Shown::right(key, 12));
        }
    }
    if t.has_memory {
        shown.push(Shown::right("cpu_mem_bytes", 12));
        shown.push(Shown::right("self_cpu_mem_bytes", 12));
        if device_mem {
            shown.push(Shown::right("device_mem_bytes", 12));
            shown.push(Shown::right("self_device_mem_bytes", 12));
        }
    }
    shown.push(Shown::right("calls", 12));
    if t.rows.iter().any(|r| r.path.is_some()) {
        shown.push(Shown::right("on_path_us", 12));
        shown.push(Shown::right("slack_us", 12));
    }
    if t.by_input_shape {
        let w = t
            .rows
            .iter()
            .map(|r| r.input_shapes.as_deref().unwrap_or("").chars().count())
            .max()
            .unwrap_or(0);
        shown.push(Shown::right("input_shapes", (w + 4).min(80)));
    }
    let rows = t.rows.iter().take(limit);
    let mut out = declared(&shown, rows, &dev, |r: &OpRow, key, width| match key {
        "name" => Some(truncate_name(&r.name, 55)),
        // PyTorch's shares: `NaN` when the whole is zero.
        "self_cpu_pct" => Some(share(r.self_cpu_pct, t.self_cpu_total_us)),
        "cpu_total_pct" => Some(share(r.cpu_total_pct, t.self_cpu_total_us)),
        "self_device_pct" => Some(share(r.self_device_pct, t.gpu_time_us)),
        // As Python prints the list, cut to the column.
        "input_shapes" => Some(
            r.input_shapes
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(width)
                .collect(),
        ),
        _ => None,
    });
    out.push_str(&format!(
        "Self CPU time total: {}\n",
        fmt_time(t.self_cpu_total_us)
    ));
    if device {
        out.push_str(&format!(
            "Self {dev} time total: {}\n",
            fmt_time(t.gpu_time_us)
        ));
    }
    if t.unattributed_gpu_ops > 0 {
        let word = devices_word(trace);
        out.push_str(&format!(
            "{word} time launched by no operator: {} ({} {word} ops)\n",
            fmt_time(t.unattributed_gpu_us),
            t.unattributed_gpu_ops
        ));
    }
    out
}
