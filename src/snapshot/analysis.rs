//! Every figure of a snapshot, as pure functions of the model returning serde structures that the
//! CLI prints and `--json` writes.
//!
//! Definitions follow what users compare against:
//! - Segments ([`segments`]) are counted as `torch/cuda/_memory_viz.py`'s `segsum` counts them:
//!   reserved is `total_size`; allocated is the `requested_size` of `active_allocated` blocks;
//!   free internal is what those blocks hold past their request (rounding); free external is
//!   every other block's size. Reserved is allocated plus both frees, per segment and in total.
//! - The folded stacks ([`folded`]) are the lines `_memory_viz.segments` and `memory` hand to
//!   `format_flamegraph`, byte for byte (the same frame filter and order).
//! - The timeline ([`device_memory`]) replays each device's `alloc` (bytes live from it) and
//!   `free_completed` (bytes free for reuse from it) in recorded order. Memory allocated before
//!   recording began is counted from the start: a `free_completed` of an address the trace never
//!   allocated, and an `active_allocated` block of the snapshot the trace never allocated (as
//!   `MemoryViz.js` does). The peak is the first entry after which the live bytes are highest.
//! - What is live at the peak is grouped by its allocation's stack: the first user frame (the
//!   innermost Python frame outside torch and installed packages, else the innermost Python
//!   frame), its file and line, its file, the `external_annotations` range open when it was
//!   allocated (the innermost, as Mosaic pairs `START` and `END` by name), its
//!   `compile_context`, and its category ([`category`], Mosaic's rules).
//! - An `oom` entry is explained by what the replay says was live then, what it asked for, and
//!   what the device had free (`device_free`).
//! - The diff of two snapshots subtracts the groups at each one's peak, device by device.

use super::model::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// One segment as `segsum` counts it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SegmentFigures {
    pub device: i64,
    pub address: u64,
    pub stream: i64,
    pub large: bool,
    pub pool_id: (i64, i64),
    pub is_expandable: bool,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub free_internal_bytes: u64,
    pub free_external_bytes: u64,
    /// Sum of the sizes of `active_allocated` blocks (`_memory_viz.calc_active`).
    pub active_bytes: u64,
    pub blocks: usize,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SegmentSummary {
    pub segments: Vec<SegmentFigures>,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub free_internal_bytes: u64,
    pub free_external_bytes: u64,
}

/// The segments in file order, with the totals.
pub fn segments(snap: &Snapshot) -> SegmentSummary {
    let (g, b) = (&snap.segments, &snap.blocks);
    let mut out = SegmentSummary {
        segments: Vec::with_capacity(g.len()),
        reserved_bytes: 0,
        allocated_bytes: 0,
        free_internal_bytes: 0,
        free_external_bytes: 0,
    };
    for s in 0..g.len() {
        let mut f = SegmentFigures {
            device: g.device[s],
            address: g.address[s],
            stream: g.stream[s],
            large: g.large[s],
            pool_id: g.pool_id[s],
            is_expandable: g.is_expandable[s],
            reserved_bytes: g.total_size[s],
            allocated_bytes: 0,
            free_internal_bytes: 0,
            free_external_bytes: 0,
            active_bytes: 0,
            blocks: g.blocks(s).len(),
        };
        for i in g.blocks(s) {
            if b.state[i] == BlockState::ActiveAllocated {
                f.allocated_bytes += b.requested_size[i];
                f.free_internal_bytes += b.size[i].saturating_sub(b.requested_size[i]);
                f.active_bytes += b.size[i];
            } else {
                f.free_external_bytes += b.size[i];
            }
        }
        out.reserved_bytes += f.reserved_bytes;
        out.allocated_bytes += f.allocated_bytes;
        out.free_internal_bytes += f.free_internal_bytes;
        out.free_external_bytes += f.free_external_bytes;
        out.segments.push(f);
    }
    out
}

/// `_memory_viz._frame_filter`: frames of the interpreter and the dispatcher that its flame
/// graphs leave out.
pub fn frame_shown(name: &str, filename: &str) -> bool {
    const FUNCTIONS: [&str; 8] = [
        "unwind::unwind",
        "CapturedTraceback::gather",
        "gather_with_cpp",
        "_start",
        "__libc_start_main",
        "PyEval_",
        "PyObject_",
        "PyFunction_",
    ];
    const FILES: [&str; 10] = [
        "core/boxing",
        "/Register",
        "/Redispatch",
        "pythonrun.c",
        "Modules/main.c",
        "Objects/call.c",
        "Objects/methodobject.c",
        "pycore_ceval.h",
        "ceval.c",
        "cpython/abstract.h",
    ];
    !FUNCTIONS.iter().any(|f| name.contains(f)) && !FILES.iter().any(|f| filename.contains(f))
}

