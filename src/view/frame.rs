//! One frame of the timeline as a draw list, and hit testing against the same geometry.
//!
//! [`layout`] visits only the tracks and rows inside the viewport, and each row through
//! [`super::lod::summarize_row`], so its cost follows the pixels on screen, not the events in the
//! trace; the rows' items are kept while the window stays (see [`super::lod::ItemCache`]).
//! The result is flat: rectangles as `f32`s ([`RECT_STRIDE`] per rectangle) for a typed array, and
//! a small serializable [`FrameMeta`] (track titles, labels, ticks, steps, arrows). Coordinates are
//! CSS pixels of the timeline area, `y` already scrolled. The painter adds nothing but pixels:
//! colours come from [`super::colour::PALETTE`] by slot, text is truncated to the given width.

use super::details::Arrow;
use super::lod::{Item, Window};
use super::path::PathView;
use super::ruler::{self, format_duration, Tick};
use super::search::Search;
use super::tracks::{self, Track, TrackKind, TrackLayout, BOX_PX, ROW_PX};
use super::viewport::Viewport;
use super::Timeline;
use crate::model::{SliceRef, Trace};
use rustc_hash::FxHashSet;
use serde::Serialize;

/// Slices narrower than this are merged into density marks.
pub const MIN_BOX_PX: f64 = 1.0;
/// Boxes at least this wide get a label.
pub const LABEL_PX: f64 = 28.0;
/// How close (in pixels) a click must be to a slice to pick it.
pub const HIT_SLOP_PX: f64 = 3.0;

/// Floats per rectangle: `x, y, w, h, style, alpha`, where `style = slot | flags << 8`.
pub const RECT_STRIDE: usize = 6;
/// Rectangle flag: a density mark (merged sub-pixel slices), not one slice.
pub const FLAG_MARK: u32 = 1;
/// Rectangle flag: matches the search.
pub const FLAG_MATCH: u32 = 2;
/// Rectangle flag: a search is active and this does not match.
pub const FLAG_DIM: u32 = 4;
/// Rectangle flag: the selection outline (drawn last, on top).
pub const FLAG_SELECTED: u32 = 8;
/// Rectangle flag: a critical path is shown and this is on it (the rest is dimmed).
pub const FLAG_PATH: u32 = 16;

/// What the user has chosen to see, beside the viewport.
#[derive(Debug, Default)]
pub struct ViewState {
    /// Process indices whose groups are collapsed.
    pub collapsed: FxHashSet<u32>,
    /// Lanes showing all their rows (see [`tracks::FOLDED_ROWS`]).
    pub expanded: FxHashSet<u32>,
    pub selection: Option<SliceRef>,
    /// Flow arrows of the selection (see [`super::details::arrows`]).
    pub arrows: Vec<Arrow>,
    /// A selected time range, ns.
    pub range: Option<(f64, f64)>,
    pub search: Option<Search>,
    /// GPU idle gaps to shade, per device (from the idle analysis).
    pub gaps: Vec<GapShade>,
    /// The critical path shown: its slices drawn, the rest dimmed, arrows where it changes lanes.
    pub path: Option<PathView>,
}

/// An idle gap of one GPU device, shaded on each of its stream lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapShade {
    pub device: i64,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Gaps narrower than this many pixels are not shaded.
