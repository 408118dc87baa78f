//! The Active Memory Timeline's layout: every allocation of a device as a band, stacked in
//! allocation order with what was live before recording at the bottom (as `MemoryViz.js` stacks
//! them), laid out for a window of the trace and a canvas, with level of detail.
//!
//! The x axis is the position in the device's trace: position `p` is the state after `p` entries
//! (`0..=entries`), the numbering the CLI gives the peak ("after entry N" is position N + 1). The
//! live bytes at each position are the replay's ([`super::analysis::live_bytes`]).
//!
//! Level of detail: each pixel column is drawn as the stack at one position of its range, the one
//! where the live bytes are highest (the first such), so a peak narrower than a pixel is never
//! lost. In that stack an allocation at least one pixel tall is a rectangle of its own; a run of
//! neighbours each under a pixel is merged into one rectangle where they lie (their count and
//! bytes on hover). `MemoryViz.js` instead draws its `max_entries` largest allocations and sums
//! the rest into one band at the bottom; here every column's height is the replay's live bytes and
//! nothing changes place when zooming. A rectangle that continues the previous column's (the same
//! allocation at the same offset) is widened instead of repeated.
//!
//! Cost: the live set at a position is rebuilt from the nearest checkpoint before it. A checkpoint
//! is taken once the allocs and frees since the last one reach the live count there (at least
//! [`MIN_STEPS`]), so checkpoints hold no more ids than there are allocs and frees, and rebuilding
//! a column costs at most twice its live count plus [`MIN_STEPS`] steps. The highest position of a
//! column comes from per-block maxima ([`BLOCK`] positions a block) and at most two partial blocks
//! stepped through.
//!
//! An address allocated twice without a free in between (damage) ends the first allocation there.

use super::analysis::{category, frame_text, replay, user_frame};
use super::model::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Positions per block of live-bytes maxima.
pub const BLOCK: usize = 256;
/// The fewest allocs and frees between two checkpoints.
pub const MIN_STEPS: usize = 1024;
/// `free_entry` of an allocation still live at the end.
const LIVE_END: u32 = u32::MAX;
/// `alloc_entry` of an allocation made before recording began.
const BEFORE: u32 = u32::MAX;
/// Floats per rectangle of [`Layout::rects`].
pub const RECT_STRIDE: usize = 6;
/// The stack slot of a merged run of allocations, each under a pixel.
pub const MERGED: f64 = -1.0;
/// The stack slot of an allocation made before recording (no stack known).
pub const BEFORE_RECORDING: f64 = -2.0;

/// One device's allocations and the indexes its layout reads. Allocation ids are stack order:
/// those live before recording first, then one per `alloc` entry in recorded order.
pub struct Bands {
    pub device: usize,
    alloc_entry: Vec<u32>,
    free_entry: Vec<u32>,
    /// Sizes of the allocations made before recording (ids `0..before_size.len()`); the others'
    /// are their `alloc` entry's.
    before_size: Vec<u64>,
    cp_pos: Vec<u32>,
    /// The first allocation id made at or after each checkpoint's position.
    cp_next: Vec<u32>,
    /// Checkpoint `k` holds `cp_ids[cp_starts[k]..cp_starts[k + 1]]`, live there, in order.
    cp_starts: Vec<u32>,
    cp_ids: Vec<u32>,
    /// Live bytes at each block's first position, and each block's highest (bytes, position).
    block_start: Vec<u64>,
    block_max: Vec<(u64, u32)>,
    positions: usize,
}

/// A laid-out window: rectangles `[x0, x1, y0, y1, id, stack]` in pixels (x from the window's
/// left, y up from the bottom), `id` the allocation or [`MERGED`], `stack` the allocation's stack
/// id (the painter's colour), [`MERGED`] or [`BEFORE_RECORDING`].
#[derive(Debug, Clone, Serialize)]
pub struct Layout {
    pub rects: Vec<f64>,
    /// The highest live bytes in the window: the canvas' full height.
    pub max_bytes: u64,
    /// Where it is.
    pub max_position: usize,
}

/// A window of the trace on a canvas: positions `start..end` (floats, so a zoom is smooth) on
/// `width` x `height` pixels.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub start: f64,
    pub end: f64,
    pub width: u32,
    pub height: f64,
}

/// What is under a point of the canvas.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SnapshotHit"))]
pub struct Hit {
    /// The position the column shows, and the live bytes there.
    pub position: usize,
    pub live_bytes: u64,
    /// Bytes below what was hit.
    pub offset_bytes: u64,
    /// The allocation hit; `None` for a merged run.
    pub allocation: Option<Allocation>,
    /// A merged run: how many allocations, how many bytes.
    pub merged_count: u64,
    pub merged_bytes: u64,
}

