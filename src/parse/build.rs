//! Turns events, one at a time, into the columnar [`Trace`].
//!
//! While parsing, slices are appended to their lane in file order; `finish` sorts each lane, computes
//! depths, rebases time to the trace start, orders lanes, and binds flows to slices. Nothing here
//! holds more than one event's text at a time.

use super::direct::read_event_with;
use super::event::{
    format_dims, parse_f64, parse_int, parse_us_to_ns, raw_str, repair, Args, Ev, RawEvent, Slots,
};
use super::fields::{read_object, Field};
use super::rows::assign_rows;
use super::split::Sink;
use super::Reader;
use crate::cores::{both, two_cores};
use crate::model::category::{self, Kind};
use crate::model::*;
use crate::room::{make_room, room};
use rustc_hash::FxHashMap;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A `B` waiting for its `E`.
pub(super) struct OpenBegin {
    pub(super) ts: i64,
    pub(super) name: StrId,
    pub(super) cat: StrId,
    pub(super) args: ArgsId,
    pub(super) external_id: i64,
    pub(super) correlation: i64,
    pub(super) input_dims: StrId,
}

pub(super) struct LaneBuilder {
    pub(super) pid: i64,
    pub(super) tid: i64,
    pub(super) tid_label: Option<String>,
    pub(super) open: Vec<OpenBegin>,
    /// A GPU category (kernel, memcpy, ...) was seen on this lane.
    pub(super) gpu: bool,
    /// A slice of another category was seen: a thread, even in a process labelled GPU (Kineto
    /// has put Python threads with tid 0 under pid 0, the GPU 0 process).
    pub(super) cpu: bool,
}

#[derive(Default)]
pub(super) struct ProcMeta {
    pub(super) pid_label: Option<String>,
    pub(super) name: Option<String>,
    pub(super) labels: Option<String>,
    pub(super) sort_index: Option<i64>,
}

pub(super) struct FlowPoint {
    pub(super) cat: StrId,
    pub(super) id: i64,
    /// 0 = `s`, 1 = `t`, 2 = `f`: the order of a flow's points at one timestamp.
    pub(super) phase: u8,
    pub(super) ts: i64,
    pub(super) lane: u32,
    /// Bind to the enclosing slice (`s`, `t`, and `f` with `bp: "e"`), else to the next slice.
    pub(super) enclosing: bool,
    pub(super) offset: u64,
}

/// Events per `ph` value. Nearly every event's phase is one ASCII byte (`X`, `i`, `f`, ...):
/// those are counted in an array, without hashing a string per event; any other text in a map.
pub(super) struct PhaseCounts {
    byte: [u64; 128],
    other: FxHashMap<String, u64>,
}

impl Default for PhaseCounts {
    fn default() -> Self {
        PhaseCounts {
            byte: [0; 128],
            other: FxHashMap::default(),
        }
    }
}

impl PhaseCounts {
    pub(super) fn add(&mut self, ph: &str) {
        match ph.as_bytes() {
            &[b] if b.is_ascii() => self.byte[b as usize] += 1,
            _ => match self.other.get_mut(ph) {
                Some(n) => *n += 1,
                None => {
                    self.other.insert(ph.to_string(), 1);
                }
            },
        }
    }

    pub(super) fn add_n(&mut self, ph: String, n: u64) {
        match ph.as_bytes() {
            &[b] if b.is_ascii() => self.byte[b as usize] += n,
            _ => *self.other.entry(ph).or_default() += n,
        }
    }

    /// Every phase seen with its count, in no order.
    pub(super) fn counts(&self) -> Vec<(String, u64)> {
        let bytes = (0u8..128)
            .filter(|&b| self.byte[b as usize] > 0)
            .map(|b| ((b as char).to_string(), self.byte[b as usize]));
        bytes
            .chain(self.other.iter().map(|(k, &n)| (k.clone(), n)))
            .collect()
    }
}

/// Every slice read so far, in file order, with its lane: one set of columns for all lanes.
///
/// One set grows as one, so it can be reserved once from the input's size ([`Builder::expect`])
/// instead of doubling: per-lane columns that doubled as they grew (each step holding the old and
/// the new block, and a wasm memory never shrinks) left about twice the model's bytes in the
/// page's memory at the end of a read. `finish` gathers each lane's columns, sorted, one column
/// at a time, dropping each file-order column as soon as it is gathered.
#[derive(Default)]
pub(super) struct FileSlices {
    pub(super) lane: Vec<u32>,
    pub(super) start_ns: Vec<i64>,
    pub(super) dur_ns: Vec<i64>,
    pub(super) name: Vec<StrId>,
    pub(super) cat: Vec<StrId>,
    pub(super) args: Vec<ArgsId>,
    pub(super) external_id: Vec<i64>,
    pub(super) correlation: Vec<i64>,
    pub(super) input_dims: Vec<StrId>,
}

impl FileSlices {
    pub(super) fn len(&self) -> usize {
        self.lane.len()
    }

    fn push(&mut self, lane: u32, ts: i64, dur: i64, e: &OpenBegin) {
        self.lane.push(lane);
        self.start_ns.push(ts);
        self.dur_ns.push(dur);
        self.name.push(e.name);
        self.cat.push(e.cat);
        self.args.push(e.args);
        self.external_id.push(e.external_id);
        self.correlation.push(e.correlation);
        self.input_dims.push(e.input_dims);
    }

    /// Room for exactly `n` slices in all, in every column.
    fn reserve_total(&mut self, n: usize) {
        let more = n.saturating_sub(self.len());
        self.lane.reserve_exact(more);
        self.start_ns.reserve_exact(more);
        self.dur_ns.reserve_exact(more);
        self.name.reserve_exact(more);
        self.cat.reserve_exact(more);
        self.args.reserve_exact(more);
        self.external_id.reserve_exact(more);
        self.correlation.reserve_exact(more);
        self.input_dims.reserve_exact(more);
    }

    /// Moves `o`'s slices to the end of these, freeing each of its columns once it is copied, so
    /// that joining two parts holds one column twice at a time rather than every column.
    fn append(&mut self, o: FileSlices) {
        fn join<T: Copy>(to: &mut Vec<T>, from: Vec<T>) {
            to.reserve_exact(from.len());
            to.extend_from_slice(&from);
        }
        join(&mut self.lane, o.lane);
        join(&mut self.start_ns, o.start_ns);
        join(&mut self.dur_ns, o.dur_ns);
        join(&mut self.name, o.name);
        join(&mut self.cat, o.cat);
        join(&mut self.args, o.args);
        join(&mut self.external_id, o.external_id);
        join(&mut self.correlation, o.correlation);
        join(&mut self.input_dims, o.input_dims);
    }
}

/// How a part's ids become those of the builder that takes it in: its lanes, strings and args.
pub(crate) trait Ids: Sync {
    fn lane(&self, lane: u32) -> u32;
    fn str(&self, id: StrId) -> StrId;
    fn args(&self, id: ArgsId) -> ArgsId;
}

/// The ids of a part that are already the builder's (a part taken in by an empty builder).
struct Same;

impl Ids for Same {
    fn lane(&self, lane: u32) -> u32 {
        lane
    }
    fn str(&self, id: StrId) -> StrId {
        id
    }
    fn args(&self, id: ArgsId) -> ArgsId {
        id
    }
}

/// A part's ids mapped onto the builder that takes it in ([`Builder::absorb_from`]).
struct Remap<'a> {
    lanes: &'a [u32],
    strings: &'a [StrId],
    /// The builder's args before the part's.
    args_base: u32,
}

impl Ids for Remap<'_> {
    fn lane(&self, lane: u32) -> u32 {
        self.lanes[lane as usize]
    }
    fn str(&self, id: StrId) -> StrId {
        self.strings[id.0 as usize]
    }
    fn args(&self, id: ArgsId) -> ArgsId {
        if id == ArgsId::NONE {
            id
        } else {
            ArgsId(id.0 + self.args_base)
        }
    }
}

