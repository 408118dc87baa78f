//! The timeline: the draw list of a frame, the viewport, hit testing (tooltips, clicks), the
//! selection and search.

use super::session::{Loaded, Session};
use super::{err, json};
use crate::analysis::idle;
use crate::analysis::summary::lane_name;
use crate::model::SliceRef;
use crate::view::details::{self, brief};
use crate::view::frame::{self, Hit};
use crate::view::overview::overview;
use crate::view::panels::{Clicked, Tooltip};
use crate::view::rows::RowMode;
use crate::view::ruler::format_duration;
use crate::view::search::Search;
use crate::view::tracks::TrackLayout;
use wasm_bindgen::prelude::*;

/// A drawn frame: rectangles (see [`frame::RECT_STRIDE`]) and the rest as JSON.
#[wasm_bindgen]
pub struct Frame {
    rects: Vec<f32>,
    meta: String,
}

#[wasm_bindgen]
impl Frame {
    /// `x, y, w, h, style, alpha` per rectangle; `style = palette slot | flags << 8`.
    pub fn rects(&self) -> js_sys::Float32Array {
        js_sys::Float32Array::from(&self.rects[..])
    }

    /// Tracks, labels, ticks, steps, arrows, range (see `view::frame::FrameMeta`).
    pub fn meta(&self) -> String {
        self.meta.clone()
    }
}

impl Loaded {
    pub(super) fn relayout(&mut self) {
        let trace = self.derived.trace();
        if self.timeline.set_expanded(trace, &self.st.expanded) {
            // The path's slices are looked up by row, and the rows have moved.
            if let Some(p) = &mut self.st.path {
                p.relayout(trace, &self.timeline);
            }
        }
        self.tracks = TrackLayout::with_rows(
            self.derived.trace(),
            &self.timeline.row_counts(),
            &self.st.collapsed,
            &self.st.expanded,
        );
        self.vp.set_content_height(self.tracks.height);
    }

    pub(super) fn slice(&self, lane: u32, index: u32) -> Result<SliceRef, JsValue> {
        let ok = self
            .trace()
            .lanes
            .get(lane as usize)
            .is_some_and(|l| (index as usize) < l.slice_count());
        if ok {
            Ok(SliceRef { lane, index })
        } else {
            Err(err(format!("no slice {index} on lane {lane}")))
        }
    }

    /// Selects `r`, opens its group and brings it into view; returns its details.
    pub(super) fn select(&mut self, r: SliceRef, reveal: bool) -> Option<details::SliceDetails> {
        self.st.selection = Some(r);
        self.st.arrows = details::arrows(self.derived.trace(), &self.timeline, r);
        let lane = &self.derived.trace().lanes[r.lane as usize];
        let deep = self.timeline.hidden_until_expanded(self.derived.trace(), r);
        let mut changed = self.st.collapsed.remove(&lane.process);
        if deep {
            changed |= self.st.expanded.insert(r.lane);
        }
        if changed {
            self.relayout();
        }
        if reveal {
            let s = self.derived.trace().slices(r.lane as usize);
            let (a, b) = (s.start_ns[r.index as usize], s.end_ns(r.index as usize));
            self.vp.reveal(a as f64, b as f64);
            if let Some((_, y, _)) = frame::slice_box(
                self.derived.trace(),
                &self.timeline,
                &self.tracks,
                &self.vp,
                r,
            ) {
                if y < 0.0 || y > self.vp.height_px - 20.0 {
                    self.vp.scroll_by(y - self.vp.height_px / 3.0);
                }
            }
        }
        self.details(r)
    }

    /// A slice's details, with the graph replay it belongs to once the analyses have run (the
    /// graph report is computed once, after the links the analyses keep).
    pub(super) fn details(&self, r: SliceRef) -> Option<details::SliceDetails> {
        let trace = self.derived.trace();
        let mut d = details::details(trace, &self.timeline, r)?;
        if d.gpu && self.analysed().is_ok() {
            d.replayed =
                details::Replayed::of(trace, self.derived.graphs(), self.derived.attribution(), r);
        }
        Some(d)
    }

    pub(super) fn hit(&self, x: f64, y: f64) -> Option<Hit> {
        frame::hit(
            self.derived.trace(),
            &self.timeline,
            &self.tracks,
            &self.vp,
            &self.st.gaps,
            x,
            y,
        )
    }
}

