//! The operator table: PyTorch's `prof.key_averages()` (and `group_by_input_shape=True`), from a trace.
//!
//! Rows are the kept nodes of the [`Forest`] that are operators (`cpu_op`, 1.x `Operator`),
//! annotations (`user_annotation`) or runtime calls, keyed by name and kind (PyTorch keys by
//! `is_user_annotation` too) and, when grouping by shape, by `Input Dims` (an event without them
//! groups under `[]`, as in PyTorch). Python frames take their share of self time but are not rows.
//! `[memory]` events outside every node make one `[memory]` row, as in PyTorch.
//!
//! Columns as PyTorch defines them: CPU total = sum of durations; self = minus direct children;
//! Self CPU % and CPU total % over the sum of self CPU of all rows (so CPU total % can pass 100%);
//! Self CUDA = GPU time of the ops the node launched itself, CUDA total = with its children's;
//! Self CUDA % over the time of all GPU ops (kernels, memcpy, memset); memory = bytes of the
//! `[memory]` events within the node's span, self = minus its children's.
//!
//! One difference on GPU traces: PyTorch's table also lists every kernel and every
//! `gpu_user_annotation` as a row with no CPU time; here those are the kernel and label tables.

use super::tree::{EventKind, Forest, NameKey};
use super::PathColumns;
use super::{percent, us};
use crate::analysis::columns::{Column, Row, Sort, Unit};
use crate::analysis::graphs::Charges;
use crate::model::{StrId, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The operator table, rows sorted by self CPU time (most first).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OpTable {
    /// Rows are keyed by input shapes too.
    pub by_input_shape: bool,
    pub rows: Vec<OpRow>,
    /// Sum of self CPU over all rows: PyTorch's "Self CPU time total", the CPU % denominator.
    pub self_cpu_total_us: f64,
    /// Time of all GPU ops: PyTorch's "Self CUDA time total", the Self CUDA % denominator.
    pub gpu_time_us: f64,
    /// GPU time that no link leads to an operator for. With the rows' self CUDA time it adds up
    /// to `gpu_time_us`: nothing is dropped or counted twice.
    pub unattributed_gpu_us: f64,
    pub unattributed_gpu_ops: u64,
    /// The trace has `[memory]` events (`profile_memory=True`).
    pub has_memory: bool,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OpRow {
    pub name: String,
    pub kind: EventKind,
    /// `Input Dims` as Python prints the list (the key PyTorch groups by, and what the text
    /// table shows); `None` unless grouping by input shape. Serialized as data: the JSON list
    /// (`[[32, 16], []]` -> a list of lists of numbers), see [`dims_as_list`].
    #[serde(serialize_with = "dims_as_list")]
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown> | string | null"))]
    pub input_shapes: Option<String>,
    pub calls: u64,
    pub self_cpu_us: f64,
    pub self_cpu_pct: f64,
    pub cpu_total_us: f64,
    pub cpu_total_pct: f64,
    pub cpu_avg_us: f64,
    pub self_device_us: f64,
    pub self_device_pct: f64,
    pub device_total_us: f64,
    pub device_avg_us: f64,
    pub cpu_mem_bytes: i64,
    pub self_cpu_mem_bytes: i64,
    pub device_mem_bytes: i64,
    pub self_device_mem_bytes: i64,
    /// `on_path_us` and `slack_us`, when asked for (`ops --path`).
    #[serde(flatten)]
    // Not in the TypeScript types: the page never asks for these columns, and ts-rs flattens
    // no `Option`.
    #[cfg_attr(feature = "ts", ts(skip))]
    pub path: Option<PathColumns>,
}

/// The operator's name, as its row and its comparison (`analysis::diff`) declare it.
pub const OP_NAME: Column = Column::new(
    "name",
    "Name",
    Unit::Text,
    "The operator's, label's or runtime call's name",
);
/// Its kind, as its row and its comparison declare it.
pub const OP_KIND: Column = Column::new(
    "kind",
    "Kind",
    Unit::Text,
    "op, annotation (record_function), runtime or memory",
);
/// Self CPU time, as its row and its comparison's sides declare it (the row adds PyTorch's sort
/// name).
pub const SELF_CPU: Column = Column::new(
    "self_cpu_us",
    "Self CPU",
    Unit::Us,
    "CPU time minus its direct children's",
);
/// CPU total, as its row and its comparison's sides declare it.
pub const CPU_TOTAL: Column = Column::new(
    "cpu_total_us",
    "CPU total",
    Unit::Us,
    "Summed durations of its calls",
);

impl Row for OpRow {
    const COLUMNS: &'static [Column] = &[
        OP_NAME,
        OP_KIND,
        Column::new(
            "input_shapes",
            "Input Shapes",
            Unit::Data,
            "`Input Dims` as a list of lists, when grouped by input shape (`by_shape`); else null",
        ),
        Column::new(
            "calls",
            "# of Calls",
            Unit::Count,
            "Calls (PyTorch's count)",
        )
        .aliases(&["count"]),
        SELF_CPU.aliases(&["self_cpu_time_total"]),
        Column::new(
            "self_cpu_pct",
            "Self CPU %",
            Unit::Pct,
            "Self CPU over the sum of every row's self CPU",
        ),
        CPU_TOTAL.aliases(&["cpu_time_total"]),
        Column::new(
            "cpu_total_pct",
            "CPU total %",
            Unit::Pct,
            "CPU total over the sum of every row's self CPU (so it can pass 100%)",
        ),
        Column::new("cpu_avg_us", "CPU time avg", Unit::Us, "CPU total per call")
            .aliases(&["cpu_time"]),
        Column::new(
            "self_device_us",
            "Self {device}",
            Unit::Us,
            "Device time of the GPU ops it launched itself",
        )
        .aliases(&["self_cuda_time_total", "self_device_time_total"]),
        Column::new(
            "self_device_pct",
            "Self {device} %",
            Unit::Pct,
            "Self device time over the time of all GPU ops",
        ),
        Column::new(
            "device_total_us",
            "{device} total",
            Unit::Us,
            "Device time of the GPU ops it and its children launched",
        )
        .aliases(&["cuda_time_total", "device_time_total"]),
        Column::new(
            "device_avg_us",
            "{device} time avg",
            Unit::Us,
            "Device total per call",
        )
        .aliases(&["cuda_time", "device_time"]),
        Column::new(
            "cpu_mem_bytes",
            "CPU Mem",
            Unit::Bytes,
            "Bytes of the `[memory]` events on the CPU within its calls",
        )
        .aliases(&["cpu_memory_usage"]),
        Column::new(
            "self_cpu_mem_bytes",
            "Self CPU Mem",
            Unit::Bytes,
            "CPU memory minus its children's",
        )
        .aliases(&["self_cpu_memory_usage"]),
        Column::new(
            "device_mem_bytes",
            "{device} Mem",
            Unit::Bytes,
            "Bytes of the `[memory]` events on the device within its calls",
        )
        .aliases(&["cuda_memory_usage", "device_memory_usage"]),
        Column::new(
            "self_device_mem_bytes",
            "Self {device} Mem",
            Unit::Bytes,
            "Device memory minus its children's",
        )
        .aliases(&["self_cuda_memory_usage", "self_device_memory_usage"]),
        PathColumns::ON_PATH.with("path"),
        PathColumns::SLACK.with("path"),
    ];
    const SORT: Sort = Sort::DeviceElse("self_device_us", "self_cpu_us");
}

/// Sums of one row, in integers until the end.
/// `Input Dims` text read back as the list it prints (Python's `str` of a list of int lists is
/// JSON). Text that is not JSON, which PyTorch does not write, stays a string rather than being
/// lost.
fn dims_as_list<S: serde::Serializer>(dims: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    dims_json::serialize(dims, s)
}

/// Serde for `Input Dims` kept as Python's printed text inside (the key rows are grouped by) and
/// written as data: `[[32, 16], []]` is a JSON list of lists of numbers. Reading accepts the list
/// (printed back as Python prints it, so a round trip gives the same key) or the old text.
pub mod dims_json {
    use serde::{Deserialize, Serialize};

    pub fn serialize<S: serde::Serializer>(dims: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        match dims {
            None => s.serialize_none(),
            Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(list) => list.serialize(s),
                Err(_) => s.serialize_str(text),
            },
        }
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(match Option::<serde_json::Value>::deserialize(d)? {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(text)) => Some(text),
            Some(list) => {
                let mut out = String::new();
                python_str(&list, &mut out);
                Some(out)
            }
        })
    }

    /// A JSON value as Python's `str` prints the list: `[[32, 16], []]`.
    fn python_str(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::Array(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    python_str(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    #[cfg(test)]
    mod tests {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Row {
            #[serde(with = "super")]
            input_shapes: Option<String>,
        }

        #[test]
        fn round_trip_keeps_the_printed_key() {
            for text in ["[[32, 16], []]", "[[1, 141, 512], [[2, 3], [4]], []]", "[]"] {
                let row = Row {
                    input_shapes: Some(text.to_string()),
                };
                let json = serde_json::to_value(&row).unwrap();
                assert!(json["input_shapes"].is_array(), "{json}");
                assert_eq!(serde_json::from_value::<Row>(json).unwrap(), row);
            }
            let none = Row { input_shapes: None };
            let json = serde_json::to_string(&none).unwrap();
            assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), none);
            let old: Row = serde_json::from_str(r#"{"input_shapes":"[[2, 2]]"}"#).unwrap();
            assert_eq!(old.input_shapes.as_deref(), Some("[[2, 2]]"));
        }
    }
}

#[derive(Default)]
struct Sums {
    calls: u64,
    self_cpu_ns: i64,
    cpu_total_ns: i64,
    self_device_ns: i64,
    device_total_ns: i64,
    cpu_mem: i64,
    self_cpu_mem: i64,
    device_mem: i64,
    self_device_mem: i64,
}

/// The operator table of a trace; `by_input_shape` is `group_by_input_shape=True`.
pub fn op_table(trace: &Trace, forest: &Forest, by_input_shape: bool) -> OpTable {
    op_table_charged(trace, forest, by_input_shape, None)
}

/// [`op_table`] of a trace that replays CUDA/HIP graphs, with its capture's `charges`: the
/// replayed ops the capture names leave the self device time of the node their graph launch was
/// charged to (its total keeps them) and become the self device time of the captured operators,
/// rows with no CPU time (the CPU does not run them in a replay; see [`crate::analysis::graphs`]).
pub fn op_table_charged(
    trace: &Trace,
    forest: &Forest,
    by_input_shape: bool,
    charges: Option<&Charges>,
) -> OpTable {
    // Device time leaving each node (by lane and node) for the captured operators.
    let mut leaving: FxHashMap<(u32, u32), i64> = FxHashMap::default();
    if let Some(c) = charges {
        for g in &forest.gpu_ops {
            if let (Some(l), true) = (g.launch, c.moved.contains(&g.slice)) {
                let lane = forest.tree(l.op.tree as usize).lane;
                let dur = trace.slices(g.slice.lane as usize).dur_ns[g.slice.index as usize];
                *leaving.entry((lane, l.op.node)).or_default() += dur;
            }
        }
    }
    let mut index: FxHashMap<(NameKey, EventKind, StrId), usize> = FxHashMap::default();
    let mut keys = Vec::new();
    let mut sums: Vec<Sums> = Vec::new();
    for (t, x) in forest.kept_nodes() {
        let kind = t.kind[x];
        if kind == EventKind::Python {
            continue;
        }
        let s = trace.slices(t.lane as usize);
        let i = t.slice[x] as usize;
        let dims = if by_input_shape {
            s.input_dims[i]
        } else {
            StrId::NONE
        };
        let key = (t.name[x], kind, dims);
        let row = *index.entry(key).or_insert_with(|| {
            keys.push(key);
            sums.push(Sums::default());
            sums.len() - 1
        });
        let r = &mut sums[row];
        r.calls += 1;
        r.self_cpu_ns += t.self_cpu_ns[x];
        r.cpu_total_ns += s.dur_ns[i];
        r.self_device_ns +=
            t.device_self_ns[x] - leaving.get(&(t.lane, x as u32)).copied().unwrap_or(0);
        r.device_total_ns += t.device_total_ns[x];
        if let Some(m) = t.memory.get(x) {
            r.cpu_mem += m.cpu_bytes;
            r.self_cpu_mem += m.self_cpu_bytes;
            r.device_mem += m.device_bytes;
            r.self_device_mem += m.self_device_bytes;
        }
    }

    let shapes = |dims: StrId| -> Option<String> {
        by_input_shape.then(|| match trace.str(dims) {
            "" => "[]".to_string(),
            d => d.to_string(),
        })
    };
    let mut named: Vec<(String, EventKind, Option<String>, Sums)> = keys
        .into_iter()
        .zip(sums)
        .map(|((name, kind, dims), s)| (name.as_str(trace).to_string(), kind, shapes(dims), s))
        .collect();
    let stray = forest.stray_memory;
    if stray.events > 0 {
        named.push((
            "[memory]".to_string(),
            EventKind::Memory,
            shapes(StrId::NONE),
            Sums {
                calls: stray.events,
                cpu_mem: stray.cpu_bytes,
                self_cpu_mem: stray.cpu_bytes,
                device_mem: stray.device_bytes,
                self_device_mem: stray.device_bytes,
                ..Sums::default()
            },
        ));
    }

    for c in charges.map_or(&[][..], |c| &c.rows) {
        named.push((
            c.name.clone(),
            if c.annotation {
                EventKind::Annotation
            } else {
                EventKind::Op
            },
            c.input_dims.clone(),
            Sums {
                calls: c.calls,
                self_device_ns: c.self_device_ns,
                device_total_ns: c.device_total_ns,
                ..Sums::default()
            },
        ));
    }
    let self_cpu_total_ns: i64 = named.iter().map(|r| r.3.self_cpu_ns).sum();
    let rows = named
        .into_iter()
        .map(|(name, kind, input_shapes, s)| OpRow {
            name,
            kind,
            input_shapes,
            calls: s.calls,
            self_cpu_us: us(s.self_cpu_ns),
            self_cpu_pct: percent(s.self_cpu_ns, self_cpu_total_ns),
            cpu_total_us: us(s.cpu_total_ns),
            cpu_total_pct: percent(s.cpu_total_ns, self_cpu_total_ns),
            cpu_avg_us: us(s.cpu_total_ns) / s.calls as f64,
            self_device_us: us(s.self_device_ns),
            self_device_pct: percent(s.self_device_ns, forest.gpu_time_ns),
            device_total_us: us(s.device_total_ns),
            device_avg_us: us(s.device_total_ns) / s.calls as f64,
            cpu_mem_bytes: s.cpu_mem,
            self_cpu_mem_bytes: s.self_cpu_mem,
            device_mem_bytes: s.device_mem,
            self_device_mem_bytes: s.self_device_mem,
            path: None,
        })
        .collect();
    let mut table = OpTable {
        by_input_shape,
        rows,
        self_cpu_total_us: us(self_cpu_total_ns),
        gpu_time_us: us(forest.gpu_time_ns),
        unattributed_gpu_us: us(forest.unattributed_ns),
        unattributed_gpu_ops: forest.unattributed_ops,
        has_memory: !trace.memory.is_empty(),
    };
    table.sort_by(OpColumn::SelfCpu);
    table
}

/// A column to sort the operator table by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpColumn {
    Name,
    Calls,
    SelfCpu,
    CpuTotal,
    CpuAvg,
    SelfDevice,
    DeviceTotal,
    DeviceAvg,
    CpuMem,
    SelfCpuMem,
    DeviceMem,
    SelfDeviceMem,
}

