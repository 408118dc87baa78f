//! What a category (`cat`) says an event is, in every schema the parser reads: PyTorch 2.x names,
//! 1.8/1.9's capitalised ones, HIP spellings, and the other accelerators Kineto writes (MTIA, Intel
//! XPU, PrivateUse1 backends). One vocabulary for the parser (which lanes are device streams), the
//! analyses (what keeps a device busy, what is an operator) and the view.
//!
//! # Which lanes are devices
//!
//! The rule, written once (the parser applies it when a parse finishes):
//! 1. A process labelled `CPU` (`process_labels`, as Kineto writes it for the host process) keeps
//!    every thread a CPU lane, also threads that call a device runtime and Inductor's Triton
//!    launches, whose `cpu_op`s carry a `stream` arg.
//! 2. A process is a *device* when its `process_labels` or `process_name` name one: a device word
//!    and an index, `GPU 0` (CUDA and ROCm/HIP alike), `MTIA 0`, `XPU 0`, `HPU 0`, `NPU 0`, ...
//!    ([`device_index`]). The index is the device's number; otherwise it is the pid.
//! 3. A thread is a *device lane* (a stream or queue) when its events are device work:
//!    [`Kind::on_device`] categories (`kernel`, `gpu_memcpy`, `gpu_memset`, `cuda_sync`,
//!    `gpu_user_annotation`, MTIA's `mtia_ccp_events` and `mtia_insight`, any `gpu_*`), wherever
//!    its process is (rule 1 aside); or when it sits in a device process (rule 2) and holds no
//!    host event (an operator, a label, a Python frame, a runtime call). Kineto has put a Python
//!    thread with tid 0 under pid 0, the `GPU 0` process: host events keep it a CPU lane.
//! 4. Everything else is a CPU lane.
//!
//! Host-side runtime and driver calls of every backend are [`Kind::Runtime`] (`cuda_runtime`,
//! `cuda_driver`, `hip_runtime`, `mtia_runtime`, `xpu_runtime`, `privateuse1_runtime`,
//! `privateuse1_driver`, Kineto's accelerator-neutral `runtime`/`driver`, any `*_runtime` or
//! `*_driver`, Gaudi's `hpu_op`, 1.x `Runtime`): they launch device work, linked to it by
//! `correlation` and by `ac2g` flows (see [`crate::analysis::launch`]).
//!
//! Device time: in the default mode, a device is busy while [`Kind::is_gpu_busy`] work runs on
//! one of its lanes: kernels (MTIA's CCP events are its kernels and DMA transfers), copies and
//! fills. `--compat hta` follows HTA 0.5.0 instead, which takes as a device event every event whose
//! `args.stream` is set and not -1, whatever its category or lane (see [`crate::analysis::idle`]).

use super::{StrId, Trace};

/// What a category (or, for runtime calls, a name) says an event is. One table entry per interned
/// string, so classifying a slice is an index, not a string comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An ATen operator: `cpu_op`, 1.x `Operator`.
    CpuOp,
    /// `user_annotation`: `record_function` labels, `ProfilerStep#N`, DataLoader `__next__`.
    Annotation,
    /// `python_function` (with_stack).
    Python,
    /// A host-side runtime or driver call of any backend (CUDA, HIP, MTIA, XPU, PrivateUse1).
    Runtime,
    /// A kernel; MTIA's CCP events (its kernels and DMA transfers) too.
    Kernel,
    Memcpy,
    Memset,
    /// `cuda_sync` on a GPU stream (with `enable_cuda_sync_events`).
    Sync,
    /// `gpu_user_annotation`: labels projected on the GPU timeline.
    GpuAnnotation,
    /// The profiler's own whole-trace span (`Trace`).
    TraceSpan,
    Other,
}

impl Kind {
    /// The kind a category string names.
    pub fn of_cat(cat: &str) -> Kind {
        match cat {
            "cpu_op" | "Operator" => Kind::CpuOp,
            "user_annotation" => Kind::Annotation,
            "python_function" => Kind::Python,
            "Runtime" | "runtime" | "driver" | "hpu_op" => Kind::Runtime,
            c if c.ends_with("_runtime") || c.ends_with("_driver") => Kind::Runtime,
            "kernel" | "Kernel" | "mtia_ccp_events" => Kind::Kernel,
            "gpu_memcpy" | "Memcpy" => Kind::Memcpy,
            "gpu_memset" | "Memset" => Kind::Memset,
            "cuda_sync" => Kind::Sync,
            "gpu_user_annotation" => Kind::GpuAnnotation,
            "Trace" => Kind::TraceSpan,
            _ => Kind::Other,
        }
    }

    /// Events of this kind run on a GPU stream (also labels and syncs projected there).
    pub fn on_gpu_stream(self) -> bool {
        matches!(
            self,
            Kind::Kernel | Kind::Memcpy | Kind::Memset | Kind::Sync | Kind::GpuAnnotation
        )
    }

    /// Events of this kind happen on the host: they make a thread a CPU lane (rule 3 above).
    pub fn is_host(self) -> bool {
        matches!(
            self,
            Kind::CpuOp | Kind::Annotation | Kind::Python | Kind::Runtime
        )
    }

