//! What a category (`cat`) says an event is, in every schema the parser reads: PyTorch 2.x names,
//! 1.8/1.9's capitalised ones, HIP spellings. One vocabulary for the parser (which lanes are GPU
//! streams), the analyses (what keeps a GPU busy, what is an operator) and the view.

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
    /// A CUDA/HIP runtime or driver call.
    Runtime,
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
            "cuda_runtime" | "cuda_driver" | "Runtime" | "hip_runtime" | "hip_driver" => {
                Kind::Runtime
            }
            "kernel" | "Kernel" => Kind::Kernel,
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

    /// Kernel, memcpy or memset: what keeps a GPU busy.
    pub fn is_gpu_busy(self) -> bool {
        matches!(self, Kind::Kernel | Kind::Memcpy | Kind::Memset)
    }
}

/// The kind of each category string, indexed by `StrId`.
pub struct Kinds {
    by_cat: Vec<Kind>,
}

impl Kinds {
    pub fn new(trace: &Trace) -> Kinds {
        let n = trace.strings.len();
        let by_cat = (0..n as u32)
            .map(|i| Kind::of_cat(trace.str(StrId(i))))
            .collect();
        Kinds { by_cat }
    }

    pub fn of_cat(&self, cat: StrId) -> Kind {
        self.by_cat
            .get(cat.0 as usize)
            .copied()
            .unwrap_or(Kind::Other)
    }
}
