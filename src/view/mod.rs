//! The timeline view: everything the browser page draws, computed in plain Rust.
//!
//! "Pure layout, dumb painter": given the [`Trace`], a [`Timeline`] index built once after parsing,
//! a [`viewport::Viewport`] and a [`frame::ViewState`], [`frame::layout`] returns a compact draw
//! list (rectangles, labels, ticks, arrows) in pixels; the page only paints it. Hit testing, search,
//! range aggregation, details and the overview strip live here too, so all of it is tested natively.
//! Nothing in this module knows the browser.
//!
//! The [`Timeline`] is built once per trace: per-row slice indices with duration prefix sums,
//! palette slots per name, steps, flows by slice, correlation ids, and the rows' items kept for the
//! window drawn.
//!
//! Invariants: a [`Timeline`] is built from one `Trace` and only ever used with it. A frame's
//! rectangles are clipped to the viewport (±2 px) and number at most about two per pixel column
//! per visible row; rows never overlap (checked on every fixture in `tests/view_fixtures.rs`).
//!
//! Files:
//! - [`viewport`]: the time at the left edge, ns per pixel (`f64` ns, exact for 104 days), the
//!   scroll; zoom at the cursor, pan, fit, all clamped to the trace.
//! - [`rows`]: the rows each lane is drawn with, without touching the model: the leading rows that
//!   each hold one slice spanning 90% of the lane (`<module>`, `spawn_main`, ...) folded into one
//!   labelled row, and optionally the lane re-laid without its Python frames
//!   ([`Timeline::set_mode`]).
//! - [`tracks`]: process groups (collapsible) and lanes; a deep lane folds to 16 rows until
//!   expanded.
//! - [`lod`]: per row, slices at least a pixel wide are drawn alone; narrower ones are jumped over
//!   a pixel column at a time (galloping search) and merged into density marks covering exactly
//!   the pixel columns their slices touch (no column holding work looks empty, none without work
//!   is painted), so a row costs O(columns x log slices); checked against a naive oracle. The
//!   items are kept for the window drawn (`ItemCache`, at most 2^18, cleared when the rows are
//!   laid out anew), so a frame that only scrolls, selects, searches or shades copies them
//!   (tested equal to a fresh timeline's frames on every fixture).
//! - [`frame`]: the draw list and hit testing on the same geometry; flow arrows, at most one per
//!   12 px (`ARROW_PX`) and pair of rows.
//! - [`search`] (matches by interned name, next/previous in a total order), [`aggregate`] (a time
//!   range by name, with the time a name's calls cover), [`details`] (args, ancestors, kernels
//!   launched through correlation ids, the launching op of a kernel, forward and backward
//!   operators, the selected slice's own flow arrows), [`overview`] (GPU busy per time bucket),
//!   [`ruler`], [`colour`] (stable colours by name family).
//! - [`path`]: a critical path drawn over the timeline (`ViewState.path`): the steps' paths to
//!   their slices and lane changes (a hop leaves a lane at the end of its last segment there; a hop
//!   to a launched op leaves from its launch call). A frame asks it by lookup: a slice drawn alone
//!   by a hash set, a density mark by a binary search over the path's slices of its row (rows never
//!   overlap, so one neighbour decides), the window's hops by a binary search on time; so the
//!   frame flags each box on the path or dimmed at the cost of the boxes drawn, not of the path.
//! - [`panels`]: what only the page's panels receive (the roofline, the memory legend and live
//!   rows, the allocation table, a tooltip, the selection, the frame's constants), declared
//!   natively so the page's TypeScript types are generated from them.
//! - [`critical`]: the critical-path panel (each step's path and what bounds it, the longest
//!   segments, what-if answers), from `analysis::critical`; the page's adapter is thin.

pub mod aggregate;
pub mod colour;
pub mod critical;
pub mod details;
pub mod frame;
pub mod lod;
pub mod overview;
pub mod panels;
pub mod path;
pub mod rows;
pub mod ruler;
pub mod search;
pub mod tracks;
pub mod viewport;

use crate::model::{SliceRef, StrId, Trace, NO_ID};
use lod::{ItemCache, LaneIndex};
use rows::{LaneRows, RowMode, HIDDEN};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;

