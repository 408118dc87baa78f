//! FLOPs, bytes moved and the roofline: how fast each operator ran against the device's peak.
//!
//! Per operator call with a cost model ([`models`]): FLOPs and bytes from its shapes, and its
//! *kernel time*: the GPU kernels, memcpys and memsets launched by it or by the operators nested
//! in it (linked by [`Links`]: correlation to the runtime call, then External id; the nesting
//! followed through operators, not through Python frames or labels), as TraceLens charges them. Achieved TFLOP/s = FLOPs / kernel time, TB/s = bytes / kernel time, arithmetic intensity
//! = FLOPs / bytes. Against the device's roofs ([`peaks`], by `deviceProperties` name and dtype):
//! an op is *compute*-bound when its intensity is at least the ridge point (peak FLOP/s / peak
//! bandwidth), else *memory*-bound, and `% of peak` is achieved over the roof at its intensity,
//! `min(peak FLOP/s, intensity x bandwidth)`.
//!
//! Rows group calls by name, `Input Dims` and `Input type` (one row per op and shape, as
//! TraceLens's tables); per-call FLOPs and bytes are those of the group's first call, the rates
//! are the group's FLOPs over its kernel time (calls without kernels are left out of the rates).
//!
//! Files: [`models`] (per-op cost as TraceLens defines it, from `Input Dims`, `Input type` and
//! `Concrete Inputs`), [`peaks`] (dense roofs per device and dtype, each with its datasheet; a
//! device found by the whole tokens of its `deviceProperties` name, the entry with most tokens
//! winning; the compute ceilings a set of ops runs under), this module (per call: the kernel time
//! of everything launched below it, and each GPU op's innermost modelled call; rows per op and
//! shape), [`kernels`] (the kernel table's FLOPs columns: a call's cost shared among its kernels
//! by time) and [`rules`] (`low_gemm_efficiency`, `small_kernels`, `fp32_gemm_on_tensor_core_gpu`).

pub mod kernels;
pub mod models;
pub mod peaks;
pub mod rules;

use self::models::{Call, Cost, Family};
use self::peaks::Peaks;
use super::links::{Kind, Links};
use super::slicing::{block_on, Slicer, LOOKUP};
use crate::analysis::columns::{Column, Row, Sort, Type, Unit, SLICE_REF};
use crate::model::{SliceRef, StrId, Trace};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// One modelled operator call.
#[derive(Debug, Clone)]
pub struct Instance {
    pub slice: SliceRef,
    pub cost: Cost,
    /// PyTorch's own `flops` arg (with_flops), when written.
    pub pytorch_flops: Option<f64>,
    /// GPU time of everything it launched, ns.
    pub kernel_ns: i64,
    pub kernels: u32,
}

