//! The kernel table: the GPU ops (kernels, memcpy, memset) grouped by name.
//!
//! Per name: calls; total, mean, min, median and max duration; share of all GPU op time; the kind
//! HTA gives it ([`kernel_kind`]); whether the name says it uses Tensor Cores or AMD's Matrix Cores
//! ([`uses_tensor_cores`]: the TensorBoard plugin's list and the families it predates); the mean `est. achieved occupancy %` weighted by duration, over
//! the calls that report it (TensorBoard weights the same way); the TensorBoard plugin's estimated
//! SM efficiency, min(`blocks per SM`, 1) weighted by duration over the calls with a positive
//! `blocks per SM` (its `docs/gpu_utilization.md`; it skips the others), and the mean `blocks per
//! SM` weighted the same way; the grid/block variants; and the
//! operators that launched it, as charged in the [`Forest`] (GPU ops no link leads anywhere from
//! are listed under no operator, never dropped).
//!
//! Grid, block, occupancy and blocks per SM are read from each GPU op's args, the only per-op
//! parsing here.

use super::tree::{Forest, NameKey};
use super::PathColumns;
use super::{median_us, percent, us};
use crate::analysis::columns::{Column, Row, Sort, Type, Unit};
use crate::analysis::graphs::Attribution;
use crate::model::{ArgsId, StrId, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// What a GPU op does, as HTA classifies it by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    Computation,
    Memory,
    Communication,
}

impl KernelKind {
    /// The kind as a word, as it is serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            KernelKind::Computation => "computation",
            KernelKind::Memory => "memory",
            KernelKind::Communication => "communication",
        }
    }
}

/// HTA's classification: communication if the name starts with `nccl`, `rccl`, `hip` or `hccl`
/// or holds `ncclKernel`; memory if it starts with `Memcpy`, `Memset` or `dma`; else computation.
pub fn kernel_kind(name: &str) -> KernelKind {
    const COMMUNICATION: [&str; 4] = ["nccl", "rccl", "hip", "hccl"];
    const MEMORY: [&str; 3] = ["Memcpy", "Memset", "dma"];
    if COMMUNICATION.iter().any(|p| name.starts_with(p)) || name.contains("ncclKernel") {
        KernelKind::Communication
    } else if MEMORY.iter().any(|p| name.starts_with(p)) {
        KernelKind::Memory
    } else {
        KernelKind::Computation
    }
}

/// Name fragments of kernels that use Tensor Cores: the TensorBoard profiler plugin's allowlist
/// (`tb_plugin/torch_tb_profiler/profiler/tensor_core.py`, after NVIDIA PyProf).
const TENSOR_CORE_PATTERNS: [&str; 18] = [
    "h884",
    "s884",
    "h1688",
    "s1688",
    "hmma",
    "i8816",
    "16816",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm",
    "xmma_gemm",
    "xmma_sparse_gemm",
    "c1688",
];

/// Name fragments of the families the plugin's list predates (it was last changed for Ampere's
/// cuDNN): CUTLASS's `wmma` and `tensorop` kernels of every architecture, Hopper's warpgroup MMA
/// (`gmma`, `wgmma`), CUTLASS 3's `sm90`/`sm100` kernels, cuBLAS's JIT GEMMs of Hopper and
/// Blackwell (`nvjet_*`), and flash attention's kernels (FlashAttention 2/3, PyTorch's copy of
/// it, TensorRT-LLM's `fmhaSm100*`).
const NEWER_TENSOR_CORE_PATTERNS: [&str; 11] = [
    "wmma",
    "tensorop",
    "gmma",
    "cutlass3x_sm9",
    "cutlass3x_sm10",
    "nvjet",
    "flash_fwd",
    "flash_bwd",
    "flash_attn",
    "FlashAttn",
    "tcgen05",
];

