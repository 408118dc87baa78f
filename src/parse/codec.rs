//! A parse part written into one compact binary buffer and read back: how a part parsed in one
//! Web Worker reaches the worker that joins the parts (transferred as an `ArrayBuffer`, so no
//! `SharedArrayBuffer` and no cross-origin isolation is needed).
//!
//! Layout, all little-endian: the magic `SLPART`, a format version (`u16`), the part's first
//! byte offset in the file, its length and first bytes, then the splitter's state and the
//! builder's, section by section (strings, args, lanes, slices, processes, flow points, instants,
//! counters, memory events, metadata, diagnostics, counts), field by field. Columns are written
//! whole (a length, then the raw values), strings as a length and UTF-8, so a part costs about
//! what its columns hold in memory and reading it back is a copy, not a parse. Maps that the
//! builder derives (lane and counter lookups) are rebuilt, not written; scratch buffers are not
//! written. Each section's write and read lie side by side (`write_lanes` then `read_lanes`, ...),
//! and `write_builder` and `read_builder` list the sections in one order.
//!
//! This file owns the format, and the dependency goes one way: it imports `build`'s types,
//! writes and reads them, and copies a part's columns from its buffer into a joining builder
//! (`PartSlices` for [`Encoded`]); `build` imports nothing of it.
//!
//! Reading checks everything later code indexes with: lengths against the bytes left (before
//! allocating), enum codes, every string, args and lane id against its table, column lengths,
//! timestamps against the parser's bounds, unique lanes, counters and string ids. A buffer that
//! fails any check is a [`PartError`], never a panic, here or later.

use super::build::{
    Builder, FileSlices, FlowPoint, Ids, LaneBuilder, OpenBegin, PartSlices, PhaseCounts, ProcMeta,
    MAX_DUR_NS, MAX_TS_NS, MIN_TS_NS,
};
use super::split::{Form, ObjectScan, Splitter, State, ValueScan};
use super::JsonStage;
use crate::model::{
    ArgStore, ArgsId, CounterSeries, DeviceProperties, DiagKind, Diagnostic, Diagnostics,
    DistributedInfo, Instant, Interner, MemoryEvents, Pending, StrId, TraceMeta,
};
use std::fmt;

const MAGIC: &[u8; 6] = b"SLPART";
/// Bumped whenever the layout changes: a page and a worker of different builds cannot mix parts.
const VERSION: u16 = 2;

/// A part buffer that cannot be read: not a part, another format version, or damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartError(pub String);

impl fmt::Display for PartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a parse part that cannot be read: {}", self.0)
    }
}

impl std::error::Error for PartError {}

fn bad<T>(what: impl Into<String>) -> Result<T, PartError> {
    Err(PartError(what.into()))
}

/// Writes a part that starts at byte `start` of the file.
pub(super) fn encode(stage: &JsonStage, start: u64) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(encoded_len(&stage.builder)));
    w.0.extend_from_slice(MAGIC);
    w.0.extend_from_slice(&VERSION.to_le_bytes());
    w.u64(start);
    w.u64(stage.json_bytes);
    w.bytes(&stage.head);
    write_splitter(&mut w, &stage.splitter);
    write_builder(&mut w, &stage.builder);
    w.0
}

/// Reads a part written by [`encode`]: its first byte offset, its stage, and its slices and args
/// as they lie in `bytes` (checked; the stage's builder holds none of them: see [`Encoded`]).
pub(super) fn decode(bytes: &[u8]) -> Result<(u64, JsonStage, Encoded<'_>), PartError> {
    if bytes.len() < 8 || &bytes[..6] != MAGIC {
        return bad("it does not start as a part does");
    }
    let version = u16::from_le_bytes([bytes[6], bytes[7]]);
    if version != VERSION {
        return bad(format!(
            "format version {version}, this build reads version {VERSION}"
        ));
    }
    let mut r = Reader { b: bytes, i: 8 };
    let start = r.u64()?;
    let json_bytes = r.u64()?;
    let head = r.bytes()?.to_vec();
    let splitter = read_splitter(&mut r)?;
    let (builder, encoded) = read_builder(&mut r)?;
    if r.i != bytes.len() {
        return bad(format!("{} bytes after its end", bytes.len() - r.i));
    }
    let stage = JsonStage {
        splitter,
        builder,
        json_bytes,
        head,
    };
    Ok((start, stage, encoded))
}

/// A part's slice columns and args store as they lie in its buffer, checked as the rest of the
/// part is. A join copies them straight into the joining builder's own columns, ids mapped
/// ([`Builder::absorb_from`], through its [`PartSlices`]), instead of into columns of their own first: in the page's
/// loading worker that copy was as large as the part (1 GB of a 5 GB trace's join).
pub(crate) struct Encoded<'a> {
    /// The args store's bytes, and each record's end (little-endian u64s).
    pub(super) args_bytes: &'a [u8],
    pub(super) args_ends: &'a [u8],
    /// The slice columns, little-endian, in [`FileSlices`]' order.
    pub(super) lane: &'a [u8],
    pub(super) start_ns: &'a [u8],
    pub(super) dur_ns: &'a [u8],
    pub(super) name: &'a [u8],
    pub(super) cat: &'a [u8],
    pub(super) args: &'a [u8],
    pub(super) external_id: &'a [u8],
    pub(super) correlation: &'a [u8],
    pub(super) input_dims: &'a [u8],
}