/// A part's slices and args where they lie: in the builder that read them ([`Owned`]), or in
/// the buffer a part was written to (implemented where that buffer's format is, which this file
/// does not know).
pub(crate) trait PartSlices {
    /// Appends the slices to `slices` and the args to `args`, with their ids mapped by `ids`;
    /// args whose bytes are adopted later, with the buffer they lie in, are [`Pending`].
    fn join(self, slices: &mut FileSlices, args: &mut ArgStore, ids: &impl Ids) -> Option<Pending>;
}

/// The slices and args of a builder that read a part itself.
struct Owned {
    slices: FileSlices,
    args: ArgStore,
}

impl PartSlices for Owned {
    fn join(self, slices: &mut FileSlices, args: &mut ArgStore, ids: &impl Ids) -> Option<Pending> {
        // The args and the slices are copied at once when large (1 GB scaled trace, 2 parts: the
        // args 52-56 ms, the slices 43-44 ms, most of it the first touch of the pages copied to).
        let Owned {
            slices: mut s,
            args: part_args,
        } = self;
        both(
            s.len() >= TWO_THREADS_FROM,
            || args.append(part_args),
            || {
                s.lane.iter_mut().for_each(|x| *x = ids.lane(*x));
                s.name.iter_mut().for_each(|x| *x = ids.str(*x));
                s.cat.iter_mut().for_each(|x| *x = ids.str(*x));
                s.input_dims.iter_mut().for_each(|x| *x = ids.str(*x));
                s.args.iter_mut().for_each(|x| *x = ids.args(*x));
                slices.append(s);
            },
        );
        None
    }
}

/// An event's args as its phase reads them: the text kept in the store, the typed fields, and the
/// members as spans of `members_text` (the args' own text, or the whole event's).
struct EventArgs<'a> {
    text: &'a str,
    args: Args<'a>,
    members_text: &'a str,
    members: &'a [Field],
}

pub(crate) struct Builder {
    pub(super) strings: Interner,
    pub(super) args: ArgStore,
    pub(super) lanes: Vec<LaneBuilder>,
    pub(super) slices: FileSlices,
    /// The byte range of the input this builder reads (offsets as events carry them), when its
    /// size is known: the columns and the args store are reserved from it (see [`room`]).
    pub(super) expect: Option<(u64, u64)>,
    pub(super) lane_map: FxHashMap<(i64, i64), u32>,
    /// String pids/tids mapped to synthetic negative numbers.
    pub(super) synthetic_ids: FxHashMap<String, i64>,
    pub(super) procs: FxHashMap<i64, ProcMeta>,
    pub(super) threads: FxHashMap<(i64, i64), (Option<String>, Option<i64>)>,
    pub(super) flow_points: Vec<FlowPoint>,
    pub(super) instants: Vec<Instant>,
    pub(super) counters: Vec<CounterSeries>,
    pub(super) counter_map: FxHashMap<(i64, String, String), usize>,
    pub(super) memory: MemoryEvents,
    /// (pid, tid) of each memory event: its lane is looked up when the parse ends, so that a lane
    /// first seen after the allocation still owns it.
    pub(super) memory_threads: Vec<(i64, i64)>,
    /// A `B` or `E` was read (pairs cannot be matched across separately parsed parts).
    pub(super) saw_begin_end: bool,
    pub(super) meta: TraceMeta,
    pub(crate) diagnostics: Diagnostics,
    pub(super) events_total: u64,
    /// Objects in the event array that have a `ph` (to tell a trace from other JSON).
    pub(super) with_phase: u64,
    pub(super) non_objects: u64,
    pub(super) phases: PhaseCounts,
    pub(super) cat_counts: Vec<u64>,
    pub(super) min_ts: i64,
    pub(super) max_ts: i64,
    pub(super) repair_buf: String,
    pub(super) fields: Vec<Field>,
    pub(super) arg_fields: Vec<Field>,
    /// The members of the event's args, from the direct reader.
    pub(super) event_args: Vec<Field>,
    pub(super) reader: Reader,
    pub(super) dims_buf: String,
    pub(super) top_keys: Vec<String>,
}

/// Timestamps outside these bounds (ns) are damage: they keep every rebased start and end within
/// `i64` (start <= 2^62 + 2^60, end <= that + 2^61 < 2^63) so no analysis can overflow. Epoch
/// nanoseconds fit until the year 2116.
pub(super) const MIN_TS_NS: i64 = -(1 << 60);
pub(super) const MAX_TS_NS: i64 = 1 << 62;
pub(super) const MAX_DUR_NS: i64 = 1 << 61;

/// Categories whose events run on a device stream or queue ([`Kind::on_device`]).
fn is_gpu_category(cat: &str) -> bool {
    Kind::on_device(cat)
}

impl Builder {
    pub(crate) fn new() -> Self {
        Builder {
            strings: Interner::default(),
            args: ArgStore::default(),
            lanes: Vec::new(),
            slices: FileSlices::default(),
            expect: None,
            lane_map: FxHashMap::default(),
            synthetic_ids: FxHashMap::default(),
            procs: FxHashMap::default(),
            threads: FxHashMap::default(),
            flow_points: Vec::new(),
            instants: Vec::new(),
            counters: Vec::new(),
            counter_map: FxHashMap::default(),
            memory: MemoryEvents::default(),
            memory_threads: Vec::new(),
            saw_begin_end: false,
            meta: TraceMeta::default(),
            diagnostics: Diagnostics::default(),
            events_total: 0,
            with_phase: 0,
            non_objects: 0,
            phases: PhaseCounts::default(),
            cat_counts: Vec::new(),
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            repair_buf: String::new(),
            fields: Vec::new(),
            arg_fields: Vec::new(),
            event_args: Vec::new(),
            reader: Reader::default(),
            dims_buf: String::new(),
            top_keys: Vec::new(),
        }
    }

    pub(crate) fn events_total(&self) -> u64 {
        self.events_total
    }

    /// True when the event array held something but nothing that looks like a trace event.
    pub(crate) fn looks_like_other_json(&self) -> bool {
        self.with_phase == 0 && (self.events_total > 0 || self.non_objects > 0)
    }

    /// A pid or tid: a number, or a string mapped to a number (its trailing digits, or a synthetic
    /// negative id), with the original string kept as a label.
    fn id_of(&mut self, v: Option<&str>) -> (i64, Option<String>) {
        let Some(t) = v else { return (0, None) };
        if !t.starts_with('"') {
            return (parse_int(Some(t)).unwrap_or(0), None);
        }
        let label = raw_str(Some(t)).into_owned();
        if let Some(n) = parse_int(Some(t)) {
            return (n, Some(label));
        }
        let next = -1 - self.synthetic_ids.len() as i64;
        let n = *self.synthetic_ids.entry(label.clone()).or_insert(next);
        (n, Some(label))
    }

    /// A pid (see [`Self::id_of`]); a string pid is remembered as the process's label.
    fn pid_of(&mut self, v: Option<&str>) -> i64 {
        let (pid, label) = self.id_of(v);
        if label.is_some() {
            let p = self.procs.entry(pid).or_default();
            if p.pid_label.is_none() {
                p.pid_label = label;
            }
        }
        pid
    }

    fn lane(&mut self, pid: i64, tid: i64, tid_label: Option<String>) -> u32 {
        if let Some(&l) = self.lane_map.get(&(pid, tid)) {
            return l;
        }
        let l = self.lanes.len() as u32;
        self.lanes.push(LaneBuilder {
            pid,
            tid,
            tid_label,
            open: Vec::new(),
            gpu: false,
            cpu: false,
        });
        self.lane_map.insert((pid, tid), l);
        l
    }

    /// Keeps an event's args for details: members with dictionary keys, or raw text for args that
    /// are not an object.
    fn store_args(&mut self, args: &EventArgs<'_>, offset: u64) -> ArgsId {
        if matches!(args.text, "" | "{}" | "null") {
            return ArgsId::NONE;
        }
        let expect = self.expect;
        self.args.make_room(|n| room(expect, n, offset));
        if args.args.object {
            let text = args.members_text;
            self.args
                .push_members(args.members.iter().map(|f| (f.key(text), f.value(text))))
        } else {
            self.args.push_raw(args.text)
        }
    }

    /// Appends a slice to the file-order columns, making room first when they are full.
    fn push_slice(&mut self, lane: usize, ts: i64, dur: i64, e: &OpenBegin, offset: u64) {
        let n = self.slices.len();
        if n == self.slices.lane.capacity() {
            let want = room(self.expect, n, offset);
            self.slices.reserve_total(want);
        }
        self.slices.push(lane as u32, ts, dur, e);
    }