/// Whether a kernel's name says it runs on Tensor Cores (NVIDIA) or Matrix Cores (AMD's MFMA).
/// Case-sensitive, as the plugin matched. The rule, in order:
/// 1. the TensorBoard plugin's list ([`TENSOR_CORE_PATTERNS`]), so every kernel it flags is flagged;
/// 2. a kernel whose name says it runs on the CUDA cores (`simt`, CUTLASS's name for them) is not;
/// 3. the newer NVIDIA families ([`NEWER_TENSOR_CORE_PATTERNS`]);
/// 4. fused attention (`fmha*`) unless in FP32 (`_f32_`: the memory-efficient kernels' FP32 build
///    runs on the CUDA cores);
/// 5. TensorRT-LLM's batched GEMMs on FP8/FP4/BF16/FP16 (`bmm_MxE4m3_MxE2m1...`, `bmm_E2m1...`,
///    `bmm_Bfloat16...`), block-scaled MX formats included;
/// 6. any other GEMM whose name gives a half, bfloat16 or FP8/FP4 type (`gemm` with `bf16`, `f16`,
///    `fp16`, `e4m3`, `e5m2`, `fp8`, `e2m1`: cuBLASLt's, CUTLASS's), since the hardware runs
///    those types on its matrix units;
/// 7. AMD: Tensile/hipBLASLt GEMMs built on matrix instructions (`Cijk_..._MI16x16x1_...`: the
///    `MI` field names the MFMA instruction), Composable Kernel's `xdl` (XDLOPS) kernels, MIOpen's
///    `gtcx` (XDLOPS) implicit GEMMs, and any name holding `mfma`.
pub fn uses_tensor_cores(name: &str) -> bool {
    if TENSOR_CORE_PATTERNS.iter().any(|p| name.contains(p)) {
        return true;
    }
    if name.contains("simt") {
        return false;
    }
    if NEWER_TENSOR_CORE_PATTERNS.iter().any(|p| name.contains(p)) {
        return true;
    }
    if name.contains("fmha") || name.contains("Fmha") {
        return !name.contains("_f32_");
    }
    const LOW_PRECISION: [&str; 7] = ["bf16", "f16", "fp16", "e4m3", "e5m2", "fp8", "e2m1"];
    const BMM_TYPES: [&str; 5] = ["E4m3", "E2m1", "E5m2", "Bfloat16", "Fp16"];
    let bare = name.strip_prefix("void ").unwrap_or(name);
    if (bare.starts_with("bmm_") || bare.starts_with("Bmm_"))
        && BMM_TYPES.iter().any(|t| bare.contains(t))
    {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    // `sgemm` is single-precision math on the CUDA cores, whatever the storage type
    // (`volta_fp16_sgemm_fp16_...`).
    if lower.contains("gemm")
        && !lower.contains("sgemm")
        && LOW_PRECISION.iter().any(|t| lower.contains(t))
    {
        return true;
    }
    amd_matrix_core(name)
}

/// AMD's kernels that say they run on the Matrix Cores (see [`uses_tensor_cores`], rule 7).
fn amd_matrix_core(name: &str) -> bool {
    let tensile_mfma = name.starts_with("Cijk_")
        && name
            .match_indices("_MI")
            .any(|(i, _)| name.as_bytes().get(i + 3).is_some_and(u8::is_ascii_digit));
    tensile_mfma
        || name.contains("_xdl")
        || name.contains("Xdl")
        || name.contains("gtcx")
        || name.contains("mfma")
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KernelTable {
    /// Rows by total time, most first.
    pub rows: Vec<KernelRow>,
    /// Time of all GPU ops, the denominator of `gpu_time_pct`.
    pub gpu_time_us: f64,
    /// Time per kind, in the order computation, memory, communication.
    pub by_kind: Vec<KindTime>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "KernelKindTime"))]
