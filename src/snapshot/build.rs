//! The builder: finished pickle values into the snapshot's columns, as the machine attaches them,
//! and the columns into a [`Snapshot`] by where the top-level dict puts them.
//!
//! A dict is told by its keys when it is finished, or by its first batch of items where those
//! make it whole ([`Builder::read_dict`]): one with `action` is a trace entry, one with `blocks`
//! and `total_size` a segment, one with `state` and `size` a block, one with `filename`, `line`
//! and `name` a frame, one with `device` and `time_us` (and no `action`) an external annotation.
//! Anything else stays a generic value (`allocator_settings`, unknown keys' values). Rows are
//! numbered in the order they are read; the top-level dict's lists say which rows are the
//! segments and which each device's trace (rows elsewhere, such as a dict that only looks like an
//! entry, are not part of the snapshot).

use super::model::*;
use super::value::{Container, Value, MAX_DEPTH};
use crate::room::room;
use rustc_hash::FxHashMap;

/// What kind of row a [`Value::Row`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    Entry,
    Block,
    Segment,
    Annotation,
}

impl RowKind {
    /// Every kind, in order (`ALL[k as usize] == k`).
    pub const ALL: [RowKind; 4] = [
        RowKind::Entry,
        RowKind::Block,
        RowKind::Segment,
        RowKind::Annotation,
    ];
}

/// The keys this reader reads, interned first so that a key is compared as a number.
#[derive(Clone, Copy)]
#[repr(u32)]
enum K {
    Action,
    Addr,
    Size,
    Stream,
    TimeUs,
    Frames,
    CompileContext,
    UserMetadata,
    DeviceFree,
    Filename,
    Line,
    Name,
    State,
    RequestedSize,
    Address,
    TotalSize,
    AllocatedSize,
    ActiveSize,
    SegmentType,
    SegmentPoolId,
    IsExpandable,
    Blocks,
    Device,
    Stage,
    Segments,
    DeviceTraces,
    ExternalAnnotations,
    AllocatorSettings,
    Large,
    ActiveAllocated,
    ActivePendingFree,
    Inactive,
    // The actions, in `Action`'s order.
    Alloc,
}

const KEY_TEXT: [&str; 41] = [
    "action",
    "addr",
    "size",
    "stream",
    "time_us",
    "frames",
    "compile_context",
    "user_metadata",
    "device_free",
    "filename",
    "line",
    "name",
    "state",
    "requested_size",
    "address",
    "total_size",
    "allocated_size",
    "active_size",
    "segment_type",
    "segment_pool_id",
    "is_expandable",
    "blocks",
    "device",
    "stage",
    "segments",
    "device_traces",
    "external_annotations",
    "allocator_settings",
    "large",
    "active_allocated",
    "active_pending_free",
    "inactive",
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "snapshot",
    "oom",
];

const ACTIONS: [Action; 9] = [
    Action::Alloc,
    Action::FreeRequested,
    Action::FreeCompleted,
    Action::SegmentAlloc,
    Action::SegmentFree,
    Action::SegmentMap,
    Action::SegmentUnmap,
    Action::Snapshot,
    Action::Oom,
];

/// Keys of one kind of dict that this reader does not read, counted (never named: they are the
/// file's bytes).
fn unknown_key(kind: &str) -> String {
    format!("keys of {kind} that this reader does not read (a newer torch's); counted, not kept")
}

/// Why the input is not a memory snapshot, or refused.
pub(crate) enum NotSnapshot {
    Other(String),
}

