//! The view layer against every real trace in `shared/fixtures`: the row invariant the level of
//! detail relies on, bounded draw lists at full zoom-out, hit testing that finds what was drawn, and
//! the critical path drawn over the rest.
//!
//! Fixtures are found as every test finds them (`tests/common`).

use crate::common;

use rustc_hash::FxHashSet;
use sightline::analysis::critical::{Analysis, PathOptions};
use sightline::analysis::links::Links;
use sightline::analysis::steps;
use sightline::model::category::{Kind, Kinds};
use sightline::model::SliceRef;
use sightline::parse::parse_bytes;
use sightline::view::frame::{
    self, Hit, ViewState, FLAG_DIM, FLAG_MARK, FLAG_PATH, HIT_SLOP_PX, RECT_STRIDE,
};
use sightline::view::path::{slices_and_hops, PathView};
use sightline::view::rows::RowMode;
use sightline::view::tracks::TrackLayout;
use sightline::view::viewport::Viewport;
use sightline::view::Timeline;

#[test]
fn every_fixture_lays_out_and_hits() {
    for path in common::all_shared_traces() {
        let bytes = std::fs::read(&path).unwrap();
        let trace = parse_bytes(&bytes).unwrap();
        let tl = Timeline::new(&trace);
        let name = path.display();
        // Rows never overlap: ends grow along a row.
        for (l, idx) in tl.lanes.iter().enumerate() {
            let s = trace.slices(l);
            for row in &idx.rows {
                for w in row.idx.windows(2) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    assert!(
                        s.end_ns(a) <= s.start_ns[b],
                        "{name}: lane {l} slices {a},{b} overlap on a row"
                    );
                }
            }
        }
        let all: FxHashSet<u32> = (0..trace.lanes.len() as u32).collect();
        let tracks = TrackLayout::new(&trace, &FxHashSet::default(), &all);
        let mut vp = Viewport::new(trace.span_ns(), 1200.0, 5000.0);
        vp.set_content_height(tracks.height);
        let f = frame::layout(&trace, &tl, &tracks, &vp, &ViewState::default());
        let rects = f.rects.len() / RECT_STRIDE;
        let rows: u32 = trace.lanes.iter().map(|l| l.rows).sum();
        assert!(
            rects <= rows as usize * 2 * 1200 + 10,
            "{name}: {rects} rects"
        );
        // Click the middle of every box (a slice, or touching thin slices drawn as one): the hit
        // is a slice drawn there, within the click slack.
        let slack = HIT_SLOP_PX * vp.ns_per_px + 1.0;
        let mut checked = 0;
        for r in f.rects.chunks(RECT_STRIDE) {
            let flags = r[4] as u32 >> 8;
            if flags & FLAG_MARK != 0 || r[2] < 4.0 {
                continue;
            }
            let (x, y) = ((r[0] + r[2] / 2.0) as f64, (r[1] + 8.0) as f64);
            match frame::hit(&trace, &tl, &tracks, &vp, &[], x, y) {
                Some(Hit::Slice(SliceRef { lane, index })) => {
                    let s = trace.slices(lane as usize);
                    let t = vp.t_of(x);
                    assert!(
                        s.start_ns[index as usize] as f64 <= t + slack
                            && s.end_ns(index as usize) as f64 >= t - slack
                    );
                    checked += 1;
                }
                other => panic!("{name}: nothing at {x},{y}: {other:?}"),
            }
        }
        assert!(checked > 0 || trace.slice_count() == 0, "{name}");
        drawn_rows_hold_every_shown_slice_once(&trace, &name.to_string());
    }
}

/// With the frames spanning a lane folded, and with Python frames hidden: rows never overlap,
/// every slice that is drawn is on exactly its row, and only folded frames (and Python frames,
/// when hidden) are left out.
fn drawn_rows_hold_every_shown_slice_once(trace: &sightline::model::Trace, name: &str) {
    let kinds = Kinds::new(trace);
    for python in [true, false] {
        let mode = RowMode { python, fold: true };
        let mut tl = Timeline::new(trace);
        tl.set_mode(trace, mode);
        // Laid out so from the start (as the page does), the index is the same.
        let direct = Timeline::in_mode(trace, mode);
        assert!(direct.lanes == tl.lanes && direct.rows == tl.rows, "{name}");
        for (l, idx) in tl.lanes.iter().enumerate() {
            let lane = &trace.lanes[l];
            let s = trace.slices_of(lane);
            let drawn = &tl.rows[l];
            let mut seen = vec![false; s.len()];
            for (d, row) in idx.rows.iter().enumerate() {
                for w in row.idx.windows(2) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    assert!(s.end_ns(a) <= s.start_ns[b], "{name}: lane {l} row {d}");
                }
                for &i in &row.idx {
                    assert_eq!(drawn.of(s, i as usize) as usize, d);
                    seen[i as usize] = true;
                }
            }
            assert_eq!(idx.rows.len() as u32, drawn.rows, "{name}: lane {l}");
            for (i, &shown) in seen.iter().enumerate() {
                let python_frame = kinds.of_cat(s.cat[i]) == Kind::Python;
                let folded = drawn.folded.contains(&s.name[i]);
                assert!(
                    shown || folded || (!python && python_frame),
                    "{name}: lane {l} slice {i} is not drawn"
                );
            }
        }
    }
}

