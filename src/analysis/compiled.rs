//! `torch.compile` as a trace records it: compiled frames, the graphs they call, the Inductor
//! kernels inside those graphs and the eager operators they replaced, compile work, and the eager
//! code between regions (graph breaks).
//!
//! What is read (names as PyTorch 2.x writes them):
//! - `Torch-Compiled Region: F/C` (a `cpu_op`): one run of the code Dynamo compiled for Python
//!   frame `F`, its `C`-th compilation (`C` > 0: the frame was compiled again, a recompilation).
//!   After a graph break Dynamo compiles the rest of the function as a new frame (a resume
//!   function), whose region runs *inside* the region of the frame that broke; the eager code
//!   between them runs in the outer region, outside its graphs.
//! - A compiled graph's call: the `## Call CompiledFxGraph H ##` label (`H`, the FX graph's
//!   hash), else the `CompiledFunction` / `CompiledFunctionBackward` operator around it (the
//!   backward graph runs under autograd, outside any region). A wrapper with no label inside is a
//!   graph of its own, named by the wrapper.
//! - Inductor kernels, named `triton_{poi,red,per,tem,for}_fused_<ops>_<n>` (Triton: pointwise,
//!   reduction, persistent reduction, template, foreach) and `cpp_fused_<ops>_<n>` (its C++
//!   backend, on CPU; recorded, as `graph_<g>_cpp_fused_...`, only with
//!   `torch._inductor.config.cpp.enable_kernel_profile`). The `<ops>` are the ATen operators the
//!   kernel fused, sorted, joined by `_` ([`fused_ops`] splits them back). A CPU kernel is a
//!   slice inside its graph's call; a device kernel belongs to the graph its launch (the runtime
//!   call, [`Links::launch`]) lies in, and so does its time. The other operators a graph calls
//!   (`aten::mm`, `aten::addmm`: Inductor's extern kernels) are listed as its `extern_ops`.
//! - Compile work: a range named `... (dynamo_timed)` or holding a `NAME_data: ... compile_id=F/C`
//!   label (`dynamo`, `entire_backward_compile`, `CachingAutotuner.benchmark_all_configs`, ...);
//!   only the outermost of nested ones counts. `autotune` marks Inductor's runtime autotuning.
//!
//! Times are a slice's whole duration (inclusive), integer ns with `_us` beside them. A region,
//! graph call or compile range belongs to the step (`ProfilerStep#N`) whose CPU span holds its
//! start, on any thread.
//!
//! JSON fields (`sightline compiled --json`):
//! - `frames[]`: `frame` (F), `calls`, `cpu_ns`/`cpu_us` (its regions' time), `compiles[]`
//!   (`compile_id` "F/C", `compile` C, `calls`, `cpu_ns`/`cpu_us`, `steps`: the steps it ran in,
//!   in order), `resumes` (frames whose regions ran inside this one's: graph breaks), `eager_ops[]`
//!   (operators run eagerly inside its regions outside any graph: `name`, `calls`, `cpu_ns`/`cpu_us`,
//!   by time).
//! - `graphs[]`: `name` (the label or wrapper as recorded), `hash` (H, or null), `backward`,
//!   `compile_ids` (the regions it ran in; none for a backward graph), `calls`, `cpu_ns`/`cpu_us`,
//!   `device_ns`/`device_us` (device ops launched inside its calls), `kernels[]` (`name`, `kind`,
//!   `fused_ops`, `calls`: device runs where there are any, else CPU calls, `cpu_ns`/`cpu_us`,
//!   `device_ns`/`device_us`), `extern_ops[]` (`name`, `calls`, `cpu_ns`/`cpu_us`), `replaces`
//!   (the eager operators its kernels fused, deduplicated, in kernel order).
//! - `loose_kernels[]`: Inductor kernels outside any compiled graph's call.
//! - `compiles[]`: `name`, `compile_id` (or null), `autotune`, `step` (or null), `start_ns`,
//!   `dur_ns`/`dur_us`.
//! - `steps[]`: `name`, `regions` (region runs starting in it), `compile_ids` (in order),
//!   `compile_ns`/`compile_us` (compile work inside its span), `eager_between_ns`/`_us` (eager
//!   operators between a region and the resume regions inside it).
//!
//! Scope: Dynamo, AOTAutograd and Inductor as PyTorch 2.x names them; CUDA graphs' replays and
//! other backends' kernels are not told apart from eager ones.