/// Every modelled call of a trace, and the device's roofs.
pub struct Flops {
    pub instances: Vec<Instance>,
    pub peaks: Option<Peaks>,
    /// The `deviceProperties` name the peaks were chosen by.
    pub device_name: Option<String>,
    /// Each GPU op launched below a modelled call, with the innermost such call (an index
    /// into `instances`), in lane order.
    pub launched: Vec<(SliceRef, u32)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlopsReport {
    /// The device the peaks are for (`deviceProperties` name), and the table entry used.
    pub device: Option<String>,
    pub peaks: Option<Peaks>,
    pub rows: Vec<FlopsRow>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FlopsRow {
    pub name: String,
    /// `Input Dims` as a JSON list.
    pub input_shapes: Value,
    pub dtype: String,
    pub family: Family,
    pub calls: usize,
    /// Per call.
    pub gflops: f64,
    /// Per call; `None` when only PyTorch's `flops` arg is known.
    pub bytes: Option<u64>,
    /// `shapes` (our model, TraceLens's definitions) or `pytorch` (the `flops` arg).
    pub flops_source: &'static str,
    /// PyTorch's `flops` arg per call, where with_flops wrote it (it counts 2·M·N·K only).
    pub pytorch_gflops: Option<f64>,
    /// Kernel time of all calls, µs.
    pub kernel_us: f64,
    pub tflops_s: Option<f64>,
    pub tb_s: Option<f64>,
    pub intensity: Option<f64>,
    /// `compute` or `memory`, against the device's ridge point.
    pub bound: Option<&'static str>,
    pub pct_of_peak: Option<f64>,
    /// The calls, for a viewer to show.
    pub slices: Vec<SliceRef>,
}

impl Row for FlopsRow {
    const COLUMNS: &'static [Column] = &[
        Column::new("name", "Name", Unit::Text, "The operator"),
        Column::new(
            "input_shapes",
            "Input shapes",
            Unit::Data,
            "`Input Dims` as a list (deeper for a list of tensors)",
        ),
        Column::new(
            "dtype",
            "dtype",
            Unit::Text,
            "The input's element type (`Input type`)",
        ),
        Column::new(
            "family",
            "Family",
            Unit::Text,
            "The FLOPs model: gemm, conv, attention, elementwise, ...",
        ),
        Column::new(
            "calls",
            "Calls",
            Unit::Count,
            "Calls of the op with these shapes and type",
        ),
        Column::new("gflops", "GFLOPs/call", Unit::Number, "GFLOPs per call").digits(4),
        Column::new(
            "bytes",
            "Bytes/call",
            Unit::Bytes,
            "Bytes moved per call; null when only PyTorch's `flops` arg is known",
        ),
        Column::new(
            "flops_source",
            "FLOPs from",
            Unit::Text,
            "shapes (the model, TraceLens's definitions) or pytorch (the `flops` arg)",
        ),
        Column::new(
            "pytorch_gflops",
            "PyTorch GFLOPs",
            Unit::Number,
            "PyTorch's `flops` arg per call, where `with_flops` wrote it (2·M·N·K only)",
        )
        .digits(4),
        Column::new("kernel_us", "Kernel", Unit::Us, "Device time of all calls"),
        Column::new("tflops_s", "TFLOP/s", Unit::Number, "Achieved TFLOP/s").digits(2),
        Column::new("tb_s", "TB/s", Unit::Number, "Achieved TB/s").digits(3),
        Column::new(
            "intensity",
            "FLOP/B",
            Unit::Number,
            "Arithmetic intensity: FLOPs per byte moved",
        )
        .digits(1),
        Column::new(
            "bound",
            "Bound",
            Unit::Text,
            "compute or memory, against the device's ridge point",
        ),
        Column::new(
            "pct_of_peak",
            "% of peak",
            Unit::Pct,
            "Achieved over the roof at the op's arithmetic intensity",
        )
        .digits(1),
        Column::new(
            "slices",
            "Calls' slices",
            Unit::Data,
            "The calls, for a viewer to show",
        )
        .typed(Type::List(&SLICE_REF)),
    ];
    const SORT: Sort = Sort::Largest("kernel_us");
}

/// The first GPU device's `deviceProperties` name.
fn device_name(trace: &Trace) -> Option<String> {
    let mut props: Vec<_> = trace.meta.device_properties.iter().collect();
    props.sort_by_key(|p| p.id);
    props.first().map(|p| p.name.clone())
}

fn parse_list(text: Option<&str>) -> Vec<Value> {
    text.and_then(|t| serde_json::from_str::<Vec<Value>>(t).ok())
        .unwrap_or_default()
}

impl Flops {
    pub fn build(trace: &Trace, links: &Links) -> Flops {
        block_on(Flops::build_sliced(trace, links, &mut Slicer::never()))
    }