    /// Takes the event at the start of `bytes` when one of the fast readers can read it whole;
    /// returns its length. The direct reader comes first; what it refuses (rare: see
    /// [`read_event_with`]), [`read_object`] reads, and what that refuses goes to serde_json.
    fn read_fast(&mut self, bytes: &[u8], offset: u64) -> Option<usize> {
        let mut members = std::mem::take(&mut self.event_args);
        let mut slots = Slots::default();
        let read = match self.reader {
            Reader::Direct(path) => read_event_with(path, bytes, &mut slots, &mut members),
            Reader::Objects => None,
        };
        let taken = match read {
            Some(read) => {
                let text = &bytes[..read.end];
                let text = if read.ascii {
                    // SAFETY: every byte is below 0x80, so the text is ASCII and therefore UTF-8.
                    Some(unsafe { std::str::from_utf8_unchecked(text) })
                } else {
                    // Text that is not UTF-8 takes the general path, which reads it lossily.
                    std::str::from_utf8(text).ok()
                };
                text.map(|text| {
                    let mut ev = Ev::from_slots(text, &slots);
                    ev.plain = !read.escapes;
                    ev.args_members = read.args_object.then_some((text, &members[..]));
                    self.event(ev, offset);
                    read.end
                })
            }
            _ => {
                let mut fields = std::mem::take(&mut self.fields);
                let taken = read_object(bytes, &mut fields)
                    .and_then(|end| Some((end, std::str::from_utf8(&bytes[..end]).ok()?)))
                    .map(|(end, text)| {
                        let slots = Slots::from_fields(text.as_bytes(), &fields);
                        let mut ev = Ev::from_slots(text, &slots);
                        // The direct reader refuses raw control characters; this reader keeps
                        // them as text, which is a repair to tell.
                        ev.control = text
                            .bytes()
                            .any(|b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'));
                        self.event(ev, offset);
                        end
                    });
                self.fields = fields;
                taken
            }
        };
        self.event_args = members;
        taken
    }

    fn count_cat(&mut self, cat: StrId) {
        let i = cat.0 as usize;
        if self.cat_counts.len() <= i {
            self.cat_counts.resize(i + 1, 0);
        }
        self.cat_counts[i] += 1;
    }

    /// Takes one event into the model. The scratch buffers are lent out for the call so that the
    /// typed args can borrow the minified text while `self` is updated.
    fn event(&mut self, ev: Ev<'_>, offset: u64) {
        let mut buf = std::mem::take(&mut self.repair_buf);
        let mut fields = std::mem::take(&mut self.arg_fields);
        self.event_with(ev, offset, &mut buf, &mut fields);
        self.repair_buf = buf;
        self.arg_fields = fields;
    }

    /// Tells a name longer than [`LONG_NAME_BYTES`] (the outputs cut it).
    fn check_name(&mut self, name: &str, offset: u64) {
        if name.len() > LONG_NAME_BYTES {
            self.diagnostics.add(DiagKind::LongName, offset, || {
                format!(
                    "a name of {} bytes; tables and reports show its first {LONG_NAME_BYTES} \
                     (sightline --full-names and the page's details give it whole)",
                    name.len()
                )
            });
        }
    }

    /// One event into the columns, in five passes of its own: what it counts and what was
    /// repaired in it ([`Builder::count_event`]), its args ([`Builder::event_args`]), its time
    /// ([`Builder::event_ts`]), then what its phase makes of it: a slice, an instant or a memory
    /// event, counters, metadata, a flow point. Each is inlined: this runs once per event.
    fn event_with(&mut self, ev: Ev<'_>, offset: u64, buf: &mut String, fields: &mut Vec<Field>) {
        let (ph, cat) = self.count_event(&ev, offset);
        let args = self.event_args(&ev, offset, buf, fields);
        let ts = self.event_ts(&ev, &ph, offset);
        match &*ph {
            "X" | "B" | "E" => self.slice_event(&ev, &ph, ts, cat, &args, offset),
            "i" | "I" => self.instant_event(&ev, ts, cat.0, &args, offset),
            "C" => self.counter_event(&ev, ts),
            "M" => self.metadata(&ev, &args.args),
            "s" | "t" | "f" => self.flow_event(&ev, &ph, ts, cat.0, offset),
            _ => {
                self.diagnostics.add(DiagKind::IgnoredPhase, offset, || {
                    format!("phase '{ph}' is not shown (async, sample and object events are counted only)")
                });
            }
        }
    }

    /// Counts the event, its phase and category, and notes what the reader repaired in it.
    /// Returns its phase and its category (interned, and as written).
    #[inline(always)]
    fn count_event<'a>(
        &mut self,
        ev: &Ev<'a>,
        offset: u64,
    ) -> (Cow<'a, str>, (StrId, Cow<'a, str>)) {
        self.events_total += 1;
        if ev.repaired {
            self.diagnostics.add(DiagKind::RepairedEvent, offset, || {
                "a bare value such as N/A or NaN, read as absent".into()
            });
        }
        if ev.control {
            self.diagnostics.add(DiagKind::RepairedEvent, offset, || {
                "an event with raw control characters in its strings (not valid JSON), read as text"
                    .into()
            });
        }
        if ev.duplicate {
            self.diagnostics.add(DiagKind::DuplicateKey, offset, || {
                "an event with a key written twice (ph, name, ts, dur, ...); the last value is kept"
                    .into()
            });
        }
        let ph = ev.text(ev.ph);
        if !ph.is_empty() {
            self.with_phase += 1;
        }
        self.phases.add(&ph);
        let cat_text = ev.text(ev.cat);
        let cat = self.strings.intern(&cat_text);
        self.count_cat(cat);
        (ph, (cat, cat_text))
    }

    /// The event's args: kept whole in the store, and read for the typed fields.
    #[inline(always)]
    fn event_args<'a>(
        &mut self,
        ev: &Ev<'a>,
        offset: u64,
        buf: &'a mut String,
        fields: &'a mut Vec<Field>,
    ) -> EventArgs<'a> {
        // The text is kept as written (whitespace and all: minifying cost a pass over every byte
        // for little memory).
        // Raw control characters other than whitespace, or bare words, would make it invalid
        // JSON: those are repaired once, here. The fast reader found the members already (and
        // no control characters in the event); otherwise they are read from the args text.
        // Members with a bare word take the repair path below, as args read from their text do.
        let pre = ev.args_members.and_then(|(text, members)| {
            let args = Args::from_fields(text, members);
            (!args.repaired).then_some((ev.args.unwrap_or(""), args, text, members))
        });
        let (args_text, args, members_text, members): (&str, Args<'_>, &str, &[Field]) = match pre {
            Some(found) => found,
            None => {
                let mut args_text = ev.args.unwrap_or("");
                if !args_text.is_empty() {
                    let control = args_text.bytes().fold(false, |acc, b| {
                        acc | (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'))
                    });
                    let bare = !control && Args::read(args_text, fields).repaired;
                    if control || bare {
                        if let Some(fixed) =
                            repair(args_text.as_bytes()).and_then(|r| String::from_utf8(r).ok())
                        {
                            *buf = fixed;
                            args_text = buf;
                            // Counted once per event: `ev.control` told it already.
                            if !ev.control {
                                self.diagnostics.add(DiagKind::RepairedEvent, offset, || {
                                    "args with raw control characters or bare N/A values, repaired"
                                        .into()
                                });
                            }
                        }
                    }
                }
                let args_text = args_text.trim();
                let args = Args::read(args_text, fields);
                (args_text, args, args_text, &fields[..])
            }
        };
        EventArgs {
            text: args_text,
            args,
            members_text,
            members,
        }
    }

    /// The event's time, absent when unreadable or outside the years the model holds; the
    /// trace's first and last times follow it (metadata's excepted).
    #[inline(always)]
    fn event_ts(&mut self, ev: &Ev<'_>, ph: &str, offset: u64) -> Option<i64> {
        let mut ts = ev.ts.and_then(parse_us_to_ns);
        if ts.is_some_and(|t| !(MIN_TS_NS..=MAX_TS_NS).contains(&t)) {
            self.diagnostics.add(DiagKind::TimeOutOfRange, offset, || {
                format!(
                    "ts {} is outside the years 1933-2116; read as absent",
                    raw_str(ev.ts)
                )
            });
            ts = None;
        }
        if ph != "M" {
            if let Some(ts) = ts {
                self.min_ts = self.min_ts.min(ts);
                self.max_ts = self.max_ts.max(ts);
            }
        }
        ts
    }

    /// `X`, `B` and `E`: a slice, now (`X`) or when its `E` comes.
    #[inline(always)]
    fn slice_event(
        &mut self,
        ev: &Ev<'_>,
        ph: &str,
        ts: Option<i64>,
        (cat, cat_text): (StrId, Cow<'_, str>),
        args: &EventArgs<'_>,
        offset: u64,
    ) {
        self.saw_begin_end |= ph != "X";
        let Some(ts) = ts else {
            self.diagnostics.add(DiagKind::MissingField, offset, || {
                format!("a '{ph}' event without a readable ts")
            });
            return;
        };
        let pid = self.pid_of(ev.pid);
        let (tid, tid_label) = self.id_of(ev.tid);
        let lane = self.lane(pid, tid, tid_label) as usize;
        if ph == "E" {
            let Some(open) = self.lanes[lane].open.pop() else {
                self.diagnostics.add(DiagKind::UnmatchedEnd, offset, || {
                    format!("an 'E' on pid {pid} tid {tid} with no open 'B'")
                });
                return;
            };
            self.max_ts = self.max_ts.max(ts);
            let lb = &mut self.lanes[lane];
            let gpu = is_gpu_category(self.strings.get(open.cat));
            lb.gpu |= gpu;
            lb.cpu |= !gpu;
            self.push_slice(lane, open.ts, (ts - open.ts).max(0), &open, offset);
            return;
        }
        let name = ev.text(ev.name);
        self.check_name(&name, offset);
        let name = self.strings.intern(&name);
        let a = self.store_args(args, offset);
        let external_id = parse_int(args.args.external_id).unwrap_or(NO_ID);
        let correlation = parse_int(args.args.correlation).unwrap_or(NO_ID);
        let input_dims = match args.args.input_dims {
            Some(d) => {
                format_dims(d, &mut self.dims_buf);
                self.strings.intern(&self.dims_buf)
            }
            None => StrId::NONE,
        };
        let open = OpenBegin {
            ts,
            name,
            cat,
            args: a,
            external_id,
            correlation,
            input_dims,
        };
        if ph == "B" {
            self.lanes[lane].open.push(open);
            return;
        }
        let Some(mut dur) = ev.dur.and_then(parse_us_to_ns) else {
            self.diagnostics.add(DiagKind::MissingField, offset, || {
                "an 'X' event without a readable dur".to_string()
            });
            return;
        };
        if dur < 0 {
            self.diagnostics
                .add(DiagKind::NegativeDuration, offset, || {
                    format!("'{}' has dur {}", raw_str(ev.name), raw_str(ev.dur))
                });
            dur = 0;
        } else if dur > MAX_DUR_NS {
            self.diagnostics.add(DiagKind::TimeOutOfRange, offset, || {
                format!(
                    "'{}' has dur {}; clamped to 73 years",
                    raw_str(ev.name),
                    raw_str(ev.dur)
                )
            });
            dur = MAX_DUR_NS;
        }
        self.max_ts = self.max_ts.max(ts.saturating_add(dur));
        let lb = &mut self.lanes[lane];
        let gpu = is_gpu_category(&cat_text);
        lb.gpu |= gpu;
        lb.cpu |= !gpu;
        self.push_slice(lane, ts, dur, &open, offset);
    }

    /// `i` and `I`: an instant, or a `[memory]` event.
    #[inline(always)]
    fn instant_event(
        &mut self,
        ev: &Ev<'_>,
        ts: Option<i64>,
        cat: StrId,
        args: &EventArgs<'_>,
        offset: u64,
    ) {
        let Some(ts) = ts else {
            self.diagnostics.add(DiagKind::MissingField, offset, || {
                "an instant event without a readable ts".to_string()
            });
            return;
        };
        let pid = self.pid_of(ev.pid);
        let (tid, tid_label) = self.id_of(ev.tid);
        let name = ev.text(ev.name);
        if name == "[memory]" {
            let e = self.expect;
            make_room(&mut self.memory_threads, e, offset);
            self.memory_threads.push((pid, tid));
            let int = |v: Option<&str>| {
                v.and_then(|v| parse_int(Some(v)).or_else(|| parse_f64(v).map(|f| f as i64)))
            };
            let m = &mut self.memory;
            if m.ts_ns.len() == m.ts_ns.capacity() {
                let want = room(e, m.len(), offset) - m.len();
                m.ts_ns.reserve_exact(want);
                m.device_type.reserve_exact(want);
                m.device_id.reserve_exact(want);
                m.bytes.reserve_exact(want);
                m.total_allocated.reserve_exact(want);
                m.total_reserved.reserve_exact(want);
                m.addr.reserve_exact(want);
            }
            m.ts_ns.push(ts);
            m.device_type
                .push(int(args.args.device_type).unwrap_or(0) as i8);
            m.device_id
                .push(int(args.args.device_id).unwrap_or(0) as i16);
            m.bytes.push(int(args.args.bytes).unwrap_or(0));
            m.total_allocated
                .push(int(args.args.total_allocated).unwrap_or(0));
            m.total_reserved
                .push(int(args.args.total_reserved).unwrap_or(0));
            m.addr.push(int(args.args.addr).unwrap_or(0));
            return;
        }
        let lane = self.lane(pid, tid, tid_label);
        self.check_name(&name, offset);
        let name = self.strings.intern(&name);
        let a = self.store_args(args, offset);
        make_room(&mut self.instants, self.expect, offset);
        self.instants.push(Instant {
            ts_ns: ts,
            lane,
            name,
            cat,
            args: a,
        });
    }

    /// `C`: a point of each counter series the event holds.
    #[inline(always)]
    fn counter_event(&mut self, ev: &Ev<'_>, ts: Option<i64>) {
        let Some(ts) = ts else { return };
        let pid = self.pid_of(ev.pid);
        let name = raw_str(ev.name).into_owned();
        let Some(a) = ev.args else { return };
        let Ok(map) = serde_json::from_str::<FxHashMap<String, &RawValue>>(a) else {
            return;
        };
        let mut keys: Vec<_> = map.into_iter().collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, v) in keys {
            let Some(value) = parse_f64(v.get()) else {
                continue;
            };
            let k = (pid, name.clone(), key);
            let idx = match self.counter_map.get(&k) {
                Some(&i) => i,
                None => {
                    self.counters.push(CounterSeries {
                        pid,
                        name: k.1.clone(),
                        series: k.2.clone(),
                        ts_ns: Vec::new(),
                        values: Vec::new(),
                    });
                    self.counter_map.insert(k, self.counters.len() - 1);
                    self.counters.len() - 1
                }
            };
            self.counters[idx].ts_ns.push(ts);
            self.counters[idx].values.push(value);
        }
    }

    /// `s`, `t` and `f`: a flow point, joined to its slice when the parse ends.
    #[inline(always)]
    fn flow_event(&mut self, ev: &Ev<'_>, ph: &str, ts: Option<i64>, cat: StrId, offset: u64) {
        let Some(ts) = ts else { return };
        let pid = self.pid_of(ev.pid);
        let (tid, tid_label) = self.id_of(ev.tid);
        let lane = self.lane(pid, tid, tid_label);
        let id = match ev.id {
            Some(v) => parse_int(Some(v)).unwrap_or_else(|| hash_id(v)),
            None => return,
        };
        let phase = match ph {
            "s" => 0,
            "t" => 1,
            _ => 2,
        };
        let enclosing = phase < 2 || raw_str(ev.bp) == "e";
        make_room(&mut self.flow_points, self.expect, offset);
        self.flow_points.push(FlowPoint {
            cat,
            id,
            phase,
            ts,
            lane,
            enclosing,
            offset,
        });
    }

    fn metadata(&mut self, ev: &Ev<'_>, args: &Args<'_>) {
        let (pid, pid_label) = self.id_of(ev.pid);
        let what = raw_str(ev.name);
        match &*what {
            "process_name" | "process_labels" | "process_sort_index" => {
                let p = self.procs.entry(pid).or_default();
                if p.pid_label.is_none() {
                    p.pid_label = pid_label;
                }
                match &*what {
                    "process_name" => p.name = Some(raw_str(args.name).into_owned()),
                    "process_labels" => p.labels = Some(raw_str(args.labels).into_owned()),
                    _ => p.sort_index = parse_int(args.sort_index),
                }
            }
            "thread_name" | "thread_sort_index" => {
                let (tid, _) = self.id_of(ev.tid);
                let t = self.threads.entry((pid, tid)).or_default();
                if what == "thread_name" {
                    t.0 = Some(raw_str(args.name).into_owned());
                } else {
                    t.1 = parse_int(args.sort_index);
                }
            }
            _ => {}
        }
    }

    /// True when a part parsed right after this one can be joined to it exactly: no `B` is
    /// left open here (its `E` would be in the next part).
    pub(crate) fn can_continue(&self) -> bool {
        self.lanes.iter().all(|l| l.open.is_empty())
    }

    pub(crate) fn saw_begin_end(&self) -> bool {
        self.saw_begin_end
    }

    /// Takes in a builder that read the bytes right after this one's, so that the result is what
    /// one builder reading both would have built: strings and lanes keep their first-seen order,
    /// args and slices their file order, so ids and orders equal a sequential parse's.
    pub(crate) fn absorb(&mut self, mut o: Builder) {
        let own = Owned {
            slices: std::mem::take(&mut o.slices),
            args: std::mem::take(&mut o.args),
        };
        self.absorb_from(o, own);
    }

    /// Takes a part read from a buffer as this (empty) builder's own slices and args (as
    /// [`Builder::absorb_from`] does): its ids are already this builder's.
    pub(crate) fn hold(&mut self, part: impl PartSlices) -> Option<Pending> {
        part.join(&mut self.slices, &mut self.args, &Same)
    }

    /// [`Builder::absorb`] with the part's slices and args taken from `part`: from a part's
    /// buffer, its slices are copied straight into these columns (`o` holds none), its args' ends
    /// too, and its args' bytes are left to be adopted with the buffer ([`ArgStore::adopt`])
    /// when that can be done.
    pub(crate) fn absorb_from(&mut self, mut o: Builder, part: impl PartSlices) -> Option<Pending> {
        let smap: Vec<StrId> = (0..o.strings.len())
            .map(|i| self.strings.intern(o.strings.get(StrId(i as u32))))
            .collect();
        let sid = |x: StrId| smap[x.0 as usize];
        let abase = self.args.len() as u32;
        let aid = |a: ArgsId| {
            if a == ArgsId::NONE {
                a
            } else {
                ArgsId(a.0 + abase)
            }
        };

        // String pids and tids: the same label gets the same synthetic id, in first-seen order.
        let mut labels: Vec<(String, i64)> = o.synthetic_ids.drain().collect();
        labels.sort_by_key(|l| std::cmp::Reverse(l.1));
        let mut idmap = FxHashMap::default();
        for (label, old) in labels {
            let next = -1 - self.synthetic_ids.len() as i64;
            idmap.insert(old, *self.synthetic_ids.entry(label).or_insert(next));
        }
        let id = |x: i64| idmap.get(&x).copied().unwrap_or(x);

        let mut lmap = Vec::with_capacity(o.lanes.len());
        for mut lb in o.lanes.drain(..) {
            lb.pid = id(lb.pid);
            lb.tid = id(lb.tid);
            match self.lane_map.get(&(lb.pid, lb.tid)) {
                Some(&l) => {
                    let mine = &mut self.lanes[l as usize];
                    mine.gpu |= lb.gpu;
                    mine.cpu |= lb.cpu;
                    lmap.push(l);
                }
                None => {
                    let l = self.lanes.len() as u32;
                    self.lane_map.insert((lb.pid, lb.tid), l);
                    self.lanes.push(lb);
                    lmap.push(l);
                }
            }
        }
        let remap = Remap {
            lanes: &lmap,
            strings: &smap,
            args_base: abase,
        };
        let pending = part.join(&mut self.slices, &mut self.args, &remap);
        for (pid, m) in o.procs {
            let p = self.procs.entry(id(pid)).or_default();
            p.pid_label = p.pid_label.take().or(m.pid_label);
            p.name = m.name.or(p.name.take());
            p.labels = m.labels.or(p.labels.take());
            p.sort_index = m.sort_index.or(p.sort_index);
        }
        for ((pid, tid), (name, sort)) in o.threads {
            let t = self.threads.entry((id(pid), id(tid))).or_default();
            t.0 = name.or(t.0.take());
            t.1 = sort.or(t.1);
        }
        for mut f in o.flow_points {
            f.cat = sid(f.cat);
            f.lane = lmap[f.lane as usize];
            self.flow_points.push(f);
        }
        for mut i in o.instants {
            i.lane = lmap[i.lane as usize];
            i.name = sid(i.name);
            i.cat = sid(i.cat);
            i.args = aid(i.args);
            self.instants.push(i);
        }
        for mut c in o.counters {
            c.pid = id(c.pid);
            let key = (c.pid, c.name.clone(), c.series.clone());
            match self.counter_map.get(&key) {
                Some(&i) => {
                    self.counters[i].ts_ns.append(&mut c.ts_ns);
                    self.counters[i].values.append(&mut c.values);
                }
                None => {
                    self.counter_map.insert(key, self.counters.len());
                    self.counters.push(c);
                }
            }
        }
        let (m, om) = (&mut self.memory, &mut o.memory);
        m.ts_ns.append(&mut om.ts_ns);
        m.device_type.append(&mut om.device_type);
        m.device_id.append(&mut om.device_id);
        m.bytes.append(&mut om.bytes);
        m.total_allocated.append(&mut om.total_allocated);
        m.total_reserved.append(&mut om.total_reserved);
        m.addr.append(&mut om.addr);
        self.memory_threads
            .extend(o.memory_threads.iter().map(|&(p, t)| (id(p), id(t))));

        // Top-level keys after the event array are read by the last part only.
        let meta = o.meta;
        if !meta.device_properties.is_empty() {
            self.meta.device_properties = meta.device_properties;
        }
        self.meta.distributed = meta.distributed.or(self.meta.distributed.take());
        self.meta.base_time_ns = meta.base_time_ns.or(self.meta.base_time_ns);
        self.meta.schema_version = meta.schema_version.or(self.meta.schema_version.take());
        self.meta.other.extend(meta.other);
        self.top_keys.extend(o.top_keys);

        self.diagnostics.merge(o.diagnostics);
        self.events_total += o.events_total;
        self.with_phase += o.with_phase;
        self.non_objects += o.non_objects;
        for (ph, n) in o.phases.counts() {
            self.phases.add_n(ph, n);
        }
        for (i, &n) in o.cat_counts.iter().enumerate() {
            if n > 0 {
                let c = sid(StrId(i as u32)).0 as usize;
                if self.cat_counts.len() <= c {
                    self.cat_counts.resize(c + 1, 0);
                }
                self.cat_counts[c] += n;
            }
        }
        self.min_ts = self.min_ts.min(o.min_ts);
        self.max_ts = self.max_ts.max(o.max_ts);
        self.saw_begin_end |= o.saw_begin_end;
        pending
    }

    pub(crate) fn finish(mut self, stats: ParseStats) -> Trace {
        // Close what is still open at the last timestamp seen.
        let last = self.max_ts;
        for (l, lb) in self.lanes.iter_mut().enumerate() {
            let n = lb.open.len() as u64;
            if n > 0 {
                let (pid, tid) = (lb.pid, lb.tid);
                self.diagnostics.add_n(DiagKind::UnclosedBegin, n, 0, || {
                    format!("'B' without 'E' on pid {pid} tid {tid}; closed at the trace end")
                });
            }
            while let Some(open) = lb.open.pop() {
                self.slices
                    .push(l as u32, open.ts, (last - open.ts).max(0), &open);
            }
        }
        let origin = if self.min_ts == i64::MAX {
            0
        } else {
            self.min_ts
        };

        let processes = self.build_processes();
        let pindex: FxHashMap<i64, u32> = processes
            .iter()
            .enumerate()
            .map(|(i, p)| (p.pid, i as u32))
            .collect();

        // Order lanes: CPU first (by process order, then thread sort index, tid), then GPU streams.
        let mut order: Vec<u32> = (0..self.lanes.len() as u32).collect();
        let lane_key = |lb: &LaneBuilder| {
            let p = &processes[pindex[&lb.pid] as usize];
            let gpu = is_device_lane(p, lb);
            let tsort = self.threads.get(&(lb.pid, lb.tid)).and_then(|t| t.1);
            if gpu {
                (1, p.device.unwrap_or(lb.pid), 0, lb.tid, 0)
            } else {
                // Tracks with string pids ("Spans") are profiler artifacts: after the real ones.
                (
                    if p.pid_label.is_some() { 2 } else { 0 },
                    p.sort_index.unwrap_or(lb.pid),
                    lb.pid,
                    tsort.unwrap_or(lb.tid),
                    lb.tid,
                )
            }
        };
        order.sort_by_key(|&l| lane_key(&self.lanes[l as usize]));
        let mut new_index = vec![0u32; self.lanes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }

        let (mut columns, starts) =
            gather_lanes(std::mem::take(&mut self.slices), &new_index, origin);
        // The lanes' rows (written to `depth`) and the flows' slices (found by starts and
        // durations) need nothing of each other: at once when large (1 GB scaled trace: rows
        // 45 ms, flows 53 ms).
        let big = columns.len() >= TWO_THREADS_FROM;
        let ranges: Vec<std::ops::Range<usize>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
        let spans: Vec<Spans<'_>> = ranges
            .iter()
            .map(|r| (&columns.start_ns[r.clone()], &columns.dur_ns[r.clone()]))
            .collect();
        let mut depths: Vec<&mut [u16]> = Vec::with_capacity(ranges.len());
        let mut rest = &mut columns.depth[..];
        for r in &ranges {
            let (lane, after) = rest.split_at_mut(r.len());
            depths.push(lane);
            rest = after;
        }
        let points = std::mem::take(&mut self.flow_points);
        let (layout, (flows, flow_diagnostics)) = both(
            big,
            || {
                spans
                    .iter()
                    .zip(depths)
                    .map(|(&(start, dur), depth)| assign_rows(start, dur, depth))
                    .collect::<Vec<_>>()
            },
            || {
                let mut d = Diagnostics::default();
                let flows = bind_flows(points, &spans, &new_index, origin, &mut d);
                (flows, d)
            },
        );
        drop(spans);
        // Taken, not drained: the collect then reuses the lanes' own buffer (an `Option` of a
        // builder is the builder's size) instead of holding a second copy of every lane.
        let mut builders: Vec<Option<LaneBuilder>> = std::mem::take(&mut self.lanes)
            .into_iter()
            .map(Some)
            .collect();
        let mut lanes = Vec::with_capacity(builders.len());
        let mut overlapping_total = 0u64;
        for &old in &order {
            let lb = builders[old as usize]
                .take()
                .expect("each lane is taken once");
            let process = pindex[&lb.pid];
            let p = &processes[process as usize];
            let gpu = is_device_lane(p, &lb);
            let kind = if gpu {
                LaneKind::GpuStream {
                    device: p.device.unwrap_or(lb.pid),
                    stream: lb.tid,
                }
            } else {
                LaneKind::Cpu
            };
            let (name, sort_index) = self.threads.remove(&(lb.pid, lb.tid)).unwrap_or_default();
            let new = new_index[old as usize] as usize;
            let (rows, overlapping) = layout[new];
            overlapping_total += overlapping as u64;
            // Rows are u16 (the view's hidden row is u16::MAX): the deepest row holds the rest.
            if rows >= u32::from(u16::MAX) {
                let last = u16::MAX - 1;
                let n = columns.depth[ranges[new].clone()]
                    .iter()
                    .filter(|&&d| d == last)
                    .count() as u64;
                self.diagnostics.add_n(DiagKind::DeepNesting, n, 0, || {
                    format!(
                        "slices nested more than {last} levels deep on one lane; the deeper ones \
                         are drawn on row {last}"
                    )
                });
            }
            lanes.push(Lane {
                kind,
                process,
                pid: lb.pid,
                tid: lb.tid,
                tid_label: lb.tid_label,
                name,
                sort_index,
                slice_range: ranges[new].start as u32..ranges[new].end as u32,
                rows,
                overlapping,
            });
        }
        if overlapping_total > 0 {
            self.diagnostics
                .add_n(DiagKind::OverlappingSlice, overlapping_total, 0, || {
                    "slices overlapping without nesting on one lane (drawn under the longer one)"
                        .into()
                });
        }
        self.diagnostics.merge(flow_diagnostics);

        let mut instants = std::mem::take(&mut self.instants);
        for i in &mut instants {
            i.ts_ns -= origin;
            i.lane = new_index[i.lane as usize];
        }
        instants.sort_by_key(|i| (i.ts_ns, i.lane));
        // The room made while reading (see `room`) depends on how the input was cut into parts:
        // the model keeps what it holds, so its size does not.
        instants.shrink_to_fit();

        let mut counters = std::mem::take(&mut self.counters);
        for c in &mut counters {
            let mut pairs: Vec<(i64, f64)> = c
                .ts_ns
                .iter()
                .map(|t| t - origin)
                .zip(c.values.iter().copied())
                .collect();
            pairs.sort_by_key(|p| p.0);
            c.ts_ns = pairs.iter().map(|p| p.0).collect();
            c.values = pairs.iter().map(|p| p.1).collect();
        }

        let mut memory = std::mem::take(&mut self.memory);
        memory.lane = self
            .memory_threads
            .iter()
            .map(|k| {
                self.lane_map
                    .get(k)
                    .map_or(u32::MAX, |&l| new_index[l as usize])
            })
            .collect();
        let memory = sort_memory(memory, origin);

        let mut by_phase: Vec<(String, u64)> = self.phases.counts();
        by_phase.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut by_category: Vec<(String, u64)> = self
            .cat_counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (self.strings.get(StrId(i as u32)).to_string(), n))
            .collect();
        by_category.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));

        self.meta.origin_ns = origin;
        self.meta.schema = detect_schema(&by_category);
        self.meta.rocm = self.strings.find("hipLaunchKernel").is_some()
            || self.strings.find("hipMemcpyAsync").is_some()
            || self.strings.find("hipExtModuleLaunchKernel").is_some();
        self.args.shrink();
        Trace {
            strings: self.strings,
            args: self.args,
            processes,
            lanes,
            columns,
            flows,
            instants,
            counters,
            memory,
            meta: self.meta,
            stats: ParseStats {
                events_total: self.events_total,
                by_phase,
                by_category,
                ..stats
            },
            diagnostics: self.diagnostics,
            device_processes: Default::default(),
        }
    }

    fn build_processes(&mut self) -> Vec<Process> {
        let mut pids: Vec<i64> = self.lanes.iter().map(|l| l.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        // Sorted, and searched by halves: a trace can hold 100,000 device processes.
        let mut gpu_pids: Vec<i64> = self.lanes.iter().filter(|l| l.gpu).map(|l| l.pid).collect();
        gpu_pids.sort_unstable();
        gpu_pids.dedup();
        let mut procs: Vec<Process> = pids
            .into_iter()
            .map(|pid| {
                let m = self.procs.remove(&pid).unwrap_or_default();
                // The rule of `model::category`: a label or name such as "GPU 0" or "MTIA 0"
                // makes a device; a process holding device work is one too, unless labelled CPU.
                let host = m.labels.as_deref().is_some_and(category::is_host_label);
                let labelled = [m.labels.as_deref(), m.name.as_deref()]
                    .into_iter()
                    .flatten()
                    .find_map(category::device_index);
                let device = if host {
                    None
                } else {
                    labelled.or_else(|| gpu_pids.binary_search(&pid).is_ok().then_some(pid.max(0)))
                };
                Process {
                    pid,
                    pid_label: m.pid_label,
                    name: m.name,
                    labels: m.labels,
                    sort_index: m.sort_index,
                    device,
                }
            })
            .collect();
        procs.sort_by_key(|p| {
            (
                p.device.is_some(),
                p.device.unwrap_or(0),
                p.sort_index.unwrap_or(p.pid),
                p.pid,
            )
        });
        procs
    }
}

