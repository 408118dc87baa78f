//! The timeline model: what the parser builds and every analysis reads.
//!
//! Everything here is columnar and interned so that a trace of millions of events costs tens of bytes
//! per slice (about 58): a name is a [`StrId`], the slices are parallel columns, lane after lane ([`SliceColumns`]:
//! start, duration, depth, name, category, args, External id, correlation, input dims), and each
//! event's `args` text lives once in a shared [`ArgStore`], member by member with a one-byte
//! dictionary for the keys Kineto repeats, read only when someone asks (a details panel), so a
//! `.gz` trace need not be decompressed again.
//!
//! Files: this module (the [`Trace`]: processes, lanes, flows, instants, counters, `[memory]`
//! events, metadata, stats and diagnostics; a [`Lane`], a CPU thread or a device stream;
//! [`DiagKind::is_damage`], the one place that tells damage from observations), `args` (the
//! [`ArgStore`]: every event's `args`, key-coded, in blocks that never move), `intern` (every
//! string stored once, a [`StrId`]), `per_lane` (a table by lane and slice in one list, [`PerLane`]) and `category` (what a `cat` says an event is, in every
//! schema the parser reads, and the rule for which processes and lanes are devices:
//! one vocabulary for the parser, the analyses and the view).
//!
//! Invariants (established by [`crate::parse`] when it finishes, relied on everywhere):
//! - Times are `i64` nanoseconds from the trace start (the earliest timestamp of a non-metadata
//!   event), read from the decimal text, never through a float (only an exponent form is).
//!   Timestamps outside 1933-2116 are read as absent and durations capped at 73 years (both
//!   reported), so no start plus duration can overflow.
//! - Lanes are ordered as users expect: CPU processes first (by sort index, then pid), their threads by
//!   sort index then tid; then device streams by (device, stream); then tracks with string pids
//!   (Kineto's "Spans").
//! - In a lane, slices are sorted by `start_ns`, then longer first, then file order; two slices on
//!   the same row never overlap. `depth` is the nesting depth; a slice that overlaps another
//!   without nesting (real on GPU streams, and around `record_function` ranges with Python stacks)
//!   is drawn under the longer one and counted in the observations, never dropped (see
//!   `parse/rows.rs`); rows stay within two of the lane's containment depth on every fixture.
//! - `external_id` and `correlation` are `-1` when the event has none.

mod args;
pub mod category;
mod intern;
mod per_lane;

pub(crate) use args::Pending;
pub use args::{ArgStore, Members};
pub use intern::{Interner, StrId};
pub use per_lane::PerLane;

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
    /// Every lane's slices, lane after lane ([`Lane::slice_range`]).
    pub columns: SliceColumns,
    pub flows: Vec<Flow>,
    pub instants: Vec<Instant>,
    pub counters: Vec<CounterSeries>,
    pub memory: MemoryEvents,
    pub meta: TraceMeta,
    pub stats: ParseStats,
    pub diagnostics: Diagnostics,
    /// Which process holds each device, built on first use ([`Trace::device_process`]).
    pub device_processes: DeviceProcesses,
}

/// The first process holding each device, built from [`Trace::processes`] on first use (the
/// processes do not change after the parse), so naming a device is a lookup, not a scan of every
/// process: a trace of 80,000 device processes made naming them all quadratic.
#[derive(Debug, Default)]
pub struct DeviceProcesses(std::sync::OnceLock<rustc_hash::FxHashMap<i64, u32>>);

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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// Where this lane's slices lie in [`Trace::columns`] (read them with [`Trace::slices`]).
    pub slice_range: std::ops::Range<u32>,
    /// Number of rows needed to draw the lane (max depth + 1).
    pub rows: u32,
    /// Slices that overlap the slice opened before them without nesting in it.
    pub overlapping: u32,
}

impl Lane {
    pub fn is_gpu(&self) -> bool {
        matches!(self.kind, LaneKind::GpuStream { .. })
    }

    /// The number of slices on this lane.
    pub fn slice_count(&self) -> usize {
        self.slice_range.len()
    }
}