/// The little-endian u32s of `b` (a whole number of them).
fn u32s(b: &[u8]) -> impl ExactSizeIterator<Item = u32> + '_ {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
}

/// The little-endian i64s of `b` (a whole number of them).
fn i64s(b: &[u8]) -> impl ExactSizeIterator<Item = i64> + '_ {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
}

impl Encoded<'_> {
    /// Each args record's end.
    fn args_ends(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        i64s(self.args_ends).map(|e| e as u64)
    }
}

/// A part's slices copied from where they lie in its buffer into a builder's columns, each value
/// mapped to the builder's lanes, strings and args as it is copied; its args' ends too, and their
/// bytes adopted with the buffer later ([`Pending`]), or both copied when they do not fit one
/// block.
impl PartSlices for &Encoded<'_> {
    fn join(self, to: &mut FileSlices, args: &mut ArgStore, ids: &impl Ids) -> Option<Pending> {
        fn join<T>(to: &mut Vec<T>, from: impl ExactSizeIterator<Item = T>) {
            to.reserve_exact(from.len());
            to.extend(from);
        }
        let strs = |b| u32s(b).map(|x| ids.str(StrId(x)));
        join(&mut to.lane, u32s(self.lane).map(|l| ids.lane(l)));
        join(&mut to.start_ns, i64s(self.start_ns));
        join(&mut to.dur_ns, i64s(self.dur_ns));
        join(&mut to.name, strs(self.name));
        join(&mut to.cat, strs(self.cat));
        join(&mut to.args, u32s(self.args).map(|a| ids.args(ArgsId(a))));
        join(&mut to.external_id, i64s(self.external_id));
        join(&mut to.correlation, i64s(self.correlation));
        join(&mut to.input_dims, strs(self.input_dims));
        let pending = args.append_ends(self.args_bytes.len(), self.args_ends());
        if pending.is_none() {
            args.append_raw(self.args_bytes, self.args_ends());
        }
        pending
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn bool(&mut self, v: bool) {
        self.0.push(v as u8);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        self.bool(v.is_some());
        self.i64(v.unwrap_or(0));
    }
    fn bytes(&mut self, v: &[u8]) {
        self.len(v.len());
        self.0.extend_from_slice(v);
    }
    fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    fn opt_str(&mut self, v: Option<&str>) {
        self.bool(v.is_some());
        self.str(v.unwrap_or(""));
    }
    /// A column: its length, then each value's little-endian bytes.
    fn col<T: Copy, const N: usize>(&mut self, v: &[T], le: impl Fn(T) -> [u8; N]) {
        self.len(v.len());
        self.0.reserve(v.len() * N);
        for &x in v {
            self.0.extend_from_slice(&le(x));
        }
    }
    fn ids(&mut self, v: &[StrId]) {
        self.col(v, |x| x.0.to_le_bytes());
    }
    fn json(&mut self, v: &serde_json::Value) {
        self.str(&v.to_string());
    }
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PartError> {
        if self.b.len() - self.i < n {
            return bad(format!("it ends early (at byte {})", self.i));
        }
        let s = &self.b[self.i..self.i + n];
        self.i += n;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], PartError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, PartError> {
        Ok(self.take(1)?[0])
    }
    fn bool(&mut self) -> Result<bool, PartError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => bad(format!("{b} where a flag (0 or 1) belongs")),
        }
    }
    fn u32(&mut self) -> Result<u32, PartError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, PartError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, PartError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// A count of items of at least `min_size` bytes each, checked against the bytes left, so a
    /// damaged length cannot ask for a huge allocation.
    fn len(&mut self, min_size: usize) -> Result<usize, PartError> {
        let n = self.u64()?;
        let left = (self.b.len() - self.i) as u64;
        if n.saturating_mul(min_size.max(1) as u64) > left {
            return bad(format!("a length of {n} with {left} bytes left"));
        }
        Ok(n as usize)
    }
    fn opt_i64(&mut self) -> Result<Option<i64>, PartError> {
        let some = self.bool()?;
        let v = self.i64()?;
        Ok(some.then_some(v))
    }
    fn bytes(&mut self) -> Result<&'a [u8], PartError> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, PartError> {
        match std::str::from_utf8(self.bytes()?) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => bad("a string that is not UTF-8"),
        }
    }
    fn opt_string(&mut self) -> Result<Option<String>, PartError> {
        let some = self.bool()?;
        let s = self.string()?;
        Ok(some.then_some(s))
    }
    fn col<T, const N: usize>(&mut self, from: impl Fn([u8; N]) -> T) -> Result<Vec<T>, PartError> {
        let n = self.len(N)?;
        let raw = self.take(n * N)?;
        Ok(raw
            .chunks_exact(N)
            .map(|c| from(c.try_into().expect("chunks of N bytes")))
            .collect())
    }
    fn i64s(&mut self) -> Result<Vec<i64>, PartError> {
        self.col(i64::from_le_bytes)
    }
    fn json(&mut self) -> Result<serde_json::Value, PartError> {
        serde_json::from_str(&self.string()?).or_else(|e| bad(format!("metadata: {e}")))
    }
}

// ---- the splitter --------------------------------------------------------------------------

