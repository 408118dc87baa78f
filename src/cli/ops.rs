//! `sightline ops FILE [--json] [--by-shape] [--sort COLUMN] [--top N]`: the operator table,
//! printed as PyTorch prints `prof.key_averages().table()`: same columns, units and widths
//! (laid out by [`super::table`]).

use super::args::OpsArgs;
use super::table::{fmt_memory, fmt_time, layout, name_width, share, truncate_name, Column};
use super::{load, print_json};
use sightline::analysis::backend;
use sightline::analysis::summary::devices_word;
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
pub fn render(t: &OpTable, trace: &Trace, limit: usize) -> String {
    let device = t.has_device_time();
    let dev = backend::table_word(trace);
    let device_mem = t.rows.iter().any(|r| r.self_device_mem_bytes > 0);
    let mut cols = vec![
        Column::right("Name", name_width(t.rows.iter().map(|r| r.name.as_str()))),
        Column::right("Self CPU %", 12),
        Column::right("Self CPU", 12),
        Column::right("CPU total %", 12),
        Column::right("CPU total", 12),
        Column::right("CPU time avg", 12),
    ];
    if device {
        for h in [
            format!("Self {dev}"),
            format!("Self {dev} %"),
            format!("{dev} total"),
            format!("{dev} time avg"),
        ] {
            cols.push(Column::right(h, 12));
        }
    }
    if t.has_memory {
        cols.push(Column::right("CPU Mem", 12));
        cols.push(Column::right("Self CPU Mem", 12));
        if device_mem {
            cols.push(Column::right(format!("{dev} Mem"), 12));
            cols.push(Column::right(format!("Self {dev} Mem"), 12));
        }
    }
    cols.push(Column::right("# of Calls", 12));
    let path = t.rows.iter().any(|r| r.path.is_some());
    if path {
        cols.push(Column::right("On path", 12));
        cols.push(Column::right("Slack", 12));
    }
    if t.by_input_shape {
        let w = t
            .rows
            .iter()
            .map(|r| r.input_shapes.as_deref().unwrap_or("").chars().count())
            .max()
            .unwrap_or(0);
        cols.push(Column::right("Input Shapes", (w + 4).min(80)));
    }

    let rows = t.rows.iter().take(limit).map(|r| {
        let mut v = vec![
            truncate_name(&r.name, 55),
            share(r.self_cpu_pct, t.self_cpu_total_us),
            fmt_time(r.self_cpu_us),
            share(r.cpu_total_pct, t.self_cpu_total_us),
            fmt_time(r.cpu_total_us),
            fmt_time(r.cpu_avg_us),
        ];
        if device {
            v.push(fmt_time(r.self_device_us));
            v.push(share(r.self_device_pct, t.gpu_time_us));
            v.push(fmt_time(r.device_total_us));
            v.push(fmt_time(r.device_avg_us));
        }
        if t.has_memory {
            v.push(fmt_memory(r.cpu_mem_bytes));
            v.push(fmt_memory(r.self_cpu_mem_bytes));
            if device_mem {
                v.push(fmt_memory(r.device_mem_bytes));
                v.push(fmt_memory(r.self_device_mem_bytes));
            }
        }
        v.push(r.calls.to_string());
        if path {
            let p = r.path.unwrap_or_default();
            v.push(fmt_time(p.on_path_us));
            v.push(p.slack_us.map_or_else(|| "-".to_string(), fmt_time));
        }
        if let Some(shapes) = &r.input_shapes {
            let w = cols.last().map_or(0, |c| c.width);
            v.push(shapes.chars().take(w).collect());
        }
        v
    });
    let mut out = layout(&cols, rows);
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