/// A tooltip's lines for an idle gap: its length and what the CPU was doing.
fn gap_tooltip(g: &idle::Gap) -> Tooltip {
    let doing: Vec<String> = g
        .cpu
        .iter()
        .take(4)
        .map(|k| format!("{} {}", k.kind.phrase(), format_duration(k.ns as f64)))
        .collect();
    let ended = match &g.ended_by.launch {
        Some(l) => format!(
            "ended by {} (launched by {} at {})",
            g.ended_by.name,
            l.name,
            format_duration(l.start_ns as f64)
        ),
        None => format!("ended by {}", g.ended_by.name),
    };
    Tooltip {
        title: format!(
            "{} idle for {}",
            g.device_name,
            format_duration(g.dur_ns as f64)
        ),
        lines: vec![format!("meanwhile on the CPU: {}", doing.join(", ")), ended],
    }
}

#[wasm_bindgen]
impl Session {
    pub fn resize(&mut self, width: f64, height: f64) -> Result<(), JsValue> {
        self.loaded_mut()?.vp.resize(width, height);
        Ok(())
    }

    /// Zooms by `factor` (< 1 zooms in) around pixel `x`.
    pub fn zoom_at(&mut self, x: f64, factor: f64) -> Result<(), JsValue> {
        self.loaded_mut()?.vp.zoom_at(x, factor);
        Ok(())
    }

