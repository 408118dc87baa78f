//! Which runtime a trace's devices run on, as far as advice needs to know it, and the advice
//! phrases that differ by runtime.
//!
//! Findings recommend APIs, and some exist on one backend only: CUDA graphs exist on CUDA, and on
//! ROCm as HIP graphs behind the same `torch.cuda.CUDAGraph` (PyTorch's ROCm build reuses the
//! `torch.cuda` interfaces); `ProfilerActivity.CUDA` records CUDA and ROCm devices, MTIA and XPU
//! have their own. Where no graph API is known to exist for the device (MTIA, XPU, HPU, a
//! PrivateUse1 backend, a device the trace does not name), the advice stays device-neutral
//! (fewer, larger kernels through fusion, e.g. `torch.compile`) rather than naming an API that
//! is not there.
//!
//! The rule: a device whose process is labelled with another word than `GPU` (`MTIA 0`, `XPU 0`)
//! is [`Backend::Other`]; a `GPU` is [`Backend::Rocm`] when the trace's runtime is HIP
//! ([`crate::model::TraceMeta::rocm`]), [`Backend::Cuda`] when the trace holds CUDA runtime or
//! driver calls, else [`Backend::Other`].

use super::summary::{device_word, word_of_device};
use crate::model::Trace;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Cuda,
    /// ROCm/HIP, driven through `torch.cuda`.
    Rocm,
    /// Any other accelerator, or a `GPU` whose runtime the trace does not name.
    Other,
}

/// Strings only a CUDA trace holds: its runtime and driver categories (2.x) and its launch
/// calls (the 1.x schema writes runtime calls under `Runtime`).
const CUDA_MARKS: [&str; 5] = [
    "cuda_runtime",
    "cuda_driver",
    "cudaLaunchKernel",
    "cuLaunchKernel",
    "cudaMemcpyAsync",
];

/// The backend of a device word (`GPU`, `MTIA`, ...) in this trace.
fn of_word(trace: &Trace, word: &str) -> Backend {
    if word != "GPU" {
        Backend::Other
    } else if trace.meta.rocm {
        Backend::Rocm
    } else if CUDA_MARKS.iter().any(|m| trace.strings.find(m).is_some()) {
        Backend::Cuda
    } else {
        Backend::Other
    }
}

/// The backend of one device (by its index, as [`super::summary::device_name`] finds it).
pub fn of_device(trace: &Trace, device: i64) -> Backend {
    of_word(trace, word_of_device(trace, device))
}

/// The backend all the trace's devices share: `None` without devices (a CPU-only trace),
/// [`Backend::Other`] when they differ.
pub fn of_trace(trace: &Trace) -> Option<Backend> {
    let mut all = trace
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.device.is_some())
        .map(|(i, _)| of_word(trace, device_word(trace, i as u32)));
    let first = match all.next() {
        Some(b) => b,
        // Device lanes in processes that name no device (a PrivateUse1 trace with no metadata)
        // are `GPU`s, as `device_name` calls them.
        None if trace.gpu_lanes().next().is_some() => of_word(trace, "GPU"),
        None => return None,
    };
    Some(if all.all(|b| b == first) {
        first
    } else {
        Backend::Other
    })
}

/// What the maker calls the matrix units whose share of kernel time the tables give: `None`
/// where kernel names say nothing about them (the name rules are NVIDIA's and AMD's).
pub fn matrix_units(backend: Option<Backend>) -> Option<&'static str> {
    match backend {
        Some(Backend::Cuda) => Some("Tensor Cores"),
        Some(Backend::Rocm) => Some("Matrix Cores"),
        Some(Backend::Other) | None => None,
    }
}

/// What cuts launch overhead by replaying a whole step: `None` where no graph API is known to
/// exist for the device.
pub fn graphs(backend: Backend) -> Option<&'static str> {
    match backend {
        Backend::Cuda => Some("CUDA graphs"),
        Backend::Rocm => Some("CUDA/HIP graphs (torch.cuda.CUDAGraph)"),
        Backend::Other => None,
    }
}

/// What a trace already uses against launch overhead, so advice does not name it again: graphs
/// (it replays or captures them), `torch.compile` (its graphs launched most of the device time).
#[derive(Debug, Clone, Copy, Default)]
pub struct InUse {
    pub graphs: bool,
    pub compile: bool,
}