/// Which prefix the folded lines carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folded {
    /// `stream_S;seg_ADDRESS`, as `_memory_viz.segments`.
    Segments,
    /// `stream_S`, as `_memory_viz.memory`.
    Memory,
}

/// The folded-stack text `_memory_viz.segments` or `memory` hands to `format_flamegraph`.
pub fn folded(snap: &Snapshot, by: Folded) -> String {
    let (g, b) = (&snap.segments, &snap.blocks);
    let mut out = String::new();
    for s in 0..g.len() {
        let prefix = match by {
            Folded::Segments => format!("stream_{};seg_{}", g.stream[s], g.address[s]),
            Folded::Memory => format!("stream_{}", g.stream[s]),
        };
        for i in g.blocks(s) {
            let state = b.state[i].as_str();
            let frames = snap.stacks.get(b.stack[i]);
            let fragment = if frames.is_empty() {
                "<non-python>".to_string()
            } else {
                frames
                    .iter()
                    .rev()
                    .filter(|&&f| frame_shown(frame_name(snap, f), frame_file(snap, f)))
                    .map(|&f| frame_text(snap, f))
                    .collect::<Vec<_>>()
                    .join(";")
            };
            out.push_str(&format!(
                "{prefix};{state};{fragment} {}\n",
                b.requested_size[i]
            ));
            let gaps = b.size[i] as i128 - b.requested_size[i] as i128;
            if gaps != 0 {
                out.push_str(&format!("{prefix};{state};<gaps> {gaps}\n"));
            }
        }
    }
    out
}

fn frame_name(snap: &Snapshot, f: u32) -> &str {
    snap.str(snap.frames.name[f as usize])
}

fn frame_file(snap: &Snapshot, f: u32) -> &str {
    snap.str(snap.frames.filename[f as usize])
}

/// `_memory_viz._frame_fmt`: `basename:line:function`.
pub fn frame_text(snap: &Snapshot, f: u32) -> String {
    let file = frame_file(snap, f);
    let base = file.rsplit('/').next().unwrap_or(file);
    format!(
        "{base}:{}:{}",
        snap.frames.line[f as usize],
        frame_name(snap, f)
    )
}

/// The first user frame of a stack (innermost first): the innermost Python frame outside
/// torch, the interpreter's library and installed packages; else the innermost Python frame.
pub fn user_frame(snap: &Snapshot, stack: u32) -> Option<u32> {
    let frames = snap.stacks.get(stack);
    let python = |f: &&u32| frame_file(snap, **f).ends_with(".py");
    let user = frames.iter().filter(python).find(|&&f| {
        let file = frame_file(snap, f);
        ![
            "/torch/",
            "site-packages/",
            "dist-packages/",
            "/lib/python",
            "<frozen",
        ]
        .iter()
        .any(|p| file.contains(p))
    });
    user.or_else(|| frames.iter().find(python)).copied()
}

/// What an allocation holds, read from its stack with Mosaic's rules
/// (`AllocationType.from_frame_stack`), innermost frame first, the first rule that matches.
/// Mosaic's `backward` is named gradient here, and its `net`, `net_setup` and `stats` are
/// other; what no rule matches is other too.
pub fn category(snap: &Snapshot, stack: u32) -> &'static str {
    let frames = snap.stacks.get(stack);
    if frames.is_empty() {
        return "unknown";
    }
    if frames
        .iter()
        .any(|&f| frame_file(snap, f).contains("fully_sharded_data_parallel.py"))
    {
        return "fsdp";
    }
    for &f in frames {
        let (name, file) = (frame_name(snap, f), frame_file(snap, f));
        if name.contains("forward") {
            return "activation";
        }
        if name.contains("param")
            || file.contains("flatten_params_wrapper")
            || name.contains("build_norm_fn")
            || (name.contains("__init__") && file.contains("parallel/layers.py"))
        {
            return "parameter";
        }
        if name.contains("backward") || name == "clip_grad_norm_" || name == "calc_grad_norm" {
            return "gradient";
        }
        if name == "custom_adamw" || name == "_init_group" {
            return "optimizer_state";
        }
    }
    "other"
}