use super::columns::{Column, Row, Sort, Type, Unit};
use super::links::{Kind, Links};
use super::slicing::{block_on, Slicer, LOOKUP};
use super::steps::StepsReport;
use crate::model::{ArgsId, SliceRef, StrId, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::hash::Hash;

/// The wrappers a region runs around its graph call: Dynamo's and AOTAutograd's own work, neither
/// eager user code nor a compiled graph.
const MACHINERY: [&str; 4] = [
    "TorchDynamo Cache Lookup",
    "Pregraph bytecode",
    "AOTDispatcher Runtime Wrapper Prologue",
    "AOTDispatcher Runtime Wrapper Epilogue",
];

/// ATen operators whose names hold `_`, as Inductor spells them in fused kernel names (the
/// overload packet's name); single-word operators need no entry. Longest first is not needed:
/// [`fused_ops`] tries every entry and keeps the longest match.
const MULTI_WORD_OPS: &[&str] = &[
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward",
    "_embedding_bag",
    "_fused_rms_norm",
    "_fused_rms_norm_backward",
    "_log_softmax",
    "_log_softmax_backward_data",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_functional",
    "_native_batch_norm_legit_no_training",
    "_prelu_kernel",
    "_prelu_kernel_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_flash_attention",
    "_softmax",
    "_softmax_backward_data",
    "_to_copy",
    "_unsafe_index",
    "_unsafe_index_put",
    "_unsafe_view",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "as_strided",
    "as_strided_scatter",
    "avg_pool2d",
    "avg_pool2d_backward",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "clamp_max",
    "clamp_min",
    "constant_pad_nd",
    "convolution_backward",
    "elu_backward",
    "embedding_dense_backward",
    "empty_like",
    "flex_attention",
    "flex_attention_backward",
    "floor_divide",
    "full_like",
    "gelu_backward",
    "grid_sampler_2d",
    "group_norm",
    "hardsigmoid_backward",
    "hardswish_backward",
    "hardtanh_backward",
    "index_add",
    "index_put",
    "index_select",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_backward",
    "linalg_vector_norm",
    "log_sigmoid_forward",
    "logical_and",
    "logical_not",
    "logical_or",
    "masked_fill",
    "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward",
    "mish_backward",
    "mse_loss",
    "mse_loss_backward",
    "native_batch_norm",
    "native_batch_norm_backward",
    "native_dropout",
    "native_dropout_backward",
    "native_group_norm",
    "native_group_norm_backward",
    "native_layer_norm",
    "native_layer_norm_backward",
    "new_empty",
    "new_full",
    "new_ones",
    "new_zeros",
    "nll_loss_backward",
    "nll_loss_forward",
    "nll_loss2d_backward",
    "nll_loss2d_forward",
    "ones_like",
    "rand_like",
    "randn_like",
    "reflection_pad2d",
    "repeat_interleave",
    "replication_pad2d",
    "scalar_tensor",
    "scatter_add",
    "scatter_reduce",
    "select_backward",
    "select_scatter",
    "sigmoid_backward",
    "silu_backward",
    "slice_backward",
    "slice_scatter",
    "smooth_l1_loss",
    "softplus_backward",
    "split_with_sizes",
    "std_mean",
    "tanh_backward",
    "threshold_backward",
    "upsample_bilinear2d",
    "upsample_nearest2d",
    "var_mean",
    "zeros_like",
];

/// What an Inductor kernel's name says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "CompiledKernelKind"))]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// `triton_poi_`
    Pointwise,
    /// `triton_red_`
    Reduction,
    /// `triton_per_`: a reduction whose whole row fits one block.
    PersistentReduction,
    /// `triton_tem_`: a template (matmul, convolution, attention) with fused epilogue.
    Template,
    /// `triton_for_`: several independent kernels in one launch.
    Foreach,
    /// `cpp_`: Inductor's C++ backend, on the CPU.
    Cpp,
}

impl KernelKind {
    /// The kind as a word, as it is serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            KernelKind::Pointwise => "pointwise",
            KernelKind::Reduction => "reduction",
            KernelKind::PersistentReduction => "persistent_reduction",
            KernelKind::Template => "template",
            KernelKind::Foreach => "foreach",
            KernelKind::Cpp => "cpp",
        }
    }
}

/// An Inductor kernel's name read: its kind and the operators it fused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InductorKernel {
    pub kind: KernelKind,
    pub fused_ops: Vec<String>,
}

/// Reads an Inductor kernel's name: `triton_{poi,red,per,tem,for}_[fused_<ops>_]<n>` or
/// `[graph_<g>_]cpp_fused_<ops>_<n>`; `None` for any other name.
pub fn inductor_kernel(name: &str) -> Option<InductorKernel> {
    let rest = strip_graph_prefix(name);
    let (kind, rest) = if let Some(r) = rest.strip_prefix("triton_") {
        let kind = match r.get(..4)? {
            "poi_" => KernelKind::Pointwise,
            "red_" => KernelKind::Reduction,
            "per_" => KernelKind::PersistentReduction,
            "tem_" => KernelKind::Template,
            "for_" => KernelKind::Foreach,
            _ => return None,
        };
        (kind, &r[4..])
    } else if let Some(r) = rest.strip_prefix("cpp_") {
        // C++ kernels are always named `cpp_fused_...`; any other `cpp_` name is not Inductor's.
        r.starts_with("fused_").then_some(())?;
        (KernelKind::Cpp, r)
    } else {
        return None;
    };
    // The kernel's number ends the name.
    let (body, n) = rest.rsplit_once('_')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fused_ops = match body.strip_prefix("fused") {
        Some("") => Vec::new(),
        Some(ops) => fused_ops(ops.strip_prefix('_')?),
        // Unfused names (`triton_poi_0`, with descriptive names off) spell no operators.
        None if body.is_empty() => Vec::new(),
        None => return None,
    };
    Some(InductorKernel { kind, fused_ops })
}