pub struct KindTime {
    pub kind: KernelKind,
    pub calls: u64,
    pub total_us: f64,
    pub gpu_time_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KernelRow {
    pub name: String,
    pub kind: KernelKind,
    pub tensor_cores: bool,
    pub calls: u64,
    pub total_us: f64,
    pub avg_us: f64,
    pub min_us: f64,
    pub median_us: f64,
    pub max_us: f64,
    pub gpu_time_pct: f64,
    /// Duration-weighted mean of `est. achieved occupancy %`; `None` when no call reports it.
    pub mean_occupancy_pct: Option<f64>,
    /// Duration-weighted mean of min(`blocks per SM`, 1) x 100 over the calls whose `blocks per SM`
    /// is positive; `None` when no call reports one (ROCm and other devices do not).
    pub est_sm_efficiency_pct: Option<f64>,
    /// Duration-weighted mean of `blocks per SM` over the same calls.
    pub mean_blocks_per_sm: Option<f64>,
    /// Distinct (grid, block) launches, most time first; empty for memcpy/memset.
    pub launch_configs: Vec<LaunchConfig>,
    /// The operators that launched it, most time first; `name: None` gathers the calls that no
    /// link leads to an operator for.
    pub launched_by: Vec<LaunchedBy>,
    /// `on_path_us` and `slack_us`, when asked for (`kernels --path`).
    #[serde(flatten)]
    // Not in the TypeScript types: the page never asks for these columns, and ts-rs flattens
    // no `Option`.
    #[cfg_attr(feature = "ts", ts(skip))]
    pub path: Option<PathColumns>,
    /// The FLOPs and bytes of the operators that launched it, where a cost model knows them
    /// (`flops::kernels::annotate` fills these; `None` until then, and for kernels that no
    /// modelled operator launched).
    #[serde(flatten)]
    pub flops: KernelFlops,
}

/// A launch configuration as [`KernelRow::COLUMNS`] declares it.
const LAUNCH_CONFIG: Type = Type::Struct(&[
    ("grid", Type::List(&Type::Int)),
    ("block", Type::List(&Type::Int)),
    ("calls", Type::Int),
    ("total_us", Type::Float),
]);

/// A launcher as [`KernelRow::COLUMNS`] declares it.
const LAUNCHED_BY: Type = Type::Struct(&[
    ("name", Type::Str),
    ("calls", Type::Int),
    ("total_us", Type::Float),
]);

impl Row for KernelRow {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Name",
            Unit::Text,
            "The kernel's (or memcpy's, memset's) name",
        ),
        Column::new(
            "kind",
            "Kind",
            Unit::Text,
            "computation, memory or communication, as HTA classifies names",
        ),
        Column::new(
            "tensor_cores",
            "Tensor Cores",
            Unit::Flag,
            "Whether its name says it runs on Tensor Cores (Matrix Cores on ROCm)",
        ),
        Column::new("calls", "# of Calls", Unit::Count, "Launches"),
        Column::new(
            "total_us",
            "Total",
            Unit::Us,
            "Device time of all its calls",
        ),
        Column::new("avg_us", "Avg", Unit::Us, "Device time per call"),
        Column::new("min_us", "Min", Unit::Us, "The shortest call"),
        Column::new("median_us", "Median", Unit::Us, "The median call"),
        Column::new("max_us", "Max", Unit::Us, "The longest call"),
        Column::new(
            "gpu_time_pct",
            "{device} time %",
            Unit::Pct,
            "Its time over the time of all device ops",
        ),
        Column::new(
            "mean_occupancy_pct",
            "Occupancy",
            Unit::Pct,
            "Estimated achieved occupancy the trace records per launch, averaged weighted by \
             duration",
        )
        .digits(1),
        Column::new(
            "est_sm_efficiency_pct",
            "SM eff.",
            Unit::Pct,
            "Estimated SM efficiency: min(blocks per SM, 1) of each launch, averaged weighted by \
             duration (TensorBoard plugin)",
        )
        .digits(1),
        Column::new(
            "mean_blocks_per_sm",
            "Blocks/SM",
            Unit::Number,
            "Thread blocks per SM of each launch, averaged weighted by duration",
        ),
        Column::new(
            "launch_configs",
            "Grid/block",
            Unit::Data,
            "Distinct (grid, block) launches, most time first; empty for memcpy and memset",
        )
        .typed(Type::List(&LAUNCH_CONFIG)),
        Column::new(
            "launched_by",
            "Launched by",
            Unit::Data,
            "The operators that launched it, most time first (name null: no link to an operator)",
        )
        .typed(Type::List(&LAUNCHED_BY)),
        PathColumns::ON_PATH.with("path"),
        PathColumns::SLACK.with("path"),
        Column::new(
            "flops_calls",
            "FLOPs calls",
            Unit::Count,
            "Calls whose launching operator has a FLOPs model",
        ),
        Column::new(
            "gflops",
            "GFLOPs/call",
            Unit::Number,
            "GFLOPs per such call, the launching operator's shared by time among its kernels",
        )
        .digits(4),
        Column::new(
            "bytes",
            "Bytes/call",
            Unit::Bytes,
            "Bytes moved per such call, where the model knows them",
        )
        .typed(Type::Float),
        Column::new("tflops_s", "TFLOP/s", Unit::Number, "Achieved TFLOP/s").digits(2),
        Column::new("tb_s", "TB/s", Unit::Number, "Achieved TB/s").digits(3),
    ];
    const SORT: Sort = Sort::Largest("total_us");
}