/// Frames drawn from the rows' items kept for the window (`lod::ItemCache`) equal frames of a
/// fresh timeline: the same view again, scrolled, in another row layout, and panned.
#[test]
fn frames_that_reuse_the_rows_items_equal_fresh_ones() {
    let python = RowMode {
        python: true,
        fold: true,
    };
    let no_python = RowMode {
        python: false,
        fold: true,
    };
    let fresh = |trace: &sightline::model::Trace, mode: RowMode| {
        let mut tl = Timeline::new(trace);
        tl.set_mode(trace, mode);
        tl
    };
    for path in common::all_shared_traces() {
        let bytes = std::fs::read(&path).unwrap();
        let trace = parse_bytes(&bytes).unwrap();
        let name = path.display();
        let all: FxHashSet<u32> = (0..trace.lanes.len() as u32).collect();
        let st = ViewState::default();
        let mut tl = fresh(&trace, python);
        let tracks = TrackLayout::with_rows(&trace, &tl.row_counts(), &FxHashSet::default(), &all);
        let mut vp = Viewport::new(trace.span_ns(), 900.0, 400.0);
        vp.set_content_height(tracks.height);
        let draw = |tl: &Timeline, tracks: &TrackLayout, vp: &Viewport| {
            let f = frame::layout(&trace, tl, tracks, vp, &st);
            (f.rects, serde_json::to_string(&f.meta).unwrap())
        };
        let first = draw(&tl, &tracks, &vp);
        assert_eq!(
            draw(&tl, &tracks, &vp),
            first,
            "{name}: the same view again"
        );
        vp.scroll_by(250.0);
        let fresh_python = fresh(&trace, python);
        assert_eq!(
            draw(&tl, &tracks, &vp),
            draw(&fresh_python, &tracks, &vp),
            "{name}: scrolled"
        );
        if tl.set_mode(&trace, no_python) {
            let tracks =
                TrackLayout::with_rows(&trace, &tl.row_counts(), &FxHashSet::default(), &all);
            let other = fresh(&trace, no_python);
            assert_eq!(
                draw(&tl, &tracks, &vp),
                draw(&other, &tracks, &vp),
                "{name}: another row layout"
            );
            tl.set_mode(&trace, python);
        }
        vp.pan_px(37.0);
        assert_eq!(
            draw(&tl, &tracks, &vp),
            draw(&fresh_python, &tracks, &vp),
            "{name}: panned"
        );
    }
}