/// Ways to give a device more work per launch: larger kernels, and graphs where they exist,
/// leaving out what the trace uses already.
pub fn fewer_launches(backend: Backend, in_use: InUse) -> String {
    match (in_use.graphs, in_use.compile, graphs(backend)) {
        (true, _, _) => "fused or compiled kernels inside the graphs (they already take the \
                         launches off the CPU)"
            .into(),
        (false, true, Some(g)) => {
            format!("{g} around the compiled code (torch.compile's mode=\"reduce-overhead\")")
        }
        (false, true, None) => "fewer and larger kernels per step (the code is compiled already: \
                                larger batches)"
            .into(),
        (false, false, Some(g)) => format!("fused or compiled kernels, {g}"),
        (false, false, None) => {
            "fewer and larger kernels through fusion (e.g. torch.compile)".into()
        }
    }
}

/// What takes launch overhead off the critical path: larger fused kernels, and graphs where
/// they exist, leaving out what the trace uses already.
pub fn against_launch_overhead(backend: Backend, in_use: InUse) -> String {
    match (in_use.graphs, in_use.compile, graphs(backend)) {
        (true, _, _) => "larger fused kernels (graphs are in use already: what remains is the \
                         CPU work around their launches)"
            .into(),
        (false, true, Some(g)) => {
            format!("{g} around the compiled code (torch.compile's mode=\"reduce-overhead\")")
        }
        (false, true, None) => "more work per kernel (the code is compiled already)".into(),
        (false, false, Some(g)) => format!("larger fused kernels or {g}"),
        (false, false, None) => "fewer and larger kernels (fusion, e.g. torch.compile)".into(),
    }
}

/// What a first step does that later ones do not, on these devices (`None`: the host only).
pub fn warmup_work(backend: Option<Backend>) -> &'static str {
    match backend {
        Some(Backend::Cuda) => "CUDA context, cuDNN autotuning, allocator growth",
        Some(Backend::Rocm) => "HIP context, MIOpen autotuning, allocator growth",
        Some(Backend::Other) => {
            "device runtime start-up, kernel compilation or autotuning, allocator growth"
        }
        None => "lazy initialization, first-call allocations, cold caches",
    }
}

/// The `ProfilerActivity` that records the trace's devices.
pub fn profiler_activity(trace: &Trace) -> String {
    let words: Vec<&str> = trace
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.device.is_some())
        .map(|(i, _)| device_word(trace, i as u32))
        .collect();
    match of_trace(trace) {
        Some(Backend::Cuda | Backend::Rocm) => "ProfilerActivity.CUDA".into(),
        _ if !words.is_empty()
            && words.iter().all(|&w| w == words[0])
            && ["MTIA", "XPU", "HPU"].contains(&words[0]) =>
        {
            format!("ProfilerActivity.{}", words[0])
        }
        _ if ["privateuse1_runtime", "privateuse1_driver"]
            .iter()
            .any(|c| trace.strings.find(c).is_some()) =>
        {
            "ProfilerActivity.PrivateUse1".into()
        }
        _ => "the device's ProfilerActivity".into(),
    }
}

/// The caching allocator's setting against fragmentation, as the advice's last clause (empty
/// where the device's allocator settings are not known).
pub fn allocator_setting(backend: Backend) -> &'static str {
    match backend {
        Backend::Cuda => {
            " or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation"
        }
        Backend::Rocm => {
            " or tune the caching allocator against fragmentation (PYTORCH_HIP_ALLOC_CONF)"
        }
        Backend::Other => "",
    }
}

/// The device as PyTorch's `key_averages().table()` heads its columns (`Self CUDA`, `Self XPU`:
/// its `use_device.upper()`): `CUDA` on CUDA and ROCm (PyTorch's ROCm build records through
/// `torch.cuda`), the device word where all devices share one (`MTIA`, `XPU`), else `device`
/// (a PrivateUse1 backend, whose name the trace does not hold, or mixed devices).
pub fn table_word(trace: &Trace) -> String {
    match of_trace(trace) {
        Some(Backend::Cuda | Backend::Rocm) => "CUDA".into(),
        _ => match super::summary::devices_word(trace).as_str() {
            "GPU" | "device" => "device".into(),
            word => word.into(),
        },
    }
}