/// Columns being filled, and the interners.
pub(crate) struct Builder {
    strings: Vec<Box<str>>,
    string_ids: FxHashMap<Box<str>, u32>,
    frames: Frames,
    frame_ids: FxHashMap<(u32, i64, u32), u32>,
    stacks: Stacks,
    stack_ids: FxHashMap<Box<[u32]>, u32>,
    /// A list's frame ids, while its stack is looked up.
    scratch: Vec<u32>,
    entries: DeviceTrace,
    blocks: Blocks,
    segments: Segments,
    /// Each segment row's blocks: a run of block rows.
    segment_blocks: Vec<(u32, u32)>,
    annotations: Vec<Annotation>,
    diagnostics: Vec<Diagnostic>,
    /// Offset of the opcode being run, for diagnostics.
    pub at: u64,
    /// The pickle's size, when known before it is read: the trace entries' columns are then
    /// reserved for the whole of it (see [`Builder::entry`]).
    pub expect: Option<u64>,
    /// Offset of the first trace entry: where the density of entries is measured from.
    entries_at: u64,
}

impl Builder {
    pub fn new() -> Self {
        let mut b = Builder {
            strings: Vec::new(),
            string_ids: FxHashMap::default(),
            frames: Frames::default(),
            frame_ids: FxHashMap::default(),
            stacks: Stacks::default(),
            stack_ids: FxHashMap::default(),
            scratch: Vec::new(),
            entries: DeviceTrace::default(),
            blocks: Blocks::default(),
            segments: Segments::default(),
            segment_blocks: Vec::new(),
            annotations: Vec::new(),
            diagnostics: Vec::new(),
            at: 0,
            expect: None,
            entries_at: 0,
        };
        for k in KEY_TEXT {
            b.intern(k);
        }
        b.stack_ids.insert(Box::new([]), EMPTY_STACK);
        b
    }

    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.string_ids.insert(s.into(), id);
        id
    }

    /// Counts one occurrence of `kind`; the first one's offset and sentence are kept.
    pub fn diag(&mut self, kind: DiagKind, detail: impl FnOnce() -> String) {
        if let Some(d) = self.diagnostics.iter_mut().find(|d| d.kind == kind) {
            d.count += 1;
            return;
        }
        self.diagnostics.push(Diagnostic {
            kind,
            count: 1,
            first_offset: self.at,
            detail: detail(),
        });
    }

    /// A finished value: a row, a frame or a stack where it is one, else itself.
    pub fn convert(&mut self, v: Value) -> Value {
        match v {
            Value::Dict(c) => self.dict(c),
            Value::List(c)
                if c.run.is_none()
                    && !c.items.is_empty()
                    && c.items.iter().all(|v| matches!(v, Value::Frame(_))) =>
            {
                let mut ids = std::mem::take(&mut self.scratch);
                ids.clear();
                ids.extend(c.items.iter().map(|v| match v {
                    Value::Frame(f) => *f,
                    _ => unreachable!("checked above"),
                }));
                let stack = self.stack(&ids);
                self.scratch = ids;
                Value::Stack(stack)
            }
            v => v,
        }
    }

    fn stack(&mut self, ids: &[u32]) -> u32 {
        if let Some(&id) = self.stack_ids.get(ids) {
            return id;
        }
        let id = self.stacks.len() as u32;
        self.stacks.frames.extend_from_slice(ids);
        self.stacks.starts.push(self.stacks.frames.len() as u32);
        self.stack_ids.insert(ids.into(), id);
        id
    }

    /// A dict's items (keys and values alternating) read as a row or a frame, where its keys
    /// make one whole: what the machine does with a dict's first batch of items, from its stack.
    pub fn read_dict(&mut self, items: &[Value]) -> Option<Value> {
        let keys = keys(items);
        // Without its size an entry is dropped, which only its last batch can tell.
        if has(keys, K::Action) && !has(keys, K::Size) {
            return None;
        }
        let (_, make) = kind(keys)?;
        Some(make(self, items))
    }

    fn dict(&mut self, c: Box<Container>) -> Value {
        let Some((what, make)) = kind(keys(&c.items)) else {
            return Value::Dict(c);
        };
        if c.unfinished {
            self.diag(DiagKind::Dropped, || {
                format!("{what} left unfinished by the end of the file; dropped")
            });
            return Value::Lost;
        }
        make(self, &c.items)
    }

    // The field readers are inlined into the row makers, which run for nearly every dict of a
    // snapshot; what is wrong with a field is said out of line.
    #[inline]
    fn int(&mut self, v: &Value, what: &str) -> i64 {
        match v {
            Value::Int(i) => *i,
            Value::Bool(b) => *b as i64,
            _ => self.not_int(v, what),
        }
    }

    #[cold]
    fn not_int(&mut self, v: &Value, what: &str) -> i64 {
        let t = v.type_name();
        self.diag(DiagKind::BadField, || {
            format!("{what} is {t}, not an integer; read as 0")
        });
        0
    }

    #[inline]
    fn size(&mut self, v: &Value, what: &str) -> u64 {
        match v {
            Value::Int(i) if *i >= 0 => *i as u64,
            _ => self.not_size(v, what),
        }
    }

    #[cold]
    fn not_size(&mut self, v: &Value, what: &str) -> u64 {
        let i = self.int(v, what);
        u64::try_from(i).unwrap_or_else(|_| {
            self.diag(DiagKind::BadField, || {
                format!("{what} is negative; read as 0")
            });
            0
        })
    }

    #[inline]
    fn string(&mut self, v: &Value, what: &str) -> u32 {
        match v {
            Value::Str(s) => *s,
            Value::None => NO_STR,
            _ => self.not_string(v, what),
        }
    }

    #[cold]
    fn not_string(&mut self, v: &Value, what: &str) -> u32 {
        let t = v.type_name();
        self.diag(DiagKind::BadField, || {
            format!("{what} is {t}, not a string; read as absent")
        });
        NO_STR
    }

    #[inline]
    fn frames(&mut self, v: &Value) -> u32 {
        match v {
            Value::Stack(s) => *s,
            Value::List(c) if c.items.is_empty() && c.run.is_none() => EMPTY_STACK,
            _ => self.not_frames(v),
        }
    }

    #[cold]
    fn not_frames(&mut self, v: &Value) -> u32 {
        let t = v.type_name();
        self.diag(DiagKind::BadField, || {
            format!("frames is {t}, not a list of frames; read as no stack")
        });
        EMPTY_STACK
    }

    fn entry(&mut self, items: &[Value]) -> Value {
        let (mut action, mut other, mut addr, mut size) = (None, NO_STR, None, None);
        let (mut stream, mut time, mut stack) = (0, NO_TIME, EMPTY_STACK);
        let (mut context, mut metadata, mut unknown) = (NO_STR, NO_STR, false);
        for pair in items.chunks_exact(2) {
            let (k, v) = (&pair[0], &pair[1]);
            match key(k) {
                Some(K::Action) => {
                    let name = self.string(v, "action");
                    let known = name.wrapping_sub(K::Alloc as u32) as usize;
                    action = Some(ACTIONS.get(known).copied().unwrap_or(Action::Other));
                    if action == Some(Action::Other) {
                        other = name;
                    }
                }
                Some(K::Addr | K::DeviceFree) => addr = Some(self.size(v, "addr")),
                Some(K::Size) => size = Some(self.size(v, "size")),
                Some(K::Stream) => stream = self.int(v, "stream"),
                Some(K::TimeUs) => time = self.int(v, "time_us"),
                Some(K::Frames) => stack = self.frames(v),
                Some(K::CompileContext) => context = self.string(v, "compile_context"),
                Some(K::UserMetadata) => metadata = self.string(v, "user_metadata"),
                _ => unknown = true,
            }
        }
        if unknown {
            self.diag(DiagKind::UnknownKey, || unknown_key("trace entries"));
        }
        let (Some(action), Some(size)) = (action, size) else {
            self.diag(DiagKind::Dropped, || {
                "a trace entry without its action or size; dropped".into()
            });
            return Value::Lost;
        };
        let n = self.entries.len();
        if n == 0 {
            self.entries_at = self.at;
        }
        // Entries are the bulk of a snapshot, after its segments: their columns are reserved
        // from the density of entries alone, measured from the first.
        if n == self.entries.action.capacity() {
            let expect = self.expect.map(|end| (self.entries_at, end));
            self.entries.reserve_total(room(expect, n, self.at));
        }
        let row = n as u32;
        if action == Action::Other {
            self.diag(DiagKind::UnknownAction, || {
                "trace entries with an action this reader does not know; kept as 'other'".into()
            });
            self.entries.other_names.push((row, other));
        }
        let e = &mut self.entries;
        e.action.push(action);
        e.addr.push(addr.unwrap_or(0));
        e.size.push(size);
        e.stream.push(stream);
        e.time_us.push(time);
        e.stack.push(stack);
        e.compile_context.push(context);
        e.user_metadata.push(metadata);
        Value::Row(RowKind::Entry, row)
    }

    fn block(&mut self, items: &[Value]) -> Value {
        let (mut address, mut size, mut requested, mut state) = (0, 0, None, BlockState::Other);
        let (mut stack, mut unknown) = (EMPTY_STACK, false);
        for pair in items.chunks_exact(2) {
            let (k, v) = (&pair[0], &pair[1]);
            match key(k) {
                Some(K::Address) => address = self.size(v, "a block's address"),
                Some(K::Size) => size = self.size(v, "a block's size"),
                Some(K::RequestedSize) => requested = Some(self.size(v, "requested_size")),
                Some(K::State) => {
                    state = match self.string(v, "state") {
                        s if s == K::ActiveAllocated as u32 => BlockState::ActiveAllocated,
                        s if s == K::ActivePendingFree as u32 => BlockState::ActivePendingFree,
                        s if s == K::Inactive as u32 => BlockState::Inactive,
                        _ => BlockState::Other,
                    }
                }
                Some(K::Frames) => stack = self.frames(v),
                _ => unknown = true,
            }
        }
        if unknown {
            self.diag(DiagKind::UnknownKey, || unknown_key("blocks"));
        }
        let b = &mut self.blocks;
        let row = b.size.len() as u32;
        b.address.push(address);
        b.size.push(size);
        // `_memory_viz._block_extra_legacy`: a block without `requested_size` is its size.
        b.requested_size.push(requested.unwrap_or(size));
        b.state.push(state);
        b.stack.push(stack);
        Value::Row(RowKind::Block, row)
    }

    fn segment(&mut self, items: &[Value]) -> Value {
        let row = self.segments.address.len() as u32;
        let mut blocks = (self.blocks.len() as u32, 0);
        let mut s = SegmentRow::default();
        let mut unknown = false;
        for pair in items.chunks_exact(2) {
            let (k, v) = (&pair[0], &pair[1]);
            match key(k) {
                Some(K::Device) => s.device = self.int(v, "a segment's device"),
                Some(K::Address) => s.address = self.size(v, "a segment's address"),
                Some(K::TotalSize) => s.total = self.size(v, "total_size"),
                Some(K::AllocatedSize) => s.allocated = self.size(v, "allocated_size"),
                Some(K::ActiveSize) => s.active = self.size(v, "active_size"),
                Some(K::RequestedSize) => s.requested = self.size(v, "requested_size"),
                Some(K::Stream) => s.stream = self.int(v, "a segment's stream"),
                Some(K::SegmentType) => s.large = self.string(v, "segment_type") == K::Large as u32,
                Some(K::SegmentPoolId) => s.pool = self.pool(v),
                Some(K::IsExpandable) => s.expandable = matches!(v, Value::Bool(true)),
                Some(K::Frames) => s.stack = self.frames(v),
                Some(K::Blocks) => blocks = self.block_run(v),
                _ => unknown = true,
            }
        }
        if unknown {
            self.diag(DiagKind::UnknownKey, || unknown_key("segments"));
        }
        let g = &mut self.segments;
        g.device.push(s.device);
        g.address.push(s.address);
        g.total_size.push(s.total);
        g.allocated_size.push(s.allocated);
        g.active_size.push(s.active);
        g.requested_size.push(s.requested);
        g.stream.push(s.stream);
        g.large.push(s.large);
        g.pool_id.push(s.pool);
        g.is_expandable.push(s.expandable);
        g.stack.push(s.stack);
        self.segment_blocks.push(blocks);
        Value::Row(RowKind::Segment, row)
    }

    /// `segment_pool_id`: a tuple (or list) of two integers.
    fn pool(&mut self, v: &Value) -> (i64, i64) {
        match v {
            Value::Tuple(c) | Value::List(c) if c.items.len() == 2 => (
                self.int(&c.items[0], "segment_pool_id"),
                self.int(&c.items[1], "segment_pool_id"),
            ),
            _ => {
                let t = v.type_name();
                self.diag(DiagKind::BadField, || {
                    format!("segment_pool_id is {t}, not a pair; read as (0, 0)")
                });
                (0, 0)
            }
        }
    }

    /// A segment's `blocks` as one run of block rows; rows that are not in one run (a block
    /// shared by reference) are copied to the end so that they are.
    fn block_run(&mut self, v: &Value) -> (u32, u32) {
        let Value::List(c) = v else {
            let t = v.type_name();
            self.diag(DiagKind::BadField, || {
                format!("a segment's blocks is {t}, not a list; read as none")
            });
            return (self.blocks.len() as u32, 0);
        };
        match c.run {
            Some((RowKind::Block, start, len)) => (start, len),
            Some(_) => {
                self.diag(DiagKind::BadField, || {
                    "a segment's blocks are not blocks; read as none".into()
                });
                (self.blocks.len() as u32, 0)
            }
            None => {
                let start = self.blocks.len() as u32;
                for item in &c.items {
                    let Value::Row(RowKind::Block, r) = item else {
                        self.diag(DiagKind::Dropped, || {
                            "an item of a segment's blocks that is not a block; dropped".into()
                        });
                        continue;
                    };
                    let r = *r as usize;
                    let b = &mut self.blocks;
                    b.address.push(b.address[r]);
                    b.size.push(b.size[r]);
                    b.requested_size.push(b.requested_size[r]);
                    b.state.push(b.state[r]);
                    b.stack.push(b.stack[r]);
                }
                (start, self.blocks.len() as u32 - start)
            }
        }
    }

    fn frame(&mut self, items: &[Value]) -> Value {
        let (mut file, mut line, mut name) = (NO_STR, 0, NO_STR);
        for pair in items.chunks_exact(2) {
            let (k, v) = (&pair[0], &pair[1]);
            // Other keys (the `fx_*` ones of `augment_with_fx_traces`) are not read.
            match key(k) {
                Some(K::Filename) => file = self.string(v, "filename"),
                Some(K::Line) => line = self.int(v, "line"),
                Some(K::Name) => name = self.string(v, "name"),
                _ => {}
            }
        }
        let next = self.frames.len() as u32;
        let id = *self.frame_ids.entry((file, line, name)).or_insert(next);
        if id == next {
            self.frames.filename.push(file);
            self.frames.line.push(line);
            self.frames.name.push(name);
        }
        Value::Frame(id)
    }

    fn annotation(&mut self, items: &[Value]) -> Value {
        let mut a = Annotation {
            device: 0,
            time_us: NO_TIME,
            stage: NO_STR,
            name: NO_STR,
        };
        for pair in items.chunks_exact(2) {
            let (k, v) = (&pair[0], &pair[1]);
            // The other keys are the annotation's own metadata.
            match key(k) {
                Some(K::Device) => a.device = self.int(v, "an annotation's device"),
                Some(K::TimeUs) => a.time_us = self.int(v, "an annotation's time_us"),
                Some(K::Stage) => a.stage = self.string(v, "stage"),
                Some(K::Name) => a.name = self.string(v, "an annotation's name"),
                _ => {}
            }
        }
        self.annotations.push(a);
        Value::Row(RowKind::Annotation, self.annotations.len() as u32 - 1)
    }

    /// The rows of `kind` a list holds, as runs; other items are counted and dropped.
    fn runs(&mut self, v: &Value, kind: RowKind, what: &str) -> Vec<(u32, u32)> {
        let Value::List(c) = v else {
            let t = v.type_name();
            self.diag(DiagKind::BadField, || format!("{what} is {t}, not a list"));
            return Vec::new();
        };
        if let Some((k, start, len)) = c.run {
            if k == kind {
                return vec![(start, len)];
            }
        }
        let mut out: Vec<(u32, u32)> = Vec::new();
        for item in &c.items {
            match item {
                Value::Row(k, r) if *k == kind => match out.last_mut() {
                    Some((s, l)) if *s + *l == *r => *l += 1,
                    _ => out.push((*r, 1)),
                },
                _ => self.diag(DiagKind::Dropped, || {
                    format!("an item of {what} that is not what it holds; dropped")
                }),
            }
        }
        out
    }

    /// The snapshot the top-level value describes.
    pub fn finish(
        mut self,
        root: Option<Value>,
        stats: SnapshotStats,
    ) -> Result<Snapshot, NotSnapshot> {
        let Some(Value::Dict(root)) = root else {
            let what = root.as_ref().map_or("nothing", Value::type_name);
            return Err(NotSnapshot::Other(format!(
                "not a memory snapshot: a pickle of {what}, not of a dict with 'segments' and \
                 'device_traces'"
            )));
        };
        let mut snap = Snapshot::default();
        let (mut seen, mut unknown) = (false, false);
        let mut segment_runs = Vec::new();
        let mut device_runs: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut annotation_runs = Vec::new();
        for pair in root.items.chunks_exact(2) {
            let (k, v) = (&pair[0], &pair[1]);
            match key(k) {
                Some(K::Segments) => {
                    seen = true;
                    segment_runs = self.runs(v, RowKind::Segment, "segments");
                }
                Some(K::DeviceTraces) => {
                    seen = true;
                    match v {
                        Value::List(c) => {
                            for d in &c.items {
                                let r = self.runs(d, RowKind::Entry, "a device trace");
                                device_runs.push(r);
                            }
                        }
                        _ => self.diag(DiagKind::BadField, || "device_traces is not a list".into()),
                    }
                }
                Some(K::ExternalAnnotations) => {
                    annotation_runs = self.runs(v, RowKind::Annotation, "external_annotations");
                }
                Some(K::AllocatorSettings) => {
                    if let Value::Dict(c) = v {
                        for pair in c.items.chunks_exact(2) {
                            let k = render(&self.strings, &pair[0], 0);
                            let v = render(&self.strings, &pair[1], 0);
                            snap.allocator_settings.push((k, v));
                        }
                    }
                }
                _ => unknown = true,
            }
        }
        if !seen {
            return Err(NotSnapshot::Other(
                "not a memory snapshot: a pickle of a dict without 'segments' or 'device_traces'"
                    .into(),
            ));
        }
        if unknown {
            self.diag(DiagKind::UnknownKey, || unknown_key("the snapshot"));
        }
        for &(start, len) in &segment_runs {
            for s in start..start + len {
                self.take_segment(&mut snap, s as usize);
            }
        }
        snap.segments.block_starts.push(snap.blocks.len() as u32);
        snap.devices = split_devices(std::mem::take(&mut self.entries), &device_runs);
        for &(start, len) in &annotation_runs {
            snap.annotations
                .extend_from_slice(&self.annotations[start as usize..(start + len) as usize]);
        }
        snap.strings = self.strings;
        snap.frames = self.frames;
        snap.stacks = self.stacks;
        snap.stats = stats;
        snap.diagnostics = self.diagnostics;
        Ok(snap)
    }

    fn take_segment(&self, snap: &mut Snapshot, s: usize) {
        let (g, from) = (&mut snap.segments, &self.segments);
        g.block_starts.push(snap.blocks.len() as u32);
        g.device.push(from.device[s]);
        g.address.push(from.address[s]);
        g.total_size.push(from.total_size[s]);
        g.allocated_size.push(from.allocated_size[s]);
        g.active_size.push(from.active_size[s]);
        g.requested_size.push(from.requested_size[s]);
        g.stream.push(from.stream[s]);
        g.large.push(from.large[s]);
        g.pool_id.push(from.pool_id[s]);
        g.is_expandable.push(from.is_expandable[s]);
        g.stack.push(from.stack[s]);
        let (start, len) = self.segment_blocks[s];
        let range = start as usize..(start + len) as usize;
        let (b, from) = (&mut snap.blocks, &self.blocks);
        b.address.extend_from_slice(&from.address[range.clone()]);
        b.size.extend_from_slice(&from.size[range.clone()]);
        b.requested_size
            .extend_from_slice(&from.requested_size[range.clone()]);
        b.state.extend_from_slice(&from.state[range.clone()]);
        b.stack.extend_from_slice(&from.stack[range]);
    }
}