/// `graph_<g>_` in front of a C++ kernel's name, which the profiler's record carries.
fn strip_graph_prefix(name: &str) -> &str {
    name.strip_prefix("graph_")
        .and_then(|r| r.split_once('_'))
        .filter(|(g, _)| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
        .map_or(name, |(_, r)| r)
}

/// Splits the operators of a fused kernel's name (`add_mean_mul_pow_rsqrt`,
/// `_to_copy_native_layer_norm`): at each place the longest known multi-word operator that ends
/// at a `_` or the end, else one word; a word after `__` starts with `_` (`_to_copy`). An
/// operator of several words missing from [`MULTI_WORD_OPS`] comes out as its words.
pub fn fused_ops(ops: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = ops;
    while !rest.is_empty() {
        let known = MULTI_WORD_OPS
            .iter()
            .filter(|op| {
                rest.starts_with(**op)
                    && (rest.len() == op.len() || rest.as_bytes()[op.len()] == b'_')
            })
            .max_by_key(|op| op.len());
        let len = match known {
            Some(op) => op.len(),
            None => {
                // A word, with its leading `_` if it has one.
                let lead = usize::from(rest.starts_with('_'));
                lead + rest[lead..].find('_').unwrap_or(rest.len() - lead)
            }
        };
        out.push(rest[..len].to_string());
        rest = rest[len..].strip_prefix('_').unwrap_or(&rest[len..]);
    }
    out
}

/// `F/C` of `Torch-Compiled Region: F/C`.
pub fn region_id(name: &str) -> Option<(u32, u32)> {
    compile_id(name.strip_prefix("Torch-Compiled Region: ")?)
}

/// `F/C` at the start of `text` (an attempt suffix, `F/C_A`, and what follows are ignored).
fn compile_id(text: &str) -> Option<(u32, u32)> {
    let (f, rest) = text.split_once('/')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    Some((f.parse().ok()?, rest[..digits].parse().ok()?))
}

/// H of `## Call CompiledFxGraph H ##`.
pub fn graph_hash(name: &str) -> Option<&str> {
    name.strip_prefix("## Call CompiledFxGraph ")?
        .strip_suffix(" ##")
}

/// The compile id of a compile range's `NAME_data: ..., compile_id=F/C` label.
fn compile_data_id(name: &str) -> Option<(u32, u32)> {
    let (_, meta) = name.split_once("_data: ")?;
    let (_, id) = meta.split_once("compile_id=")?;
    compile_id(id)
}

/// The compile ids as they are written, `F/C`.
fn id_text(id: (u32, u32)) -> String {
    format!("{}/{}", id.0, id.1)
}

/// What a name is, for this analysis (computed once per interned name).
#[derive(Debug, Clone, PartialEq)]
enum Class {
    Other,
    Region(u32, u32),
    FxGraph,
    Wrapper {
        backward: bool,
    },
    Kernel(InductorKernel),
    Machinery,
    /// A compile range by its own name (`... (dynamo_timed)`).
    CompileRange,
    /// A compile range's `_data` label, with its compile id.
    CompileData(u32, u32),
}

fn classify(name: &str) -> Class {
    if let Some((f, c)) = region_id(name) {
        Class::Region(f, c)
    } else if graph_hash(name).is_some() {
        Class::FxGraph
    } else if name == "CompiledFunction" {
        Class::Wrapper { backward: false }
    } else if name == "CompiledFunctionBackward" {
        Class::Wrapper { backward: true }
    } else if let Some(k) = inductor_kernel(name) {
        Class::Kernel(k)
    } else if MACHINERY.contains(&name) {
        Class::Machinery
    } else if let Some((f, c)) = compile_data_id(name) {
        Class::CompileData(f, c)
    } else if name.ends_with(" (dynamo_timed)") {
        Class::CompileRange
    } else {
        Class::Other
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Compiled {
    pub frames: Vec<Frame>,
    pub graphs: Vec<Graph>,
    pub loose_kernels: Vec<Kernel>,
    pub compiles: Vec<Compile>,
    pub steps: Vec<StepCompiled>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Frame {
    pub frame: u32,
    pub calls: usize,
    pub cpu_ns: i64,
    pub cpu_us: f64,
    pub compiles: Vec<FrameCompile>,
    pub resumes: Vec<u32>,
    pub eager_ops: Vec<EagerOp>,
    /// Its regions, in time order (for evidence).
    #[serde(skip)]
    pub regions: Vec<SliceRef>,
}

/// CPU time as the compiled tables give it: their calls' whole durations.
const CPU_NS: Column = Column::new(
    "cpu_ns",
    "CPU total",
    Unit::Ns,
    "CPU time of its calls, each whole (inclusive)",
);
const CPU_US: Column = Column::new("cpu_us", "CPU total", Unit::Us, "`cpu_ns` in microseconds");

/// An operator run outside a compiled graph, with its calls and CPU time.
const NAMED_CPU: Type = Type::Struct(&[
    ("name", Type::Str),
    ("calls", Type::Int),
    ("cpu_ns", Type::Int),
    ("cpu_us", Type::Float),
]);

impl Row for Frame {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "frame",
            "Frame",
            Unit::Count,
            "F of `Torch-Compiled Region: F/C`: the Python frame Dynamo compiled",
        ),
        Column::new("calls", "# of Calls", Unit::Count, "Its regions' runs"),
        CPU_NS,
        CPU_US,
        Column::new(
            "compiles",
            "Compile ids: the steps they ran in",
            Unit::Data,
            "Each compilation of the frame (C > 0: a recompilation): its id `F/C`, C, its \
             regions' runs and CPU time, and the steps it ran in, in order",
        )
        .typed(Type::List(&Type::Struct(&[
            ("compile_id", Type::Str),
            ("compile", Type::Int),
            ("calls", Type::Int),
            ("cpu_ns", Type::Int),
            ("cpu_us", Type::Float),
            ("steps", Type::List(&Type::Str)),
        ]))),
        Column::new(
            "resumes",
            "Resumed in",
            Unit::Data,
            "The frames whose regions ran inside this one's: where a graph break resumed",
        )
        .typed(Type::List(&Type::Int)),
        Column::new(
            "eager_ops",
            "Eager operators between regions",
            Unit::Data,
            "Operators run eagerly inside its regions, outside any compiled graph, most time first",
        )
        .typed(Type::List(&NAMED_CPU)),
    ];
    const SORT: Sort = Sort::FirstRun;
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FrameCompile {
    pub compile_id: String,
    pub compile: u32,
    pub calls: usize,
    pub cpu_ns: i64,
    pub cpu_us: f64,
    pub steps: Vec<String>,
    /// Its first region.
    #[serde(skip)]
    pub first: SliceRef,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EagerOp {
    pub name: String,
    pub calls: usize,
    pub cpu_ns: i64,
    pub cpu_us: f64,
    #[serde(skip)]
    pub slices: Vec<SliceRef>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "CompiledGraph"))]
pub struct Graph {
    pub name: String,
    pub hash: Option<String>,
    pub backward: bool,
    pub compile_ids: Vec<String>,
    pub calls: usize,
    pub cpu_ns: i64,
    pub cpu_us: f64,
    pub device_ns: i64,
    pub device_us: f64,
    pub kernels: Vec<Kernel>,
    pub extern_ops: Vec<ExternOp>,
    pub replaces: Vec<String>,
}

/// Device time launched inside a graph's or a kernel's calls.
const DEVICE_NS: Column = Column::new(
    "device_ns",
    "{device} total",
    Unit::Ns,
    "Device time of the ops launched inside its calls",
);
const DEVICE_US: Column = Column::new(
    "device_us",
    "{device} total",
    Unit::Us,
    "`device_ns` in microseconds",
);

impl Row for Graph {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Graph",
            Unit::Text,
            "Its `## Call CompiledFxGraph H ##` label, else the wrapper operator, as recorded",
        ),
        Column::new(
            "hash",
            "Hash",
            Unit::Text,
            "H, the FX graph's hash, where the name has it",
        ),
        Column::new(
            "backward",
            "Backward",
            Unit::Flag,
            "Whether it is a backward graph",
        ),
        Column::new(
            "compile_ids",
            "Compile ids",
            Unit::Data,
            "The regions it ran in (none for a backward graph, which runs under autograd)",
        )
        .typed(Type::List(&Type::Str)),
        Column::new("calls", "# of Calls", Unit::Count, "Its calls"),
        CPU_NS,
        CPU_US,
        DEVICE_NS,
        DEVICE_US,
        Column::new(
            "kernels",
            "Kernels",
            Unit::Data,
            "Its Inductor kernels: the rows of the `graphs[].kernels` table",
        )
        .typed(Type::List(&Type::Json)),
        Column::new(
            "extern_ops",
            "Other operators it calls",
            Unit::Data,
            "Operators it calls other than its kernels (Inductor's extern kernels: `aten::mm`), \
             most time first",
        )
        .typed(Type::List(&NAMED_CPU)),
        Column::new(
            "replaces",
            "Eager operators replaced",
            Unit::Data,
            "The eager operators its kernels fused, each once, in kernel order",
        )
        .typed(Type::List(&Type::Str)),
    ];
    const SORT: Sort = Sort::FirstRun;
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Kernel {
    pub name: String,
    pub kind: KernelKind,
    pub fused_ops: Vec<String>,
    pub calls: usize,
    pub cpu_ns: i64,
    pub cpu_us: f64,
    pub device_ns: i64,
    pub device_us: f64,
    /// Where the trace says Inductor wrote it: its backend (`triton`), the generated source file
    /// and the hash of its source, from its launch's args (absent where the trace has none, as
    /// on CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub kernel_backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub kernel_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub kernel_hash: Option<String>,
}

impl Row for Kernel {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Kernel",
            Unit::Text,
            "As Inductor named it: `triton_{poi,red,per,tem,for}_fused_<ops>_<n>`, `cpp_fused_...`",
        ),
        Column::new(
            "kind",
            "Kind",
            Unit::Text,
            "What its name says it is: pointwise, reduction, persistent_reduction, template, \
             foreach or cpp",
        ),
        Column::new(
            "fused_ops",
            "Fused ops",
            Unit::Data,
            "The ATen operators it fused, as its name spells them",
        )
        .typed(Type::List(&Type::Str)),
        Column::new(
            "calls",
            "# of Calls",
            Unit::Count,
            "Its device runs where there are any, else its CPU calls",
        ),
        Column::new(
            "cpu_ns",
            "CPU total",
            Unit::Ns,
            "CPU time of its calls or launches, each whole (inclusive)",
        ),
        CPU_US,
        Column::new(
            "device_ns",
            "{device} total",
            Unit::Ns,
            "Device time of its runs",
        ),
        DEVICE_US,
        Column::new(
            "kernel_backend",
            "Backend",
            Unit::Text,
            "The backend that generated it (`triton`), from its launch's args",
        )
        .sometimes(),
        Column::new(
            "kernel_file",
            "Generated source",
            Unit::Text,
            "The source file Inductor wrote, from its launch's args",
        )
        .sometimes(),
        Column::new(
            "kernel_hash",
            "Source hash",
            Unit::Text,
            "The hash of its source, from its launch's args",
        )
        .sometimes(),
    ];
    const SORT: Sort = Sort::FirstRun;
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExternOp {
    pub name: String,
    pub calls: usize,
    pub cpu_ns: i64,
    pub cpu_us: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Compile {
    pub name: String,
    pub compile_id: Option<String>,
    pub autotune: bool,
    pub step: Option<String>,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub dur_us: f64,
    /// The compile id read, (F, C).
    #[serde(skip)]
    pub id: Option<(u32, u32)>,
    #[serde(skip)]
    pub slice: SliceRef,
}

impl Row for Compile {
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "name",
            "Name",
            Unit::Text,
            "The range: `... (dynamo_timed)` or one holding a `NAME_data: ... compile_id=F/C` label",
        ),
        Column::new(
            "compile_id",
            "Compile id",
            Unit::Text,
            "The compile id `F/C` it worked on, where the trace says",
        ),
        Column::new(
            "autotune",
            "Autotune",
            Unit::Flag,
            "Whether it is Inductor's autotuning at run time",
        ),
        Column::new(
            "step",
            "Step",
            Unit::Text,
            "The step whose CPU span holds its start",
        ),
        Column::new("start_ns", "Start", Unit::Ns, "Its start, from the trace's start"),
        Column::new(
            "dur_ns",
            "Duration",
            Unit::Ns,
            "Its duration, the outermost of nested ranges",
        ),
        Column::new("dur_us", "Duration", Unit::Us, "`dur_ns` in microseconds"),
    ];
    const SORT: Sort = Sort::Smallest("start_ns");
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepCompiled {
    pub name: String,
    pub regions: usize,
    pub compile_ids: Vec<String>,
    pub compile_ns: i64,
    pub compile_us: f64,
    pub eager_between_ns: i64,
    pub eager_between_us: f64,
}