/// The slices of every lane, column by column, lane after lane: a lane is a range of rows
/// ([`Lane::slice_range`]). One set of columns for the whole trace, not one per lane, so a lane
/// costs a range, not nine allocations: a trace of 80,000 one-slice lanes had spent more on
/// them than on its slices. All vectors have the same length.
#[derive(Debug, Default)]
pub struct SliceColumns {
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

impl SliceColumns {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// Adds a slice of only a span (no name, category, args or ids; row 0): what a check of rows
    /// and windows builds its lanes from.
    pub fn push_span(&mut self, start_ns: i64, dur_ns: i64) {
        self.start_ns.push(start_ns);
        self.dur_ns.push(dur_ns);
        self.depth.push(0);
        self.name.push(StrId::NONE);
        self.cat.push(StrId::NONE);
        self.args.push(ArgsId::NONE);
        self.external_id.push(NO_ID);
        self.correlation.push(NO_ID);
        self.input_dims.push(StrId::NONE);
    }

    /// The rows in `range`, as one lane's slices.
    pub fn rows(&self, range: std::ops::Range<u32>) -> Slices<'_> {
        let r = range.start as usize..range.end as usize;
        Slices {
            start_ns: &self.start_ns[r.clone()],
            dur_ns: &self.dur_ns[r.clone()],
            depth: &self.depth[r.clone()],
            name: &self.name[r.clone()],
            cat: &self.cat[r.clone()],
            args: &self.args[r.clone()],
            external_id: &self.external_id[r.clone()],
            correlation: &self.correlation[r.clone()],
            input_dims: &self.input_dims[r],
        }
    }

    /// All rows, as one lane (what a test that builds a single lane reads).
    pub fn all(&self) -> Slices<'_> {
        self.rows(0..self.len() as u32)
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

/// The slices of one lane, column by column: borrowed from [`Trace::columns`]. All slices have
/// the same length.
#[derive(Debug, Clone, Copy)]
pub struct Slices<'a> {
    pub start_ns: &'a [i64],
    pub dur_ns: &'a [i64],
    pub depth: &'a [u16],
    pub name: &'a [StrId],
    pub cat: &'a [StrId],
    pub args: &'a [ArgsId],
    pub external_id: &'a [i64],
    pub correlation: &'a [i64],
    /// Interned `Input Dims` ([`StrId::NONE`] when absent).
    pub input_dims: &'a [StrId],
}

impl Slices<'_> {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn end_ns(&self, i: usize) -> i64 {
        self.start_ns[i] + self.dur_ns[i]
    }
}

/// Points at one slice: lane index and index within the lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// `Addr`: the block's address, which pairs a free with its allocation (0 when absent).
    pub addr: Vec<i64>,
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
    /// Threads the parse ran on (several only for a large plain-JSON file read natively).
    pub threads: u32,
}

/// What the parser skipped or repaired (damage) and what it observed, grouped by kind (see
/// [`DiagKind::is_damage`]).
#[derive(Debug, Default, Clone, Serialize)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diagnostic {
    pub kind: DiagKind,
    pub count: u64,
    /// Byte offset (in the decompressed JSON) of the first occurrence.
    pub first_offset: u64,
    /// A short human sentence about the first occurrence.
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// A slice overlapping another on its lane without nesting; drawn under the longer one.
    OverlappingSlice,
    /// A flow event whose slice could not be found; the arrow is dropped.
    UnboundFlow,
    /// A flow that ends (or continues) without its start; the arrow is dropped.
    FlowWithoutStart,
    /// A phase this model does not keep (async `b`/`e`/`n`, samples, objects, ...); counted only.
    IgnoredPhase,
    /// A negative duration; clamped to zero.
    NegativeDuration,
    /// A timestamp or duration too far from any real run to keep as is (read as absent, or
    /// clamped), so that no time computation can overflow.
    TimeOutOfRange,
    /// A top-level value too large to keep as metadata; skipped.
    LargeMetadata,
    /// Bytes after the end of the JSON document; ignored.
    TrailingData,
    /// A key written twice in one event or in the envelope: the last value is kept (a second
    /// `traceEvents` array is read after the first, as one).
    DuplicateKey,
    /// A name longer than [`LONG_NAME_BYTES`]: kept whole, shown cut in tables and reports.
    LongName,
    /// Slices nested deeper than the timeline's rows go (65,534): the deeper ones are drawn on
    /// the last row.
    DeepNesting,
}