#[derive(Default)]
struct SegmentRow {
    device: i64,
    address: u64,
    total: u64,
    allocated: u64,
    active: u64,
    requested: u64,
    stream: i64,
    large: bool,
    pool: (i64, i64),
    expandable: bool,
    stack: u32,
}

/// A dict's keys this reader reads, one bit each.
fn keys(items: &[Value]) -> u64 {
    let mut keys = 0u64;
    for pair in items.chunks_exact(2) {
        if let Value::Str(k) = pair[0] {
            if k < 64 {
                keys |= 1 << k;
            }
        }
    }
    keys
}

fn has(keys: u64, k: K) -> bool {
    keys & (1 << k as u32) != 0
}

type Make = fn(&mut Builder, &[Value]) -> Value;

/// What a dict with these keys is (see the module doc), and what reads it.
fn kind(keys: u64) -> Option<(&'static str, Make)> {
    let has = |k| has(keys, k);
    Some(if has(K::Action) {
        ("a trace entry", Builder::entry)
    } else if has(K::Blocks) && has(K::TotalSize) {
        ("a segment", Builder::segment)
    } else if has(K::State) && has(K::Size) {
        ("a block", Builder::block)
    } else if has(K::Filename) && has(K::Line) && has(K::Name) {
        ("a frame", Builder::frame)
    } else if has(K::Device) && has(K::TimeUs) {
        ("an annotation", Builder::annotation)
    } else {
        return None;
    })
}