/// One group of live memory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Group {
    pub key: String,
    pub bytes: u64,
    pub allocations: u64,
}

/// What is live at one moment, grouped each way; groups largest first.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Groups {
    pub by_frame: Vec<Group>,
    pub by_line: Vec<Group>,
    pub by_file: Vec<Group>,
    pub by_annotation: Vec<Group>,
    pub by_category: Vec<Group>,
    pub by_compile_context: Vec<Group>,
}

/// The group of memory allocated before recording began (no stack to read).
pub const BEFORE: &str = "<allocated before recording>";

/// One device's timeline and peak.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceMemory {
    pub device: usize,
    pub entries: usize,
    pub allocs: u64,
    pub frees: u64,
    /// Bytes live when recording began (see the module doc).
    pub before_bytes: u64,
    pub peak_bytes: u64,
    /// The entry after which the peak is reached; `None` when it is the start.
    pub peak_entry: Option<usize>,
    pub peak_time_us: Option<i64>,
    pub end_bytes: u64,
    /// Live at the peak, every group (callers cut to the top N).
    pub at_peak: Groups,
    /// `oom` entries of the device; the first [`MAX_OOMS`] are explained in `ooms`.
    pub oom_count: usize,
    pub ooms: Vec<Oom>,
}

/// How many `oom` entries of a device are explained.
pub const MAX_OOMS: usize = 16;

/// An `oom` entry explained.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Oom {
    pub entry: usize,
    pub time_us: Option<i64>,
    pub stream: i64,
    pub requested_bytes: u64,
    /// What the device had free (`device_free`).
    pub device_free_bytes: u64,
    /// What was missing: requested minus free.
    pub short_bytes: u64,
    /// What the replay says was live then.
    pub live_bytes: u64,
    /// Where the failed allocation came from (the first user frame).
    pub frame: Option<String>,
    pub live: Groups,
}

/// One live allocation of the replay: its size and the entry that made it (`None`: before
/// recording).
#[derive(Clone, Copy)]
struct Live {
    size: u64,
    entry: Option<usize>,
}

/// Replays one device: the live bytes before the first entry and after each, and the
/// allocations before recording (address, size, the entry that frees it if any).
pub(super) struct Replay {
    pub(super) before: Vec<(u64, u64, Option<usize>)>,
    pub(super) live_after: Vec<u64>,
    allocs: u64,
    frees: u64,
}

pub(super) fn replay(snap: &Snapshot, device: usize) -> Replay {
    let t = &snap.devices[device];
    let mut live: FxHashMap<u64, u64> = FxHashMap::default();
    let mut before = Vec::new();
    let (mut allocs, mut frees) = (0, 0);
    for i in 0..t.len() {
        match t.action[i] {
            Action::Alloc => {
                allocs += 1;
                live.insert(t.addr[i], t.size[i]);
            }
            Action::FreeCompleted => {
                frees += 1;
                if live.remove(&t.addr[i]).is_none() {
                    before.push((t.addr[i], t.size[i], Some(i)));
                }
            }
            _ => {}
        }
    }
    let (g, b) = (&snap.segments, &snap.blocks);
    for s in (0..g.len()).filter(|&s| g.device[s] == device as i64) {
        for k in g.blocks(s) {
            if b.state[k] == BlockState::ActiveAllocated && !live.contains_key(&b.address[k]) {
                before.push((b.address[k], b.requested_size[k], None));
            }
        }
    }
    let start: u64 = before.iter().map(|b| b.1).sum();
    let mut bytes = start;
    let mut live_after = Vec::with_capacity(t.len() + 1);
    live_after.push(start);
    for i in 0..t.len() {
        match t.action[i] {
            Action::Alloc => bytes += t.size[i],
            Action::FreeCompleted => bytes = bytes.saturating_sub(t.size[i]),
            _ => {}
        }
        live_after.push(bytes);
    }
    Replay {
        before,
        live_after,
        allocs,
        frees,
    }
}

/// The allocations live just after entry `upto` (`None`: before the first entry).
fn live_at(snap: &Snapshot, device: usize, r: &Replay, upto: Option<usize>) -> Vec<Live> {
    let t = &snap.devices[device];
    let mut live: FxHashMap<u64, Live> = FxHashMap::default();
    let end = upto.map_or(0, |u| u + 1);
    for i in 0..end {
        match t.action[i] {
            Action::Alloc => {
                live.insert(
                    t.addr[i],
                    Live {
                        size: t.size[i],
                        entry: Some(i),
                    },
                );
            }
            Action::FreeCompleted => {
                live.remove(&t.addr[i]);
            }
            _ => {}
        }
    }
    let mut out: Vec<Live> = live.into_values().collect();
    for &(_, size, freed) in &r.before {
        if freed.is_none_or(|f| f >= end) {
            out.push(Live { size, entry: None });
        }
    }
    out
}