/// Names longer than this are told ([`DiagKind::LongName`]) and cut in the outputs (the CLI's
/// `--full-names` and the page's details panel give them whole): no profiler writes one, and a
/// report must not copy hundreds of MB of one name.
pub const LONG_NAME_BYTES: usize = 64 << 10;

/// `name` as tables and reports show it: whole up to [`LONG_NAME_BYTES`], else its first
/// [`LONG_NAME_BYTES`] (at a character boundary) and how many bytes were left out.
pub fn cut_name(name: &str) -> std::borrow::Cow<'_, str> {
    if name.len() <= LONG_NAME_BYTES {
        return name.into();
    }
    let mut end = LONG_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &name[..end], name.len() - end).into()
}

/// Serialized JSON with every string cut as [`cut_name`] cuts names: the outputs' one rule. Only
/// output holding a string that long is parsed again (so the keys of every other output keep
/// their order).
pub fn cut_long_strings_in(text: String) -> String {
    if !has_long_string(&text) {
        return text;
    }
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return text;
    };
    cut_long_strings(&mut value);
    serde_json::to_string_pretty(&value).unwrap_or(text)
}

/// Whether serialized JSON holds a string longer than [`LONG_NAME_BYTES`] bytes: from each
/// opening quote to its closing one (a quote after an odd run of backslashes is inside a string).
fn has_long_string(text: &str) -> bool {
    if text.len() <= LONG_NAME_BYTES {
        return false;
    }
    let b = text.as_bytes();
    let mut open: Option<usize> = None;
    for i in memchr::memchr_iter(b'"', b) {
        let slashes = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
        if slashes % 2 == 1 {
            continue;
        }
        match open {
            None => open = Some(i),
            Some(start) if i - start > LONG_NAME_BYTES => return true,
            Some(_) => open = None,
        }
    }
    false
}

/// Cuts every string of a JSON value as [`cut_name`] does.
fn cut_long_strings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) if s.len() > LONG_NAME_BYTES => *s = cut_name(s).into_owned(),
        serde_json::Value::Array(a) => a.iter_mut().for_each(cut_long_strings),
        serde_json::Value::Object(o) => o.values_mut().for_each(cut_long_strings),
        _ => {}
    }
}

impl DiagKind {
    /// Damage means the file is not as a profiler writes it (cut short, invalid JSON, refused or
    /// repaired events, unpaired `B`/`E`, impossible times): a user should know before trusting
    /// what is shown. The other kinds are observations, facts of healthy traces: Kineto loses
    /// the start of some flows, Python frames and `record_function` ranges overlap without
    /// nesting, async phases are not drawn.
    pub fn is_damage(self) -> bool {
        !matches!(
            self,
            DiagKind::OverlappingSlice
                | DiagKind::UnboundFlow
                | DiagKind::FlowWithoutStart
                | DiagKind::IgnoredPhase
        )
    }

    /// What an observation means, for a user (damage is described by each item's detail).
    pub fn explanation(self) -> &'static str {
        match self {
            DiagKind::OverlappingSlice => {
                "slices that overlap another on their thread or stream without nesting in it, as \
                 profilers write them (a record_function range or ProfilerStep that ends after \
                 the Python frame it began in; kernels overlapping on one stream); each is drawn \
                 under the longer slice it overlaps, none is dropped"
            }
            DiagKind::FlowWithoutStart => {
                "flow arrows whose start event is not in the file (Kineto writes the end of some \
                 flows without their start); these arrows are not drawn, and kernels are still \
                 linked to their launch by correlation id"
            }
            DiagKind::UnboundFlow => {
                "flow arrows pointing at a time where their thread holds no slice (the slice was \
                 not recorded); these arrows are not drawn"
            }
            DiagKind::IgnoredPhase => {
                "events of phases the timeline does not draw (async, sample or object events); \
                 they are counted in the summary only"
            }
            _ => "the file is damaged here; see the detail",
        }
    }
}