/// One allocation, for hover and click.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Allocation {
    pub id: u32,
    pub size_bytes: u64,
    /// The `alloc` entry; `None` when it was live before recording began.
    pub alloc_entry: Option<usize>,
    pub alloc_time_us: Option<i64>,
    /// The `free_completed` entry; `None` when it is live at the end.
    pub free_entry: Option<usize>,
    pub free_time_us: Option<i64>,
    /// Entries it was live for, and microseconds where both ends have a time.
    pub lifetime_entries: usize,
    pub lifetime_us: Option<i64>,
    pub stream: Option<i64>,
    /// `basename:line:function`, innermost first, as `_memory_viz` writes frames.
    pub frames: Vec<String>,
    pub user_frame: Option<String>,
    pub category: &'static str,
    pub compile_context: String,
    pub user_metadata: String,
}

impl Bands {
    pub fn new(snap: &Snapshot, device: usize) -> Bands {
        let t = &snap.devices[device];
        let n = t.len();
        let r = replay(snap, device);
        let mut alloc_entry = Vec::new();
        let mut free_entry = Vec::new();
        let mut before_size = Vec::with_capacity(r.before.len());
        for &(_, size, freed) in &r.before {
            alloc_entry.push(BEFORE);
            free_entry.push(freed.map_or(LIVE_END, |e| e as u32));
            before_size.push(size);
        }
        let mut live: FxHashMap<u64, u32> = FxHashMap::default();
        for i in 0..n {
            match t.action[i] {
                Action::Alloc => {
                    let id = alloc_entry.len() as u32;
                    if let Some(old) = live.insert(t.addr[i], id) {
                        free_entry[old as usize] = i as u32;
                    }
                    alloc_entry.push(i as u32);
                    free_entry.push(LIVE_END);
                }
                Action::FreeCompleted => {
                    if let Some(id) = live.remove(&t.addr[i]) {
                        free_entry[id as usize] = i as u32;
                    }
                }
                _ => {}
            }
        }
        drop(live);
        let mut b = Bands {
            device,
            alloc_entry,
            free_entry,
            before_size,
            cp_pos: Vec::new(),
            cp_next: Vec::new(),
            cp_starts: vec![0],
            cp_ids: Vec::new(),
            block_start: Vec::with_capacity(n / BLOCK + 1),
            block_max: Vec::with_capacity(n / BLOCK + 1),
            positions: n + 1,
        };
        b.checkpoints(t);
        for (k, block) in r.live_after.chunks(BLOCK).enumerate() {
            b.block_start.push(block[0]);
            let mut best = (block[0], (k * BLOCK) as u32);
            for (j, &v) in block.iter().enumerate() {
                if v > best.0 {
                    best = (v, (k * BLOCK + j) as u32);
                }
            }
            b.block_max.push(best);
        }
        b
    }

    fn checkpoints(&mut self, t: &DeviceTrace) {
        let nb = self.before_size.len() as u32;
        // Ids appended as they are made; the dead are dropped at each checkpoint.
        let mut ids: Vec<u32> = (0..nb).collect();
        let mut next = nb;
        let mut steps = 0;
        let mut due = 0;
        for p in 0..=t.len() {
            if steps >= due {
                let free = &self.free_entry;
                ids.retain(|&id| free[id as usize] as usize >= p);
                self.cp_pos.push(p as u32);
                self.cp_next.push(next);
                self.cp_ids.extend_from_slice(&ids);
                self.cp_starts.push(self.cp_ids.len() as u32);
                due = ids.len().max(MIN_STEPS);
                steps = 0;
            }
            if p == t.len() {
                break;
            }
            match t.action[p] {
                Action::Alloc => {
                    ids.push(next);
                    next += 1;
                    steps += 1;
                }
                Action::FreeCompleted => steps += 1,
                _ => {}
            }
        }
    }

    /// Positions of the trace: `0..=entries`.
    pub fn positions(&self) -> usize {
        self.positions
    }

    pub fn allocations(&self) -> usize {
        self.alloc_entry.len()
    }

    fn size(&self, t: &DeviceTrace, id: u32) -> u64 {
        match self.alloc_entry[id as usize] {
            BEFORE => self.before_size[id as usize],
            e => t.size[e as usize],
        }
    }