impl Compiled {
    /// Device time launched inside compiled graphs.
    pub fn device_ns(&self) -> i64 {
        self.graphs.iter().map(|g| g.device_ns).sum()
    }
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

const NONE: u32 = u32::MAX;

/// What encloses a CPU slice, as far as this analysis cares (slice indices on its lane).
#[derive(Debug, Clone, Copy)]
struct Ctx {
    /// The innermost region.
    region: u32,
    /// The innermost graph call: a `CompiledFxGraph` label, else a wrapper.
    graph: u32,
    /// The innermost wrapper (`CompiledFunction[Backward]`).
    wrapper: u32,
    /// The outermost compile range.
    compile: u32,
    /// Inside an operator already counted (a kernel, an extern or eager operator): its children
    /// are its own work.
    counted: bool,
}

const TOP: Ctx = Ctx {
    region: NONE,
    graph: NONE,
    wrapper: NONE,
    compile: NONE,
    counted: false,
};

/// Per-call sums of one table row, by key, in first-seen order.
struct Rows<K, V> {
    keys: Vec<K>,
    rows: Vec<V>,
    index: FxHashMap<K, usize>,
}

impl<K: Copy + Eq + Hash, V> Rows<K, V> {
    fn new() -> Self {
        Rows {
            keys: Vec::new(),
            rows: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    fn at(&mut self, key: K, new: impl FnOnce() -> V) -> &mut V {
        let i = *self.index.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.rows.push(new());
            self.rows.len() - 1
        });
        &mut self.rows[i]
    }
}

/// A graph being gathered: keyed by its label's or wrapper's name.
struct GraphAcc {
    name: StrId,
    backward: bool,
    compile_ids: Vec<(u32, u32)>,
    calls: usize,
    cpu_ns: i64,
    device_ns: i64,
    kernels: Rows<StrId, KernelAcc>,
    externs: Rows<StrId, (usize, i64)>,
}

#[derive(Default)]
struct KernelAcc {
    /// The args of its first CPU call that tell where Inductor wrote it (PyTorch records
    /// `kernel_backend`, `kernel_file` and `kernel_hash` on a Triton kernel's launch).
    source: Option<ArgsId>,
    cpu_calls: usize,
    cpu_ns: i64,
    device_calls: usize,
    device_ns: i64,
}

struct RegionRun {
    id: (u32, u32),
    slice: SliceRef,
    start_ns: i64,
    dur_ns: i64,
    /// The frame of the region this one ran inside.
    outer: Option<u32>,
}

/// One call of a compiled graph: a `CompiledFxGraph` label, or a wrapper (which counts only if it
/// holds no label).
struct GraphCall {
    lane: u32,
    index: u32,
    wrapper: bool,
    backward: bool,
    /// The region it ran in.
    region: Option<(u32, u32)>,
}

struct Gathered {
    regions: Vec<RegionRun>,
    graphs: Rows<StrId, GraphAcc>,
    calls: Vec<GraphCall>,
    loose: Rows<StrId, KernelAcc>,
    /// Eager operators by (frame of their region, name): calls, time, slices.
    eager: Rows<(u32, StrId), (usize, i64, Vec<SliceRef>)>,
    /// Eager operators' frame, start and duration, for the steps' sums.
    eager_runs: Vec<(u32, i64, i64)>,
    compiles: Vec<(SliceRef, Option<(u32, u32)>)>,
    /// Wrapper calls (lane, slice) that hold a `CompiledFxGraph` label.
    wrappers_with_fx: Vec<(u32, u32)>,
}

/// The compiled work of a trace (see the module doc).
pub fn analyze(trace: &Trace, links: &Links, steps: &StepsReport) -> Compiled {
    block_on(analyze_sliced(trace, links, steps, &mut Slicer::never()))
}

pub async fn analyze_sliced(
    trace: &Trace,
    links: &Links,
    steps: &StepsReport,
    y: &mut Slicer,
) -> Compiled {
    let classes: Vec<Class> = trace.strings.strings().map(classify).collect();
    // Most traces compile nothing: no name says so, and no slice need be visited.
    if classes
        .iter()
        .all(|c| matches!(c, Class::Other | Class::Machinery))
    {
        return Compiled::default();
    }
    let class = |id: StrId| &classes[id.0 as usize];
    // The device ops to charge, by the CPU slice that launched them, per CPU lane.
    let mut launched: Vec<Vec<(u32, SliceRef)>> = vec![Vec::new(); trace.lanes.len()];
    for (li, lane) in trace.lanes.iter().enumerate() {
        if !lane.is_gpu() {
            continue;
        }
        let s = trace.slices_of(lane);
        for i in 0..s.len() {
            y.tick(LOOKUP).await;
            if !links.kinds.of_cat(s.cat[i]).is_gpu_busy() {
                continue;
            }
            let r = SliceRef {
                lane: li as u32,
                index: i as u32,
            };
            if let Some(l) = links.launch(r) {
                launched[l.lane as usize].push((l.index, r));
            }
        }
    }
    for v in &mut launched {
        v.sort_unstable_by_key(|&(i, r)| (i, r));
    }
    let mut g = Gathered {
        regions: Vec::new(),
        graphs: Rows::new(),
        calls: Vec::new(),
        loose: Rows::new(),
        eager: Rows::new(),
        eager_runs: Vec::new(),
        compiles: Vec::new(),
        wrappers_with_fx: Vec::new(),
    };
    for (li, lane) in trace.lanes.iter().enumerate() {
        if lane.is_gpu() {
            continue;
        }
        let s = trace.slices_of(lane);
        let parents = links.parents_of_lane(li);
        let at = |i: u32| SliceRef {
            lane: li as u32,
            index: i,
        };
        let region_of = |cx: &Ctx| match cx.region {
            NONE => None,
            k => match class(s.name[k as usize]) {
                Class::Region(f, c) => Some((*f, *c)),
                _ => None,
            },
        };
        // The open ancestors of the slice being read, each with what encloses it.
        let mut stack: Vec<(u32, Ctx)> = Vec::new();
        let mut next_launch = 0;
        for i in 0..s.len() {
            y.tick(1).await;
            let p = parents.get(i).copied().unwrap_or(NONE);
            while stack.last().is_some_and(|&(k, _)| k != p) {
                stack.pop();
            }
            let mut cx = match stack.last() {
                Some(&(_, c)) => c,
                // A parent that is not an open ancestor (slices overlapping without nesting):
                // its enclosing ranges are not known here, so this slice starts afresh.
                None => TOP,
            };
            let name = s.name[i];
            let kind = links.kinds.of_cat(s.cat[i]);
            let (start, dur) = (s.start_ns[i], s.dur_ns[i]);
            let free = kind == Kind::CpuOp && !cx.counted && cx.compile == NONE;
            match class(name) {
                Class::Region(f, c) => {
                    g.regions.push(RegionRun {
                        id: (*f, *c),
                        slice: at(i as u32),
                        start_ns: start,
                        dur_ns: dur,
                        outer: region_of(&cx).map(|o| o.0),
                    });
                    cx.region = i as u32;
                    cx.graph = NONE;
                    cx.wrapper = NONE;
                    cx.counted = false;
                }
                Class::FxGraph | Class::Wrapper { .. } => {
                    let wrapper = matches!(class(name), Class::Wrapper { .. });
                    if wrapper {
                        cx.wrapper = i as u32;
                    } else if cx.wrapper != NONE {
                        g.wrappers_with_fx.push((li as u32, cx.wrapper));
                    }
                    cx.graph = i as u32;
                    cx.counted = false;
                    g.calls.push(GraphCall {
                        lane: li as u32,
                        index: i as u32,
                        wrapper,
                        backward: backward(&s, &cx, class),
                        region: region_of(&cx),
                    });
                }
                Class::Kernel(_) if free => {
                    let row = match graph_row(&mut g, &s, &cx, class) {
                        Some(gr) => gr.kernels.at(name, KernelAcc::default),
                        None => g.loose.at(name, KernelAcc::default),
                    };
                    row.cpu_calls += 1;
                    row.cpu_ns += dur;
                    row.source.get_or_insert(s.args[i]);
                    cx.counted = true;
                }
                Class::CompileData(f, c) => {
                    // Its range is the parent: the outermost compile range unless one is open.
                    if cx.compile == NONE && p != NONE {
                        if let Some(top) = stack.last_mut() {
                            top.1.compile = p;
                        }
                        g.compiles.push((at(p), Some((*f, *c))));
                        cx.compile = p;
                    } else if let Some(last) = g.compiles.last_mut() {
                        if last.0 == at(cx.compile) && last.1.is_none() {
                            last.1 = Some((*f, *c));
                        }
                    }
                }
                Class::CompileRange if cx.compile == NONE => {
                    g.compiles.push((at(i as u32), None));
                    cx.compile = i as u32;
                }
                // Dynamo's and AOTAutograd's own work: neither a graph's nor eager user code.
                Class::Machinery => {}
                _ if free && cx.graph != NONE => {
                    // Outside a labelled graph but inside its wrapper: AOTAutograd's runtime.
                    if cx.graph != cx.wrapper || !has_fx(&g, li, cx.wrapper) {
                        if let Some(gr) = graph_row(&mut g, &s, &cx, class) {
                            let e = gr.externs.at(name, || (0, 0));
                            e.0 += 1;
                            e.1 += dur;
                        }
                    }
                    cx.counted = true;
                }
                _ if free && cx.wrapper == NONE => {
                    if let Some((f, _)) = region_of(&cx) {
                        let e = g.eager.at((f, name), || (0, 0, Vec::new()));
                        e.0 += 1;
                        e.1 += dur;
                        e.2.push(at(i as u32));
                        g.eager_runs.push((f, start, dur));
                        cx.counted = true;
                    }
                }
                _ => {}
            }
            // Device ops launched from this slice belong to its graph; those launched while
            // compiling (autotuning's benchmarks) to none.
            let wanted = &launched[li];
            while next_launch < wanted.len() && (wanted[next_launch].0 as usize) < i {
                next_launch += 1;
            }
            while next_launch < wanted.len() && wanted[next_launch].0 as usize == i {
                let r = wanted[next_launch].1;
                next_launch += 1;
                if cx.compile != NONE {
                    continue;
                }
                let ds = trace.slices(r.lane as usize);
                let (dname, ddur) = (ds.name[r.index as usize], ds.dur_ns[r.index as usize]);
                let kernel = matches!(class(dname), Class::Kernel(_));
                match graph_row(&mut g, &s, &cx, class) {
                    Some(gr) => {
                        gr.device_ns += ddur;
                        if kernel {
                            let k = gr.kernels.at(dname, KernelAcc::default);
                            k.device_calls += 1;
                            k.device_ns += ddur;
                        }
                    }
                    None if kernel => {
                        let k = g.loose.at(dname, KernelAcc::default);
                        k.device_calls += 1;
                        k.device_ns += ddur;
                    }
                    None => {}
                }
            }
            stack.push((i as u32, cx));
        }
    }
    count_calls(&mut g, trace);
    finish(trace, steps, g, class)
}

/// Whether a wrapper call already holds a `CompiledFxGraph` label (seen so far).
fn has_fx(g: &Gathered, lane: usize, wrapper: u32) -> bool {
    g.wrappers_with_fx
        .iter()
        .rev()
        .any(|&w| w == (lane as u32, wrapper))
}

/// Whether the innermost wrapper around `cx` is a backward graph's.
fn backward<'c>(s: &crate::model::Slices, cx: &Ctx, class: impl Fn(StrId) -> &'c Class) -> bool {
    cx.wrapper != NONE
        && matches!(
            class(s.name[cx.wrapper as usize]),
            Class::Wrapper { backward: true }
        )
}

