//! The timeline model: what the parser builds and every analysis reads.
//!
//! Everything here is columnar and interned so that a trace of millions of events costs tens of bytes
//! per slice: a name is a [`StrId`], a lane's slices are parallel vectors, and the full `args` of an
//! event live once in a shared [`ArgStore`] as minified JSON, re-parsed only when someone asks.
//!
//! Invariants (established by [`crate::parse`] when it finishes, relied on everywhere):
//! - Times are `i64` nanoseconds from the trace start (the smallest timestamp seen), never floats.
//! - Lanes are ordered as users expect: CPU processes first (by sort index, then pid), their threads by
//!   sort index then tid; then GPU devices by index, their streams by id; then other tracks.
//! - In a lane, slices are sorted by `start_ns`, then `depth`; two slices on the same row never overlap.
//!   `depth` is the nesting depth; a slice that overlaps another without nesting (real on GPU streams)
//!   gets a deeper row of its own and is counted in the diagnostics, never dropped.
//! - `external_id` and `correlation` are `-1` when the event has none.

mod intern;

pub use intern::{Interner, StrId};

use serde::Serialize;

/// Absent id in the `external_id` and `correlation` columns.
pub const NO_ID: i64 = -1;

/// A parsed trace: the whole timeline plus what the file said about itself.
#[derive(Debug, Default)]
pub struct Trace {
    pub strings: Interner,
    pub args: ArgStore,
    pub processes: Vec<Process>,
    pub lanes: Vec<Lane>,
    pub flows: Vec<Flow>,
    pub instants: Vec<Instant>,
    pub counters: Vec<CounterSeries>,
    pub memory: MemoryEvents,
    pub meta: TraceMeta,
    pub stats: ParseStats,
    pub diagnostics: Diagnostics,
}

