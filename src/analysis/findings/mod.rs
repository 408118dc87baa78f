//! Findings: what is worth telling about a trace, each with its numbers, advice, and the evidence
//! (slices and time ranges) a viewer can jump to.
//!
//! Rules and thresholds (from the profiling guides and the TensorBoard plugin's recommendations):
//! - `device_events_lost`: a truncated trace whose `deviceProperties` list devices that have no
//!   event left (Kineto writes device events after the host's); the rules that weigh host time
//!   against device time (`cpu_copy_overhead`, `communication_heavy`) are then not run.
//! - `no_cpu_activity`: device ops but no CPU operators (`cpu_op`), annotations (`user_annotation`)
//!   or Python frames (recorded with `activities=[CUDA]` only). Runtime and driver calls do not count:
//!   PyTorch puts `CUDA_RUNTIME` and `CUDA_DRIVER` in both its CPU and its CUDA activity sets
//!   (`kineto_shim.cpp`), so a CUDA-only trace still holds them.
//! - `no_input_shapes`: operators, none with `Input Dims` (`record_shapes` off).
//! - `memory_profiling_on`: `[memory]` events present (`profile_memory=True`, ~15-20% overhead).
//! - `no_python_stack`: operators but no `python_function` frames (`with_stack` off).
//! - `few_active_steps`: fewer than 5 `ProfilerStep#N` (none at all included).
//! - `warmup_outlier`: with 3 steps or more, one of the first two lasts at least 1.5x the median.
//! - `dataloader_bound`: DataLoader time over 5% of step time.
//! - `pageable_memcpy`: `Memcpy HtoD (Pageable -> Device)` (or `Device -> Pageable`) copies.
//! - `cpu_copy_overhead`: CPU Exec over 30% of step time and `aten::copy_`/`to`/`_to_copy`/`contiguous`
//!   high in self CPU time: together at least 5% of the operators' self time, and among the top 5
//!   when set against each other operator name.
//! - `low_gpu_utilization`: a device's kernel utilization over the steps under 50% (critical under 20%).
//! - `communication_heavy`: Communication over 10% of step time.
//! - `memory_near_capacity`: a device's peak allocated or reserved memory over 90% of its memory.
//! - `memory_growth`: a device's allocated floor rises step over step ([`super::memory::growth`]).
//! - `low_gemm_efficiency`, `small_kernels`, `fp32_gemm_on_tensor_core_gpu`: from the roofline
//!   ([`super::flops::rules`]).
//! - `gpu_starved_by_cpu`: a device idle at least 10% of its window, at least half of it waiting for the
//!   host (gaps whose launch came after the gap began), naming what the CPU was doing.
//! - `dtype_round_trip`: operators on float64 tensors, 5%+ of the steps, after conversions to
//!   float64 in a float32 model (`rules::copies`).
//! - `small_op_storm`, `untraced_cpu_time`, `annotation_overhead`, `optimizer_step_heavy`: where
//!   a step's CPU time goes when no single operator is slow (`rules::cpu`, thresholds below).
//! - `dataloader_bound` also says which part costs: waiting for workers, fetching or collating.
//! - `recompilation`: a `torch.compile`d frame runs under a new compile id from a later step on,
//!   or is compiled again inside the steps (`rules::compiled`, from [`super::compiled`]).
//! - `graph_break`: a compiled frame's regions hold another frame's (Dynamo's resume after a
//!   graph break) with eager operators run between them.
//! - `compile_in_steps`: compile or autotuning work inside the steps, at least 5% of their CPU
//!   time.
//!
//! Advice names only APIs the trace's device has ([`super::backend`]): CUDA graphs on CUDA, HIP
//! graphs through `torch.cuda` on ROCm, none on MTIA or XPU.
//!
//! Files: this module (builds the `context::Context`, runs the rules, `rules::RULES` then the
//! roofline's `flops::rules`, and ranks what they find by severity; its one entry point is
//! [`analyze_sliced`], whose one-go form is `Derived::found`), [`types`] (what a finding is: the
//! leaf that the rules elsewhere, `flops::rules` and `memory::growth`, and every reader import, so
//! none imports the rules back), `context` (what the rules read: the analyses, one census pass
//! over the slices, the copies' self time only where their rule can fire, and each step thread's
//! chain of operators, annotations and runtime calls with their own times, for the CPU-side rules)
//! and `rules/` (one theme a file: `cpu`, `copies` with the float64 detour, `device`, `input`,
//! `memory`, `recording`, `steps`, `damage`; each rule a `fn(&Context) -> Vec<Finding>` listed
//! in `RULES`). Adding a rule is one function, one line in `RULES` and the README's table.
//!
//! Each rule also writes the what-if edits that price its fix ([`Finding::whatif`]), which
//! `critical::savings` replays (`Derived::findings`: the findings with their savings).