fn state_code(s: State) -> u8 {
    match s {
        State::Start => 0,
        State::Key => 1,
        State::InKey => 2,
        State::Colon => 3,
        State::Value => 4,
        State::InValue => 5,
        State::Events => 6,
        State::InEvent => 7,
        State::InOther => 8,
        State::Done => 9,
        State::NotJson => 10,
        State::Trailing => 11,
    }
}

const STATES: [State; 12] = [
    State::Start,
    State::Key,
    State::InKey,
    State::Colon,
    State::Value,
    State::InValue,
    State::Events,
    State::InEvent,
    State::InOther,
    State::Done,
    State::NotJson,
    State::Trailing,
];

fn form_code(f: Form) -> u8 {
    match f {
        Form::Unknown => 0,
        Form::Object => 1,
        Form::Array => 2,
    }
}

const FORMS: [Form; 3] = [Form::Unknown, Form::Object, Form::Array];

fn write_splitter(w: &mut Writer, s: &Splitter) {
    w.u8(state_code(s.state));
    w.u8(form_code(s.form));
    w.u64(s.offset);
    w.bytes(&s.carry);
    w.u64(s.cap_offset);
    w.bool(s.cap_overflow);
    let v = &s.value;
    w.u32(v.depth);
    for b in [v.in_str, v.esc, v.scalar, v.started] {
        w.bool(b);
    }
    let o = &s.object;
    w.u32(o.depth);
    w.bool(o.in_str);
    w.bool(o.esc);
    w.str(&s.key);
    w.bool(s.key_esc);
    w.bool(s.saw_events);
    w.bool(s.first_byte.is_some());
    w.u8(s.first_byte.unwrap_or(0));
    w.u8(s.bom);
}

fn read_splitter(r: &mut Reader<'_>) -> Result<Splitter, PartError> {
    let Some(&state) = STATES.get(r.u8()? as usize) else {
        return bad("an unknown splitter state");
    };
    let Some(&form) = FORMS.get(r.u8()? as usize) else {
        return bad("an unknown document form");
    };
    let offset = r.u64()?;
    let carry = r.bytes()?.to_vec();
    let cap_offset = r.u64()?;
    let cap_overflow = r.bool()?;
    let value = ValueScan {
        depth: r.u32()?,
        in_str: r.bool()?,
        esc: r.bool()?,
        scalar: r.bool()?,
        started: r.bool()?,
    };
    let object = ObjectScan {
        depth: r.u32()?,
        in_str: r.bool()?,
        esc: r.bool()?,
    };
    let key = r.string()?;
    let key_esc = r.bool()?;
    let saw_events = r.bool()?;
    let has_first = r.bool()?;
    let first = r.u8()?;
    let bom = r.u8()?;
    Ok(Splitter {
        state,
        form,
        offset,
        carry,
        cap_offset,
        cap_overflow,
        value,
        object,
        key,
        key_esc,
        saw_events,
        first_byte: has_first.then_some(first),
        bom,
    })
}

// ---- the builder ---------------------------------------------------------------------------
//
// The builder is written section by section, in the order `write_builder` lists them and
// `read_builder` reads them; each section's write and read lie side by side below, so a change of
// the layout is made to both at once (and bumps `VERSION`).

/// At least the bytes [`write_builder`] writes for `b`, closely: the buffer is made that size at
/// once. An estimate that fell short (it left out flow points, instants and memory events) made
/// the buffer double near its end, and the helper worker of a 5 GB trace's read peaked at 4.1 GB.
fn encoded_len(b: &Builder) -> usize {
    let (args_bytes, _) = b.args.flat_bytes();
    let strings: usize = b.strings.strings().map(|s| s.len() + 8).sum();
    let lanes: usize = b
        .lanes
        .iter()
        .map(|l| 64 + l.tid_label.as_ref().map_or(0, String::len) + l.open.len() * 44)
        .sum();
    let counters: usize = b
        .counters
        .iter()
        .map(|c| 64 + c.name.len() + c.series.len() + c.ts_ns.len() * 16)
        .sum();
    let m = &b.memory;
    64 * 1024
        + strings
        + args_bytes
        + b.args.len() * 8
        + lanes
        + b.slices.len() * 52
        + b.flow_points.len() * 34
        + b.instants.len() * 24
        + counters
        + m.ts_ns.len() * 43
        + b.memory_threads.len() * 16
        + (b.synthetic_ids.len() + b.procs.len() + b.threads.len()) * 96
        + b.diagnostics
            .items
            .iter()
            .map(|d| 32 + d.detail.len())
            .sum::<usize>()
}

fn write_builder(w: &mut Writer, b: &Builder) {
    write_strings(w, &b.strings);
    write_args(w, &b.args);
    write_lanes(w, &b.lanes);
    write_slices(w, &b.slices);
    write_processes(w, b);
    write_flow_points(w, &b.flow_points);
    write_instants(w, &b.instants);
    write_counters(w, &b.counters);
    write_memory(w, &b.memory, &b.memory_threads);
    w.bool(b.saw_begin_end);
    write_meta(w, &b.meta);
    write_diagnostics(w, &b.diagnostics);
    write_counts(w, b);
}

