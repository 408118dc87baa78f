//! `sightline labels FILE [--json] [--top N]`: `record_function` labels on the CPU and the device,
//! which the text names as the trace does (`GPU`, `MTIA`, `XPU`).

use super::args::Listed;
use super::table::{fmt_time, layout, name_width, truncate_name, Column};
use super::{load, print_json};
use sightline::analysis::summary::devices_word;
use sightline::analysis::tables::labels::Spread;
use sightline::query::Labels;

pub fn run(opts: &Listed) -> Result<(), String> {
    let top = opts.top;
    let loaded = load(&opts.trace.file)?;
    let trace = loaded.trace();
    let mut table = loaded.ask(&Labels {})?;
    if opts.trace.json {
        if let Some(n) = top {
            table.rows.truncate(n);
        }
        return print_json(&table);
    }
    if table.rows.is_empty() {
        println!("no record_function labels (user_annotation, gpu_user_annotation) in this trace");
        return Ok(());
    }
    let name_width = name_width(table.rows.iter().map(|r| r.name.as_str()));
    let word = devices_word(trace);
    let device_col = |what: &str| {
        let title = format!("{word} {what}");
        let width = title.len().max(12);
        Column::right(title, width)
    };
    let cols = [
        Column::right("Name", name_width),
        Column::right("# of Calls", 12),
        Column::right("CPU total", 12),
        Column::right("Self CPU", 12),
        Column::right("CPU min", 12),
        Column::right("CPU median", 12),
        Column::right("CPU max", 12),
        device_col("inside"),
        device_col("spans"),
        device_col("total"),
        device_col("median"),
    ];
    let spread = |s: &Option<Spread>, pick: fn(&Spread) -> f64| {
        s.as_ref().map_or("-".to_string(), |s| fmt_time(pick(s)))
    };
    let rows = table.rows.iter().take(top.unwrap_or(30)).map(|r| {
        vec![
            truncate_name(&r.name, 55),
            r.calls.to_string(),
            fmt_time(r.cpu_total_us),
            fmt_time(r.self_cpu_us),
            spread(&r.cpu_instance_us, |s| s.min),
            spread(&r.cpu_instance_us, |s| s.median),
            spread(&r.cpu_instance_us, |s| s.max),
            fmt_time(r.device_us),
            r.gpu_calls.to_string(),
            fmt_time(r.gpu_span_total_us),
            spread(&r.gpu_instance_us, |s| s.median),
        ]
    });
    print!("{}", layout(&cols, rows));
    println!(
        "{word} inside: {word} time of the kernels, memcpy and memset launched inside the label; \
         {word} spans/total/median: the label's spans on the {word} timeline"
    );
    Ok(())
}
