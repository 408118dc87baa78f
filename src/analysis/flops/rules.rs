//! Findings from the roofline: [`LOW_GEMM_EFFICIENCY`], [`SMALL_KERNELS`] and
//! [`FP32_GEMM_ON_TENSOR_CORE_GPU`], in one pass over the device ops.

use super::models::Family;
use super::Flops;
use crate::analysis::backend;
use crate::analysis::compiled::Compiled;
use crate::analysis::findings::types::{
    Evidence, Finding, Measure, Pricing, Rule, Severity, Theme, Threshold, Value,
};
use crate::analysis::links::Links;
use crate::analysis::slicing::Slicer;
use crate::analysis::summary::devices_word;
use crate::model::{SliceRef, Trace};

/// GEMMs' and convolutions' share of the GPU time from which their efficiency is judged.
const GEMM_SHARE: f64 = 0.20;
/// Their time at their roof over their time, under which they run far under the peak.
const LOW_EFFICIENCY: f64 = 0.30;
/// A kernel shorter than this is small.
const SMALL_KERNEL_NS: i64 = 5_000;
/// Small kernels needed, in number and in share of all kernels.
const SMALL_MIN_COUNT: usize = 1_000;
const SMALL_SHARE: f64 = 0.5;
/// At least this share of the step (in percent) in launch calls and launch delays on the steps'
/// critical paths makes them launch-bound (`critical::savings` measures it and says so).
pub const LAUNCH_BOUND_PCT: f64 = 10.0;
/// FP32 GEMMs' and convolutions' share of the GPU time from which they are worth a finding.
const FP32_SHARE: f64 = 0.05;

pub const LOW_GEMM_EFFICIENCY: Rule = Rule {
    id: "low_gemm_efficiency",
    theme: Theme::Roofline,
    severity: Severity::Warning,
    recording: false,
    meaning: "GEMMs run far under the GPU's peak (`sightline flops` lists each shape against its \
              roof)",
    fires: "GEMMs and convolutions take {share} of the GPU time or more and reach under \
            {efficiency} of their roof, taken together",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[
        Threshold::new("share", Value::Share(GEMM_SHARE)),
        Threshold::new("efficiency", Value::Share(LOW_EFFICIENCY)),
    ],
};

pub const SMALL_KERNELS: Rule = Rule {
    id: "small_kernels",
    theme: Theme::Roofline,
    severity: Severity::Warning,
    recording: false,
    meaning: "many tiny kernels, whose launches can cost more than their runs; advice leaves \
              `torch.compile` out where compiled graphs launched half the device time or more, \
              and CUDA/HIP graphs where the device has none or the trace replays them already",
    fires: "{count} kernels or more, and {share} of all kernels or more, run under {ns}; it says \
            \"launch-bound\" only where launch calls and launch delays take {launch_bound} of the \
            steps' critical path or more, never from a count of kernels",
    whatif: "`launches=0`",
    pricing: Pricing::Estimate,
    thresholds: &[
        Threshold::new("count", Value::Count(SMALL_MIN_COUNT)),
        Threshold::new("share", Value::Share(SMALL_SHARE)),
        Threshold::new("ns", Value::Ns(SMALL_KERNEL_NS)),
        Threshold::new("launch_bound", Value::Pct(LAUNCH_BOUND_PCT)),
    ],
};

pub const FP32_GEMM_ON_TENSOR_CORE_GPU: Rule = Rule {
    id: "fp32_gemm_on_tensor_core_gpu",
    theme: Theme::Roofline,
    severity: Severity::Warning,
    recording: false,
    meaning: "FP32 GEMMs on a GPU whose Tensor/Matrix Cores would run them as TF32 or BF16",
    fires: "FP32 GEMMs or convolutions take {share} of the GPU time or more on such a GPU",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[Threshold::new("share", Value::Share(FP32_SHARE))],
};