/// [`write_builder`]'s sections read back, each checked as it is read, then what spans sections:
/// every time within the parser's bounds, every count in range.
fn read_builder<'a>(r: &mut Reader<'a>) -> Result<(Builder, Encoded<'a>), PartError> {
    let mut b = Builder::new();
    b.strings = read_strings(r)?;
    let (args_bytes, args_ends) = read_args(r)?;
    let limits = Limits {
        strings: b.strings.len() as u32,
        args: u32::try_from(args_ends.len() / 8).or_else(|_| bad("too many args records"))?,
        lanes: 0,
    };
    read_lanes(r, &limits, &mut b)?;
    let limits = Limits {
        lanes: b.lanes.len() as u32,
        ..limits
    };
    let encoded = read_slices(r, &limits, args_bytes, args_ends)?;
    read_processes(r, &mut b)?;
    b.flow_points = read_flow_points(r, &limits)?;
    b.instants = read_instants(r, &limits)?;
    read_counters(r, &mut b)?;
    (b.memory, b.memory_threads) = read_memory(r)?;
    b.saw_begin_end = r.bool()?;
    b.meta = read_meta(r)?;
    b.diagnostics = read_diagnostics(r)?;
    read_counts(r, &limits, &mut b)?;

    check_times(&b, &encoded)?;
    let counts = [b.events_total, b.with_phase, b.non_objects];
    let diags = b.diagnostics.items.iter().map(|d| &d.count);
    for &n in counts.iter().chain(diags).chain(&b.cat_counts) {
        check_count(n)?;
    }
    Ok((b, encoded))
}

// -- the string table: a count, then each string; read into an interner, which refuses repeats.

fn write_strings(w: &mut Writer, strings: &Interner) {
    w.len(strings.len());
    for s in strings.strings() {
        w.str(s);
    }
}

fn read_strings(r: &mut Reader<'_>) -> Result<Interner, PartError> {
    let n = r.len(8)?;
    let mut strings = Vec::with_capacity(n);
    for _ in 0..n {
        strings.push(r.string()?);
    }
    match Interner::from_strings(strings) {
        Some(interner) => Ok(interner),
        None => bad("a string table that repeats a string or does not start empty"),
    }
}

// -- the args store: its bytes, then each record's end; the ends rising and within the bytes.

fn write_args(w: &mut Writer, args: &ArgStore) {
    let (len, blocks) = args.flat_bytes();
    w.len(len);
    blocks.for_each(|block| w.0.extend_from_slice(block));
    let ends = args.flat_ends();
    w.len(ends.len());
    ends.for_each(|e| w.0.extend_from_slice(&e.to_le_bytes()));
}

/// The args' bytes and their records' ends (little-endian u64s), as they lie in the buffer.
fn read_args<'a>(r: &mut Reader<'a>) -> Result<(&'a [u8], &'a [u8]), PartError> {
    let args_bytes = r.bytes()?;
    let n = r.len(8)?;
    let args_ends = r.take(n * 8)?;
    let ends = || i64s(args_ends).map(|e| e as u64);
    // Rising, within the bytes: each record can be read.
    let rising = ends().zip(ends().skip(1)).all(|(a, b)| a <= b);
    if !rising || ends().last().is_some_and(|e| e > args_bytes.len() as u64) {
        return bad("args records out of order");
    }
    Ok((args_bytes, args_ends))
}

// -- the lanes, each with its open `B`s; the lane map rebuilt, each (pid, tid) once.

fn write_lanes(w: &mut Writer, lanes: &[LaneBuilder]) {
    w.len(lanes.len());
    for l in lanes {
        w.i64(l.pid);
        w.i64(l.tid);
        w.opt_str(l.tid_label.as_deref());
        w.len(l.open.len());
        for o in &l.open {
            w.i64(o.ts);
            w.u32(o.name.0);
            w.u32(o.cat.0);
            w.u32(o.args.0);
            w.i64(o.external_id);
            w.i64(o.correlation);
            w.u32(o.input_dims.0);
        }
        w.bool(l.gpu);
        w.bool(l.cpu);
    }
}

fn read_lanes(r: &mut Reader<'_>, limits: &Limits, b: &mut Builder) -> Result<(), PartError> {
    let n = r.len(16)?;
    for l in 0..n {
        let pid = r.i64()?;
        let tid = r.i64()?;
        let tid_label = r.opt_string()?;
        let k = r.len(40)?;
        let mut open = Vec::with_capacity(k);
        for _ in 0..k {
            let o = OpenBegin {
                ts: r.i64()?,
                name: StrId(r.u32()?),
                cat: StrId(r.u32()?),
                args: ArgsId(r.u32()?),
                external_id: r.i64()?,
                correlation: r.i64()?,
                input_dims: StrId(r.u32()?),
            };
            limits.str(&[o.name, o.cat, o.input_dims])?;
            limits.args(&[o.args])?;
            open.push(o);
        }
        let gpu = r.bool()?;
        let cpu = r.bool()?;
        if b.lane_map.insert((pid, tid), l as u32).is_some() {
            return bad(format!("lane pid {pid} tid {tid} twice"));
        }
        b.lanes.push(LaneBuilder {
            pid,
            tid,
            tid_label,
            open,
            gpu,
            cpu,
        });
    }
    Ok(())
}

// -- the slice columns, whole, in `FileSlices`' order; read where they lie ([`Encoded`]).

/// Each slice column's value size, in `FileSlices`' order (as [`write_slices`] writes them).
const SLICE_SIZES: [usize; 9] = [4, 8, 8, 4, 4, 4, 8, 8, 4];

