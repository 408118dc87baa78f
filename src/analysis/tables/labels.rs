//! The label table: `record_function` labels, as spans on the CPU (`user_annotation`) and as
//! Kineto projects them onto the GPU streams (`gpu_user_annotation`), one row per name.
//!
//! CPU side, from the kept annotation nodes of the [`Forest`] (so the same folding and self time
//! as the operator table): calls, CPU total and self, and the GPU time of the ops whose launch
//! (the runtime call) lies inside the label on its thread. Launches from other threads are not
//! counted: in a trace whose backward pass runs on autograd's thread, `backward` launches little.
//! GPU side: the spans' count and summed duration. Both sides give per-instance min/median/max,
//! to show how steady a label is.
//! `ProfilerStep#N` labels are one row, `ProfilerStep*`, as in the operator table.

use super::tree::{Categories, EventKind, Forest, NameKey};
use super::{median_us, us};
use crate::analysis::columns::{Column, Row, Sort, Unit, SPREAD};
use crate::model::Trace;
use rustc_hash::FxHashMap;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelTable {
    /// Rows by CPU total, then GPU span total, most first.
    pub rows: Vec<LabelRow>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelRow {
    pub name: String,
    /// CPU spans of the label.
    pub calls: u64,
    pub cpu_total_us: f64,
    pub self_cpu_us: f64,
    /// GPU time of the GPU ops launched inside the label.
    pub device_us: f64,
    /// Duration of one CPU span; `None` without CPU spans.
    pub cpu_instance_us: Option<Spread>,
    /// GPU time launched inside one CPU span.
    pub device_instance_us: Option<Spread>,
    /// Spans of the label on GPU streams.
    pub gpu_calls: u64,
    pub gpu_span_total_us: f64,
    pub gpu_instance_us: Option<Spread>,
}

/// A label's CPU total, as its row and its comparison (`analysis::diff`) declare it.
pub const LABEL_CPU_TOTAL: Column = Column::new(
    "cpu_total_us",
    "CPU total",
    Unit::Us,
    "Summed durations of its CPU spans",
);
/// A label's self CPU time, as its row and its comparison declare it.
pub const LABEL_SELF_CPU: Column = Column::new(
    "self_cpu_us",
    "Self CPU",
    Unit::Us,
    "CPU total minus its direct children's",
);

impl Row for LabelRow {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Name",
            Unit::Text,
            "The label (`ProfilerStep#N` as `ProfilerStep*`)",
        ),
        Column::new("calls", "# of Calls", Unit::Count, "CPU spans of the label"),
        LABEL_CPU_TOTAL,
        LABEL_SELF_CPU,
        Column::new(
            "device_us",
            "{device} inside",
            Unit::Us,
            "Device time of the kernels, memcpy and memset launched inside the label",
        ),
        Column::new(
            "cpu_instance_us",
            "CPU",
            Unit::Data,
            "Min, median and max of one CPU span; null without CPU spans",
        )
        .typed(SPREAD),
        Column::new(
            "device_instance_us",
            "{device} inside",
            Unit::Data,
            "Min, median and max of the device time launched inside one CPU span",
        )
        .typed(SPREAD),
        Column::new(
            "gpu_calls",
            "{device} spans",
            Unit::Count,
            "Spans of the label on the device's streams (`gpu_user_annotation`)",
        ),
        Column::new(
            "gpu_span_total_us",
            "{device} total",
            Unit::Us,
            "Summed durations of its spans on the device's streams",
        ),
        Column::new(
            "gpu_instance_us",
            "{device}",
            Unit::Data,
            "Min, median and max of one span on the device's streams",
        )
        .typed(SPREAD),
    ];
    const SORT: Sort = Sort::Largest("cpu_total_us");
}

/// Minimum, median and maximum of per-instance values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    fn of(mut ns: Vec<i64>) -> Option<Spread> {
        if ns.is_empty() {
            return None;
        }
        ns.sort_unstable();
        Some(Spread {
            min: us(ns[0]),
            median: median_us(&ns),
            max: us(ns[ns.len() - 1]),
        })
    }
}

#[derive(Default)]
struct Sums {
    cpu_ns: Vec<i64>,
    device_ns: Vec<i64>,
    self_cpu_ns: i64,
    gpu_ns: Vec<i64>,
}

pub fn label_table(trace: &Trace, forest: &Forest) -> LabelTable {
    // GPU time launched from within each node: by launch site (the runtime call), summed up the
    // tree. Unlike the operators' CUDA total this counts for a label inside an operator too.
    let mut inside: Vec<Vec<i64>> = forest.trees().map(|t| vec![0; t.len()]).collect();
    for g in &forest.gpu_ops {
        if let Some(l) = g.launch {
            let s = trace.slices(g.slice.lane as usize);
            inside[l.site.tree as usize][l.site.node as usize] += s.dur_ns[g.slice.index as usize];
        }
    }
    let mut by_name: FxHashMap<NameKey, Sums> = FxHashMap::default();
    for (t, inside) in forest.trees().zip(&mut inside) {
        t.add_up(inside);
        let s = trace.slices(t.lane as usize);
        for (x, &launched_ns) in inside.iter().enumerate() {
            if t.folded[x] || t.kind[x] != EventKind::Annotation {
                continue;
            }
            let r = by_name.entry(t.name[x]).or_default();
            r.cpu_ns.push(s.dur_ns[t.slice[x] as usize]);
            r.device_ns.push(launched_ns);
            r.self_cpu_ns += t.self_cpu_ns[x];
        }
    }
    let cats = Categories::new(trace);
    for lane in &trace.lanes {
        let s = trace.slices_of(lane);
        for i in 0..s.len() {
            if cats.is_gpu_label(s.cat[i]) {
                let key = NameKey::of(trace, s.name[i]);
                by_name.entry(key).or_default().gpu_ns.push(s.dur_ns[i]);
            }
        }
    }
    let mut rows: Vec<LabelRow> = by_name
        .into_iter()
        .map(|(name, r)| LabelRow {
            name: name.as_str(trace).to_string(),
            calls: r.cpu_ns.len() as u64,
            cpu_total_us: us(r.cpu_ns.iter().sum()),
            self_cpu_us: us(r.self_cpu_ns),
            device_us: us(r.device_ns.iter().sum()),
            gpu_calls: r.gpu_ns.len() as u64,
            gpu_span_total_us: us(r.gpu_ns.iter().sum()),
            cpu_instance_us: Spread::of(r.cpu_ns),
            device_instance_us: Spread::of(r.device_ns),
            gpu_instance_us: Spread::of(r.gpu_ns),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.cpu_total_us
            .total_cmp(&a.cpu_total_us)
            .then_with(|| b.gpu_span_total_us.total_cmp(&a.gpu_span_total_us))
            .then_with(|| a.name.cmp(&b.name))
    });
    LabelTable { rows }
}