/// The row of the graph `cx` is in (created on first use), or `None` outside graphs.
fn graph_row<'g, 'c>(
    g: &'g mut Gathered,
    s: &crate::model::Slices,
    cx: &Ctx,
    class: impl Fn(StrId) -> &'c Class,
) -> Option<&'g mut GraphAcc> {
    if cx.graph == NONE {
        return None;
    }
    let name = s.name[cx.graph as usize];
    let backward = backward(s, cx, class);
    Some(g.graphs.at(name, || GraphAcc::new(name, backward)))
}

impl GraphAcc {
    fn new(name: StrId, backward: bool) -> GraphAcc {
        GraphAcc {
            name,
            backward,
            compile_ids: Vec::new(),
            calls: 0,
            cpu_ns: 0,
            device_ns: 0,
            kernels: Rows::new(),
            externs: Rows::new(),
        }
    }
}

/// Counts each graph's calls, CPU time and the regions it ran in, now that the walk has seen
/// which wrappers hold a label: a graph call counts once, as its label where it has one. Rows
/// of wrappers whose every call held a label go (what ran in them outside the label was
/// AOTAutograd's runtime).
fn count_calls(g: &mut Gathered, trace: &Trace) {
    g.wrappers_with_fx.sort_unstable();
    for c in &g.calls {
        if c.wrapper && g.wrappers_with_fx.binary_search(&(c.lane, c.index)).is_ok() {
            continue;
        }
        let s = trace.slices(c.lane as usize);
        let name = s.name[c.index as usize];
        let row = g.graphs.at(name, || GraphAcc::new(name, c.backward));
        row.calls += 1;
        row.cpu_ns += s.dur_ns[c.index as usize];
        if let Some(id) = c.region {
            if !row.compile_ids.contains(&id) {
                row.compile_ids.push(id);
            }
        }
    }
    // Rows are read in order from here on; the index is not asked again.
    let keep: Vec<bool> = g.graphs.rows.iter().map(|r| r.calls > 0).collect();
    let mut k = keep.iter();
    g.graphs.keys.retain(|_| *k.next().unwrap_or(&true));
    let mut k = keep.iter();
    g.graphs.rows.retain(|_| *k.next().unwrap_or(&true));
    g.graphs.index.clear();
}