/// Whether a lane is a device stream: rules 1 and 3 of `model::category`. A process labelled
/// CPU has no device (see `build_processes`); in one that has, a lane is a stream when it holds
/// device work, or nothing but device work is possible because it holds no other event.
fn is_device_lane(p: &Process, lb: &LaneBuilder) -> bool {
    let host = p.labels.as_deref().is_some_and(category::is_host_label);
    !host && (lb.gpu || (p.device.is_some() && !lb.cpu))
}

fn hash_id(text: &str) -> i64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    text.hash(&mut h);
    (h.finish() >> 1) as i64
}

/// At least this many slices make the finish and the join use a second core ([`both`]): below,
/// a thread's start costs more than it saves.
const TWO_THREADS_FROM: usize = 1 << 16;

/// The slices out of the file-order columns, lane after lane in the lanes' final order
/// (`new_index[l]` for file lane `l`), each lane's sorted by start, longer first (so a parent
/// precedes the children that start with it), then file order, with times rebased to `origin`.
/// Returns the columns and where each lane's slices start in them (one more entry: the end).
/// One column at a time (on each of two threads when the trace is large: half the slices' sorts
/// and half the columns each), each file-order column dropped once gathered, so the peak is those
/// columns and a gathered column or two rather than two copies of every slice.
fn gather_lanes(slices: FileSlices, new_index: &[u32], origin: i64) -> (SliceColumns, Vec<usize>) {
    let lanes = new_index.len();
    // Each lane's slices in file order (a counting sort by lane), then sorted; the sort is
    // stable, so equal keys keep file order.
    let mut starts = vec![0usize; lanes + 1];
    for &l in &slices.lane {
        starts[new_index[l as usize] as usize + 1] += 1;
    }
    for l in 0..lanes {
        starts[l + 1] += starts[l];
    }
    let mut next = starts.clone();
    let mut order = vec![0u32; slices.len()];
    for (i, &l) in slices.lane.iter().enumerate() {
        let l = new_index[l as usize] as usize;
        order[next[l]] = i as u32;
        next[l] += 1;
    }
    let big = slices.len() >= TWO_THREADS_FROM;
    let (start, dur) = (&slices.start_ns, &slices.dur_ns);
    let key = |&i: &u32| (start[i as usize], std::cmp::Reverse(dur[i as usize]));
    // Sorts each lane's range of `order` within `from..to` (the part of `order` given).
    let sort = |part: &mut [u32], from: usize, to: usize| {
        for w in starts.windows(2) {
            let (a, b) = (w[0].max(from), w[1].min(to));
            if a < b {
                part[a - from..b - from].sort_by_key(key);
            }
        }
    };
    // Each half of `order` on its own thread, the lane across the middle in two pieces (one lane
    // often holds most slices: a trace's main thread); that lane is then sorted whole, which
    // finds its two sorted runs and merges them (the sort is stable, and the first run holds the
    // earlier slices in file order, so ties keep file order as one sort would).
    let n = order.len();
    if big && two_cores() {
        let mid = n / 2;
        let (low, high) = order.split_at_mut(mid);
        both(true, || sort(low, 0, mid), || sort(high, mid, n));
        let across = starts.partition_point(|&s| s <= mid);
        if (1..=lanes).contains(&across) && starts[across - 1] < mid && mid < starts[across] {
            order[starts[across - 1]..starts[across]].sort_by_key(key);
        }
    } else {
        sort(&mut order, 0, n);
    }
    let FileSlices {
        lane,
        start_ns,
        dur_ns,
        name,
        cat,
        args,
        external_id,
        correlation,
        input_dims,
    } = slices;
    drop(lane);
    let order = &order[..];
    // One column in sorted order: the file-order column is dropped after.
    fn gather<T: Copy>(column: Vec<T>, order: &[u32], value: impl Fn(T) -> T) -> Vec<T> {
        order.iter().map(|&i| value(column[i as usize])).collect()
    }
    use std::convert::identity as same;
    // Half the bytes on each side.
    let ((start_ns, dur_ns, name, cat), (args, external, corr, dims)) = both(
        big,
        || {
            (
                gather(start_ns, order, |t| t - origin),
                gather(dur_ns, order, same),
                gather(name, order, same),
                gather(cat, order, same),
            )
        },
        || {
            (
                gather(args, order, same),
                gather(external_id, order, same),
                gather(correlation, order, same),
                gather(input_dims, order, same),
            )
        },
    );
    let columns = SliceColumns {
        depth: vec![0; start_ns.len()],
        start_ns,
        dur_ns,
        name,
        cat,
        args,
        external_id: external,
        correlation: corr,
        input_dims: dims,
    };
    (columns, starts)
}