    /// [`Flops::build`] pausing as `y` says (see [`crate::analysis::slicing`]).
    pub async fn build_sliced(trace: &Trace, links: &Links, y: &mut Slicer) -> Flops {
        let mut instances = Vec::new();
        let mut index: HashMap<SliceRef, usize> = HashMap::new();
        // The model of each operator name, looked up once per interned name.
        let mut models_by_name: HashMap<StrId, (Option<models::Model>, bool)> = HashMap::new();
        // Per distinct (name, dims, types, concrete inputs): the model's cost, and the first
        // input's dtype for a cost from PyTorch's `flops` arg.
        type Key<'t> = (StrId, StrId, Option<&'t str>, Option<&'t str>);
        let mut seen: HashMap<Key, (Option<Cost>, &'static str)> = HashMap::new();
        for (li, lane) in trace.lanes.iter().enumerate() {
            if lane.is_gpu() {
                continue;
            }
            let s = trace.slices_of(lane);
            for i in 0..s.len() {
                // Reading a call's args is several times the work of a slice visited.
                y.tick(4).await;
                if s.input_dims[i].is_none() || links.kinds.of_cat(s.cat[i]) != Kind::CpuOp {
                    continue;
                }
                let name = trace.str(s.name[i]);
                let (model, counted_by_pytorch) = *models_by_name
                    .entry(s.name[i])
                    .or_insert_with(|| (models::model_of(name), models::counted_by_pytorch(name)));
                if model.is_none() && !counted_by_pytorch {
                    continue;
                }
                let args = s.args[i];
                // PyTorch's own count, shown beside ours, and the FLOPs of the ops it counts
                // that have no model here (`aten::conv2d`, whose `aten::convolution` we model).
                let pytorch_flops = trace
                    .args
                    .field(args, "flops")
                    .and_then(|v| v.trim().parse::<f64>().ok());
                if model.is_none() && pytorch_flops.is_none() {
                    continue;
                }
                let types_text = trace.args.field(args, "Input type");
                let concrete_text = trace.args.field(args, "Concrete Inputs");
                // A long run repeats a few shapes many times: each distinct call is read once.
                let key = (s.name[i], s.input_dims[i], types_text, concrete_text);
                let (modelled, dtype) = match seen.get(&key) {
                    Some(c) => c.clone(),
                    None => {
                        let dims = parse_list(Some(trace.str(s.input_dims[i])));
                        let types = parse_list(types_text);
                        let concrete = parse_list(concrete_text);
                        let call = Call {
                            name,
                            dims: &dims,
                            types: &types,
                            concrete: &concrete,
                        };
                        let dtype = types
                            .first()
                            .and_then(Value::as_str)
                            .map_or("", models::short_dtype);
                        let c = (model.and_then(|m| m(&call)), dtype);
                        seen.insert(key, c.clone());
                        c
                    }
                };
                let cost = match (modelled, pytorch_flops) {
                    (Some(c), _) => c,
                    (None, Some(f)) if f > 0.0 => Cost {
                        family: Family::Other,
                        flops: f as u64,
                        bytes: None,
                        dtype,
                    },
                    _ => continue,
                };
                let r = SliceRef {
                    lane: li as u32,
                    index: i as u32,
                };
                index.insert(r, instances.len());
                instances.push(Instance {
                    slice: r,
                    cost,
                    pytorch_flops,
                    kernel_ns: 0,
                    kernels: 0,
                });
            }
        }
        // Each GPU op's time goes to every modelled operator above the one that launched it.
        let mut launched = Vec::new();
        if !instances.is_empty() {
            for (li, lane) in trace.gpu_lanes() {
                let s = trace.slices_of(lane);
                for i in 0..s.len() {
                    y.tick(LOOKUP).await;
                    if !links.kinds.of_cat(s.cat[i]).is_gpu_busy() {
                        continue;
                    }
                    let gpu = SliceRef {
                        lane: li as u32,
                        index: i as u32,
                    };
                    let mut cur = links.op(gpu);
                    let mut innermost = true;
                    // Up through operators only: a Python frame or a label ends the nesting
                    // TraceLens follows (and keeps the walk short under deep stacks).
                    while let Some(r) = cur {
                        if let Some(&k) = index.get(&r) {
                            instances[k].kernel_ns += s.dur_ns[i];
                            instances[k].kernels += 1;
                            if innermost {
                                launched.push((gpu, k as u32));
                                innermost = false;
                            }
                        }
                        cur = links.parent(r).filter(|p| {
                            let cat = trace.columns.cat[trace.row(*p)];
                            links.kinds.of_cat(cat) == Kind::CpuOp
                        });
                    }
                }
            }
        }
        let device_name = device_name(trace);
        Flops {
            instances,
            peaks: device_name.as_deref().and_then(peaks::lookup),
            device_name,
            launched,
        }
    }

    /// One row per op and shape, most kernel time first.
    pub fn report(&self, trace: &Trace) -> FlopsReport {
        let mut groups: HashMap<(StrId, StrId, &str), Vec<usize>> = HashMap::new();
        let mut order = Vec::new();
        for (k, inst) in self.instances.iter().enumerate() {
            let s = trace.slices(inst.slice.lane as usize);
            let i = inst.slice.index as usize;
            let types = trace.args.field(s.args[i], "Input type").unwrap_or("");
            let key = (s.name[i], s.input_dims[i], types);
            groups
                .entry(key)
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(k);
        }
        let mut rows: Vec<FlopsRow> = order
            .iter()
            .map(|key| self.row(trace, key.0, key.1, &groups[key]))
            .collect();
        rows.sort_by(|a, b| {
            b.kernel_us
                .total_cmp(&a.kernel_us)
                .then(a.name.cmp(&b.name))
        });
        FlopsReport {
            device: self.device_name.clone(),
            peaks: self.peaks,
            rows,
        }
    }

    fn row(&self, trace: &Trace, name: StrId, dims: StrId, members: &[usize]) -> FlopsRow {
        let first = &self.instances[members[0]];
        let timed: Vec<&Instance> = members
            .iter()
            .map(|&k| &self.instances[k])
            .filter(|i| i.kernel_ns > 0)
            .collect();
        let kernel_ns: i64 = timed.iter().map(|i| i.kernel_ns).sum();
        let flops: f64 = timed.iter().map(|i| i.cost.flops as f64).sum();
        let bytes: Option<f64> = timed.iter().map(|i| i.cost.bytes.map(|b| b as f64)).sum();
        let rate = |x: f64| (kernel_ns > 0).then(|| x / kernel_ns as f64 / 1e3);
        let tflops_s = rate(flops);
        let tb_s = bytes.and_then(rate);
        let c = &first.cost;
        let intensity = c
            .bytes
            .filter(|&b| b > 0)
            .map(|b| c.flops as f64 / b as f64);
        let roof = self.peaks.zip(intensity).map(|(p, x)| {
            let peak = p.tflops(c.dtype, c.family.matrix());
            let ridge = peak / p.mem_tb_s;
            let roof = peak.min(x * p.mem_tb_s);
            (if x >= ridge { "compute" } else { "memory" }, roof)
        });
        FlopsRow {
            name: trace.str(name).to_string(),
            input_shapes: serde_json::from_str(trace.str(dims)).unwrap_or(Value::Null),
            dtype: c.dtype.to_string(),
            family: c.family,
            calls: members.len(),
            gflops: c.flops as f64 / 1e9,
            bytes: c.bytes,
            flops_source: if c.family == Family::Other {
                "pytorch"
            } else {
                "shapes"
            },
            pytorch_gflops: first.pytorch_flops.map(|f| f / 1e9),
            kernel_us: kernel_ns as f64 / 1e3,
            tflops_s,
            tb_s,
            intensity,
            bound: roof.map(|r| r.0),
            pct_of_peak: roof
                .zip(tflops_s)
                .filter(|((_, roof), _)| *roof > 0.0)
                .map(|((_, roof), t)| 100.0 * t / roof),
            slices: members
                .iter()
                .map(|&k| self.instances[k].slice)
                .take(50)
                .collect(),
        }
    }
}