pub const MIN_GAP_PX: f64 = 2.0;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Label {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepMark {
    pub x0: f64,
    pub x1: f64,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArrowPx {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
    pub category: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GapPx {
    pub x0: f64,
    pub x1: f64,
    pub y: f64,
    pub h: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RangePx {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
}

/// Everything but the rectangles.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FrameMeta {
    /// Visible tracks, `y` scrolled (may start above 0).
    pub tracks: Vec<Track>,
    pub labels: Vec<Label>,
    pub ticks: Vec<Tick>,
    pub steps: Vec<StepMark>,
    pub arrows: Vec<ArrowPx>,
    /// Where the critical path shown goes from one lane to another (zoomed out, at most one arrow
    /// per [`ARROW_PX`] columns and pair of rows).
    pub path_arrows: Vec<ArrowPx>,
    /// Shaded idle gaps on GPU lanes (drawn under the slices).
    pub gaps: Vec<GapPx>,
    pub range: Option<RangePx>,
    /// Time at the left edge and per pixel, for the page's status line and overview.
    pub start_ns: f64,
    pub ns_per_px: f64,
    /// Vertical scroll and total height of the tracks, for a scrollbar.
    pub scroll_px: f64,
    pub content_px: f64,
}

#[derive(Debug, Clone)]
pub struct Frame {
    pub rects: Vec<f32>,
    pub meta: FrameMeta,
}

/// What is under a point of the timeline area (`x < 0` is the lane-name gutter on its left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Slice(SliceRef),
    /// A process group header.
    Group(u32),
    /// A lane's name, in the gutter.
    LaneName(u32),
    /// A shaded idle gap: the index into [`ViewState::gaps`].
    Gap(usize),
}

/// Builds the draw list of one frame.
pub fn layout(
    trace: &Trace,
    tl: &Timeline,
    tracks_: &TrackLayout,
    vp: &Viewport,
    st: &ViewState,
) -> Frame {
    let win = Window {
        start_ns: vp.start_ns,
        ns_per_px: vp.ns_per_px,
        width_px: vp.width_px,
    };
    let (y0, y1) = (vp.scroll_px, vp.scroll_px + vp.height_px);
    let mut rects = Vec::new();
    let mut labels = Vec::new();
    let mut shown = Vec::new();
    let mut gaps = Vec::new();
    for t in &tracks_.tracks[tracks_.visible(y0, y1)] {
        let mut out = t.clone();
        out.y -= vp.scroll_px;
        shown.push(out);
        let TrackKind::Lane { lane, rows, .. } = t.kind else {
            continue;
        };
        if let Some(device) = gpu_device(trace, lane) {
            for g in st.gaps.iter().filter(|g| g.device == device) {
                let (x0, x1) = (vp.x_of(g.start_ns as f64), vp.x_of(g.end_ns as f64));
                if x1 - x0 >= MIN_GAP_PX && x1 >= 0.0 && x0 <= vp.width_px {
                    gaps.push(GapPx {
                        x0: x0.max(-2.0),
                        x1: x1.min(vp.width_px + 2.0),
                        y: t.y - vp.scroll_px,
                        h: t.height,
                    });
                }
            }
        }
        let s = trace.slices(lane as usize);
        let index = &tl.lanes[lane as usize];
        for d in 0..rows {
            let ry = tracks::row_y(t, d);
            if ry + ROW_PX < y0 || ry > y1 {
                continue;
            }
            let Some(row) = index.rows.get(d as usize) else {
                continue;
            };
            let mut cache = tl.items.borrow_mut();
            let items = cache.row(&s, row, (lane, d), win, MIN_BOX_PX);
            let row_start = rects.len();
            let y = ry - vp.scroll_px;
            for it in items {
                let (index, x0, x1, alpha, mark) = match *it {
                    Item::Slice { index, x0, x1 } => (index, x0, x1, 1.0, 0),
                    Item::Mark {
                        rep,
                        x0,
                        x1,
                        busy_ns,
                        ..
                    } => {
                        let density = busy_ns as f64 / ((x1 - x0).max(1.0) * vp.ns_per_px);
                        (
                            rep,
                            x0,
                            x1.max(x0 + 1.0),
                            0.35 + 0.65 * density.min(1.0),
                            FLAG_MARK,
                        )
                    }
                };
                let r = SliceRef { lane, index };
                let name = s.name[index as usize];
                let search = match &st.search {
                    Some(q) if q.is_match(name) => FLAG_MATCH,
                    Some(q) if !q.query.is_empty() => FLAG_DIM,
                    _ => 0,
                };
                let path = match &st.path {
                    None => 0,
                    Some(p) if on_path(p, it, r, d, vp) => FLAG_PATH,
                    Some(_) => FLAG_DIM,
                };
                let (cx0, cx1) = (x0.max(-2.0), x1.min(vp.width_px + 2.0));
                let style = tl.slot(trace, r) as u32 | (mark | search | path) << 8;
                if !extend_last(&mut rects, row_start, cx0, cx1, style, alpha) {
                    push_rect(&mut rects, cx0, y, cx1 - cx0, BOX_PX, style, alpha);
                }
                if mark == 0 && cx1 - cx0 >= LABEL_PX {
                    let lx = cx0.max(0.0);
                    let folded = &tl.rows[lane as usize].folded;
                    let text = if d == 0 && !folded.is_empty() {
                        folded_label(trace, folded)
                    } else {
                        trace.str(name).to_string()
                    };
                    labels.push(Label {
                        x: lx,
                        y,
                        w: cx1.min(vp.width_px) - lx,
                        text,
                    });
                }
            }
        }
    }
    if let Some(sel) = st.selection {
        if let Some((x, y, w)) = slice_box(trace, tl, tracks_, vp, sel) {
            let (x0, x1) = (x.max(-2.0), (x + w.max(2.0)).min(vp.width_px + 2.0));
            if x1 > x0 {
                let style = tl.slot(trace, sel) as u32 | FLAG_SELECTED << 8;
                push_rect(&mut rects, x0, y, x1 - x0, BOX_PX, style, 1.0);
            }
        }
    }
    let arrows = st
        .arrows
        .iter()
        .filter_map(|a| {
            let (x0, y0, _) = anchor(trace, tl, tracks_, vp, a.from)?;
            let (x1, y1, _) = anchor(trace, tl, tracks_, vp, a.to)?;
            Some(ArrowPx {
                x0,
                y0,
                x1,
                y1,
                category: a.category.clone(),
            })
        })
        .collect();
    let path_arrows = st
        .path
        .as_ref()
        .map_or_else(Vec::new, |p| path_arrows(trace, tl, tracks_, vp, p));
    let steps = tl
        .steps
        .iter()
        .filter(|s| s.end_ns as f64 >= vp.start_ns && s.start_ns as f64 <= vp.end_ns())
        .map(|s| StepMark {
            x0: vp.x_of(s.start_ns as f64),
            x1: vp.x_of(s.end_ns as f64),
            name: s.name.clone(),
        })
        .collect();
    let range = st.range.map(|(a, b)| RangePx {
        x0: vp.x_of(a),
        x1: vp.x_of(b),
        label: format_duration(b - a),
    });
    Frame {
        rects,
        meta: FrameMeta {
            tracks: shown,
            labels,
            ticks: ruler::ticks(vp),
            steps,
            arrows,
            path_arrows,
            gaps,
            range,
            start_ns: vp.start_ns,
            ns_per_px: vp.ns_per_px,
            scroll_px: vp.scroll_px,
            content_px: tracks_.height,
        },
    }
}

/// Whether a drawn item is on the path: a slice drawn alone is, or a mark holds a slice that is.
fn on_path(p: &PathView, it: &Item, r: SliceRef, row: u32, vp: &Viewport) -> bool {
    match *it {
        Item::Slice { .. } => p.contains(r),
        Item::Mark { x0, x1, .. } => p.in_row(r.lane, row as u16, vp.t_of(x0), vp.t_of(x1)),
    }
}

/// Arrows of the path that start and end within this many pixels, between the same rows, are drawn
/// as one: zoomed out, hundreds of hops would paint one smear at a cost of milliseconds a frame.
pub const ARROW_PX: f64 = 12.0;

/// The path's lane changes in the window as arrows, from a row at the time the path leaves it to
/// a row at the time it arrives; zoomed out, at most one per [`ARROW_PX`] columns and pair of rows.
fn path_arrows(
    trace: &Trace,
    tl: &Timeline,
    tracks_: &TrackLayout,
    vp: &Viewport,
    p: &PathView,
) -> Vec<ArrowPx> {
    let mut seen = FxHashSet::default();
    p.hops_in(vp.start_ns, vp.end_ns())
        .filter_map(|h| {
            let (_, y0, _) = anchor(trace, tl, tracks_, vp, h.from)?;
            let (_, y1, _) = anchor(trace, tl, tracks_, vp, h.to)?;
            let (x0, x1) = (vp.x_of(h.from_ns as f64), vp.x_of(h.to_ns as f64));
            let key = [x0 / ARROW_PX, y0, x1 / ARROW_PX, y1].map(|v| v.round() as i32);
            seen.insert(key).then(|| ArrowPx {
                x0,
                y0,
                x1,
                y1,
                category: "critical path".into(),
            })
        })
        .collect()
}

/// The label of a lane's folded row: the frames it stands for, outermost first, the one drawn last.
fn folded_label(trace: &Trace, folded: &[crate::model::StrId]) -> String {
    let names: Vec<&str> = folded.iter().map(|&n| trace.str(n)).collect();
    match names.as_slice() {
        [first, .., last] if names.len() > 2 => {
            format!("{first} › … {} frames … › {last}", names.len() - 2)
        }
        _ => names.join(" › "),
    }
}

fn gpu_device(trace: &Trace, lane: u32) -> Option<i64> {
    match trace.lanes.get(lane as usize)?.kind {
        crate::model::LaneKind::GpuStream { device, .. } => Some(device),
        crate::model::LaneKind::Cpu => None,
    }
}

fn push_rect(out: &mut Vec<f32>, x: f64, y: f64, w: f64, h: f64, style: u32, alpha: f64) {
    out.extend_from_slice(&[
        x as f32,
        y as f32,
        w as f32,
        h as f32,
        style as f32,
        alpha as f32,
    ]);
}

/// Rectangles narrower than this that touch a neighbour of the same style are drawn as one.
pub const MERGE_PX: f64 = 3.0;

/// Widens the row's last rectangle over `[x0, x1)` when both are narrow, touch, and look the same:
/// at zoom-out, runs of thin same-coloured slices become one rectangle to paint.
fn extend_last(
    out: &mut [f32],
    row_start: usize,
    x0: f64,
    x1: f64,
    style: u32,
    alpha: f64,
) -> bool {
    if out.len() < row_start + RECT_STRIDE || x1 - x0 >= MERGE_PX {
        return false;
    }
    let n = out.len();
    let last = &mut out[n - RECT_STRIDE..];
    let (lx, lw) = (last[0] as f64, last[2] as f64);
    let same = last[4] as u32 == style && (last[5] as f64 - alpha).abs() < 0.05;
    if !same || style >> 8 & FLAG_MARK != 0 || lx + lw < x0 - 0.5 {
        return false;
    }
    last[2] = (x1.max(lx + lw) - lx) as f32;
    true
}

/// A slice's box in viewport pixels: `(x, y, w)`; `None` when its lane is not laid out or its row
/// is folded away.
pub fn slice_box(
    trace: &Trace,
    tl: &Timeline,
    tracks_: &TrackLayout,
    vp: &Viewport,
    r: SliceRef,
) -> Option<(f64, f64, f64)> {
    let s = trace.slices_of(trace.lanes.get(r.lane as usize)?);
    let i = r.index as usize;
    let t = tracks_.lane_track(r.lane)?;
    let depth = tl.row_of(trace, r) as u32;
    match t.kind {
        TrackKind::Lane { rows, .. } if depth < rows => {}
        _ => return None,
    }
    let x = vp.x_of(s.start_ns[i] as f64);
    let w = s.dur_ns[i] as f64 / vp.ns_per_px;
    let y = tracks::row_y(t, depth) - vp.scroll_px;
    Some((x, y, w))
}

/// Where an arrow meets a slice: its start, mid-row; the bottom of its lane when its row is folded
/// away; the group header when the group is collapsed.
fn anchor(
    trace: &Trace,
    tl: &Timeline,
    tracks_: &TrackLayout,
    vp: &Viewport,
    r: SliceRef,
) -> Option<(f64, f64, f64)> {
    if let Some((x, y, w)) = slice_box(trace, tl, tracks_, vp, r) {
        return Some((x, y + BOX_PX / 2.0, w));
    }
    let lane = trace.lanes.get(r.lane as usize)?;
    let x = vp.x_of(
        trace
            .slices_of(lane)
            .start_ns
            .get(r.index as usize)
            .copied()? as f64,
    );
    let t = tracks_
        .lane_track(r.lane)
        .map(|t| t.y + t.height - 2.0)
        .or_else(|| {
            tracks_
                .group_track(lane.process)
                .map(|g| g.y + g.height / 2.0)
        })?;
    Some((x, t - vp.scroll_px, 0.0))
}

/// The slice, group header, lane name or idle gap under viewport point `(x, y)`, with
/// [`HIT_SLOP_PX`] of slack horizontally for slices too thin to aim at. A slice wins over the gap
/// shaded under it.
pub fn hit(
    trace: &Trace,
    tl: &Timeline,
    tracks_: &TrackLayout,
    vp: &Viewport,
    gaps: &[GapShade],
    x: f64,
    y: f64,
) -> Option<Hit> {
    let cy = y + vp.scroll_px;
    let t = tracks_.at(cy)?;
    match t.kind {
        TrackKind::Group { process, .. } => Some(Hit::Group(process)),
        TrackKind::Lane { lane, .. } if x < 0.0 => Some(Hit::LaneName(lane)),
        TrackKind::Lane { lane, .. } => {
            let slice = tracks::row_at(t, cy).and_then(|d| {
                if cy - tracks::row_y(t, d) > BOX_PX {
                    return None;
                }
                let row = tl.lanes[lane as usize].rows.get(d as usize)?;
                let s = trace.slices(lane as usize);
                let k = row.at_time(&s, vp.t_of(x), HIT_SLOP_PX * vp.ns_per_px)?;
                Some(Hit::Slice(SliceRef {
                    lane,
                    index: row.idx[k],
                }))
            });
            slice.or_else(|| {
                let device = gpu_device(trace, lane)?;
                let t = vp.t_of(x);
                gaps.iter()
                    .position(|g| {
                        g.device == device
                            && (g.start_ns as f64) <= t
                            && t <= g.end_ns as f64
                            && vp.x_of(g.end_ns as f64) - vp.x_of(g.start_ns as f64) >= MIN_GAP_PX
                    })
                    .map(Hit::Gap)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;
    use crate::view::lod::columns;
    use crate::view::path::Hop;
    use crate::view::search::Search;

    /// A CPU lane with a deep stack and thousands of tiny slices, and a GPU stream.
    fn trace() -> Trace {
        let mut ev = vec![
            r#"{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":100000}"#.to_string(),
            r#"{"ph":"X","name":"big","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":50000}"#.to_string(),
        ];
        for i in 0..20_000 {
            ev.push(format!(
                r#"{{"ph":"X","name":"tiny{}","cat":"cpu_op","pid":1,"tid":1,"ts":{}.5,"dur":0.5}}"#,
                i % 7,
                20 + i * 2
            ));
        }
        for i in 0..100 {
            ev.push(format!(
                r#"{{"ph":"X","name":"kern","cat":"kernel","pid":0,"tid":7,"ts":{},"dur":500,"args":{{"device":0,"stream":7}}}}"#,
                i * 1000
            ));
        }
        parse_bytes(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
    }

    fn rects(f: &Frame) -> impl Iterator<Item = &[f32]> {
        f.rects.chunks(RECT_STRIDE)
    }

    /// The pixel columns `[c0, c1)` of a span, as [`columns`] counts them for marks.
    fn cols(x0: f64, x1: f64, width: f64) -> std::ops::Range<i64> {
        let (c0, c1) = columns(x0, x1);
        (c0.max(0.0) as i64)..(c1.min(width) as i64)
    }

    /// Zoomed in or out, each row paints exactly the pixel columns that hold one of its slices:
    /// no column holding work looks empty, no empty column is painted. Random lanes (nested runs
    /// of tiny, small and long slices with gaps) and random windows, checked on the draw list.
    #[test]
    fn painted_columns_are_the_columns_that_hold_slices() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d) % m.max(1)
        };
        for case in 0..40 {
            let mut ev = Vec::new();
            let mut t = 0u64;
            for _ in 0..(200 + next(3000)) {
                let dur = [0, 1, 3, 40, 900, 20_000][next(6) as usize];
                ev.push(format!(
                    r#"{{"ph":"X","name":"s{}","cat":"cpu_op","pid":1,"tid":1,"ts":{}.{:03},"dur":{}.{:03}}}"#,
                    next(5),
                    t / 1000,
                    t % 1000,
                    dur / 1000,
                    dur % 1000
                ));
                // Children inside some slices, so that several rows hold work.
                if dur >= 40 {
                    let kids = next(4);
                    for k in 0..kids {
                        let kt = t + k * dur / kids.max(1);
                        ev.push(format!(
                            r#"{{"ph":"X","name":"c","cat":"cpu_op","pid":1,"tid":1,"ts":{}.{:03},"dur":0.001}}"#,
                            kt / 1000,
                            kt % 1000
                        ));
                    }
                }
                t += dur + [0, 1, 5, 300, 50_000][next(5) as usize];
            }
            let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
            let tr = parse_bytes(json.as_bytes()).unwrap();
            let tl = Timeline::new(&tr);
            let lanes: FxHashSet<u32> = (0..tr.lanes.len() as u32).collect();
            let tracks = TrackLayout::new(&tr, &FxHashSet::default(), &lanes);
            for _ in 0..6 {
                let width = 100.0 + next(1200) as f64;
                let mut vp = Viewport::new(tr.span_ns(), width, 2000.0);
                let span = vp.ns_per_px * width;
                let t0 = next(tr.span_ns().max(1) as u64) as f64;
                vp.set_window(t0, t0 + span / [1.0, 10.0, 1e3, 1e5][next(4) as usize]);
                let f = layout(&tr, &tl, &tracks, &vp, &ViewState::default());
                let TrackKind::Lane { lane, rows, .. } = tracks.tracks[1].kind else {
                    panic!("the lane's track follows its group's header");
                };
                let s = tr.slices(lane as usize);
                for d in 0..rows {
                    let y = tracks::row_y(&tracks.tracks[1], d) - vp.scroll_px;
                    let mut painted = std::collections::BTreeSet::new();
                    for r in rects(&f).filter(|r| (r[1] as f64 - y).abs() < 0.5) {
                        let (a, b) = (r[0] as f64, r[0] as f64 + r[2] as f64);
                        painted.extend(cols(a, b, vp.width_px));
                    }
                    let mut held = std::collections::BTreeSet::new();
                    for i in (0..s.len()).filter(|&i| s.depth[i] as u32 == d) {
                        let (a, b) = (vp.x_of(s.start_ns[i] as f64), vp.x_of(s.end_ns(i) as f64));
                        if b >= 0.0 && a <= vp.width_px {
                            held.extend(cols(a, b, vp.width_px));
                        }
                    }
                    assert_eq!(painted, held, "case {case} row {d} window {vp:?}");
                }
            }
        }
    }

    #[test]
    fn zoomed_out_costs_pixels_not_events() {
        let t = trace();
        let tl = Timeline::new(&t);
        let tr = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let vp = Viewport::new(t.span_ns(), 800.0, 600.0);
        let f = layout(&t, &tl, &tr, &vp, &ViewState::default());
        let n = f.rects.len() / RECT_STRIDE;
        assert!(n < 3 * 800, "{n} rects for 20k slices");
        assert!(
            rects(&f).any(|r| (r[4] as u32 >> 8) & FLAG_MARK != 0),
            "density marks"
        );
        assert!(f.meta.labels.iter().any(|l| l.text == "ProfilerStep#1"));
        assert_eq!(f.meta.steps.len(), 1);
        assert!(f.meta.ticks.len() >= 3);
        assert!(rects(&f).all(|r| r[0] >= -2.0 && r[0] + r[2] <= 802.0 && r[2] > 0.0));
    }

    #[test]
    fn zoomed_in_draws_single_slices_and_hits_them() {
        let t = trace();
        let tl = Timeline::new(&t);
        let tr = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let mut vp = Viewport::new(t.span_ns(), 800.0, 600.0);
        vp.show_range(20_000.0, 30_000.0);
        let f = layout(&t, &tl, &tr, &vp, &ViewState::default());
        let boxes: Vec<_> = rects(&f)
            .filter(|r| (r[4] as u32 >> 8) & FLAG_MARK == 0)
            .collect();
        assert!(boxes.len() >= 5);
        // Every box hit at its centre gives a slice whose box is that one.
        for b in boxes {
            let (x, y) = ((b[0] + b[2] / 2.0) as f64, (b[1] + b[3] / 2.0) as f64);
            let Some(Hit::Slice(r)) = hit(&t, &tl, &tr, &vp, &[], x, y) else {
                panic!("no hit at {x},{y}");
            };
            let (bx, by, _) = slice_box(&t, &tl, &tr, &vp, r).unwrap();
            assert!((bx.max(-2.0) - b[0] as f64).abs() < 0.01 && (by - b[1] as f64).abs() < 0.01);
        }
        // Between rows and on headers.
        assert_eq!(
            hit(&t, &tl, &tr, &vp, &[], 10.0, 1.0),
            Some(Hit::Group(t.lanes[0].process))
        );
        assert_eq!(hit(&t, &tl, &tr, &vp, &[], 10.0, 1e5), None);
    }

    #[test]
    fn idle_gaps_are_shaded_on_gpu_lanes_and_hit_under_no_slice() {
        let t = trace();
        let tl = Timeline::new(&t);
        let tr = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let mut vp = Viewport::new(t.span_ns(), 800.0, 600.0);
        vp.show_range(0.0, 3_000_000.0);
        // Kernels run [i ms, i ms + 0.5 ms): the gap after the first is [0.5 ms, 1 ms).
        let st = ViewState {
            gaps: vec![GapShade {
                device: 0,
                start_ns: 500_000,
                end_ns: 1_000_000,
            }],
            ..ViewState::default()
        };
        let f = layout(&t, &tl, &tr, &vp, &st);
        assert_eq!(f.meta.gaps.len(), 1);
        let g = &f.meta.gaps[0];
        let gpu = tr
            .tracks
            .iter()
            .find(|x| matches!(x.kind, TrackKind::Lane { gpu: true, .. }))
            .unwrap();
        assert_eq!(g.y, gpu.y);
        let mid = (g.x0 + g.x1) / 2.0;
        assert_eq!(
            hit(&t, &tl, &tr, &vp, &st.gaps, mid, gpu.y + 10.0),
            Some(Hit::Gap(0))
        );
        // On a kernel the slice wins; on a CPU lane there is no gap.
        let k = vp.x_of(250_000.0);
        assert!(matches!(
            hit(&t, &tl, &tr, &vp, &st.gaps, k, gpu.y + 10.0),
            Some(Hit::Slice(_))
        ));
        let cpu = tr.lane_track(0).unwrap();
        assert!(!matches!(
            hit(&t, &tl, &tr, &vp, &st.gaps, mid, cpu.y + 300.0),
            Some(Hit::Gap(_))
        ));
    }

    #[test]
    fn touching_thin_slices_of_one_colour_paint_as_one_rectangle() {
        // 400 back-to-back 1 us slices of one name, then one of another name, 2 px each: the run
        // paints as one rectangle, the last slice as its own unless it has the same colour.
        let mut ev: Vec<String> = (0..400)
            .map(|i| format!(r#"{{"ph":"X","name":"same","pid":1,"tid":1,"ts":{i},"dur":1}}"#))
            .collect();
        ev.push(r#"{"ph":"X","name":"other thing","pid":1,"tid":1,"ts":400,"dur":1}"#.into());
        let t = parse_bytes(format!("[{}]", ev.join(",")).as_bytes()).unwrap();
        let tl = Timeline::new(&t);
        let tr = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let mut vp = Viewport::new(t.span_ns(), 802.0, 600.0);
        vp.show_range(0.0, 401_000.0);
        let f = layout(&t, &tl, &tr, &vp, &ViewState::default());
        let boxes: Vec<_> = rects(&f).collect();
        let same = tl.slot(&t, SliceRef { lane: 0, index: 0 }) as f32;
        let other = tl.slot(
            &t,
            SliceRef {
                lane: 0,
                index: 400,
            },
        ) as f32;
        assert_eq!(
            boxes.iter().filter(|r| r[4] == same).count(),
            1,
            "{boxes:?}"
        );
        let run = boxes.iter().find(|r| r[4] == same).unwrap();
        assert!((run[2] as f64 - 400_000.0 / vp.ns_per_px).abs() < 1.0);
        assert_eq!(boxes.len(), if same == other { 1 } else { 2 });
    }

    #[test]
    fn arrows_to_folded_rows_end_at_the_lane_bottom() {
        // A launch 20 levels deep (folded away) with a flow to its kernel.
        let mut ev = Vec::new();
        for d in 0..20 {
            ev.push(format!(r#"{{"ph":"X","name":"f{d}","cat":"python_function","pid":1,"tid":1,"ts":{d},"dur":{}}}"#, 100 - 2 * d));
        }
        ev.push(r#"{"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":30,"dur":2,"args":{"correlation":5}}"#.into());
        ev.push(r#"{"ph":"s","id":5,"pid":1,"tid":1,"ts":30,"cat":"ac2g","name":"ac2g"}"#.into());
        ev.push(r#"{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":40,"dur":5,"args":{"device":0,"stream":7,"correlation":5}}"#.into());
        ev.push(
            r#"{"ph":"f","id":5,"pid":0,"tid":7,"ts":40,"cat":"ac2g","name":"ac2g","bp":"e"}"#
                .into(),
        );
        let t = parse_bytes(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap();
        let tl = Timeline::new(&t);
        let tr = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let vp = Viewport::new(t.span_ns(), 800.0, 600.0);
        let kernel = t.gpu_lanes().next().unwrap().0 as u32;
        let st = ViewState {
            selection: Some(SliceRef {
                lane: kernel,
                index: 0,
            }),
            arrows: crate::view::details::arrows(
                &t,
                &tl,
                SliceRef {
                    lane: kernel,
                    index: 0,
                },
            ),
            ..ViewState::default()
        };
        let f = layout(&t, &tl, &tr, &vp, &st);
        assert_eq!(f.meta.arrows.len(), 1);
        let cpu = tr.lane_track(0).unwrap();
        assert_eq!(f.meta.arrows[0].y0, cpu.y + cpu.height - 2.0);
        assert!(
            slice_box(&t, &tl, &tr, &vp, SliceRef { lane: 0, index: 20 }).is_none(),
            "folded row"
        );
    }

    #[test]
    fn a_critical_path_is_drawn_and_the_rest_dimmed() {
        let t = trace();
        let tl = Timeline::new(&t);
        let tr = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let vp = Viewport::new(t.span_ns(), 800.0, 600.0);
        let find = |name: &str, nth: usize| {
            let (lane, l) = t
                .lanes
                .iter()
                .enumerate()
                .find(|(_, l)| (0..l.slice_count()).any(|i| t.str(t.slices_of(l).name[i]) == name))
                .unwrap();
            let s = t.slices_of(l);
            let mut found = (0..s.len()).filter(|&i| t.str(s.name[i]) == name);
            SliceRef {
                lane: lane as u32,
                index: found.nth(nth).unwrap() as u32,
            }
        };
        // `big`, one tiny slice among thousands (drawn inside a density mark), the second kernel.
        let (big, tiny, kern) = (find("big", 0), find("tiny3", 700), find("kern", 1));
        let hop = Hop {
            from: big,
            from_ns: 500_000,
            to: kern,
            to_ns: 1_000_000,
        };
        let st = ViewState {
            path: Some(PathView::new(&t, &tl, &[big, tiny, kern], vec![hop])),
            ..ViewState::default()
        };
        let f = layout(&t, &tl, &tr, &vp, &st);
        let flags: Vec<u32> = rects(&f).map(|r| r[4] as u32 >> 8).collect();
        let on: Vec<u32> = flags
            .iter()
            .copied()
            .filter(|f| f & FLAG_PATH != 0)
            .collect();
        assert_eq!(on.len(), 3, "{on:?}");
        assert_eq!(on.iter().filter(|f| *f & FLAG_MARK != 0).count(), 1);
        assert!(flags
            .iter()
            .all(|f| (f & FLAG_PATH != 0) != (f & FLAG_DIM != 0)));
        assert_eq!(f.meta.path_arrows.len(), 1);
        let a = &f.meta.path_arrows[0];
        assert!((a.x0 - vp.x_of(500_000.0)).abs() < 1e-9 && (a.x1 - vp.x_of(1e6)).abs() < 1e-9);
        assert_ne!(a.y0, a.y1, "from the CPU lane to the GPU stream");
        // Outside the hop's time, no arrow; without a path, nothing dimmed.
        let mut later = Viewport::new(t.span_ns(), 800.0, 600.0);
        later.show_range(2e6, 3e6);
        assert!(layout(&t, &tl, &tr, &later, &st)
            .meta
            .path_arrows
            .is_empty());
        let plain = layout(&t, &tl, &tr, &vp, &ViewState::default());
        assert!(rects(&plain).all(|r| r[4] as u32 >> 8 & (FLAG_DIM | FLAG_PATH) == 0));
    }

    #[test]
    fn search_selection_and_collapse() {
        let t = trace();
        let tl = Timeline::new(&t);
        let mut st = ViewState {
            search: Some(Search::substring(&t, "kern")),
            ..ViewState::default()
        };
        let tr = TrackLayout::new(&t, &st.collapsed, &st.expanded);
        let vp = Viewport::new(t.span_ns(), 800.0, 600.0);
        let f = layout(&t, &tl, &tr, &vp, &st);
        let flags: Vec<u32> = rects(&f).map(|r| r[4] as u32 >> 8).collect();
        assert!(flags.iter().any(|f| f & FLAG_MATCH != 0));
        assert!(flags.iter().any(|f| f & FLAG_DIM != 0));
        st.search = None;
        st.selection = Some(SliceRef { lane: 0, index: 1 });
        let f = layout(&t, &tl, &tr, &vp, &st);
        let last = rects(&f).last().unwrap();
        assert_eq!(last[4] as u32 >> 8, FLAG_SELECTED);
        st.collapsed.insert(t.lanes[0].process);
        let tr = TrackLayout::new(&t, &st.collapsed, &st.expanded);
        let f = layout(&t, &tl, &tr, &vp, &st);
        assert!(
            rects(&f).all(|r| r[4] as u32 >> 8 != FLAG_SELECTED),
            "hidden lane, no outline"
        );
        assert_eq!(f.meta.tracks.len(), 3);
    }
}