/// The roofline's rules, in the order the reference lists them.
pub const RULES: [&Rule; 3] = [
    &LOW_GEMM_EFFICIENCY,
    &SMALL_KERNELS,
    &FP32_GEMM_ON_TENSOR_CORE_GPU,
];

const MAX_EVIDENCE: usize = 10;

/// The roofline's findings; `replays` says graph replays run most of the device time (then a
/// graph is not advice). What the rules with one figure measured goes to `measured`.
pub async fn findings(
    trace: &Trace,
    links: &Links,
    flops: &Flops,
    compiled: &Compiled,
    replays: bool,
    measured: &mut Vec<Measure>,
    y: &mut Slicer,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut gpu_ns = 0i64;
    let mut kernels = 0usize;
    let mut small: Vec<SliceRef> = Vec::new();
    let mut small_count = 0usize;
    for (li, lane) in trace.gpu_lanes() {
        let s = trace.slices_of(lane);
        for i in 0..s.len() {
            y.tick(1).await;
            let kind = links.kinds.of_cat(s.cat[i]);
            if !kind.is_gpu_busy() {
                continue;
            }
            gpu_ns += s.dur_ns[i];
            if kind != crate::model::category::Kind::Kernel {
                continue;
            }
            kernels += 1;
            if s.dur_ns[i] < SMALL_KERNEL_NS {
                small_count += 1;
                if small.len() < MAX_EVIDENCE {
                    small.push(SliceRef {
                        lane: li as u32,
                        index: i as u32,
                    });
                }
            }
        }
    }
    if small_count >= SMALL_MIN_COUNT && small_count as f64 >= SMALL_SHARE * kernels as f64 {
        out.push(Finding {
            id: SMALL_KERNELS.id,
            severity: SMALL_KERNELS.severity,
            // Launches batched as a graph would batch them: an estimate (docs/findings.md says what it
            // assumes). Whether the steps are launch-bound is told from the critical path's time
            // in launches (`critical::savings`), never from this count.
            whatif: vec!["launches=0".into()],
            title: "Many tiny kernels".into(),
            detail: format!(
                "{small_count} of {kernels} kernels ({:.0}%) ran under {} µs; at that size a \
                 kernel's launch can cost more than its run on the {}.",
                100.0 * small_count as f64 / kernels as f64,
                SMALL_KERNEL_NS / 1000,
                devices_word(trace)
            ),
            // Where compiled graphs launched most of the device time, torch.compile's fusion is
            // in place already: the advice leaves it out; graphs are not advised to a trace that
            // uses them.
            advice: match (
                backend::of_trace(trace)
                    .and_then(backend::graphs)
                    .filter(|_| !replays),
                2 * compiled.device_ns() >= gpu_ns,
            ) {
                (Some(g), false) => format!(
                    "Fuse small ops (torch.compile), capture the step in {g}, or batch more \
                     work per kernel."
                ),
                (None, false) => "Fuse small ops (torch.compile) or batch more work per kernel: \
                                  fewer, larger kernels."
                    .into(),
                (Some(g), true) => format!(
                    "The kernels come from compiled graphs already: capture the step in {g}, or \
                     batch more work per kernel."
                ),
                (None, true) => "The kernels come from compiled graphs already: batch more work \
                                 per kernel (larger batches, fewer and larger tensors)."
                    .into(),
            },
            evidence: Evidence {
                slices: small,
                ranges: Vec::new(),
            },
        });
    }
    let Some(peaks) = flops.peaks else {
        return out;
    };
    if gpu_ns == 0 {
        return out;
    }
    // The GEMM-like calls. None sits under another: matmul and linear are not modelled, and
    // aten::convolution's callees (cudnn_convolution, ...) are not either.
    let gemms: Vec<&super::Instance> = flops
        .instances
        .iter()
        .filter(|i| matches!(i.cost.family, Family::Gemm | Family::Conv) && i.kernel_ns > 0)
        .collect();
    let gemm_ns: i64 = gemms.iter().map(|i| i.kernel_ns).sum();
    let share = gemm_ns as f64 / gpu_ns as f64;
    if share >= GEMM_SHARE {
        // Time each call would take at its roof, over the time it took.
        let ideal_ns: f64 = gemms
            .iter()
            .map(|i| {
                let peak = peaks.tflops(i.cost.dtype, true) * 1e3; // flops per ns
                let by_flops = i.cost.flops as f64 / peak;
                let by_bytes = i
                    .cost
                    .bytes
                    .map_or(0.0, |b| b as f64 / (peaks.mem_tb_s * 1e3));
                by_flops.max(by_bytes)
            })
            .sum();
        let efficiency = ideal_ns / gemm_ns as f64;
        if efficiency < LOW_EFFICIENCY {
            let mut worst: Vec<&&super::Instance> = gemms.iter().collect();
            worst.sort_by_key(|i| std::cmp::Reverse(i.kernel_ns));
            out.push(Finding {
                id: LOW_GEMM_EFFICIENCY.id,
                severity: LOW_GEMM_EFFICIENCY.severity,
                whatif: Vec::new(),
                title: "GEMMs run far under the GPU's peak".into(),
                detail: format!(
                    "GEMMs and convolutions take {:.1}% of the GPU time ({}) and reach \
                     {:.1}% of their roof on {} taken together.",
                    100.0 * share,
                    crate::units::duration(gemm_ns as f64),
                    100.0 * efficiency,
                    peaks.device
                ),
                advice: "Small or oddly shaped matrices do not fill the GPU: batch more rows, \
                         pad dimensions to multiples of 64, use bf16/fp16, or fuse with \
                         torch.compile. `sightline flops` lists each shape against its roof."
                    .into(),
                evidence: Evidence {
                    slices: worst.iter().take(MAX_EVIDENCE).map(|i| i.slice).collect(),
                    ranges: Vec::new(),
                },
            });
        }
    }
    if peaks.tensor_cores_for_fp32_work {
        let fp32: Vec<&&super::Instance> =
            gemms.iter().filter(|i| i.cost.dtype == "fp32").collect();
        let fp32_ns: i64 = fp32.iter().map(|i| i.kernel_ns).sum();
        let share = fp32_ns as f64 / gpu_ns as f64;
        measured.extend(Measure::of(
            &FP32_GEMM_ON_TENSOR_CORE_GPU,
            "share",
            Value::Share(share),
        ));
        if share >= FP32_SHARE {
            out.push(Finding {
                id: FP32_GEMM_ON_TENSOR_CORE_GPU.id,
                severity: FP32_GEMM_ON_TENSOR_CORE_GPU.severity,
                whatif: Vec::new(),
                title: if backend::of_trace(trace) == Some(backend::Backend::Rocm) {
                    "FP32 GEMMs on a GPU with Matrix Cores"
                } else {
                    "FP32 GEMMs on a GPU with Tensor Cores"
                }
                .into(),
                detail: format!(
                    "{} FP32 GEMM/convolution calls take {:.1}% of the GPU time ({}); {} \
                     runs them {:.0}x faster as TF32 and {:.0}x as BF16.",
                    fp32.len(),
                    100.0 * share,
                    crate::units::duration(fp32_ns as f64),
                    peaks.device,
                    (peaks.tf32 / peaks.fp32_matrix).max(1.0),
                    peaks.bf16 / peaks.fp32_matrix
                ),
                advice: "torch.set_float32_matmul_precision('high') (TF32), or autocast to \
                         bfloat16 (torch.autocast('cuda', dtype=torch.bfloat16))."
                    .into(),
                evidence: Evidence {
                    slices: fp32.iter().take(MAX_EVIDENCE).map(|i| i.slice).collect(),
                    ranges: Vec::new(),
                },
            });
        }
    }
    out
}
