//! `sightline modules FILE [--json] [--top N]`: the `nn.Module` hierarchy that `with_modules=True`
//! records, with host and device time per module (the TensorBoard plugin's module view). The text
//! indents each module under its parent and names the device as the trace does.

use super::ops::{fmt_time, layout, name_width, truncate_name, Column};
use super::{load, print_json, Opts};
use sightline::analysis::summary::devices_word;
use sightline::analysis::tables::{module_table, Forest};

pub fn run(opts: &Opts) -> Result<(), String> {
    let top = opts.count("--top")?;
    let loaded = load(&opts.file)?;
    let trace = &loaded.trace;
    let mut table = module_table(trace, &Forest::build(trace));
    if opts.flag("--json") {
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
    let cols = [
        Column::left("Module", name_width),
        Column::right("# of Calls", 12),
        Column::right("Host total", 12),
        Column::right("Host self", 12),
        device_col("total"),
        device_col("self"),
    ];
    let rows = table
        .rows
        .iter()
        .zip(&labels)
        .take(top.unwrap_or(usize::MAX))
        .map(|(r, l)| {
            vec![
                truncate_name(l, 70),
                r.calls.to_string(),
                fmt_time(r.host_total_us),
                fmt_time(r.host_self_us),
                fmt_time(r.device_total_us),
                fmt_time(r.device_self_us),
            ]
        });
    print!("{}", layout(&cols, rows));
    println!(
        "{word} total/self: {word} time of the kernels, memcpy and memset launched inside the \
         module's calls / not inside a module it calls; launched outside every module (backward, \
         optimizer): {} of {}",
        fmt_time(table.unattributed_device_us),
        fmt_time(table.device_time_us)
    );
    Ok(())
}