    /// The allocations live at position `p`, in stack order.
    pub fn live_at(&self, t: &DeviceTrace, p: usize) -> Vec<u32> {
        let k = self.cp_pos.partition_point(|&c| c as usize <= p) - 1;
        let free = &self.free_entry;
        let cp = self.cp_starts[k] as usize..self.cp_starts[k + 1] as usize;
        let mut ids: Vec<u32> = self.cp_ids[cp]
            .iter()
            .copied()
            .filter(|&id| free[id as usize] as usize >= p)
            .collect();
        let mut next = self.cp_next[k];
        for i in self.cp_pos[k] as usize..p {
            if t.action[i] == Action::Alloc {
                if free[next as usize] as usize >= p {
                    ids.push(next);
                }
                next += 1;
            }
        }
        ids
    }

    /// The live bytes at each position of `a..b` (within one block), from the block's start.
    fn step_block(&self, t: &DeviceTrace, a: usize, b: usize, mut each: impl FnMut(usize, u64)) {
        let k = a / BLOCK;
        let mut bytes = self.block_start[k];
        for p in k * BLOCK..b {
            if p >= a {
                each(p, bytes);
            }
            match t.action.get(p) {
                Some(Action::Alloc) => bytes += t.size[p],
                Some(Action::FreeCompleted) => bytes = bytes.saturating_sub(t.size[p]),
                _ => {}
            }
        }
    }

    /// The first position of `a..b` where the live bytes are highest, and those bytes.
    pub fn peak_in(&self, t: &DeviceTrace, a: usize, b: usize) -> (usize, u64) {
        let mut best: Option<(usize, u64)> = None;
        let mut take = |p: usize, v: u64| {
            if best.is_none_or(|(_, x)| v > x) {
                best = Some((p, v));
            }
        };
        let mut p = a;
        while p < b {
            let k = p / BLOCK;
            let end = ((k + 1) * BLOCK).min(b);
            if p == k * BLOCK && end == ((k + 1) * BLOCK).min(self.positions) {
                let (v, at) = self.block_max[k];
                take(at as usize, v);
            } else {
                self.step_block(t, p, end, &mut take);
            }
            p = end;
        }
        best.unwrap_or((a, 0))
    }

    /// The live bytes at position `p`.
    pub fn live_bytes_at(&self, t: &DeviceTrace, p: usize) -> u64 {
        let mut out = 0;
        self.step_block(t, p, p + 1, |_, v| out = v);
        out
    }

    /// The positions column `c` of `width` shows over the window `start..end` (positions, as
    /// floats so that a zoom is smooth): at least one, within `0..positions`.
    fn column(&self, start: f64, end: f64, width: u32, c: u32) -> (usize, usize) {
        let span = (end - start).max(1e-9);
        let last = self.positions;
        let at = |c: u32| {
            (start + span * c as f64 / width as f64)
                .floor()
                .clamp(0.0, last as f64) as usize
        };
        let a = at(c).min(last - 1);
        (a, at(c + 1).clamp(a + 1, last))
    }

    /// Lays out the window `start..end` on a canvas of `width` x `height` pixels (see the module
    /// doc).
    pub fn layout(&self, snap: &Snapshot, w: Window) -> Layout {
        let Window {
            start,
            end,
            width,
            height,
        } = w;
        let t = &snap.devices[self.device];
        let width = width.max(1);
        let (first, _) = self.column(start, end, width, 0);
        let (_, last) = self.column(start, end, width, width - 1);
        let (max_position, max_bytes) = self.peak_in(t, first, last);
        let per_px = max_bytes.max(1) as f64 / height.max(1.0);
        let mut rects: Vec<f64> = Vec::new();
        // The previous column's shown position and the rectangles it drew (widened or new), and
        // by allocation the rectangle drawing it and its offset.
        let mut prev: Option<usize> = None;
        let mut drawn: Vec<usize> = Vec::new();
        let mut prev_ids: FxHashMap<u32, (usize, u64)> = FxHashMap::default();
        let mut ids_now: FxHashMap<u32, (usize, u64)> = FxHashMap::default();
        for c in 0..width {
            let (a, b) = self.column(start, end, width, c);
            let (p, _) = self.peak_in(t, a, b);
            let right = (c + 1) as f64;
            if prev == Some(p) {
                for &r in &drawn {
                    rects[r + 1] = right;
                }
                continue;
            }
            drawn.clear();
            ids_now.clear();
            let mut offset = 0u64;
            let mut merged = (0u64, 0u64);
            let flush = |rects: &mut Vec<f64>,
                         drawn: &mut Vec<usize>,
                         merged: &mut (u64, u64),
                         offset: u64| {
                if merged.0 > 0 {
                    let y0 = (offset - merged.1) as f64 / per_px;
                    drawn.push(rects.len());
                    rects.extend_from_slice(&[
                        c as f64,
                        right,
                        y0,
                        offset as f64 / per_px,
                        MERGED,
                        MERGED,
                    ]);
                    *merged = (0, 0);
                }
            };
            for id in self.live_at(t, p) {
                let size = self.size(t, id);
                if (size as f64) < per_px {
                    merged.0 += 1;
                    merged.1 += size;
                    offset += size;
                    continue;
                }
                flush(&mut rects, &mut drawn, &mut merged, offset);
                let r = match prev_ids.get(&id) {
                    Some(&(r, o)) if o == offset => {
                        rects[r + 1] = right;
                        r
                    }
                    _ => {
                        let stack = match self.alloc_entry[id as usize] {
                            BEFORE => BEFORE_RECORDING,
                            e => t.stack[e as usize] as f64,
                        };
                        rects.extend_from_slice(&[
                            c as f64,
                            right,
                            offset as f64 / per_px,
                            (offset + size) as f64 / per_px,
                            id as f64,
                            stack,
                        ]);
                        rects.len() - RECT_STRIDE
                    }
                };
                drawn.push(r);
                ids_now.insert(id, (r, offset));
                offset += size;
            }
            flush(&mut rects, &mut drawn, &mut merged, offset);
            std::mem::swap(&mut prev_ids, &mut ids_now);
            prev = Some(p);
        }
        Layout {
            rects,
            max_bytes,
            max_position,
        }
    }

