//! `sightline modules FILE [--json] [--top N]`: the `nn.Module` hierarchy that `with_modules=True`
//! records, with host and device time per module (the TensorBoard plugin's module view). The text
//! indents each module under its parent and names the device as the trace does.

use super::args::ModulesArgs;
use super::table::{declared, fmt_time, name_width, truncate_name, Shown};
use super::{load, print_json};
use sightline::analysis::summary::devices_word;
use sightline::analysis::tables::ModuleRow;
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
    // A CPU-only trace has no device columns to show.
    let device = table.device_time_us > 0.0;
    let mut shown = vec![
        Shown::left("module", name_width),
        Shown::right("calls", 12),
        Shown::right("host_total_us", 12),
        Shown::right("host_self_us", 12),
    ];
    if device {
        shown.push(Shown::right("device_total_us", 12).fit());
        shown.push(Shown::right("device_self_us", 12).fit());
    }
    shown.push(Shown::right("backward_host_total_us", 12));
    if device {
        shown.push(Shown::right("backward_device_total_us", 12).fit());
    }
    let rows = table.rows.iter().take(top.unwrap_or(usize::MAX));
    // The module's name, indented under its parent.
    let text = declared(&shown, rows, &word, |r: &ModuleRow, key, _| {
        (key == "module").then(|| truncate_name(&label(r.depth, &r.name), 70))
    });
    print!("{text}");
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