/// What the file says about the run, outside its events.
#[derive(Debug, Default, Clone, Serialize)]
pub struct TraceMeta {
    /// Detected schema, e.g. `"pytorch-2.x"`, `"pytorch-1.8/1.9 (legacy)"`, `"chrome"`.
    pub schema: String,
    /// `ts` of the earliest event, in nanoseconds, as written in the file (before rebasing).
    pub origin_ns: i64,
    pub base_time_ns: Option<i64>,
    pub schema_version: Option<serde_json::Value>,
    pub device_properties: Vec<DeviceProperties>,
    pub distributed: Option<DistributedInfo>,
    /// True when the file's GPU runtime is ROCm/HIP.
    pub rocm: bool,
    /// Other top-level keys of the envelope, small values only (large ones are skipped and counted).
    pub other: Vec<(String, serde_json::Value)>,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct DeviceProperties {
    pub id: i64,
    pub name: String,
    pub total_global_mem: Option<u64>,
    pub compute_major: Option<i64>,
    pub compute_minor: Option<i64>,
    pub num_sms: Option<i64>,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct DistributedInfo {
    pub backend: Option<String>,
    pub rank: i64,
    pub world_size: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Process {
    pub pid: i64,
    /// The pid as the file wrote it, when it was a string such as `"Spans"`.
    pub pid_label: Option<String>,
    pub name: Option<String>,
    pub labels: Option<String>,
    pub sort_index: Option<i64>,
    /// GPU device index when this process holds GPU streams.
    pub device: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum LaneKind {
    /// An OS thread of a CPU process.
    Cpu,
    /// A GPU stream (CUDA/HIP), `device` is the GPU index.
    GpuStream { device: i64, stream: i64 },
}

/// One horizontal track of the timeline: a CPU thread or a GPU stream.
#[derive(Debug)]
pub struct Lane {
    pub kind: LaneKind,
    /// Index into [`Trace::processes`].
    pub process: u32,
    pub pid: i64,
    pub tid: i64,
    /// The tid as the file wrote it, when it was a string such as `"stream 7"`.
    pub tid_label: Option<String>,
    pub name: Option<String>,
    pub sort_index: Option<i64>,
    pub slices: Slices,
    /// Number of rows needed to draw the lane (max depth + 1).
    pub rows: u32,
    /// Slices that overlapped another one without nesting and were given a row of their own.
    pub overlapping: u32,
}

impl Lane {
    pub fn is_gpu(&self) -> bool {
        matches!(self.kind, LaneKind::GpuStream { .. })
    }
}

/// The slices of one lane, column by column. All vectors have the same length.
#[derive(Debug, Default)]
pub struct Slices {
    pub start_ns: Vec<i64>,
    pub dur_ns: Vec<i64>,
    pub depth: Vec<u16>,
    pub name: Vec<StrId>,
    pub cat: Vec<StrId>,
    pub args: Vec<ArgsId>,
    pub external_id: Vec<i64>,
    pub correlation: Vec<i64>,
    /// Interned `Input Dims`, formatted as Python's `str` of the list (how PyTorch keys its table);
    /// [`StrId::NONE`] when absent.
    pub input_dims: Vec<StrId>,
}

impl Slices {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn end_ns(&self, i: usize) -> i64 {
        self.start_ns[i] + self.dur_ns[i]
    }

    /// Bytes held by the columns (capacity, not length: what the allocator really gave).
    pub fn heap_bytes(&self) -> usize {
        self.start_ns.capacity() * 8
            + self.dur_ns.capacity() * 8
            + self.depth.capacity() * 2
            + self.name.capacity() * 4
            + self.cat.capacity() * 4
            + self.args.capacity() * 4
            + self.external_id.capacity() * 8
            + self.correlation.capacity() * 8
            + self.input_dims.capacity() * 4
    }
}

/// Points at one slice: lane index and index within the lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SliceRef {
    pub lane: u32,
    pub index: u32,
}

/// Handle to an event's full `args`, kept as JSON text in the [`ArgStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgsId(pub u32);

impl ArgsId {
    pub const NONE: ArgsId = ArgsId(u32::MAX);
}

/// Every event's `args` object as JSON text, as the file wrote it, back to back.
///
/// Typed copies of what the analyses need (External id, correlation, Input Dims) sit in the slice
/// columns; the rest is re-parsed on demand, e.g. for a details panel. Keeping the text compactly
/// instead of re-reading the file means a `.gz` trace need not be decompressed again.
#[derive(Debug, Default)]
pub struct ArgStore {
    bytes: Vec<u8>,
    ends: Vec<u64>,
}

impl ArgStore {
    pub fn push(&mut self, json: &[u8]) -> ArgsId {
        if json.is_empty() || self.ends.len() >= (u32::MAX - 1) as usize {
            return ArgsId::NONE;
        }
        self.bytes.extend_from_slice(json);
        self.ends.push(self.bytes.len() as u64);
        ArgsId(self.ends.len() as u32 - 1)
    }

    /// The JSON text of the args, or `None` for [`ArgsId::NONE`].
    pub fn get(&self, id: ArgsId) -> Option<&str> {
        let i = id.0 as usize;
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        std::str::from_utf8(&self.bytes[start..end]).ok()
    }

    /// The args parsed as a JSON value (an object), or `Null`.
    pub fn value(&self, id: ArgsId) -> serde_json::Value {
        let Some(text) = self.get(id) else {
            return serde_json::Value::Null;
        };
        serde_json::from_str(text)
            .or_else(|_| {
                // A raw tab or newline inside a string (kept as written) is invalid JSON; as a
                // space it reads, and outside strings a space is what it was anyway.
                let spaced = text.replace(['\n', '\r', '\t'], " ");
                serde_json::from_str(&spaced)
            })
            .unwrap_or(serde_json::Value::Null)
    }

    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * 8
    }

    pub(crate) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// A flow arrow (`s`/`t`/`f` events) bound to the slices at its ends.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Flow {
    pub cat: StrId,
    pub id: i64,
    pub from: SliceRef,
    pub to: SliceRef,
}

/// An instant event (`i`/`I`) other than the `[memory]` ones, which go to [`MemoryEvents`].
#[derive(Debug, Clone, Copy)]
pub struct Instant {
    pub ts_ns: i64,
    pub lane: u32,
    pub name: StrId,
    pub cat: StrId,
    pub args: ArgsId,
}

/// One counter track (`C` events): a process's named series.
#[derive(Debug, Clone, Serialize)]
pub struct CounterSeries {
    pub pid: i64,
    pub name: String,
    pub series: String,
    pub ts_ns: Vec<i64>,
    pub values: Vec<f64>,
}

/// `[memory]` instants (`profile_memory=True`), column by column, sorted by time.
#[derive(Debug, Default)]
pub struct MemoryEvents {
    pub ts_ns: Vec<i64>,
    /// Lane of the thread that allocated (u32::MAX when the thread has no lane).
    pub lane: Vec<u32>,
    /// 0 = CPU, 1 = CUDA (PyTorch's `Device Type`); other values for other devices.
    pub device_type: Vec<i8>,
    pub device_id: Vec<i16>,
    /// Positive for an allocation, negative for a free.
    pub bytes: Vec<i64>,
    pub total_allocated: Vec<i64>,
    pub total_reserved: Vec<i64>,
}

impl MemoryEvents {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
}

/// Counts of what was read, for `summary` and for a benchmark's figures.
#[derive(Debug, Default, Clone, Serialize)]
pub struct ParseStats {
    /// Bytes fed to the parser (compressed size for a `.gz`).
    pub input_bytes: u64,
    /// Bytes of JSON after decompression.
    pub json_bytes: u64,
    pub gzipped: bool,
    /// Every trace event object read, all phases; for a valid file, the length of `traceEvents`.
    pub events_total: u64,
    pub by_phase: Vec<(String, u64)>,
    pub by_category: Vec<(String, u64)>,
    /// True when the file ended before its event array was closed.
    pub truncated: bool,
}

/// What the parser skipped or repaired, grouped by kind.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    pub kind: DiagKind,
    pub count: u64,
    /// Byte offset (in the decompressed JSON) of the first occurrence.
    pub first_offset: u64,
    /// A short human sentence about the first occurrence.
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagKind {
    /// The file ended before the event array closed (process killed while writing).
    Truncated,
    /// An event that is not valid JSON even after repair; skipped.
    UnreadableEvent,
    /// An event repaired before reading: raw control characters, bare `N/A`/`NaN`, ...
    RepairedEvent,
    /// A JSON value in the event array that is not an object; skipped.
    NotAnObject,
    /// An event without a usable `ph`, `ts` or `dur`; skipped.
    MissingField,
    /// An `E` with no open `B` on its thread; dropped.
    UnmatchedEnd,
    /// A `B` still open at the end of the trace; closed at the last timestamp.
    UnclosedBegin,
    /// A slice overlapping another on its lane without nesting; given its own row.
    OverlappingSlice,
    /// A flow event whose slice could not be found; the arrow is dropped.
    UnboundFlow,
    /// A phase this model does not keep (async `b`/`e`/`n`, samples, objects, ...); counted only.
    IgnoredPhase,
    /// A negative duration; clamped to zero.
    NegativeDuration,
    /// A top-level value too large to keep as metadata; skipped.
    LargeMetadata,
    /// Bytes after the end of the JSON document; ignored.
    TrailingData,
}

impl Diagnostics {
    pub fn add(&mut self, kind: DiagKind, offset: u64, detail: impl FnOnce() -> String) {
        self.add_n(kind, 1, offset, detail)
    }

    pub fn add_n(&mut self, kind: DiagKind, n: u64, offset: u64, detail: impl FnOnce() -> String) {
        if let Some(d) = self.items.iter_mut().find(|d| d.kind == kind) {
            d.count += n;
            d.first_offset = d.first_offset.min(offset);
        } else {
            self.items.push(Diagnostic {
                kind,
                count: n,
                first_offset: offset,
                detail: detail(),
            });
        }
    }

    pub fn count(&self, kind: DiagKind) -> u64 {
        self.items
            .iter()
            .filter(|d| d.kind == kind)
            .map(|d| d.count)
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl Trace {
    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    pub fn slice_name(&self, r: SliceRef) -> &str {
        self.str(self.lanes[r.lane as usize].slices.name[r.index as usize])
    }

    pub fn slice_count(&self) -> usize {
        self.lanes.iter().map(|l| l.slices.len()).sum()
    }

    /// Bytes of the slice columns, flows and memory events: the model without strings and args.
    pub fn columns_heap_bytes(&self) -> usize {
        let lanes: usize = self.lanes.iter().map(|l| l.slices.heap_bytes()).sum();
        let m = &self.memory;
        lanes
            + self.flows.capacity() * std::mem::size_of::<Flow>()
            + self.instants.capacity() * std::mem::size_of::<Instant>()
            + m.ts_ns.capacity() * 8
            + m.lane.capacity() * 4
            + m.device_type.capacity()
            + m.device_id.capacity() * 2
            + m.bytes.capacity() * 8
            + m.total_allocated.capacity() * 8
            + m.total_reserved.capacity() * 8
    }

    /// Bytes of the whole model: columns, interned strings and args.
    pub fn heap_bytes(&self) -> usize {
        self.columns_heap_bytes() + self.strings.heap_bytes() + self.args.heap_bytes()
    }

    /// The rank of this trace: `distributedInfo.rank`, else 0.
    pub fn rank(&self) -> i64 {
        self.meta.distributed.as_ref().map(|d| d.rank).unwrap_or(0)
    }

    /// The trace's time span in ns (0 for an empty trace).
    pub fn span_ns(&self) -> i64 {
        self.lanes
            .iter()
            .filter_map(|l| {
                let s = &l.slices;
                (0..s.len()).map(|i| s.end_ns(i)).max()
            })
            .max()
            .unwrap_or(0)
    }

    /// Lanes of GPU streams, with their indices.
    pub fn gpu_lanes(&self) -> impl Iterator<Item = (usize, &Lane)> {
        self.lanes.iter().enumerate().filter(|(_, l)| l.is_gpu())
    }
}