fn write_slices(w: &mut Writer, s: &FileSlices) {
    w.col(&s.lane, u32::to_le_bytes);
    w.col(&s.start_ns, i64::to_le_bytes);
    w.col(&s.dur_ns, i64::to_le_bytes);
    w.ids(&s.name);
    w.ids(&s.cat);
    w.col(&s.args, |a| a.0.to_le_bytes());
    w.col(&s.external_id, i64::to_le_bytes);
    w.col(&s.correlation, i64::to_le_bytes);
    w.ids(&s.input_dims);
}

/// The slice columns as they lie in the buffer, of one length each, every lane, string and args
/// id checked against its table; with the args store read before them, the part's [`Encoded`].
fn read_slices<'a>(
    r: &mut Reader<'a>,
    limits: &Limits,
    args_bytes: &'a [u8],
    args_ends: &'a [u8],
) -> Result<Encoded<'a>, PartError> {
    let mut s: [&'a [u8]; 9] = [&[]; 9];
    for (column, size) in s.iter_mut().zip(SLICE_SIZES) {
        let n = r.len(size)?;
        *column = r.take(n * size)?;
    }
    let n = s[0].len() / 4;
    if s.iter()
        .zip(SLICE_SIZES)
        .any(|(c, size)| c.len() != n * size)
    {
        return bad("slice columns of different lengths");
    }
    let [lane, start_ns, dur_ns, name, cat, args, external_id, correlation, input_dims] = s;
    if let Some(l) = u32s(lane).find(|&l| l >= limits.lanes) {
        limits.lane(l)?;
    }
    for ids in [name, cat, input_dims] {
        if let Some(x) = u32s(ids).find(|&x| x >= limits.strings) {
            limits.str(&[StrId(x)])?;
        }
    }
    if let Some(a) = u32s(args).find(|&a| a != ArgsId::NONE.0 && a >= limits.args) {
        limits.args(&[ArgsId(a)])?;
    }
    Ok(Encoded {
        args_bytes,
        args_ends,
        lane,
        start_ns,
        dur_ns,
        name,
        cat,
        args,
        external_id,
        correlation,
        input_dims,
    })
}

// -- the processes: synthetic ids of string pids and tids, process and thread metadata. Hash
// maps are written in a fixed order, so the same part always gives the same bytes.

fn write_processes(w: &mut Writer, b: &Builder) {
    let mut synthetic: Vec<(&String, &i64)> = b.synthetic_ids.iter().collect();
    synthetic.sort_by_key(|s| std::cmp::Reverse(*s.1));
    w.len(synthetic.len());
    for (label, id) in synthetic {
        w.str(label);
        w.i64(*id);
    }
    let mut procs: Vec<(&i64, &ProcMeta)> = b.procs.iter().collect();
    procs.sort_by_key(|p| *p.0);
    w.len(procs.len());
    for (pid, p) in procs {
        w.i64(*pid);
        w.opt_str(p.pid_label.as_deref());
        w.opt_str(p.name.as_deref());
        w.opt_str(p.labels.as_deref());
        w.opt_i64(p.sort_index);
    }
    let mut threads: Vec<_> = b.threads.iter().collect();
    threads.sort_by_key(|t| *t.0);
    w.len(threads.len());
    for ((pid, tid), (name, sort)) in threads {
        w.i64(*pid);
        w.i64(*tid);
        w.opt_str(name.as_deref());
        w.opt_i64(*sort);
    }
}

fn read_processes(r: &mut Reader<'_>, b: &mut Builder) -> Result<(), PartError> {
    let n = r.len(16)?;
    for k in 0..n {
        let label = r.string()?;
        let id = r.i64()?;
        // Synthetic ids are -1, -2, ... in first-seen order (`Builder::id_of`).
        if id != -1 - k as i64 || b.synthetic_ids.insert(label, id).is_some() {
            return bad("synthetic ids out of order");
        }
    }
    let n = r.len(8)?;
    for _ in 0..n {
        let pid = r.i64()?;
        let p = ProcMeta {
            pid_label: r.opt_string()?,
            name: r.opt_string()?,
            labels: r.opt_string()?,
            sort_index: r.opt_i64()?,
        };
        if b.procs.insert(pid, p).is_some() {
            return bad(format!("process {pid} twice"));
        }
    }
    let n = r.len(16)?;
    for _ in 0..n {
        let key = (r.i64()?, r.i64()?);
        let value = (r.opt_string()?, r.opt_i64()?);
        if b.threads.insert(key, value).is_some() {
            return bad("a thread twice");
        }
    }
    Ok(())
}

// -- the flow points, field by field.

fn write_flow_points(w: &mut Writer, flow_points: &[FlowPoint]) {
    w.len(flow_points.len());
    for f in flow_points {
        w.u32(f.cat.0);
        w.i64(f.id);
        w.u8(f.phase);
        w.i64(f.ts);
        w.u32(f.lane);
        w.bool(f.enclosing);
        w.u64(f.offset);
    }
}

fn read_flow_points(r: &mut Reader<'_>, limits: &Limits) -> Result<Vec<FlowPoint>, PartError> {
    let n = r.len(34)?;
    let mut flow_points = Vec::with_capacity(n);
    for _ in 0..n {
        let f = FlowPoint {
            cat: StrId(r.u32()?),
            id: r.i64()?,
            phase: r.u8()?,
            ts: r.i64()?,
            lane: r.u32()?,
            enclosing: r.bool()?,
            offset: r.u64()?,
        };
        limits.str(&[f.cat])?;
        limits.lane(f.lane)?;
        if f.phase > 2 {
            return bad("a flow phase out of range");
        }
        flow_points.push(f);
    }
    Ok(flow_points)
}