    /// What is at pixel (`x`, `y`) (y up from the bottom) of the layout of the same window.
    pub fn hit(&self, snap: &Snapshot, w: Window, x: f64, y: f64) -> Option<Hit> {
        let Window {
            start,
            end,
            width,
            height,
        } = w;
        let t = &snap.devices[self.device];
        let width = width.max(1);
        if !(0.0..width as f64).contains(&x) || y < 0.0 {
            return None;
        }
        let (first, _) = self.column(start, end, width, 0);
        let (_, last) = self.column(start, end, width, width - 1);
        let (_, max_bytes) = self.peak_in(t, first, last);
        let per_px = max_bytes.max(1) as f64 / height.max(1.0);
        let (a, b) = self.column(start, end, width, x as u32);
        let (p, live_bytes) = self.peak_in(t, a, b);
        let want = y * per_px;
        let mut offset = 0u64;
        let mut merged = (0u64, 0u64, 0u64);
        for id in self.live_at(t, p) {
            let size = self.size(t, id);
            if (size as f64) < per_px {
                if merged.0 == 0 {
                    merged.2 = offset;
                }
                merged.0 += 1;
                merged.1 += size;
                offset += size;
                continue;
            }
            if merged.0 > 0 && want < offset as f64 {
                break;
            }
            merged = (0, 0, 0);
            if want < (offset + size) as f64 {
                return Some(Hit {
                    position: p,
                    live_bytes,
                    offset_bytes: offset,
                    allocation: Some(self.allocation(snap, id)),
                    merged_count: 0,
                    merged_bytes: 0,
                });
            }
            offset += size;
        }
        (merged.0 > 0 && want < offset as f64).then_some(Hit {
            position: p,
            live_bytes,
            offset_bytes: merged.2,
            allocation: None,
            merged_count: merged.0,
            merged_bytes: merged.1,
        })
    }

    /// Allocation `id` described.
    pub fn allocation(&self, snap: &Snapshot, id: u32) -> Allocation {
        let t = &snap.devices[self.device];
        let entry = |e: u32| (e != BEFORE && e != LIVE_END).then_some(e as usize);
        let time = |e: Option<usize>| e.map(|e| t.time_us[e]).filter(|&v| v != NO_TIME);
        let (a, f) = (
            entry(self.alloc_entry[id as usize]),
            entry(self.free_entry[id as usize]),
        );
        let (ta, tf) = (time(a), time(f));
        let stack = a.map(|e| t.stack[e]);
        let text = |s: u32| snap.str(s).to_string();
        Allocation {
            id,
            size_bytes: self.size(t, id),
            alloc_entry: a,
            alloc_time_us: ta,
            free_entry: f,
            free_time_us: tf,
            lifetime_entries: f.unwrap_or(t.len()) - a.unwrap_or(0),
            lifetime_us: ta.zip(tf).map(|(x, y)| y - x),
            stream: a.map(|e| t.stream[e]),
            frames: stack.map_or_else(Vec::new, |s| {
                snap.stacks
                    .get(s)
                    .iter()
                    .map(|&f| frame_text(snap, f))
                    .collect()
            }),
            user_frame: stack
                .and_then(|s| user_frame(snap, s))
                .map(|f| frame_text(snap, f)),
            category: stack.map_or(super::analysis::BEFORE, |s| category(snap, s)),
            compile_context: a.map_or_else(String::new, |e| text(t.compile_context[e])),
            user_metadata: a.map_or_else(String::new, |e| text(t.user_metadata[e])),
        }
    }
}