fn key(v: &Value) -> Option<K> {
    let Value::Str(k) = v else { return None };
    if (*k as usize) < KEY_TEXT.len() {
        // Ids below `K::Large` are the keys, in order; the values interned after them (states,
        // action names) are not keys.
        const KEYS: [K; 33] = [
            K::Action,
            K::Addr,
            K::Size,
            K::Stream,
            K::TimeUs,
            K::Frames,
            K::CompileContext,
            K::UserMetadata,
            K::DeviceFree,
            K::Filename,
            K::Line,
            K::Name,
            K::State,
            K::RequestedSize,
            K::Address,
            K::TotalSize,
            K::AllocatedSize,
            K::ActiveSize,
            K::SegmentType,
            K::SegmentPoolId,
            K::IsExpandable,
            K::Blocks,
            K::Device,
            K::Stage,
            K::Segments,
            K::DeviceTraces,
            K::ExternalAnnotations,
            K::AllocatorSettings,
            K::Large,
            K::ActiveAllocated,
            K::ActivePendingFree,
            K::Inactive,
            K::Alloc,
        ];
        return KEYS
            .get(*k as usize)
            .copied()
            .filter(|k| (*k as u32) < K::Large as u32);
    }
    None
}

/// Each device's rows: moved out of the table when the runs are one per device in row order
/// (what a pickler writes), copied otherwise.
fn split_devices(mut all: DeviceTrace, runs: &[Vec<(u32, u32)>]) -> Vec<DeviceTrace> {
    let simple = runs.iter().all(|r| r.len() <= 1)
        && runs
            .iter()
            .flatten()
            .zip(runs.iter().flatten().skip(1))
            .all(|(a, b)| a.0 + a.1 <= b.0);
    if !simple {
        return runs
            .iter()
            .map(|r| {
                let mut d = DeviceTrace::default();
                for &(start, len) in r {
                    for i in start..start + len {
                        d.push_row(&all, i as usize);
                        if all.action[i as usize] == Action::Other {
                            let name = other_name(&all, i);
                            d.other_names.push((d.len() as u32 - 1, name));
                        }
                    }
                }
                d
            })
            .collect();
    }
    let mut out: Vec<DeviceTrace> = Vec::with_capacity(runs.len());
    for r in runs.iter().rev() {
        let Some(&(start, len)) = r.first() else {
            out.push(DeviceTrace::default());
            continue;
        };
        truncate(&mut all, (start + len) as usize);
        // `Vec::split_off(0)` copies the rows into a new vector while the table keeps its own
        // buffer: the whole table twice, in wasm memory.
        out.push(if start == 0 {
            std::mem::take(&mut all)
        } else {
            split_off(&mut all, start as usize)
        });
    }
    out.reverse();
    out
}