// -- the instants, field by field.

fn write_instants(w: &mut Writer, instants: &[Instant]) {
    w.len(instants.len());
    for i in instants {
        w.i64(i.ts_ns);
        w.u32(i.lane);
        w.u32(i.name.0);
        w.u32(i.cat.0);
        w.u32(i.args.0);
    }
}

fn read_instants(r: &mut Reader<'_>, limits: &Limits) -> Result<Vec<Instant>, PartError> {
    let n = r.len(24)?;
    let mut instants = Vec::with_capacity(n);
    for _ in 0..n {
        let i = Instant {
            ts_ns: r.i64()?,
            lane: r.u32()?,
            name: StrId(r.u32()?),
            cat: StrId(r.u32()?),
            args: ArgsId(r.u32()?),
        };
        limits.str(&[i.name, i.cat])?;
        limits.args(&[i.args])?;
        limits.lane(i.lane)?;
        instants.push(i);
    }
    Ok(instants)
}

// -- the counter series, each with its columns whole; the counter map rebuilt, each series once.

fn write_counters(w: &mut Writer, counters: &[CounterSeries]) {
    w.len(counters.len());
    for c in counters {
        w.i64(c.pid);
        w.str(&c.name);
        w.str(&c.series);
        w.col(&c.ts_ns, i64::to_le_bytes);
        w.col(&c.values, f64::to_le_bytes);
    }
}

fn read_counters(r: &mut Reader<'_>, b: &mut Builder) -> Result<(), PartError> {
    let n = r.len(40)?;
    for _ in 0..n {
        let c = CounterSeries {
            pid: r.i64()?,
            name: r.string()?,
            series: r.string()?,
            ts_ns: r.i64s()?,
            values: r.col(f64::from_le_bytes)?,
        };
        if c.ts_ns.len() != c.values.len() {
            return bad("a counter's columns of different lengths");
        }
        let key = (c.pid, c.name.clone(), c.series.clone());
        if b.counter_map.insert(key, b.counters.len()).is_some() {
            return bad("a counter series twice");
        }
        b.counters.push(c);
    }
    Ok(())
}

// -- the memory events' columns whole (their lanes are found at the finish, so not written), then
// each event's thread; all of one length.

fn write_memory(w: &mut Writer, m: &MemoryEvents, memory_threads: &[(i64, i64)]) {
    w.col(&m.ts_ns, i64::to_le_bytes);
    w.col(&m.device_type, i8::to_le_bytes);
    w.col(&m.device_id, i16::to_le_bytes);
    w.col(&m.bytes, i64::to_le_bytes);
    w.col(&m.total_allocated, i64::to_le_bytes);
    w.col(&m.total_reserved, i64::to_le_bytes);
    w.col(&m.addr, i64::to_le_bytes);
    w.len(memory_threads.len());
    for &(pid, tid) in memory_threads {
        w.i64(pid);
        w.i64(tid);
    }
}

/// The memory events and each one's thread.
type MemoryPart = (MemoryEvents, Vec<(i64, i64)>);

fn read_memory(r: &mut Reader<'_>) -> Result<MemoryPart, PartError> {
    let m = MemoryEvents {
        ts_ns: r.i64s()?,
        lane: Vec::new(),
        device_type: r.col(i8::from_le_bytes)?,
        device_id: r.col(i16::from_le_bytes)?,
        bytes: r.i64s()?,
        total_allocated: r.i64s()?,
        total_reserved: r.i64s()?,
        addr: r.i64s()?,
    };
    let n = r.len(16)?;
    let mut memory_threads = Vec::with_capacity(n);
    for _ in 0..n {
        memory_threads.push((r.i64()?, r.i64()?));
    }
    let k = m.ts_ns.len();
    let same = [
        m.device_type.len(),
        m.device_id.len(),
        m.bytes.len(),
        m.total_allocated.len(),
        m.total_reserved.len(),
        m.addr.len(),
        memory_threads.len(),
    ]
    .iter()
    .all(|&x| x == k);
    if !same {
        return bad("memory columns of different lengths");
    }
    Ok((m, memory_threads))
}

// -- the trace's metadata, field by field (JSON values as text).

fn write_meta(w: &mut Writer, m: &TraceMeta) {
    w.str(&m.schema);
    w.i64(m.origin_ns);
    w.opt_i64(m.base_time_ns);
    w.bool(m.schema_version.is_some());
    if let Some(v) = &m.schema_version {
        w.json(v);
    }
    w.len(m.device_properties.len());
    for d in &m.device_properties {
        w.i64(d.id);
        w.str(&d.name);
        w.bool(d.total_global_mem.is_some());
        w.u64(d.total_global_mem.unwrap_or(0));
        w.opt_i64(d.compute_major);
        w.opt_i64(d.compute_minor);
        w.opt_i64(d.num_sms);
    }
    w.bool(m.distributed.is_some());
    if let Some(d) = &m.distributed {
        w.opt_str(d.backend.as_deref());
        w.i64(d.rank);
        w.opt_i64(d.world_size);
    }
    w.bool(m.rocm);
    w.len(m.other.len());
    for (k, v) in &m.other {
        w.str(k);
        w.json(v);
    }
}