impl Diagnostics {
    /// The damage (see [`DiagKind::is_damage`]): empty for a file as the profiler wrote it.
    pub fn damage(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.kind.is_damage())
    }

    /// The observations: facts of healthy traces (see [`DiagKind::is_damage`]).
    pub fn observations(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| !d.kind.is_damage())
    }

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

    /// Adds `other`'s counts to these, kind by kind (the first detail of a kind stays).
    pub fn merge(&mut self, other: Diagnostics) {
        for d in other.items {
            self.add_n(d.kind, d.count, d.first_offset, || d.detail);
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
    /// The first process (by index) that holds `device`, if any.
    pub fn device_process(&self, device: i64) -> Option<u32> {
        let map = self.device_processes.0.get_or_init(|| {
            let mut map = rustc_hash::FxHashMap::default();
            for (i, p) in self.processes.iter().enumerate() {
                if let Some(d) = p.device {
                    map.entry(d).or_insert(i as u32);
                }
            }
            map
        });
        map.get(&device).copied()
    }

    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    pub fn slice_name(&self, r: SliceRef) -> &str {
        self.str(self.columns.name[self.row(r)])
    }

    /// Where slice `r` lies in [`Trace::columns`]: one field of one slice is
    /// `trace.columns.name[trace.row(r)]`, without making the lane's [`Slices`] first.
    pub fn row(&self, r: SliceRef) -> usize {
        let range = &self.lanes[r.lane as usize].slice_range;
        debug_assert!(r.index < range.end - range.start, "{r:?} is past its lane");
        (range.start + r.index) as usize
    }

    /// The slices of lane `lane`.
    pub fn slices(&self, lane: usize) -> Slices<'_> {
        self.slices_of(&self.lanes[lane])
    }

    /// The slices of `lane`, a lane of this trace.
    pub fn slices_of(&self, lane: &Lane) -> Slices<'_> {
        self.columns.rows(lane.slice_range.clone())
    }

    /// Each lane with its slices, in lane order.
    pub fn lanes_with_slices(&self) -> impl Iterator<Item = (&Lane, Slices<'_>)> {
        self.lanes.iter().map(|l| (l, self.slices_of(l)))
    }

    pub fn slice_count(&self) -> usize {
        self.columns.len()
    }

    /// Bytes of the slice columns, flows and memory events: the model without strings and args.
    pub fn columns_heap_bytes(&self) -> usize {
        let m = &self.memory;
        self.columns.heap_bytes()
            + self.lanes.capacity() * std::mem::size_of::<Lane>()
            + self.flows.capacity() * std::mem::size_of::<Flow>()
            + self.instants.capacity() * std::mem::size_of::<Instant>()
            + m.ts_ns.capacity() * 8
            + m.lane.capacity() * 4
            + m.device_type.capacity()
            + m.device_id.capacity() * 2
            + m.bytes.capacity() * 8
            + m.total_allocated.capacity() * 8
            + m.total_reserved.capacity() * 8
            + m.addr.capacity() * 8
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
        let s = &self.columns;
        (0..s.len())
            .map(|i| s.start_ns[i] + s.dur_ns[i])
            .max()
            .unwrap_or(0)
    }

    /// Lanes of GPU streams, with their indices.
    pub fn gpu_lanes(&self) -> impl Iterator<Item = (usize, &Lane)> {
        self.lanes.iter().enumerate().filter(|(_, l)| l.is_gpu())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a string past the limit sends output through the cut (and its keys through a
    /// reparse): long runs of numbers between strings, or escaped quotes, do not.
    #[test]
    fn long_strings_are_found_between_their_own_quotes() {
        let numbers = format!(
            "{{\"a\":[{}],\"b\":\"x\"}}",
            "1,".repeat(LONG_NAME_BYTES) + "1"
        );
        assert!(!has_long_string(&numbers));
        assert_eq!(cut_long_strings_in(numbers.clone()), numbers);
        let escaped = format!("[\"{}\"]", "\\\"".repeat(LONG_NAME_BYTES / 4));
        assert!(!has_long_string(&escaped));
        // 100 quotes past the limit: cut, each kept quote escaped in the output.
        let long = format!("[\"{}\"]", "\\\"".repeat(LONG_NAME_BYTES + 100));
        assert!(has_long_string(&long));
        let cut = cut_long_strings_in(long);
        assert!(cut.len() < 2 * LONG_NAME_BYTES + 100, "{}", cut.len());
        assert!(cut.contains("… (100 more bytes)"), "{cut:.80}");
    }
}