    /// Pans by `dx` pixels horizontally and scrolls by `dy` pixels vertically.
    pub fn pan(&mut self, dx: f64, dy: f64) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.vp.pan_px(dx);
        l.vp.scroll_by(dy);
        Ok(())
    }

    /// Shows the whole trace.
    pub fn reset_view(&mut self) -> Result<(), JsValue> {
        self.loaded_mut()?.vp.reset();
        Ok(())
    }

    /// Centres time `t` (ns) at the current zoom.
    pub fn center_on(&mut self, t: f64) -> Result<(), JsValue> {
        self.loaded_mut()?.vp.center_on(t);
        Ok(())
    }

    /// Zooms to the selected range, else to the selected slice; false when there is neither.
    pub fn fit_selection(&mut self) -> Result<bool, JsValue> {
        let l = self.loaded_mut()?;
        let span = match (l.st.range, l.st.selection) {
            (Some(r), _) => r,
            (None, Some(r)) => {
                let s = l.derived.trace().slices(r.lane as usize);
                let i = r.index as usize;
                (s.start_ns[i] as f64, s.end_ns(i) as f64)
            }
            (None, None) => return Ok(false),
        };
        l.vp.show_range(span.0, span.1);
        Ok(true)
    }

    /// The draw list for the current view.
    pub fn frame(&self) -> Result<Frame, JsValue> {
        let l = self.loaded()?;
        let f = frame::layout(l.derived.trace(), &l.timeline, &l.tracks, &l.vp, &l.st);
        Ok(Frame {
            rects: f.rects,
            meta: json(&f.meta),
        })
    }

    /// What a tooltip says about the point `(x, y)`: JSON `{title, lines: [..]}` for a slice
    /// (duration, category, lane, start) or an idle gap (what the CPU was doing), or `undefined`.
    pub fn tooltip(&self, x: f64, y: f64) -> Result<Option<String>, JsValue> {
        let l = self.loaded()?;
        let v = match l.hit(x, y) {
            Some(Hit::Slice(r)) => {
                let b = brief(l.derived.trace(), r);
                let cat = if b.category.is_empty() {
                    "no category".into()
                } else {
                    b.category
                };
                Tooltip {
                    title: b.name,
                    lines: vec![
                        format!(
                            "{} · {cat} · {}",
                            format_duration(b.dur_ns as f64),
                            lane_name(l.derived.trace(), r.lane as usize)
                        ),
                        format!("starts at {}", format_duration(b.start_ns as f64)),
                    ],
                }
            }
            Some(Hit::Gap(i)) => match l.gap(i) {
                Some(g) => gap_tooltip(&g),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(Some(json(&v)))
    }

    /// A click at `(x, y)`: selects the slice there, folds or unfolds a group header or a deep
    /// lane's rows (x < 0, on its name), selects an idle gap's time range, or clears the
    /// selection and the range; returns what it did, [`Clicked`] as JSON (`null`: cleared).
    pub fn click(&mut self, x: f64, y: f64) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        let clicked = match l.hit(x, y) {
            Some(Hit::Slice(r)) => l.select(r, false).map(|d| Clicked::Slice(Box::new(d))),
            Some(Hit::Group(p)) => {
                if !l.st.collapsed.remove(&p) {
                    l.st.collapsed.insert(p);
                }
                l.relayout();
                Some(Clicked::Group { group: p })
            }
            Some(Hit::LaneName(lane)) => {
                if !l.st.expanded.remove(&lane) {
                    l.st.expanded.insert(lane);
                }
                l.relayout();
                Some(Clicked::FoldLane { fold_lane: lane })
            }
            Some(Hit::Gap(i)) => l.gap(i).map(|g| {
                l.st.selection = None;
                l.st.arrows.clear();
                l.st.range = Some((g.start_ns as f64, g.end_ns as f64));
                Clicked::Gap { gap: Box::new(g) }
            }),
            None => {
                // Empty space clears the range as well as the slice: a range left selected there
                // (a shift-drag, a gap, a finding's evidence) would be what `F` fits next.
                l.st.selection = None;
                l.st.arrows.clear();
                l.st.range = None;
                None
            }
        };
        Ok(json(&clicked))
    }

    /// Selects a slice and brings it into view; returns its details JSON.
    pub fn select(&mut self, lane: u32, index: u32) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        let r = l.slice(lane, index)?;
        Ok(json(&l.select(r, true)))
    }

    /// Details JSON of any slice, without selecting it.
    pub fn details(&self, lane: u32, index: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let r = l.slice(lane, index)?;
        Ok(json(&l.details(r)))
    }

    /// A slice's whole name: the JSON the page is given cuts names past
    /// [`crate::model::LONG_NAME_BYTES`]; the details panel asks for the rest on a click.
    pub fn full_name(&self, lane: u32, index: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let r = l.slice(lane, index)?;
        Ok(l.derived.trace().slice_name(r).to_string())
    }

    pub fn clear_selection(&mut self) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.st.selection = None;
        l.st.arrows.clear();
        l.st.range = None;
        Ok(())
    }

    /// Highlights slices whose name contains `query` (any case); returns how many.
    pub fn search(&mut self, query: &str) -> Result<u32, JsValue> {
        let l = self.loaded_mut()?;
        let s = Search::substring(l.derived.trace(), query);
        let n = s.count as u32;
        l.st.search = (!query.is_empty()).then_some(s);
        Ok(n)
    }

    /// Highlights slices named exactly `name` (a table row); returns how many.
    pub fn highlight_name(&mut self, name: &str) -> Result<u32, JsValue> {
        let l = self.loaded_mut()?;
        let s = Search::exact(l.derived.trace(), name);
        let n = s.count as u32;
        l.st.search = Some(s);
        Ok(n)
    }

    /// Selects the next (or previous) match and brings it into view; returns its details JSON or
    /// `undefined` when nothing matches.
    pub fn search_step(&mut self, forward: bool) -> Result<Option<String>, JsValue> {
        let l = self.loaded_mut()?;
        let from = l.vp.start_ns;
        let found = match &mut l.st.search {
            Some(s) => s.step(l.derived.trace(), from, forward),
            None => None,
        };
        Ok(found.map(|r| json(&l.select(r, true))))
    }

    /// Selects the time range between pixels `x0` and `x1`; returns its aggregation by name (JSON).
    pub fn select_range(&mut self, x0: f64, x1: f64, limit: u32) -> Result<String, JsValue> {
        let vp = &self.loaded()?.vp;
        let (a, b) = (vp.t_of(x0.min(x1)), vp.t_of(x0.max(x1)));
        self.select_range_ns(a, b, limit)
    }

    /// Busy fraction over time in `buckets` buckets, for the overview strip (JSON).
    pub fn overview(&self, buckets: u32) -> Result<String, JsValue> {
        Ok(json(&overview(self.loaded()?.trace(), buckets as usize)))
    }

    /// Marks the time range `[t0, t1]` (ns) as selected and shows it (a finding's evidence).
    pub fn show_evidence(&mut self, t0: f64, t1: f64) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.st.range = Some((t0.min(t1), t0.max(t1)));
        l.vp.show_range(t0.min(t1), t0.max(t1));
        Ok(())
    }
}

/// Rows of the timeline: Python frames shown or hidden (see `view::rows`).
#[wasm_bindgen]
impl Session {
    /// True when the trace holds Python frames (`with_stack=True`).
    pub fn has_python_frames(&self) -> Result<bool, JsValue> {
        let t = self.loaded()?.trace();
        Ok(t.strings
            .find("python_function")
            .is_some_and(|c| t.columns.cat.contains(&c)))
    }

    /// Shows or hides Python frames; the lanes are re-laid (operators and labels take the rows
    /// the frames held). Returns whether anything changed.
    pub fn set_python_frames(&mut self, show: bool) -> Result<bool, JsValue> {
        let l = self.loaded_mut()?;
        let mode = RowMode {
            python: show,
            fold: true,
        };
        let changed = l.timeline.set_mode(l.derived.trace(), mode);
        if changed {
            l.relayout();
            // The path's slices are looked up by row, and the rows have moved.
            if let Some(p) = &mut l.st.path {
                p.relayout(l.derived.trace(), &l.timeline);
            }
        }
        Ok(changed)
    }
}
