//! The snapshot model: columns and interned strings, frames and stacks, as the trace model keeps
//! its slices. A frame is stored once however many allocations carry it, and a stack (a list of
//! frame ids, innermost first, as PyTorch writes it) once however many entries share it.

use serde::Serialize;

/// An absent string (`compile_context`, `user_metadata`, an annotation's stage or name).
pub const NO_STR: u32 = u32::MAX;
/// An entry without `time_us` (snapshots of torch before 2.1 record none).
pub const NO_TIME: i64 = i64::MIN;
/// The empty stack: an entry or block recorded without context (`frames: []`).
pub const EMPTY_STACK: u32 = 0;

/// What an allocator trace entry did (`TraceEntry::Action` in `CUDACachingAllocator.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A block handed to a tensor (`size` is the block's rounded size).
    Alloc,
    /// The tensor was freed; the block may still be in use by another stream.
    FreeRequested,
    /// The block is free for reuse: the live bytes drop here.
    FreeCompleted,
    /// `cudaMalloc` of a new segment.
    SegmentAlloc,
    /// `cudaFree` of a segment (`empty_cache`, or freeing memory to retry an allocation).
    SegmentFree,
    /// Pages mapped into an expandable segment.
    SegmentMap,
    /// Pages unmapped from an expandable segment.
    SegmentUnmap,
    /// A snapshot was taken here.
    Snapshot,
    /// An allocation failed: `size` was asked for, `device_free` was free on the device.
    Oom,
    /// A name this reader does not know; kept in [`DeviceTrace::other_names`].
    Other,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Other => "other",
        }
    }
}

/// A block's `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    /// Held by a tensor.
    ActiveAllocated,
    /// Freed by its tensor, waiting for another stream's work to finish.
    ActivePendingFree,
    /// Free, cached for reuse.
    Inactive,
    /// A state this reader does not know.
    Other,
}

impl BlockState {
    pub fn as_str(self) -> &'static str {
        match self {
            BlockState::ActiveAllocated => "active_allocated",
            BlockState::ActivePendingFree => "active_pending_free",
            BlockState::Inactive => "inactive",
            BlockState::Other => "other",
        }
    }
}

/// Every frame once: file, line and function, the names as ids into [`Snapshot::strings`].
#[derive(Debug, Default, Clone)]
pub struct Frames {
    pub filename: Vec<u32>,
    pub line: Vec<i64>,
    pub name: Vec<u32>,
}

impl Frames {
    pub fn len(&self) -> usize {
        self.filename.len()
    }

    pub fn is_empty(&self) -> bool {
        self.filename.is_empty()
    }
}

/// Every stack once: stack `s` is `frames[starts[s]..starts[s + 1]]`, innermost frame first as
/// PyTorch records it. Stack 0 is the empty stack.
#[derive(Debug, Clone)]
pub struct Stacks {
    pub starts: Vec<u32>,
    pub frames: Vec<u32>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            starts: vec![0, 0],
            frames: Vec::new(),
        }
    }
}

impl Stacks {
    pub fn get(&self, stack: u32) -> &[u32] {
        let s = stack as usize;
        &self.frames[self.starts[s] as usize..self.starts[s + 1] as usize]
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The allocator's segments when the snapshot was taken, one row each, in file order.
#[derive(Debug, Default, Clone)]
pub struct Segments {
    pub device: Vec<i64>,
    pub address: Vec<u64>,
    pub total_size: Vec<u64>,
    pub allocated_size: Vec<u64>,
    pub active_size: Vec<u64>,
    pub requested_size: Vec<u64>,
    pub stream: Vec<i64>,
    /// `segment_type == "large"`.
    pub large: Vec<bool>,
    /// `segment_pool_id`, the private pool (a CUDA graph's, a `MemPool`); `(0, 0)` is the
    /// default pool and stands for a missing key too.
    pub pool_id: Vec<(i64, i64)>,
    pub is_expandable: Vec<bool>,
    /// The stack that allocated the segment (`frames`, where recorded).
    pub stack: Vec<u32>,
    /// Segment `s` holds blocks `block_starts[s]..block_starts[s + 1]` of [`Snapshot::blocks`].
    pub block_starts: Vec<u32>,
}

impl Segments {
    pub fn len(&self) -> usize {
        self.address.len()
    }

    pub fn is_empty(&self) -> bool {
        self.address.is_empty()
    }

    pub fn blocks(&self, s: usize) -> std::ops::Range<usize> {
        self.block_starts[s] as usize..self.block_starts[s + 1] as usize
    }
}

/// The blocks of every segment, segment after segment, each in address order.
#[derive(Debug, Default, Clone)]
pub struct Blocks {
    pub address: Vec<u64>,
    pub size: Vec<u64>,
    pub requested_size: Vec<u64>,
    pub state: Vec<BlockState>,
    pub stack: Vec<u32>,
}

impl Blocks {
    pub fn len(&self) -> usize {
        self.size.len()
    }

    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }
}

/// One device's allocator trace (`device_traces[i]`), one row per entry, in recorded order.
#[derive(Debug, Default, Clone)]
pub struct DeviceTrace {
    pub action: Vec<Action>,
    /// `addr`; for `oom` entries, `device_free` (the allocator writes it in the same slot).
    pub addr: Vec<u64>,
    pub size: Vec<u64>,
    pub stream: Vec<i64>,
    /// Microseconds as recorded ([`NO_TIME`] where absent).
    pub time_us: Vec<i64>,
    pub stack: Vec<u32>,
    pub compile_context: Vec<u32>,
    pub user_metadata: Vec<u32>,
    /// (row, name) of each entry whose action is [`Action::Other`].
    pub other_names: Vec<(u32, u32)>,
}

impl DeviceTrace {
    pub fn len(&self) -> usize {
        self.action.len()
    }

    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }

    /// Room for exactly `n` rows in all, in every column.
    pub(crate) fn reserve_total(&mut self, n: usize) {
        let more = n.saturating_sub(self.len());
        self.action.reserve_exact(more);
        self.addr.reserve_exact(more);
        self.size.reserve_exact(more);
        self.stream.reserve_exact(more);
        self.time_us.reserve_exact(more);
        self.stack.reserve_exact(more);
        self.compile_context.reserve_exact(more);
        self.user_metadata.reserve_exact(more);
    }

    pub(crate) fn push_row(&mut self, from: &DeviceTrace, i: usize) {
        self.action.push(from.action[i]);
        self.addr.push(from.addr[i]);
        self.size.push(from.size[i]);
        self.stream.push(from.stream[i]);
        self.time_us.push(from.time_us[i]);
        self.stack.push(from.stack[i]);
        self.compile_context.push(from.compile_context[i]);
        self.user_metadata.push(from.user_metadata[i]);
    }
}

/// One of `external_annotations`: a `record_function` range's start or end, as
/// `_record_memory_history(..., global_record_annotations=True)` records them.
#[derive(Debug, Clone, Serialize)]
pub struct Annotation {
    pub device: i64,
    pub time_us: i64,
    /// `stage` (`START`, `END`), an id into [`Snapshot::strings`] or [`NO_STR`].
    #[serde(skip)]
    pub stage: u32,
    /// `name`, an id into [`Snapshot::strings`] or [`NO_STR`].
    #[serde(skip)]
    pub name: u32,
}

/// What was wrong with the file, or worth knowing about it: the kind, how often, where first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SnapshotDiagnostic"))]
pub struct Diagnostic {
    pub kind: DiagKind,
    pub count: u64,
    /// Byte offset in the (decompressed) pickle of the first occurrence.
    pub first_offset: u64,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SnapshotDiagKind"))]
#[serde(rename_all = "snake_case")]
pub enum DiagKind {
    /// The file ends before the pickle's `STOP` (also inside the gzip stream).
    Truncated,
    /// Bytes the reader cannot take apart (an unknown opcode, an operation on the wrong kind
    /// of value); nothing after them is read.
    Malformed,
    /// An item left unfinished by the end of the file, or one missing a required key; dropped.
    Dropped,
    /// A field of the wrong type (a size that is not an integer, ...); read as zero.
    BadField,
    /// A reference (memo `GET`) that is not kept: to a container not finished yet, or to a
    /// large generic value; read as `None`.
    Reference,
    /// Generic values nested deeper than a snapshot ever is; not kept.
    TooDeep,
    /// A key this reader does not read (a newer torch's): counted, not kept.
    UnknownKey,
    /// An action name this reader does not know: kept, counted as [`Action::Other`].
    UnknownAction,
    /// Bytes after the pickle's `STOP`; ignored.
    TrailingBytes,
}

impl DiagKind {
    /// Damage: the file is not what PyTorch wrote. The rest are facts of healthy files.
    pub fn is_damage(self) -> bool {
        !matches!(self, DiagKind::UnknownKey | DiagKind::UnknownAction)
    }
}

/// How the file was read.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SnapshotStats {
    pub input_bytes: u64,
    /// The pickle's bytes (the inflated size of a gzip file).
    pub pickle_bytes: u64,
    pub gzipped: bool,
    /// The pickle protocol (`PROTO`), 0 where the stream has none.
    pub protocol: u8,
    pub truncated: bool,
}

/// A memory snapshot as `torch.cuda.memory._dump_snapshot` writes it, columnar.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    /// Every string once: file names, function names, contexts, annotation names.
    pub strings: Vec<Box<str>>,
    pub frames: Frames,
    pub stacks: Stacks,
    pub segments: Segments,
    pub blocks: Blocks,
    /// `device_traces`, by device index.
    pub devices: Vec<DeviceTrace>,
    pub annotations: Vec<Annotation>,
    /// `allocator_settings`, each value as Python would print it.
    pub allocator_settings: Vec<(String, String)>,
    pub stats: SnapshotStats,
    pub diagnostics: Vec<Diagnostic>,
}

impl Snapshot {
    /// The string `id` names; `""` for [`NO_STR`].
    pub fn str(&self, id: u32) -> &str {
        if id == NO_STR {
            ""
        } else {
            &self.strings[id as usize]
        }
    }

    /// Whether anything read is damaged.
    pub fn is_damaged(&self) -> bool {
        self.diagnostics.iter().any(|d| d.kind.is_damage())
    }

    /// Trace entries of every device.
    pub fn entries(&self) -> usize {
        self.devices.iter().map(DeviceTrace::len).sum()
    }
}