impl OpColumn {
    /// Every column, in the declaration's order.
    pub const ALL: [OpColumn; 12] = [
        OpColumn::Name,
        OpColumn::Calls,
        OpColumn::SelfCpu,
        OpColumn::CpuTotal,
        OpColumn::CpuAvg,
        OpColumn::SelfDevice,
        OpColumn::DeviceTotal,
        OpColumn::DeviceAvg,
        OpColumn::CpuMem,
        OpColumn::SelfCpuMem,
        OpColumn::DeviceMem,
        OpColumn::SelfDeviceMem,
    ];

    /// The declared column it sorts by ([`OpRow::COLUMNS`]), which names it: its key, and the
    /// names PyTorch's `sort_by` knows it by.
    pub fn column(self) -> &'static Column {
        let key = match self {
            OpColumn::Name => "name",
            OpColumn::Calls => "calls",
            OpColumn::SelfCpu => "self_cpu_us",
            OpColumn::CpuTotal => "cpu_total_us",
            OpColumn::CpuAvg => "cpu_avg_us",
            OpColumn::SelfDevice => "self_device_us",
            OpColumn::DeviceTotal => "device_total_us",
            OpColumn::DeviceAvg => "device_avg_us",
            OpColumn::CpuMem => "cpu_mem_bytes",
            OpColumn::SelfCpuMem => "self_cpu_mem_bytes",
            OpColumn::DeviceMem => "device_mem_bytes",
            OpColumn::SelfDeviceMem => "self_device_mem_bytes",
        };
        OpRow::COLUMNS
            .iter()
            .find(|c| c.key == key)
            .expect("a sort column is a declared column")
    }

    /// The names a request may sort by: each column's key, then its aliases.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Self::ALL.into_iter().flat_map(|o| {
            let c = o.column();
            std::iter::once(c.key).chain(c.aliases.iter().copied())
        })
    }

    pub fn parse(name: &str) -> Option<OpColumn> {
        Self::ALL.into_iter().find(|o| {
            let c = o.column();
            c.key == name || c.aliases.contains(&name)
        })
    }

    fn value(self, r: &OpRow) -> f64 {
        match self {
            OpColumn::Name => 0.0,
            OpColumn::Calls => r.calls as f64,
            OpColumn::SelfCpu => r.self_cpu_us,
            OpColumn::CpuTotal => r.cpu_total_us,
            OpColumn::CpuAvg => r.cpu_avg_us,
            OpColumn::SelfDevice => r.self_device_us,
            OpColumn::DeviceTotal => r.device_total_us,
            OpColumn::DeviceAvg => r.device_avg_us,
            OpColumn::CpuMem => r.cpu_mem_bytes as f64,
            OpColumn::SelfCpuMem => r.self_cpu_mem_bytes as f64,
            OpColumn::DeviceMem => r.device_mem_bytes as f64,
            OpColumn::SelfDeviceMem => r.self_device_mem_bytes as f64,
        }
    }
}

impl OpTable {
    /// The column every front end sorts by unless told another: self device time when device
    /// time was charged to operators, else self CPU time (as PyTorch users sort `key_averages()`),
    /// as [`OpRow::SORT`] declares.
    pub fn default_sort(&self) -> OpColumn {
        let key = OpRow::SORT.key(self.has_device_time());
        key.and_then(OpColumn::parse)
            .expect("the operator table's sort is one of its columns")
    }

    /// Sorts the rows by a column, largest first (names A to Z); ties by name, then shapes.
    pub fn sort_by(&mut self, column: OpColumn) {
        self.rows.sort_by(|a, b| {
            column
                .value(b)
                .total_cmp(&column.value(a))
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.input_shapes.cmp(&b.input_shapes))
                .then_with(|| a.kind.cmp(&b.kind))
        });
    }

    /// The trace has GPU time, so the table has device columns.
    pub fn has_device_time(&self) -> bool {
        self.gpu_time_us > 0.0
    }
}