    /// A category whose events are device work or device-side records: the kinds on a GPU
    /// stream, and any `gpu_*` or device-side MTIA category a newer profiler may write.
    pub fn on_device(cat: &str) -> bool {
        Kind::of_cat(cat).on_gpu_stream() || cat.starts_with("gpu_") || cat == "mtia_insight"
    }

    /// Kernel, memcpy or memset: what keeps a GPU busy.
    pub fn is_gpu_busy(self) -> bool {
        matches!(self, Kind::Kernel | Kind::Memcpy | Kind::Memset)
    }
}

/// The device a process's `process_labels` or `process_name` names (rule 2 above): a device word
/// of 2-8 capitals or digits, starting with a capital, other than `CPU`, then a space and a
/// number (`GPU 0`, `MTIA 1`, `XPU 0`), as (word, index). `None` for anything else.
pub fn device_label(text: &str) -> Option<(&str, i64)> {
    let (word, n) = text.trim().split_once(' ')?;
    let word_ok = (2..=8).contains(&word.len())
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && word != "CPU";
    let n: i64 = n.trim().parse().ok()?;
    (word_ok && n >= 0).then_some((word, n))
}

/// A device as its users call it: `GPU 0`, `MTIA 1`, the word of [`device_label`] (2-8 bytes,
/// or `GPU`) and the index. Held inline and `Copy`, as a name string in each per-device row had
/// made a trace of 80,000 one-kernel device processes allocate 160,000 of them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct DeviceName {
    word: [u8; 8],
    len: u8,
    index: i64,
}

impl DeviceName {
    /// `word` past 8 bytes is cut at a character boundary; [`device_label`]'s words never are.
    pub fn new(word: &str, index: i64) -> DeviceName {
        let mut len = word.len().min(8);
        while !word.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0u8; 8];
        bytes[..len].copy_from_slice(&word.as_bytes()[..len]);
        DeviceName {
            word: bytes,
            len: len as u8,
            index,
        }
    }

    /// `GPU` of `GPU 0`.
    pub fn word(&self) -> &str {
        // Cut at a boundary of a `&str` in `new`.
        std::str::from_utf8(&self.word[..self.len as usize]).unwrap_or("GPU")
    }
}

impl std::fmt::Display for DeviceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.word(), self.index)
    }
}

impl std::fmt::Debug for DeviceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}", self = self.to_string())
    }
}

impl serde::Serialize for DeviceName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A device op named as a DMA transfer (`dma_request`, ...): MTIA writes its copies among its CCP
/// events, the category of its kernels ([`Kind::Kernel`]), so only the name says they are copies.
/// The same name rule as HTA's for memory ops (`dma` prefix). The steps breakdown counts these as
/// memcpy, as it counts CUDA's `gpu_memcpy`.
pub fn is_dma_transfer(name: &str) -> bool {
    name.starts_with("dma")
}

/// The device index of [`device_label`].
pub fn device_index(text: &str) -> Option<i64> {
    device_label(text).map(|(_, n)| n)
}

/// True for a process labelled as the host (`process_labels` = `CPU`): rule 1 above.
pub fn is_host_label(text: &str) -> bool {
    text.trim() == "CPU"
}

/// The kind of each category string, indexed by `StrId`.
pub struct Kinds {
    by_cat: Vec<Kind>,
}

impl Kinds {
    pub fn new(trace: &Trace) -> Kinds {
        Kinds {
            by_cat: trace.strings.each(Kind::of_cat),
        }
    }

    pub fn of_cat(&self, cat: StrId) -> Kind {
        self.by_cat
            .get(cat.0 as usize)
            .copied()
            .unwrap_or(Kind::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_categories_of_every_backend() {
        for cat in [
            "cuda_runtime",
            "cuda_driver",
            "hip_runtime",
            "mtia_runtime",
            "xpu_runtime",
            "xpu_driver",
            "privateuse1_runtime",
            "privateuse1_driver",
            "runtime",
            "driver",
            "hpu_op",
            "Runtime",
        ] {
            assert_eq!(Kind::of_cat(cat), Kind::Runtime, "{cat}");
            assert!(!Kind::on_device(cat), "{cat}");
        }
        assert_eq!(Kind::of_cat("mtia_ccp_events"), Kind::Kernel);
        assert!(is_dma_transfer("dma_request"));
        assert!(!is_dma_transfer("linear_fwd_kernel"));
        assert!(Kind::on_device("mtia_ccp_events"));
        assert!(Kind::on_device("mtia_insight"));
        assert!(!Kind::on_device("cpu_op"));
    }

    #[test]
    fn device_labels() {
        assert_eq!(device_index("GPU 0"), Some(0));
        assert_eq!(device_label("MTIA 3"), Some(("MTIA", 3)));
        assert_eq!(device_index("MTIA 3"), Some(3));
        assert_eq!(device_index("XPU 1"), Some(1));
        assert_eq!(device_index("CPU"), None);
        assert_eq!(device_index("CPU 0"), None);
        assert_eq!(device_index("python3"), None);
        assert_eq!(device_index("Spans"), None);
        assert_eq!(device_index("GPU x"), None);
        assert_eq!(device_index("thread 12"), None);
        assert!(is_host_label("CPU"));
        assert!(!is_host_label("GPU 0"));
    }
}