fn read_meta(r: &mut Reader<'_>) -> Result<TraceMeta, PartError> {
    let schema = r.string()?;
    let origin_ns = r.i64()?;
    let base_time_ns = r.opt_i64()?;
    let schema_version = if r.bool()? { Some(r.json()?) } else { None };
    let n = r.len(8)?;
    let mut device_properties = Vec::with_capacity(n);
    for _ in 0..n {
        let id = r.i64()?;
        let name = r.string()?;
        let has_mem = r.bool()?;
        let mem = r.u64()?;
        device_properties.push(DeviceProperties {
            id,
            name,
            total_global_mem: has_mem.then_some(mem),
            compute_major: r.opt_i64()?,
            compute_minor: r.opt_i64()?,
            num_sms: r.opt_i64()?,
        });
    }
    let distributed = if r.bool()? {
        Some(DistributedInfo {
            backend: r.opt_string()?,
            rank: r.i64()?,
            world_size: r.opt_i64()?,
        })
    } else {
        None
    };
    let rocm = r.bool()?;
    let n = r.len(16)?;
    let mut other = Vec::with_capacity(n);
    for _ in 0..n {
        other.push((r.string()?, r.json()?));
    }
    Ok(TraceMeta {
        schema,
        origin_ns,
        base_time_ns,
        schema_version,
        device_properties,
        distributed,
        rocm,
        other,
    })
}

// -- the diagnostics, each kind as its code (an unknown code is damage).

fn diag_code(k: DiagKind) -> u8 {
    match k {
        DiagKind::Truncated => 0,
        DiagKind::UnreadableEvent => 1,
        DiagKind::RepairedEvent => 2,
        DiagKind::NotAnObject => 3,
        DiagKind::MissingField => 4,
        DiagKind::UnmatchedEnd => 5,
        DiagKind::UnclosedBegin => 6,
        DiagKind::OverlappingSlice => 7,
        DiagKind::UnboundFlow => 8,
        DiagKind::FlowWithoutStart => 9,
        DiagKind::IgnoredPhase => 10,
        DiagKind::NegativeDuration => 11,
        DiagKind::TimeOutOfRange => 12,
        DiagKind::LargeMetadata => 13,
        DiagKind::TrailingData => 14,
        DiagKind::DuplicateKey => 15,
        DiagKind::LongName => 16,
        DiagKind::DeepNesting => 17,
    }
}

const DIAGS: [DiagKind; 18] = [
    DiagKind::Truncated,
    DiagKind::UnreadableEvent,
    DiagKind::RepairedEvent,
    DiagKind::NotAnObject,
    DiagKind::MissingField,
    DiagKind::UnmatchedEnd,
    DiagKind::UnclosedBegin,
    DiagKind::OverlappingSlice,
    DiagKind::UnboundFlow,
    DiagKind::FlowWithoutStart,
    DiagKind::IgnoredPhase,
    DiagKind::NegativeDuration,
    DiagKind::TimeOutOfRange,
    DiagKind::LargeMetadata,
    DiagKind::TrailingData,
    DiagKind::DuplicateKey,
    DiagKind::LongName,
    DiagKind::DeepNesting,
];

fn write_diagnostics(w: &mut Writer, d: &Diagnostics) {
    w.len(d.items.len());
    for d in &d.items {
        w.u8(diag_code(d.kind));
        w.u64(d.count);
        w.u64(d.first_offset);
        w.str(&d.detail);
    }
}

fn read_diagnostics(r: &mut Reader<'_>) -> Result<Diagnostics, PartError> {
    let n = r.len(25)?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let Some(&kind) = DIAGS.get(r.u8()? as usize) else {
            return bad("an unknown diagnostic kind");
        };
        items.push(Diagnostic {
            kind,
            count: r.u64()?,
            first_offset: r.u64()?,
            detail: r.string()?,
        });
    }
    Ok(Diagnostics { items })
}

// -- the counts: events, events with a phase, non-objects, events per phase (sorted, each phase
// once) and per category, the time span, and the top-level keys.

fn write_counts(w: &mut Writer, b: &Builder) {
    w.u64(b.events_total);
    w.u64(b.with_phase);
    w.u64(b.non_objects);
    let mut phases = b.phases.counts();
    phases.sort();
    w.len(phases.len());
    for (ph, n) in phases {
        w.str(&ph);
        w.u64(n);
    }
    w.col(&b.cat_counts, u64::to_le_bytes);
    w.i64(b.min_ts);
    w.i64(b.max_ts);
    w.len(b.top_keys.len());
    for k in &b.top_keys {
        w.str(k);
    }
}