/// Indexes over a trace that drawing and navigation need; built once, in O(slices).
#[derive(Debug)]
pub struct Timeline {
    /// Per lane, its rows (see [`lod`]).
    pub lanes: Vec<LaneIndex>,
    /// Per lane, which row each slice is drawn on (see [`rows`]).
    pub rows: Vec<LaneRows>,
    /// Per lane drawn in fewer rows until expanded ([`rows::capped`]), its rows in `mode`;
    /// `None` for the others, whose `rows` are those.
    full: Vec<Option<LaneRows>>,
    /// The rows' items drawn in the current window, reused by the next frames (see
    /// [`lod::ItemCache`]); a cell, because drawing a frame reads the timeline.
    pub(crate) items: RefCell<ItemCache>,
    /// How the rows were laid out.
    pub mode: RowMode,
    /// Palette slot per interned string, used as a slice name.
    name_slot: Vec<u8>,
    /// Categories with a fixed slot (memcpy, memset, sync).
    cat_slot: FxHashMap<StrId, u8>,
    /// `ProfilerStep#N` spans, by start.
    pub steps: Vec<Step>,
    /// Flow indices touching each slice, at either end.
    flows_by_slice: FxHashMap<SliceRef, Vec<u32>>,
    /// `(correlation, slice)` of CPU slices (runtime calls), sorted.
    corr_cpu: Vec<(i64, SliceRef)>,
    /// `(correlation, slice)` of GPU slices (kernels, copies), sorted.
    corr_gpu: Vec<(i64, SliceRef)>,
}

/// One profiler step, from its `ProfilerStep#N` span on a CPU lane.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Step {
    pub name: String,
    pub start_ns: i64,
    pub end_ns: i64,
    pub lane: u32,
    pub index: u32,
}

impl Timeline {
    /// The index with the model's rows ([`RowMode::MODEL`]).
    pub fn new(trace: &Trace) -> Timeline {
        Timeline::in_mode(trace, RowMode::MODEL)
    }