/// The innermost annotation open at each entry of a device (Mosaic's pairing), as string ids.
fn annotations_per_entry(snap: &Snapshot, device: usize) -> Vec<u32> {
    let t = &snap.devices[device];
    let mut marks: Vec<&Annotation> = snap
        .annotations
        .iter()
        .filter(|a| a.device == device as i64 && a.time_us != NO_TIME)
        .collect();
    marks.sort_by_key(|a| a.time_us);
    let (start, end) = (
        snap.strings.iter().position(|s| &**s == "START"),
        snap.strings.iter().position(|s| &**s == "END"),
    );
    // The open ranges in order, each with whether it is still open; an `END` closes the last
    // open one of its name (found through `by_name`), and closed ones leave the top lazily, so
    // no sequence of annotations costs more than a constant per annotation.
    let mut open: Vec<(u32, bool)> = Vec::new();
    let mut by_name: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    let mut next = 0;
    let mut out = Vec::with_capacity(t.len());
    for i in 0..t.len() {
        while next < marks.len() && t.time_us[i] != NO_TIME && t.time_us[i] >= marks[next].time_us {
            let a = marks[next];
            if Some(a.stage as usize) == start {
                by_name.entry(a.name).or_default().push(open.len());
                open.push((a.name, true));
            } else if Some(a.stage as usize) == end {
                if let Some(p) = by_name.get_mut(&a.name).and_then(Vec::pop) {
                    open[p].1 = false;
                }
            }
            while open.last().is_some_and(|o| !o.1) {
                open.pop();
            }
            next += 1;
        }
        out.push(open.last().map_or(NO_STR, |o| o.0));
    }
    out
}