/// A kernel's share of its launching operators' FLOPs and bytes (see `flops::kernels`).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KernelFlops {
    /// Calls whose launching operator has a cost model.
    pub flops_calls: Option<u64>,
    /// GFLOPs per such call.
    pub gflops: Option<f64>,
    /// Bytes moved per such call (where the model knows them).
    pub bytes: Option<f64>,
    pub tflops_s: Option<f64>,
    pub tb_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LaunchConfig {
    pub grid: [i64; 3],
    pub block: [i64; 3],
    pub calls: u64,
    pub total_us: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LaunchedBy {
    pub name: Option<String>,
    pub calls: u64,
    pub total_us: f64,
}

/// The args of a GPU op that the table reads: grid, block and occupancy, in one pass over its
/// members; anything else is skipped, and a value that does not read is absent.
#[derive(Default)]
struct KernelArgs {
    grid: Option<[i64; 3]>,
    block: Option<[i64; 3]>,
    occupancy: Option<f64>,
    blocks_per_sm: Option<f64>,
}

impl KernelArgs {
    fn read(trace: &Trace, id: ArgsId) -> KernelArgs {
        let mut a = KernelArgs::default();
        for (key, value) in trace.args.members(id) {
            match key {
                "grid" => a.grid = serde_json::from_str(value).ok(),
                "block" => a.block = serde_json::from_str(value).ok(),
                "est. achieved occupancy %" => a.occupancy = value.trim().parse().ok(),
                "blocks per SM" => a.blocks_per_sm = value.trim().parse().ok(),
                _ => {}
            }
        }
        a
    }
}

/// Calls and time of one launch configuration or one launcher of a row.
#[derive(Default)]
struct Tally {
    calls: u64,
    ns: i64,
}

impl Tally {
    fn add(&mut self, ns: i64) {
        self.calls += 1;
        self.ns += ns;
    }
}

/// Sums of one row.
struct Sums {
    name: StrId,
    durations_ns: Vec<i64>,
    occupancy_weighted: f64,
    occupancy_weight_ns: i64,
    /// Sums of min(blocks per SM, 1) x ns, blocks per SM x ns, and ns, over positive values.
    sm_efficiency_weighted: f64,
    blocks_weighted: f64,
    blocks_weight_ns: i64,
}

pub fn kernel_table(trace: &Trace, forest: &Forest) -> KernelTable {
    kernel_table_attributed(trace, forest, None)
}

/// Who launched a device op, as the table groups them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Launcher<'a> {
    Op(NameKey),
    /// The captured operator that issued a replayed op (its graph launch is not its operator).
    Captured(&'a str),
    Unknown,
}

/// [`kernel_table`] of a trace that replays CUDA/HIP graphs, with their capture: a replayed op
/// the capture names is launched by the captured operator that issued it.
pub fn kernel_table_attributed(
    trace: &Trace,
    forest: &Forest,
    capture: Option<&Attribution>,
) -> KernelTable {
    let mut index: FxHashMap<StrId, usize> = FxHashMap::default();
    let mut sums: Vec<Sums> = Vec::new();
    // Keyed by (row, grid, block) and by (row, launching op).
    let mut configs: FxHashMap<(usize, [i64; 3], [i64; 3]), Tally> = FxHashMap::default();
    let mut launchers: FxHashMap<(usize, Launcher), Tally> = FxHashMap::default();
    for op in &forest.gpu_ops {
        let s = trace.slices(op.slice.lane as usize);
        let i = op.slice.index as usize;
        let dur = s.dur_ns[i];
        let row = *index.entry(s.name[i]).or_insert_with(|| {
            sums.push(Sums {
                name: s.name[i],
                durations_ns: Vec::new(),
                occupancy_weighted: 0.0,
                occupancy_weight_ns: 0,
                sm_efficiency_weighted: 0.0,
                blocks_weighted: 0.0,
                blocks_weight_ns: 0,
            });
            sums.len() - 1
        });
        let r = &mut sums[row];
        r.durations_ns.push(dur);
        let args = KernelArgs::read(trace, s.args[i]);
        if let Some(occupancy) = args.occupancy {
            r.occupancy_weighted += occupancy * dur as f64;
            r.occupancy_weight_ns += dur;
        }
        if let Some(blocks) = args.blocks_per_sm.filter(|b| *b > 0.0) {
            r.sm_efficiency_weighted += blocks.min(1.0) * dur as f64;
            r.blocks_weighted += blocks * dur as f64;
            r.blocks_weight_ns += dur;
        }
        if let (Some(grid), Some(block)) = (args.grid, args.block) {
            configs.entry((row, grid, block)).or_default().add(dur);
        }
        let by = match capture.and_then(|c| c.operator(op.slice)) {
            Some(name) => Launcher::Captured(name),
            None => op.launch.map_or(Launcher::Unknown, |l| {
                Launcher::Op(forest.tree(l.op.tree as usize).name[l.op.node as usize])
            }),
        };
        launchers.entry((row, by)).or_default().add(dur);
    }

    let mut config_rows: Vec<Vec<LaunchConfig>> = vec![Vec::new(); sums.len()];
    for ((row, grid, block), t) in configs {
        config_rows[row].push(LaunchConfig {
            grid,
            block,
            calls: t.calls,
            total_us: us(t.ns),
        });
    }
    let mut launcher_rows: Vec<Vec<LaunchedBy>> = vec![Vec::new(); sums.len()];
    // An operator that launched some calls eagerly and issued others in a captured graph is one
    // launcher: merged by name before the rows are made.
    let mut named: FxHashMap<(usize, Option<String>), Tally> = FxHashMap::default();
    for ((row, by), t) in launchers {
        let name = match by {
            Launcher::Op(k) => Some(k.as_str(trace).to_string()),
            Launcher::Captured(name) => Some(name.to_string()),
            Launcher::Unknown => None,
        };
        let n = named.entry((row, name)).or_default();
        n.calls += t.calls;
        n.ns += t.ns;
    }
    for ((row, name), t) in named {
        launcher_rows[row].push(LaunchedBy {
            name,
            calls: t.calls,
            total_us: us(t.ns),
        });
    }

    let gpu_ns = forest.gpu_time_ns;
    let mut kinds = [
        (KernelKind::Computation, 0u64, 0i64),
        (KernelKind::Memory, 0, 0),
        (KernelKind::Communication, 0, 0),
    ];
    let mut rows: Vec<KernelRow> = sums
        .into_iter()
        .zip(config_rows.into_iter().zip(launcher_rows))
        .map(|(mut r, (mut launch_configs, mut launched_by))| {
            let name = trace.str(r.name);
            let kind = kernel_kind(name);
            let d = &mut r.durations_ns;
            d.sort_unstable();
            let total: i64 = d.iter().sum();
            let k = kinds.iter_mut().find(|k| k.0 == kind).expect("every kind");
            k.1 += d.len() as u64;
            k.2 += total;
            launch_configs.sort_by(|a, b| {
                b.total_us
                    .total_cmp(&a.total_us)
                    .then_with(|| (a.grid, a.block).cmp(&(b.grid, b.block)))
            });
            launched_by.sort_by(|a, b| {
                b.total_us
                    .total_cmp(&a.total_us)
                    .then_with(|| a.name.cmp(&b.name))
            });
            KernelRow {
                name: name.to_string(),
                kind,
                tensor_cores: uses_tensor_cores(name),
                calls: d.len() as u64,
                total_us: us(total),
                avg_us: us(total) / d.len() as f64,
                min_us: us(d[0]),
                median_us: median_us(d),
                max_us: us(d[d.len() - 1]),
                gpu_time_pct: percent(total, gpu_ns),
                mean_occupancy_pct: (r.occupancy_weight_ns > 0)
                    .then(|| r.occupancy_weighted / r.occupancy_weight_ns as f64),
                est_sm_efficiency_pct: (r.blocks_weight_ns > 0)
                    .then(|| 100.0 * r.sm_efficiency_weighted / r.blocks_weight_ns as f64),
                mean_blocks_per_sm: (r.blocks_weight_ns > 0)
                    .then(|| r.blocks_weighted / r.blocks_weight_ns as f64),
                launch_configs,
                launched_by,
                path: None,
                flops: KernelFlops::default(),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| a.name.cmp(&b.name))
    });
    KernelTable {
        rows,
        gpu_time_us: us(gpu_ns),
        by_kind: kinds
            .iter()
            .map(|&(kind, calls, ns)| KindTime {
                kind,
                calls,
                total_us: us(ns),
                gpu_time_pct: percent(ns, gpu_ns),
            })
            .collect(),
    }
}