    /// The index with its lanes laid out in `mode` from the start (a layout made and replaced
    /// at once would hold both for a while).
    pub fn in_mode(trace: &Trace, mode: RowMode) -> Timeline {
        let rows = rows::trace_rows(trace, mode);
        let lanes = lane_indexes(trace, &rows);
        let name_slot = trace.strings.each(|n| colour::slot(n, ""));
        let mut cat_slot = FxHashMap::default();
        for cat in ["gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync"] {
            if let Some(id) = trace.strings.find(cat) {
                cat_slot.insert(id, colour::slot("", cat));
            }
        }
        let mut steps = Vec::new();
        let mut flows_by_slice: FxHashMap<SliceRef, Vec<u32>> = FxHashMap::default();
        for (i, f) in trace.flows.iter().enumerate() {
            flows_by_slice.entry(f.from).or_default().push(i as u32);
            if f.to != f.from {
                flows_by_slice.entry(f.to).or_default().push(i as u32);
            }
        }
        let (mut corr_cpu, mut corr_gpu) = (Vec::new(), Vec::new());
        for (l, lane) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(lane);
            for i in 0..s.len() {
                let r = SliceRef {
                    lane: l as u32,
                    index: i as u32,
                };
                if s.correlation[i] != NO_ID {
                    if lane.is_gpu() {
                        corr_gpu.push((s.correlation[i], r));
                    } else {
                        corr_cpu.push((s.correlation[i], r));
                    }
                }
                if !lane.is_gpu() {
                    let name = trace.str(s.name[i]);
                    if name.starts_with("ProfilerStep#") {
                        steps.push(Step {
                            name: name.to_string(),
                            start_ns: s.start_ns[i],
                            end_ns: s.end_ns(i),
                            lane: r.lane,
                            index: r.index,
                        });
                    }
                }
            }
        }
        steps.sort_by_key(|s| (s.start_ns, s.lane));
        // The same step can appear on two lanes (1.x writes it as an operator and an annotation).
        steps.dedup_by(|b, a| a.name == b.name && a.start_ns == b.start_ns);
        corr_cpu.sort_unstable();
        corr_gpu.sort_unstable();
        Timeline {
            lanes,
            full: vec![None; rows.len()],
            rows,
            items: RefCell::default(),
            mode,
            name_slot,
            cat_slot,
            steps,
            flows_by_slice,
            corr_cpu,
            corr_gpu,
        }
    }

    /// Lays the lanes out in `mode` (fold the frames spanning a lane, hide Python frames); false
    /// when that is already the layout.
    pub fn set_mode(&mut self, trace: &Trace, mode: RowMode) -> bool {
        if mode == self.mode {
            return false;
        }
        self.rows = rows::trace_rows(trace, mode);
        self.full = vec![None; self.rows.len()];
        self.lanes = lane_indexes(trace, &self.rows);
        self.mode = mode;
        self.items.get_mut().clear();
        true
    }

    /// Draws each lane deeper than [`tracks::FOLDED_ROWS`] in that many rows unless `expanded`
    /// holds it ([`rows::capped`]: its operators first, its Python frames left out), and the
    /// expanded ones in all their rows. Returns whether any lane's rows changed.
    pub fn set_expanded(&mut self, trace: &Trace, expanded: &FxHashSet<u32>) -> bool {
        let mut frames = None;
        let mut changed = false;
        for l in 0..self.rows.len() {
            let cap = !expanded.contains(&(l as u32));
            if cap == self.full[l].is_some() {
                continue;
            }
            if let Some(full) = self.full[l].take() {
                self.rows[l] = full;
            } else {
                if self.rows[l].rows <= tracks::FOLDED_ROWS {
                    continue;
                }
                let (kinds, module) = frames.get_or_insert_with(|| {
                    (
                        crate::model::category::Kinds::new(trace),
                        rows::module_names(trace),
                    )
                });
                let s = trace.slices(l);
                let Some(c) = rows::capped(&self.rows[l], s, kinds, module, tracks::FOLDED_ROWS)
                else {
                    continue;
                };
                self.full[l] = Some(std::mem::replace(&mut self.rows[l], c));
            }
            self.lanes[l] = LaneIndex::with_rows(trace.slices(l), &self.rows[l]);
            changed = true;
        }
        if changed {
            self.items.get_mut().clear();
        }
        changed
    }

    /// True when slice `r` is left out of its lane's rows until the lane is expanded.
    pub fn hidden_until_expanded(&self, trace: &Trace, r: SliceRef) -> bool {
        let (s, i) = (trace.slices(r.lane as usize), r.index as usize);
        self.full[r.lane as usize]
            .as_ref()
            .is_some_and(|f| f.of(s, i) != HIDDEN && self.rows[r.lane as usize].of(s, i) == HIDDEN)
    }

    /// The row slice `r` is drawn on ([`rows::HIDDEN`] when it is not drawn).
    pub fn row_of(&self, trace: &Trace, r: SliceRef) -> u16 {
        self.rows[r.lane as usize].of(trace.slices(r.lane as usize), r.index as usize)
    }

    /// Rows per lane when expanded (a lane not expanded shows at most [`tracks::FOLDED_ROWS`]).
    pub fn row_counts(&self) -> Vec<u32> {
        self.rows
            .iter()
            .zip(&self.full)
            .map(|(r, f)| f.as_ref().map_or(r.rows, |f| f.rows))
            .collect()
    }

    /// The palette slot of a slice (see [`colour`]).
    pub fn slot(&self, trace: &Trace, r: SliceRef) -> u8 {
        let s = trace.slices(r.lane as usize);
        let i = r.index as usize;
        self.cat_slot.get(&s.cat[i]).copied().unwrap_or_else(|| {
            self.name_slot
                .get(s.name[i].0 as usize)
                .copied()
                .unwrap_or(0)
        })
    }

    /// Flows with `r` at one end.
    pub fn flows_of(&self, r: SliceRef) -> &[u32] {
        self.flows_by_slice.get(&r).map_or(&[], |v| v.as_slice())
    }

    /// GPU slices launched under correlation id `c`.
    pub fn gpu_by_correlation(&self, c: i64) -> impl Iterator<Item = SliceRef> + '_ {
        by_key(&self.corr_gpu, c)
    }

    /// CPU slices (runtime calls) with correlation id `c`.
    pub fn cpu_by_correlation(&self, c: i64) -> impl Iterator<Item = SliceRef> + '_ {
        by_key(&self.corr_cpu, c)
    }

    /// Heap bytes of the index.
    pub fn heap_bytes(&self) -> usize {
        self.lanes.iter().map(|l| l.heap_bytes()).sum::<usize>()
            + self.name_slot.capacity()
            + (self.corr_cpu.capacity() + self.corr_gpu.capacity()) * 16
            + self.flows_by_slice.len() * 48
    }
}

/// Each lane's index, drawn with its `rows`.
fn lane_indexes(trace: &Trace, rows: &[LaneRows]) -> Vec<LaneIndex> {
    trace
        .lanes
        .iter()
        .zip(rows)
        .map(|(l, r)| LaneIndex::with_rows(trace.slices_of(l), r))
        .collect()
}

fn by_key(v: &[(i64, SliceRef)], c: i64) -> impl Iterator<Item = SliceRef> + '_ {
    let a = v.partition_point(|&(k, _)| k < c);
    v[a..]
        .iter()
        .take_while(move |&&(k, _)| k == c)
        .map(|&(_, r)| r)
}