/// The deepest slice of a lane that contains `ts` (a zero-length slice contains its own start).
pub fn enclosing_slice(s: &Slices, ts: i64) -> Option<usize> {
    enclosing_in(s.start_ns, s.dur_ns, ts)
}

/// [`enclosing_slice`] on a lane's start and duration columns.
fn enclosing_in(start_ns: &[i64], dur_ns: &[i64], ts: i64) -> Option<usize> {
    let after = start_ns.partition_point(|&x| x <= ts);
    // Walk back from the last slice starting at or before ts; the first that contains ts is the
    // deepest. The walk is bounded: a miss after many siblings is not worth a scan of the lane.
    (after.saturating_sub(4096)..after)
        .rev()
        .find(|&i| start_ns[i] + dur_ns[i] > ts || start_ns[i] == ts)
}

/// A lane's start and duration columns.
type Spans<'a> = (&'a [i64], &'a [i64]);

/// The flows between the slices at their points; `spans` are each lane's starts and durations,
/// in the lanes' final order (`new_index` maps a point's lane while reading to it).
fn bind_flows(
    mut points: Vec<FlowPoint>,
    spans: &[Spans<'_>],
    new_index: &[u32],
    origin: i64,
    diags: &mut Diagnostics,
) -> Vec<Flow> {
    points.sort_by_key(|p| (p.cat, p.id, p.ts, p.phase));
    let mut flows = Vec::new();
    let mut prev: Option<(StrId, i64, SliceRef)> = None;
    for p in points {
        let lane = new_index[p.lane as usize];
        let (start, dur) = spans[lane as usize];
        let ts = p.ts - origin;
        let found = if p.enclosing {
            enclosing_in(start, dur, ts)
        } else {
            let i = start.partition_point(|&x| x < ts);
            (i < start.len()).then_some(i)
        };
        let Some(index) = found else {
            diags.add(DiagKind::UnboundFlow, p.offset, || {
                format!("flow id {} has no slice at its point", p.id)
            });
            continue;
        };
        let here = SliceRef {
            lane,
            index: index as u32,
        };
        match prev {
            Some((cat, id, from)) if cat == p.cat && id == p.id && p.phase > 0 => {
                flows.push(Flow {
                    cat: p.cat,
                    id: p.id,
                    from,
                    to: here,
                });
            }
            _ if p.phase > 0 => {
                diags.add(DiagKind::FlowWithoutStart, p.offset, || {
                    format!("flow id {} ends without a start", p.id)
                });
            }
            _ => {}
        }
        prev = Some((p.cat, p.id, here));
    }
    flows
}

fn sort_memory(m: MemoryEvents, origin: i64) -> MemoryEvents {
    let mut perm: Vec<u32> = (0..m.len() as u32).collect();
    perm.sort_by_key(|&i| (m.ts_ns[i as usize], i));
    let pick = |i: u32| i as usize;
    MemoryEvents {
        ts_ns: perm.iter().map(|&i| m.ts_ns[pick(i)] - origin).collect(),
        lane: perm.iter().map(|&i| m.lane[pick(i)]).collect(),
        device_type: perm.iter().map(|&i| m.device_type[pick(i)]).collect(),
        device_id: perm.iter().map(|&i| m.device_id[pick(i)]).collect(),
        bytes: perm.iter().map(|&i| m.bytes[pick(i)]).collect(),
        total_allocated: perm.iter().map(|&i| m.total_allocated[pick(i)]).collect(),
        total_reserved: perm.iter().map(|&i| m.total_reserved[pick(i)]).collect(),
        addr: perm.iter().map(|&i| m.addr[pick(i)]).collect(),
    }
}

fn detect_schema(cats: &[(String, u64)]) -> String {
    let has = |c: &str| cats.iter().any(|(k, _)| k == c);
    if has("Operator") || has("Runtime") || has("Kernel") {
        "pytorch-1.8-1.9".into()
    } else if has("cpu_op") && (has("async_cpu_to_gpu") || has("async_gpu")) {
        "pytorch-1.10-1.12".into()
    } else if has("cpu_op") || has("user_annotation") || has("kernel") {
        "pytorch-2.x".into()
    } else {
        "chrome".into()
    }
}

impl Sink for Builder {
    fn element_prefix(&mut self, bytes: &[u8], offset: u64) -> Option<usize> {
        self.read_fast(bytes, offset)
    }

    fn element(&mut self, bytes: &[u8], offset: u64, is_object: bool) {
        if !is_object {
            self.non_objects += 1;
            self.diagnostics.add(DiagKind::NotAnObject, offset, || {
                let s = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
                format!("a non-object value in the event array: {s}")
            });
            return;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        if self.read_fast(text.as_bytes(), offset).is_some() {
            return;
        }
        // The scanner refused it: let serde_json say why, and repair what real files damage.
        match serde_json::from_str::<RawEvent>(&text) {
            Ok(ev) => self.event(ev.into_ev(), offset),
            Err(first) => {
                let repaired = repair(text.as_bytes());
                let repaired = repaired
                    .as_deref()
                    .and_then(|r| std::str::from_utf8(r).ok());
                match repaired.map(serde_json::from_str::<RawEvent>) {
                    Some(Ok(ev)) => {
                        self.diagnostics.add(DiagKind::RepairedEvent, offset, || {
                            format!(
                                "{first}; read after repairing control characters or N/A values"
                            )
                        });
                        self.event(ev.into_ev(), offset);
                    }
                    _ => self.diagnostics.add(DiagKind::UnreadableEvent, offset, || {
                        format!("an event that is not valid JSON ({first})")
                    }),
                }
            }
        }
    }

    fn meta(&mut self, key: &str, value: Option<&[u8]>, offset: u64) {
        if self.top_keys.iter().any(|k| k == key) {
            self.diagnostics.add(DiagKind::DuplicateKey, offset, || {
                format!("top-level key '{key}' written twice; the last value is kept")
            });
        }
        self.top_keys.push(key.to_string());
        let Some(value) = value else {
            self.diagnostics.add(DiagKind::LargeMetadata, offset, || {
                format!("top-level key '{key}' is too large to keep")
            });
            return;
        };
        let v: serde_json::Value = match serde_json::from_slice(value) {
            Ok(v) => v,
            Err(_) => match repair(value).and_then(|r| serde_json::from_slice(&r).ok()) {
                Some(v) => v,
                None => return,
            },
        };
        match key {
            "deviceProperties" => {
                let list = v.as_array().cloned().unwrap_or_default();
                self.meta.device_properties = list
                    .iter()
                    .map(|d| DeviceProperties {
                        id: d["id"].as_i64().unwrap_or(0),
                        name: d["name"].as_str().unwrap_or("").to_string(),
                        total_global_mem: d["totalGlobalMem"].as_u64(),
                        compute_major: d["computeMajor"].as_i64(),
                        compute_minor: d["computeMinor"].as_i64(),
                        num_sms: d["numSms"].as_i64(),
                    })
                    .collect();
            }
            "distributedInfo" => {
                self.meta.distributed = Some(DistributedInfo {
                    backend: v["backend"].as_str().map(str::to_string),
                    rank: v["rank"].as_i64().unwrap_or(0),
                    world_size: v["world_size"].as_i64(),
                });
            }
            "baseTimeNanoseconds" => self.meta.base_time_ns = v.as_i64(),
            "schemaVersion" => self.meta.schema_version = Some(v),
            _ if value.len() <= 64 << 10 => self.meta.other.push((key.to_string(), v)),
            _ => {}
        }
    }

    fn events_again(&mut self, offset: u64) {
        self.diagnostics.add(DiagKind::DuplicateKey, offset, || {
            "a second traceEvents array; its events are read after the first array's".into()
        });
    }

    fn trailing(&mut self, offset: u64) {
        self.diagnostics.add(DiagKind::TrailingData, offset, || {
            "bytes after the end of the JSON document were ignored".into()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::rows::assign_depths;

    fn lane_of(intervals: &[(i64, i64)]) -> SliceColumns {
        let mut s = FileSlices::default();
        let e = OpenBegin {
            ts: 0,
            name: StrId::NONE,
            cat: StrId::NONE,
            args: ArgsId::NONE,
            external_id: NO_ID,
            correlation: NO_ID,
            input_dims: StrId::NONE,
        };
        for &(start, dur) in intervals {
            s.push(0, start, dur, &e);
        }
        let mut s = gather_lanes(s, &[0], 0).0;
        assign_depths(&mut s);
        s
    }

    /// Random intervals from a deterministic generator: nested trees when `nested`, else anything.
    fn random_intervals(seed: u64, n: usize, nested: bool) -> Vec<(i64, i64)> {
        let mut x = seed;
        let mut next = |m: i64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as i64) % m.max(1)
        };
        let mut out = Vec::new();
        if nested {
            // Split [0, 10000) recursively: children lie inside their parent, siblings apart.
            let mut work = vec![(0i64, 10_000i64, 0u32)];
            while let Some((a, b, level)) = work.pop() {
                out.push((a, b - a));
                if level < 6 && b - a > 4 && out.len() < n {
                    let mut t = a;
                    while t < b && out.len() < n {
                        let len = next((b - t) / 2 + 1);
                        let gap = next(3);
                        if t + gap + len > b || len == 0 {
                            break;
                        }
                        work.push((t + gap, t + gap + len, level + 1));
                        t += gap + len;
                    }
                }
            }
        } else {
            for _ in 0..n {
                out.push((next(1000), next(100)));
            }
        }
        out
    }

    #[test]
    fn depth_of_nested_slices_equals_the_number_of_containing_slices() {
        for seed in 0..50 {
            let iv = random_intervals(seed, 300, true);
            let s = lane_of(&iv);
            let s = s.all();
            for i in 0..s.len() {
                // Naive oracle: how many other slices contain this one (earlier in sort order).
                let containing = (0..i)
                    .filter(|&j| s.start_ns[j] <= s.start_ns[i] && s.end_ns(i) <= s.end_ns(j))
                    .filter(|&j| {
                        s.end_ns(j) > s.start_ns[i] || s.dur_ns[i] == 0 && s.dur_ns[j] == 0
                    })
                    .count();
                assert_eq!(s.depth[i] as usize, containing, "seed {seed} slice {i}");
            }
        }
    }

    #[test]
    fn no_two_slices_on_a_row_overlap_whatever_the_input() {
        for seed in 0..50 {
            let s = lane_of(&random_intervals(seed, 200, false));
            let s = s.all();
            for i in 0..s.len() {
                for j in i + 1..s.len() {
                    if s.depth[i] == s.depth[j] && s.dur_ns[i] > 0 && s.dur_ns[j] > 0 {
                        let apart = s.end_ns(i) <= s.start_ns[j] || s.end_ns(j) <= s.start_ns[i];
                        assert!(
                            apart,
                            "seed {seed}: {i} and {j} overlap on row {}",
                            s.depth[i]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn enclosing_slice_is_the_deepest() {
        let s = lane_of(&[(0, 100), (10, 50), (20, 5), (60, 10)]);
        let s = s.all();
        assert_eq!(enclosing_slice(&s, 22), Some(2));
        assert_eq!(enclosing_slice(&s, 30), Some(1));
        assert_eq!(enclosing_slice(&s, 65), Some(3));
        assert_eq!(enclosing_slice(&s, 90), Some(0));
        assert_eq!(enclosing_slice(&s, 100), None);
    }
}
