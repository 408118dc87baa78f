//! `sightline modules FILE [--json] [--top N]`: the `nn.Module` hierarchy that `with_modules=True`
//! records, with host and device time per module (the TensorBoard plugin's module view). The text
//! indents each module under its parent and names the device as the trace does.

use super::args::ModulesArgs;
use super::table::{fmt_time, layout, name_width, truncate_name, Column};
use super::{load, print_json};
use sightline::analysis::summary::devices_word;
use sightline::query::Modules;

pub fn run(args: &ModulesArgs) -> Result<(), String> {
    let opts = &args.listed;
    let top = opts.top;
    let loaded = load(&opts.trace.file)?;
    super::graphs::apply_capture(&loaded, &opts.trace.file, args.capture.as_deref())?;
    let trace = loaded.trace();
    let mut table = loaded.ask(&Modules {})?;
    if opts.trace.json {
        if let Some(n) = top {
            table.rows.truncate(n);
        }
        return print_json(&table);
    }
    if table.rows.is_empty() {
        println!(
            "no nn.Module frames in this trace (record it with torch.profiler.profile(with_modules=True))"
        );
        return Ok(());
    }
    let label = |depth: u32, name: &str| format!("{}{name}", "  ".repeat(depth as usize));
    let labels: Vec<String> = table.rows.iter().map(|r| label(r.depth, &r.name)).collect();
    let name_width = name_width(labels.iter().map(String::as_str)).min(70);
    let word = devices_word(trace);
    let device_col = |what: &str| {
        let title = format!("{word} {what}");
        let width = title.len().max(12);
        Column::right(title, width)
    };
    // A CPU-only trace has no device columns to show.
    let device = table.device_time_us > 0.0;
    let mut cols = vec![
        Column::left("Module", name_width),
        Column::right("# of Calls", 12),
        Column::right("Host total", 12),
        Column::right("Host self", 12),
        device_col("total"),
        device_col("self"),
        Column::right("Bwd host", 12),
        device_col("bwd"),
    ];
    let rows = table
        .rows
        .iter()
        .zip(&labels)
        .take(top.unwrap_or(usize::MAX))
        .map(|(r, l)| {
            let mut cells = vec![
                truncate_name(l, 70),
                r.calls.to_string(),
                fmt_time(r.host_total_us),
                fmt_time(r.host_self_us),
                fmt_time(r.device_total_us),
                fmt_time(r.device_self_us),
                fmt_time(r.backward_host_total_us),
                fmt_time(r.backward_device_total_us),
            ];
            if !device {
                drop_device(&mut cells);
            }
            cells
        });
    if !device {
        drop_device(&mut cols);
    }
    print!("{}", layout(&cols, rows));
    if !device {
        println!("Bwd host: the backward nodes of its forward operators (fwdbwd flows)");
        return Ok(());
    }
    println!(
        "{word} total/self: {word} time of the kernels, memcpy and memset launched inside the \
         module's calls / not inside a module it calls; Bwd host / {word} bwd: the backward nodes \
         of its forward operators (fwdbwd flows) and the {word} time under them; launched outside \
         every module (backward, optimizer): {} of {}",
        fmt_time(table.unattributed_device_us),
        fmt_time(table.device_time_us)
    );
    Ok(())
}

/// The device columns (total, self, backward), last first.
const DEVICE_COLUMNS: [usize; 3] = [7, 5, 4];

fn drop_device<T>(v: &mut Vec<T>) {
    for k in DEVICE_COLUMNS {
        v.remove(k);
    }
}