fn other_name(d: &DeviceTrace, row: u32) -> u32 {
    d.other_names
        .binary_search_by_key(&row, |&(r, _)| r)
        .map_or(NO_STR, |i| d.other_names[i].1)
}

fn truncate(d: &mut DeviceTrace, n: usize) {
    d.action.truncate(n);
    d.addr.truncate(n);
    d.size.truncate(n);
    d.stream.truncate(n);
    d.time_us.truncate(n);
    d.stack.truncate(n);
    d.compile_context.truncate(n);
    d.user_metadata.truncate(n);
    d.other_names.retain(|&(r, _)| (r as usize) < n);
}

fn split_off(d: &mut DeviceTrace, at: usize) -> DeviceTrace {
    let cut = d.other_names.partition_point(|&(r, _)| (r as usize) < at);
    DeviceTrace {
        action: d.action.split_off(at),
        addr: d.addr.split_off(at),
        size: d.size.split_off(at),
        stream: d.stream.split_off(at),
        time_us: d.time_us.split_off(at),
        stack: d.stack.split_off(at),
        compile_context: d.compile_context.split_off(at),
        user_metadata: d.user_metadata.split_off(at),
        other_names: d
            .other_names
            .split_off(cut)
            .into_iter()
            .map(|(r, n)| (r - at as u32, n))
            .collect(),
    }
}

/// A generic value as Python prints it (`allocator_settings`); depth is bounded by the
/// machine's [`MAX_DEPTH`].
fn render(strings: &[Box<str>], v: &Value, depth: u8) -> String {
    let join = |items: &[Value], sep: &str| -> Vec<String> {
        if depth > MAX_DEPTH {
            return vec!["...".into()];
        }
        items
            .chunks(if sep == ": " { 2 } else { 1 })
            .map(|c| {
                c.iter()
                    .map(|v| render(strings, v, depth + 1))
                    .collect::<Vec<_>>()
                    .join(sep)
            })
            .collect()
    };
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
        Value::Float(f) => f.to_string(),
        Value::Str(s) if depth == 0 => strings[*s as usize].to_string(),
        Value::Str(s) => format!("'{}'", strings[*s as usize]),
        Value::List(c) => format!("[{}]", join(&c.items, "").join(", ")),
        Value::Tuple(c) => format!("({})", join(&c.items, "").join(", ")),
        Value::Dict(c) => format!("{{{}}}", join(&c.items, ": ").join(", ")),
        other => format!("<{}>", other.type_name()),
    }
}