/// Each step's critical path as the timeline draws it: every hop goes from one lane to another,
/// forward in time, to a slice of the path, from a slice of the path or the launch call of the op
/// it reaches; every drawn box is on the path or dimmed, the path's own boxes among them; and the
/// arrows of a frame stay few however many hops the path has.
#[test]
fn every_fixtures_critical_path_is_drawn_over_the_rest() {
    for path in common::all_shared_traces() {
        let trace = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let name = path.display();
        let links = Links::build(&trace);
        let steps = steps::analyze_with(&trace, &links);
        let a = Analysis::build(&trace, &links, &steps, &PathOptions::default()).unwrap();
        let paths = a.paths(&trace, &links);
        let (slices, hops) = slices_and_hops(&paths, &links);
        let on: FxHashSet<SliceRef> = slices.iter().copied().collect();
        assert_eq!(on.len(), slices.len(), "{name}: each slice once");
        for p in &paths {
            for s in p.segments.iter().filter_map(|s| s.slice) {
                assert!(on.contains(&s), "{name}");
            }
        }
        for h in &hops {
            assert_ne!(h.from.lane, h.to.lane, "{name}: {h:?}");
            assert!(h.from_ns <= h.to_ns, "{name}: {h:?}");
            assert!(on.contains(&h.to), "{name}: {h:?}");
            assert!(
                on.contains(&h.from) || links.launch(h.to) == Some(h.from),
                "{name}: {h:?}"
            );
        }
        let tl = Timeline::new(&trace);
        let all: FxHashSet<u32> = (0..trace.lanes.len() as u32).collect();
        let tracks = TrackLayout::new(&trace, &FxHashSet::default(), &all);
        let mut vp = Viewport::new(trace.span_ns(), 1200.0, 20_000.0);
        vp.set_content_height(tracks.height);
        let st = ViewState {
            path: Some(PathView::new(&trace, &tl, &slices, hops.clone())),
            ..ViewState::default()
        };
        let f = frame::layout(&trace, &tl, &tracks, &vp, &st);
        let flags: Vec<u32> = f
            .rects
            .chunks(RECT_STRIDE)
            .map(|r| r[4] as u32 >> 8)
            .collect();
        assert!(
            flags
                .iter()
                .all(|f| (f & FLAG_PATH != 0) != (f & FLAG_DIM != 0)),
            "{name}: every box on the path or dimmed"
        );
        if !slices.is_empty() {
            assert!(flags.iter().any(|f| f & FLAG_PATH != 0), "{name}");
        }
        assert!(f.meta.path_arrows.len() <= hops.len(), "{name}");
        assert!(
            f.meta.path_arrows.len() <= 1200 * tracks.tracks.len(),
            "{name}: {} arrows",
            f.meta.path_arrows.len()
        );
    }
}

/// A lane deeper than the rows it shows until expanded keeps its operators in those rows
/// (`rows::capped`): on the `with_stack` H100 trace, operators had sat 20 rows down under
/// "more rows". Expanding gives back every row as laid out.
#[test]
fn deep_stacks_keep_their_operators_in_view_until_expanded() {
    use sightline::view::rows::HIDDEN;
    use sightline::view::tracks::FOLDED_ROWS;
    let mode = RowMode {
        python: true,
        fold: true,
    };
    for path in common::all_shared_traces() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let trace = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let kinds = Kinds::new(&trace);
        let full = Timeline::in_mode(&trace, mode);
        let mut tl = Timeline::in_mode(&trace, mode);
        tl.set_expanded(&trace, &FxHashSet::default());
        // Operators (anything but a Python frame) out of view in a lane not expanded: before,
        // those past the first rows; now, those the capped rows leave out.
        let (mut before, mut after, mut frames_out) = (0, 0, 0);
        for l in 0..trace.lanes.len() {
            let s = trace.slices(l);
            assert!(tl.rows[l].rows <= FOLDED_ROWS.max(full.rows[l].rows.min(FOLDED_ROWS)));
            for i in 0..s.len() {
                let r = SliceRef {
                    lane: l as u32,
                    index: i as u32,
                };
                if kinds.of_cat(s.cat[i]) == Kind::Python {
                    // A frame left out until expanded is known as such: selecting it expands
                    // its lane (the page's `select`), so a selected slice is never out of view.
                    let out = full.rows[l].of(s, i) != HIDDEN && tl.rows[l].of(s, i) == HIDDEN;
                    assert_eq!(tl.hidden_until_expanded(&trace, r), out, "{name}");
                    frames_out += usize::from(out);
                    continue;
                }
                let row = full.rows[l].of(s, i);
                if row != HIDDEN && u32::from(row) >= FOLDED_ROWS {
                    before += 1;
                }
                if row != HIDDEN && tl.rows[l].of(s, i) == HIDDEN {
                    after += 1;
                    assert!(tl.hidden_until_expanded(&trace, r), "{name}");
                }
            }
            // The index is the capped rows'.
            assert_eq!(
                tl.lanes[l].rows.len() as u32,
                tl.rows[l].rows,
                "{name}: lane {l}"
            );
        }
        eprintln!("{name}: operators out of view until expanded {before} -> {after}");
        assert!(after <= before, "{name}: {before} -> {after}");
        if name.starts_with("tracelens_h100_owlv2_stack") {
            assert!(before > 0 && after == 0, "{name}: {before} -> {after}");
            assert!(frames_out > 0, "{name}");
        }
        assert_eq!(tl.row_counts(), full.row_counts(), "{name}");
        let all: FxHashSet<u32> = (0..trace.lanes.len() as u32).collect();
        tl.set_expanded(&trace, &all);
        assert!(tl.rows == full.rows && tl.lanes == full.lanes, "{name}");
    }
}