fn read_counts(r: &mut Reader<'_>, limits: &Limits, b: &mut Builder) -> Result<(), PartError> {
    b.events_total = r.u64()?;
    b.with_phase = r.u64()?;
    b.non_objects = r.u64()?;
    let n = r.len(16)?;
    let mut phases = Vec::with_capacity(n);
    for _ in 0..n {
        let ph = r.string()?;
        let count = r.u64()?;
        // Checked before they are added up: in range, and each phase once (as written).
        check_count(count)?;
        phases.push((ph, count));
    }
    phases.sort_unstable();
    if phases.windows(2).any(|w| w[0].0 == w[1].0) {
        return bad("a phase twice");
    }
    b.phases = PhaseCounts::default();
    for (ph, count) in phases {
        b.phases.add_n(ph, count);
    }
    b.cat_counts = r.col(u64::from_le_bytes)?;
    if b.cat_counts.len() > limits.strings as usize {
        return bad("category counts for more strings than the table holds");
    }
    b.min_ts = r.i64()?;
    b.max_ts = r.i64()?;
    let min_ok = b.min_ts == i64::MAX || (MIN_TS_NS..=MAX_TS_NS).contains(&b.min_ts);
    let max_ok = b.max_ts == i64::MIN || (MIN_TS_NS..=MAX_TS_NS + MAX_DUR_NS).contains(&b.max_ts);
    if !min_ok || !max_ok {
        return bad("the time span out of range");
    }
    let n = r.len(8)?;
    for _ in 0..n {
        b.top_keys.push(r.string()?);
    }
    Ok(())
}

// ---- checks across sections ----------------------------------------------------------------

/// Checks ids against their tables once everything is read.
struct Limits {
    strings: u32,
    args: u32,
    lanes: u32,
}

impl Limits {
    fn str(&self, ids: &[StrId]) -> Result<(), PartError> {
        match ids.iter().find(|x| x.0 >= self.strings) {
            Some(x) => bad(format!("string id {} of {}", x.0, self.strings)),
            None => Ok(()),
        }
    }
    fn args(&self, ids: &[ArgsId]) -> Result<(), PartError> {
        match ids.iter().find(|a| **a != ArgsId::NONE && a.0 >= self.args) {
            Some(a) => bad(format!("args id {} of {}", a.0, self.args)),
            None => Ok(()),
        }
    }
    fn lane(&self, lane: u32) -> Result<(), PartError> {
        if lane >= self.lanes {
            return bad(format!("lane {lane} of {}", self.lanes));
        }
        Ok(())
    }
}

/// Counts above this are damage: no file holds 2^48 events, and sums of parts cannot overflow.
const MAX_COUNT: u64 = 1 << 48;

fn check_count(n: u64) -> Result<(), PartError> {
    if n > MAX_COUNT {
        return bad(format!("a count out of range ({n})"));
    }
    Ok(())
}

/// Every time as the parser keeps them (see `build.rs`): within its bounds and not before the
/// part's earliest time, slice ends within what an `X` event can reach, so no later difference
/// or sum can overflow.
fn check_times(b: &Builder, e: &Encoded<'_>) -> Result<(), PartError> {
    let lo = b.min_ts.max(MIN_TS_NS);
    let bad_ts = |t: &i64| !(lo..=MAX_TS_NS).contains(t);
    let mut any = false;
    any |= i64s(e.start_ns).any(|t| bad_ts(&t));
    any |= i64s(e.dur_ns)
        .zip(i64s(e.start_ns))
        .any(|(d, t)| !(0..=MAX_TS_NS - MIN_TS_NS).contains(&d) || t + d > MAX_TS_NS + MAX_DUR_NS);
    any |= b.lanes.iter().any(|l| l.open.iter().any(|o| bad_ts(&o.ts)));
    any |= b.flow_points.iter().any(|f| bad_ts(&f.ts));
    any |= b.instants.iter().any(|i| bad_ts(&i.ts_ns));
    any |= b.counters.iter().any(|c| c.ts_ns.iter().any(bad_ts));
    any |= b.memory.ts_ns.iter().any(bad_ts);
    if any {
        return bad("a time out of range");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buffer is made its final size at once: the estimate is never short, and never far over.
    #[test]
    fn the_encoded_length_is_known_before_writing() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = vec![fixtures.join("parse/keys_after_events.json")];
        let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("www/samples/tracelens_h100_bert_small_stack_mem.json.gz");
        files.push(sample);
        for f in files {
            let raw = std::fs::read(&f).unwrap();
            let json = if raw.starts_with(&[0x1f, 0x8b]) {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut out)
                    .unwrap();
                out
            } else {
                raw
            };
            let mut stage = JsonStage::new();
            stage.feed(&json);
            let (hint, len) = (encoded_len(&stage.builder), encode(&stage, 0).len());
            assert!(hint >= len, "{f:?}: {hint} < {len}");
            assert!(
                hint <= len + len / 10 + (64 << 10),
                "{f:?}: {hint} for {len}"
            );
        }
    }

    #[test]
    fn every_enum_code_reads_back_as_itself() {
        for (i, s) in STATES.iter().enumerate() {
            assert_eq!(state_code(*s) as usize, i);
        }
        for (i, f) in FORMS.iter().enumerate() {
            assert_eq!(form_code(*f) as usize, i);
        }
        for (i, d) in DIAGS.iter().enumerate() {
            assert_eq!(diag_code(*d) as usize, i);
        }
    }

    #[test]
    fn a_phase_count_out_of_range_is_damage() {
        let part = |extra: u64| {
            let mut stage = JsonStage::new();
            stage.feed(br#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},"#);
            stage.builder.phases.add_n("Q".to_string(), extra);
            encode(&stage, 0)
        };
        assert!(decode(&part(MAX_COUNT)).is_ok());
        let e = decode(&part(MAX_COUNT + 1)).err().expect("refused");
        assert!(e.to_string().contains("a count out of range"), "{e}");
    }
}
