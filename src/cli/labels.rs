//! `sightline labels FILE [--json] [--top N]`: `record_function` labels on the CPU and the device,
//! which the text names as the trace does (`GPU`, `MTIA`, `XPU`).

use super::args::Listed;
use super::table::{declared, name_width, truncate_name, Shown};
use super::{load, print_json};
use sightline::analysis::columns::Unit;
use sightline::analysis::summary::devices_word;
use sightline::analysis::tables::LabelRow;
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
    let shown = [
        Shown::right("name", name_width),
        Shown::right("calls", 12),
        Shown::right("cpu_total_us", 12),
        Shown::right("self_cpu_us", 12),
        Shown::right("cpu_instance_us", 12).part("min", Unit::Us),
        Shown::right("cpu_instance_us", 12).part("median", Unit::Us),
        Shown::right("cpu_instance_us", 12).part("max", Unit::Us),
        Shown::right("device_us", 12).fit(),
        Shown::right("gpu_calls", 12).fit(),
        Shown::right("gpu_span_total_us", 12).fit(),
        Shown::right("gpu_instance_us", 12)
            .part("median", Unit::Us)
            .fit(),
    ];
    let rows = table.rows.iter().take(top.unwrap_or(30));
    print!(
        "{}",
        declared(&shown, rows, &word, |r: &LabelRow, key, _| {
            (key == "name").then(|| truncate_name(&r.name, 55))
        })
    );
    println!(
        "{word} inside: {word} time of the kernels, memcpy and memset launched inside the label; \
         {word} spans/total/median: the label's spans on the {word} timeline"
    );
    Ok(())
}