fn finish<'c>(
    trace: &Trace,
    steps: &StepsReport,
    g: Gathered,
    class: impl Fn(StrId) -> &'c Class,
) -> Compiled {
    // The steps by CPU start: a time's step is the last one starting at or before it, if it has
    // not ended (steps on one thread do not overlap).
    let mut order: Vec<usize> = (0..steps.steps.len()).collect();
    order.sort_by_key(|&k| steps.steps[k].cpu_start_ns);
    let step_of = |t: i64| -> Option<usize> {
        let n = order.partition_point(|&k| steps.steps[k].cpu_start_ns <= t);
        let k = *order.get(n.checked_sub(1)?)?;
        (t < steps.steps[k].cpu_end_ns).then_some(k)
    };
    let mut out = Compiled::default();
    let mut step_rows: Vec<StepCompiled> = steps
        .steps
        .iter()
        .map(|st| StepCompiled {
            name: st.name.clone(),
            regions: 0,
            compile_ids: Vec::new(),
            compile_ns: 0,
            compile_us: 0.0,
            eager_between_ns: 0,
            eager_between_us: 0.0,
        })
        .collect();
    // Frames, from the region runs in time order.
    let mut regions = g.regions;
    regions.sort_by_key(|r| (r.start_ns, r.slice));
    for r in &regions {
        let frame = match out.frames.iter().position(|f| f.frame == r.id.0) {
            Some(k) => k,
            None => {
                out.frames.push(Frame {
                    frame: r.id.0,
                    calls: 0,
                    cpu_ns: 0,
                    cpu_us: 0.0,
                    compiles: Vec::new(),
                    resumes: Vec::new(),
                    eager_ops: Vec::new(),
                    regions: Vec::new(),
                });
                out.frames.len() - 1
            }
        };
        let f = &mut out.frames[frame];
        f.calls += 1;
        f.cpu_ns += r.dur_ns;
        f.regions.push(r.slice);
        let c = match f.compiles.iter().position(|c| c.compile == r.id.1) {
            Some(k) => k,
            None => {
                f.compiles.push(FrameCompile {
                    compile_id: id_text(r.id),
                    compile: r.id.1,
                    calls: 0,
                    cpu_ns: 0,
                    cpu_us: 0.0,
                    steps: Vec::new(),
                    first: r.slice,
                });
                f.compiles.len() - 1
            }
        };
        let fc = &mut f.compiles[c];
        fc.calls += 1;
        fc.cpu_ns += r.dur_ns;
        if let Some(k) = step_of(r.start_ns) {
            let name = &steps.steps[k].name;
            if !fc.steps.contains(name) {
                fc.steps.push(name.clone());
            }
            let row = &mut step_rows[k];
            row.regions += 1;
            let id = id_text(r.id);
            if !row.compile_ids.contains(&id) {
                row.compile_ids.push(id);
            }
        }
    }
    for r in &regions {
        if let Some(outer) = r.outer.filter(|&o| o != NONE) {
            if let Some(f) = out.frames.iter_mut().find(|f| f.frame == outer) {
                if !f.resumes.contains(&r.id.0) {
                    f.resumes.push(r.id.0);
                }
            }
        }
    }
    for f in &mut out.frames {
        f.cpu_us = us(f.cpu_ns);
        for c in &mut f.compiles {
            c.cpu_us = us(c.cpu_ns);
        }
    }
    for ((frame, name), (calls, ns, slices)) in g.eager.keys.into_iter().zip(g.eager.rows) {
        if let Some(f) = out.frames.iter_mut().find(|f| f.frame == frame) {
            f.eager_ops.push(EagerOp {
                name: trace.str(name).to_string(),
                calls,
                cpu_ns: ns,
                cpu_us: us(ns),
                slices,
            });
        }
    }
    for f in &mut out.frames {
        f.eager_ops.sort_by_key(|e| std::cmp::Reverse(e.cpu_ns));
    }
    // Eager time between regions: in the regions that others resume inside.
    for &(frame, start, dur) in &g.eager_runs {
        let breaks = out
            .frames
            .iter()
            .any(|f| f.frame == frame && !f.resumes.is_empty());
        if let (true, Some(k)) = (breaks, step_of(start)) {
            step_rows[k].eager_between_ns += dur;
        }
    }
    // Compile work, in time order.
    let mut compiles: Vec<Compile> = g
        .compiles
        .iter()
        .map(|&(r, id)| {
            let s = trace.slices(r.lane as usize);
            let i = r.index as usize;
            let name = trace.str(s.name[i]);
            let lower = name.to_ascii_lowercase();
            Compile {
                name: name.to_string(),
                compile_id: id.map(id_text),
                autotune: lower.contains("autotun") || lower.contains("benchmark_all_configs"),
                step: step_of(s.start_ns[i]).map(|k| steps.steps[k].name.clone()),
                start_ns: s.start_ns[i],
                dur_ns: s.dur_ns[i],
                dur_us: us(s.dur_ns[i]),
                id,
                slice: r,
            }
        })
        .collect();
    compiles.sort_by_key(|c| (c.start_ns, c.slice));
    for c in &compiles {
        let end = c.start_ns + c.dur_ns;
        for (st, row) in steps.steps.iter().zip(&mut step_rows) {
            let inside = end.min(st.cpu_end_ns) - c.start_ns.max(st.cpu_start_ns);
            row.compile_ns += inside.max(0);
        }
    }
    for row in &mut step_rows {
        row.compile_us = us(row.compile_ns);
        row.eager_between_us = us(row.eager_between_ns);
    }
    out.compiles = compiles;
    out.steps = step_rows;
    out.graphs = g
        .graphs
        .rows
        .into_iter()
        .map(|acc| graph_of(trace, acc, &class))
        .collect();
    out.loose_kernels = kernel_rows(trace, g.loose, &class);
    out
}