mod context;
mod rules;
pub mod types;

pub use types::{Evidence, Finding, Severity, TimeRange};

use super::idle::IdleReport;
use super::links::Links;
use super::slicing::Slicer;
use super::steps::StepsReport;
use crate::model::Trace;
use std::cmp::Reverse;

pub const MIN_ACTIVE_STEPS: usize = 5;
pub const WARMUP_RATIO: f64 = 1.5;
pub const DATALOADER_SHARE: f64 = 0.05;
pub const CPU_EXEC_SHARE: f64 = 0.30;
pub const COPY_SELF_SHARE: f64 = 0.05;
pub const COPY_TOP_RANK: usize = 5;
pub const LOW_UTILIZATION: f64 = 0.50;
pub const VERY_LOW_UTILIZATION: f64 = 0.20;
pub const COMMUNICATION_SHARE: f64 = 0.10;
pub const MEMORY_SHARE: f64 = 0.90;
pub const STARVED_IDLE_SHARE: f64 = 0.10;
pub const STARVED_HOST_SHARE: f64 = 0.50;
pub const STORM_CALLS: usize = 100;
pub const STORM_OP_NS: i64 = 50_000;
pub const STORM_SHARE: f64 = 0.10;
pub const UNTRACED_GAP_NS: i64 = 1_000_000;
pub const UNTRACED_SHARE: f64 = 0.10;
pub const ANNOTATION_CALLS: usize = 100;
pub const ANNOTATION_SHARE: f64 = 0.05;
pub const OPTIMIZER_SHARE: f64 = 0.15;
pub const OPTIMIZER_OPS: usize = 50;
pub const DTYPE_SHARE: f64 = 0.05;
pub const GRAPH_INSTANTIATION_SHARE: f64 = 0.01;
pub const COMPILE_SHARE: f64 = 0.05;

/// The analyses the rules read besides the trace (those `Derived` keeps).
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub links: &'a Links,
    pub steps: &'a StepsReport,
    pub idle: &'a IdleReport,
    pub flops: &'a super::flops::Flops,
    pub graphs: &'a super::graphs::GraphReport,
    pub compiled: &'a super::compiled::Compiled,
}

/// The findings of every rule, the most severe first, pausing as `y` says (see
/// [`super::slicing`]). One entry point: the one-go form is `Derived::found`, which runs this
/// without pauses on the analyses it keeps.
pub async fn analyze_sliced(trace: &Trace, inputs: Inputs<'_>, y: &mut Slicer) -> Vec<Finding> {
    let Inputs {
        links,
        steps,
        idle,
        flops,
        graphs,
        compiled,
    } = inputs;
    let cx = context::Context::new(trace, links, steps, idle, graphs, compiled, y).await;
    // A pause after each rule: most read every slice of the step threads once.
    let slices = trace.slice_count() as u64;
    let mut out: Vec<Finding> = Vec::new();
    for rule in rules::RULES {
        out.extend(rule(&cx));
        y.tick(slices).await;
    }
    let replays = graphs.uses_graphs();
    out.extend(super::flops::rules::findings(trace, links, flops, compiled, replays, y).await);
    out.sort_by_key(|f| Reverse(f.severity));
    out
}