fn group(live: &[Live], mut key: impl FnMut(Option<usize>) -> String) -> Vec<Group> {
    let mut groups: FxHashMap<String, (u64, u64)> = FxHashMap::default();
    for l in live {
        let g = groups.entry(key(l.entry)).or_default();
        g.0 += l.size;
        g.1 += 1;
    }
    let mut out: Vec<Group> = groups
        .into_iter()
        .map(|(key, (bytes, allocations))| Group {
            key,
            bytes,
            allocations,
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
    out
}

fn groups(snap: &Snapshot, device: usize, live: &[Live], annotations: &[u32]) -> Groups {
    let t = &snap.devices[device];
    // An absent string and an empty one (what torch records without a context) are one group.
    let text = |id: u32, none: &str| match snap.str(id) {
        "" => none.to_string(),
        s => s.to_string(),
    };
    let frame = |e: Option<usize>| e.map(|e| (t.stack[e], user_frame(snap, t.stack[e])));
    let frame_key = |e: Option<usize>, f: &dyn Fn(u32) -> String| match frame(e) {
        None => BEFORE.to_string(),
        Some((s, _)) if snap.stacks.get(s).is_empty() => "<no stack>".to_string(),
        Some((_, None)) => "<no python frame>".to_string(),
        Some((_, Some(u))) => f(u),
    };
    Groups {
        by_frame: group(live, |e| frame_key(e, &|u| frame_text(snap, u))),
        by_line: group(live, |e| {
            frame_key(e, &|u| {
                format!("{}:{}", frame_file(snap, u), snap.frames.line[u as usize])
            })
        }),
        by_file: group(live, |e| frame_key(e, &|u| frame_file(snap, u).to_string())),
        by_annotation: group(live, |e| match e {
            None => BEFORE.into(),
            Some(e) => text(annotations[e], "<no annotation>"),
        }),
        by_category: group(live, |e| match e {
            None => BEFORE.into(),
            Some(e) => category(snap, t.stack[e]).into(),
        }),
        by_compile_context: group(live, |e| match e {
            None => BEFORE.into(),
            Some(e) => text(t.compile_context[e], "<none>"),
        }),
    }
}

/// One device's timeline, peak, what is live at the peak and its `oom` entries.
pub fn device_memory(snap: &Snapshot, device: usize) -> DeviceMemory {
    let t = &snap.devices[device];
    let r = replay(snap, device);
    // The first entry after which the live bytes are highest.
    let mut peak = 0;
    for (i, &b) in r.live_after.iter().enumerate() {
        if b > r.live_after[peak] {
            peak = i;
        }
    }
    let peak_entry = peak.checked_sub(1);
    let annotations = annotations_per_entry(snap, device);
    let live = live_at(snap, device, &r, peak_entry);
    let at_peak = groups(snap, device, &live, &annotations);
    let time = |e: usize| Some(t.time_us[e]).filter(|&t| t != NO_TIME);
    let oom_entries: Vec<usize> = (0..t.len())
        .filter(|&i| t.action[i] == Action::Oom)
        .collect();
    // Each explained `oom` replays the trace up to it: the first few are explained, all counted.
    let ooms = oom_entries
        .iter()
        .take(MAX_OOMS)
        .map(|&i| {
            let before = i.checked_sub(1);
            let live = live_at(snap, device, &r, before);
            Oom {
                entry: i,
                time_us: time(i),
                stream: t.stream[i],
                requested_bytes: t.size[i],
                device_free_bytes: t.addr[i],
                short_bytes: t.size[i].saturating_sub(t.addr[i]),
                live_bytes: r.live_after[i],
                frame: user_frame(snap, t.stack[i]).map(|f| frame_text(snap, f)),
                live: groups(snap, device, &live, &annotations),
            }
        })
        .collect();
    DeviceMemory {
        device,
        entries: t.len(),
        allocs: r.allocs,
        frees: r.frees,
        before_bytes: r.live_after[0],
        peak_bytes: r.live_after[peak],
        peak_entry,
        peak_time_us: peak_entry.and_then(time),
        end_bytes: *r.live_after.last().expect("the start is always there"),
        at_peak,
        oom_count: oom_entries.len(),
        ooms,
    }
}

/// The live bytes after each entry of a device (the start first): the timeline, for a chart.
pub fn live_bytes(snap: &Snapshot, device: usize) -> Vec<u64> {
    replay(snap, device).live_after
}

/// Everything `sightline snapshot FILE` shows.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SnapshotReport"))]
pub struct Report {
    pub stats: SnapshotStats,
    pub frames: usize,
    pub stacks: usize,
    pub entries: usize,
    pub annotations: usize,
    pub segments: SegmentSummary,
    pub devices: Vec<DeviceMemory>,
    pub allocator_settings: Vec<(String, String)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The report, each group list cut to its `top` largest (the rest summed into `<other>`).
pub fn report(snap: &Snapshot, top: usize) -> Report {
    let devices = (0..snap.devices.len())
        .filter(|&d| !snap.devices[d].is_empty())
        .map(|d| {
            let mut m = device_memory(snap, d);
            cut(&mut m.at_peak, top);
            for o in &mut m.ooms {
                cut(&mut o.live, top);
            }
            m
        })
        .collect();
    Report {
        stats: snap.stats.clone(),
        frames: snap.frames.len(),
        stacks: snap.stacks.len(),
        entries: snap.entries(),
        annotations: snap.annotations.len(),
        segments: segments(snap),
        devices,
        allocator_settings: snap.allocator_settings.clone(),
        diagnostics: snap.diagnostics.clone(),
    }
}

fn cut(g: &mut Groups, top: usize) {
    for list in [
        &mut g.by_frame,
        &mut g.by_line,
        &mut g.by_file,
        &mut g.by_annotation,
        &mut g.by_category,
        &mut g.by_compile_context,
    ] {
        if list.len() > top {
            let rest = list.split_off(top);
            list.push(Group {
                key: "<other>".into(),
                bytes: rest.iter().map(|g| g.bytes).sum(),
                allocations: rest.iter().map(|g| g.allocations).sum(),
            });
        }
    }
}

/// One group in both snapshots.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffRow {
    pub key: String,
    pub base_bytes: u64,
    pub new_bytes: u64,
    pub delta_bytes: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffGroups {
    pub by_frame: Vec<DiffRow>,
    pub by_line: Vec<DiffRow>,
    pub by_file: Vec<DiffRow>,
    pub by_annotation: Vec<DiffRow>,
    pub by_category: Vec<DiffRow>,
    pub by_compile_context: Vec<DiffRow>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceDiff {
    pub device: usize,
    pub base_peak_bytes: u64,
    pub new_peak_bytes: u64,
    pub delta_peak_bytes: i64,
    /// At each one's peak, what grew first.
    pub at_peak: DiffGroups,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SnapshotDiff"))]
pub struct Diff {
    pub delta_reserved_bytes: i64,
    pub delta_allocated_bytes: i64,
    pub devices: Vec<DeviceDiff>,
}

fn delta(a: u64, b: u64) -> i64 {
    (b as i128 - a as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn diff_rows(a: &[Group], b: &[Group], top: usize) -> Vec<DiffRow> {
    let mut rows: FxHashMap<&str, (u64, u64)> = FxHashMap::default();
    for g in a {
        rows.entry(&g.key).or_default().0 += g.bytes;
    }
    for g in b {
        rows.entry(&g.key).or_default().1 += g.bytes;
    }
    let mut out: Vec<DiffRow> = rows
        .into_iter()
        .map(|(key, (x, y))| DiffRow {
            key: key.to_string(),
            base_bytes: x,
            new_bytes: y,
            delta_bytes: delta(x, y),
        })
        .collect();
    out.sort_by(|a, b| {
        b.delta_bytes
            .unsigned_abs()
            .cmp(&a.delta_bytes.unsigned_abs())
            .then_with(|| b.delta_bytes.cmp(&a.delta_bytes))
            .then_with(|| a.key.cmp(&b.key))
    });
    out.truncate(top);
    out
}

/// What a diff needs of one snapshot, and nothing that points into it: the segment totals and, by
/// device index, each device's entries, peak and every group live at the peak. A page holds each
/// snapshot in its own worker and diffs these (a few kB of JSON), as it diffs traces' digests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SnapshotPeaks"))]
pub struct Peaks {
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub devices: Vec<DevicePeak>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DevicePeak {
    pub entries: usize,
    pub peak_bytes: u64,
    pub at_peak: Groups,
}

pub fn peaks(snap: &Snapshot) -> Peaks {
    let s = segments(snap);
    Peaks {
        reserved_bytes: s.reserved_bytes,
        allocated_bytes: s.allocated_bytes,
        devices: (0..snap.devices.len())
            .map(|d| {
                let m = device_memory(snap, d);
                DevicePeak {
                    entries: m.entries,
                    peak_bytes: m.peak_bytes,
                    at_peak: m.at_peak,
                }
            })
            .collect(),
    }
}

/// What changed from `base` to `new`: segment totals, and per device the peak and its groups,
/// each group list cut to its `top` largest changes. `diff(a, a)` is all zeros, and `diff(b, a)`
/// is `diff(a, b)` negated.
pub fn diff(base: &Snapshot, new: &Snapshot, top: usize) -> Diff {
    diff_peaks(&peaks(base), &peaks(new), top)
}

/// [`diff`] from each snapshot's [`peaks`].
pub fn diff_peaks(base: &Peaks, new: &Peaks, top: usize) -> Diff {
    let n = base.devices.len().max(new.devices.len());
    let mut devices = Vec::new();
    for d in 0..n {
        let (a, b) = (base.devices.get(d), new.devices.get(d));
        if a.is_none_or(|m| m.entries == 0) && b.is_none_or(|m| m.entries == 0) {
            continue;
        }
        let empty = Groups::default();
        let ga = a.map_or(&empty, |m| &m.at_peak);
        let gb = b.map_or(&empty, |m| &m.at_peak);
        let (pa, pb) = (a.map_or(0, |m| m.peak_bytes), b.map_or(0, |m| m.peak_bytes));
        devices.push(DeviceDiff {
            device: d,
            base_peak_bytes: pa,
            new_peak_bytes: pb,
            delta_peak_bytes: delta(pa, pb),
            at_peak: DiffGroups {
                by_frame: diff_rows(&ga.by_frame, &gb.by_frame, top),
                by_line: diff_rows(&ga.by_line, &gb.by_line, top),
                by_file: diff_rows(&ga.by_file, &gb.by_file, top),
                by_annotation: diff_rows(&ga.by_annotation, &gb.by_annotation, top),
                by_category: diff_rows(&ga.by_category, &gb.by_category, top),
                by_compile_context: diff_rows(&ga.by_compile_context, &gb.by_compile_context, top),
            },
        });
    }
    Diff {
        delta_reserved_bytes: delta(base.reserved_bytes, new.reserved_bytes),
        delta_allocated_bytes: delta(base.allocated_bytes, new.allocated_bytes),
        devices,
    }
}