fn graph_of<'c>(trace: &Trace, acc: GraphAcc, class: &impl Fn(StrId) -> &'c Class) -> Graph {
    let name = trace.str(acc.name);
    let kernels = kernel_rows(trace, acc.kernels, class);
    let mut replaces: Vec<String> = Vec::new();
    for k in &kernels {
        for op in &k.fused_ops {
            if !replaces.contains(op) {
                replaces.push(op.clone());
            }
        }
    }
    let mut extern_ops: Vec<ExternOp> = acc
        .externs
        .keys
        .into_iter()
        .zip(acc.externs.rows)
        .map(|(n, (calls, ns))| ExternOp {
            name: trace.str(n).to_string(),
            calls,
            cpu_ns: ns,
            cpu_us: us(ns),
        })
        .collect();
    extern_ops.sort_by_key(|e| std::cmp::Reverse(e.cpu_ns));
    Graph {
        name: name.to_string(),
        hash: graph_hash(name).map(str::to_string),
        backward: acc.backward,
        compile_ids: acc.compile_ids.into_iter().map(id_text).collect(),
        calls: acc.calls,
        cpu_ns: acc.cpu_ns,
        cpu_us: us(acc.cpu_ns),
        device_ns: acc.device_ns,
        device_us: us(acc.device_ns),
        kernels,
        extern_ops,
        replaces,
    }
}

/// Kernel rows in first-run order (the graph's own order).
fn kernel_rows<'c>(
    trace: &Trace,
    rows: Rows<StrId, KernelAcc>,
    class: &impl Fn(StrId) -> &'c Class,
) -> Vec<Kernel> {
    rows.keys
        .into_iter()
        .zip(rows.rows)
        .filter_map(|(n, k)| {
            let Class::Kernel(parsed) = class(n) else {
                return None;
            };
            let arg = |key: &str| {
                let v = trace.args.field(k.source?, key)?;
                serde_json::from_str::<String>(v).ok()
            };
            Some(Kernel {
                kernel_backend: arg("kernel_backend"),
                kernel_file: arg("kernel_file"),
                kernel_hash: arg("kernel_hash"),
                name: trace.str(n).to_string(),
                kind: parsed.kind,
                fused_ops: parsed.fused_ops.clone(),
                calls: if k.device_calls > 0 {
                    k.device_calls
                } else {
                    k.cpu_calls
                },
                cpu_ns: k.cpu_ns,
                cpu_us: us(k.cpu_ns),
                device_ns: k.device_ns,
                device_us: us(k.device_ns),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_triton_kernel_names() {
        let k = inductor_kernel("triton_red_fused_add_mean_mul_pow_rsqrt_0").unwrap();
        assert_eq!(k.kind, KernelKind::Reduction);
        assert_eq!(k.fused_ops, ops(&["add", "mean", "mul", "pow", "rsqrt"]));
        let k =
            inductor_kernel("triton_poi_fused__to_copy_add_native_layer_norm_backward_12").unwrap();
        assert_eq!(k.kind, KernelKind::Pointwise);
        assert_eq!(
            k.fused_ops,
            ops(&["_to_copy", "add", "native_layer_norm_backward"])
        );
        let k = inductor_kernel("triton_per_fused__softmax_0").unwrap();
        assert_eq!(k.kind, KernelKind::PersistentReduction);
        assert_eq!(k.fused_ops, ops(&["_softmax"]));
        let k = inductor_kernel("triton_tem_fused_mm_3").unwrap();
        assert_eq!(k.kind, KernelKind::Template);
        assert_eq!(k.fused_ops, ops(&["mm"]));
        let k = inductor_kernel("triton_poi_fused_0").unwrap();
        assert!(k.fused_ops.is_empty());
    }

    #[test]
    fn reads_cpp_kernel_names_as_the_profiler_records_them() {
        let k = inductor_kernel("graph_0_cpp_fused_native_layer_norm_native_layer_norm_backward_2")
            .unwrap();
        assert_eq!(k.kind, KernelKind::Cpp);
        assert_eq!(
            k.fused_ops,
            ops(&["native_layer_norm", "native_layer_norm_backward"])
        );
        let k = inductor_kernel("cpp_fused_gelu_gelu_backward_sum_1").unwrap();
        assert_eq!(k.fused_ops, ops(&["gelu", "gelu_backward", "sum"]));
        let k = inductor_kernel("graph_2_cpp_fused__softmax_backward_data_div_2").unwrap();
        assert_eq!(k.fused_ops, ops(&["_softmax_backward_data", "div"]));
    }

    #[test]
    fn other_names_are_not_kernels() {
        for name in [
            "triton_",
            "triton_poi_fused_add",
            "triton_xyz_fused_add_0",
            "cpp_thing_0",
            "graph_x_cpp_fused_add_0",
            "aten::add",
            "triton_poi_fused_add_x",
        ] {
            assert_eq!(inductor_kernel(name), None, "{name}");
        }
    }

    #[test]
    fn reads_regions_graphs_and_compile_ids() {
        assert_eq!(region_id("Torch-Compiled Region: 0/1"), Some((0, 1)));
        assert_eq!(region_id("Torch-Compiled Region: 12/3_1"), Some((12, 3)));
        assert_eq!(region_id("Torch-Compiled Region: x/1"), None);
        assert_eq!(
            graph_hash("## Call CompiledFxGraph fabc123 ##"),
            Some("fabc123")
        );
        assert_eq!(
            compile_data_id(
                "entire_frame_compile_data: fn_name=_compile.compile_inner, compile_id=0/1"
            ),
            Some((0, 1))
        );
        assert_eq!(
            compile_data_id("graph_0_cpp_fused__softmax_backward_data_div_2"),
            None
        );
    }
}
