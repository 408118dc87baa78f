//! Browser glue: the wasm32-only entry points that the page calls.
//!
//! One [`Session`] per opened trace holds the parser while bytes arrive, then the [`Trace`], its
//! [`Timeline`] index and the view state, all in wasm memory. JavaScript gets small results: a
//! frame's draw list as a `Float32Array` plus a JSON string, a details or table JSON, a count.
//! Every method that can fail returns `Result<_, JsValue>` with a JS `Error` carrying a readable
//! message; a panic is logged by the hook and its message kept for [`last_panic`], so the page can
//! show it in its error banner and stay usable for the next file.
//!
//! Compiled for `wasm32` only (see `lib.rs`); the native CLI never links it.

use crate::analysis::findings::{self, Finding};
use crate::analysis::idle::{self, IdleOptions, IdleReport};
use crate::analysis::links::Links;
use crate::analysis::steps::{self, StepsReport};
use crate::analysis::summary::{lane_name, summarize};
use crate::analysis::tables::{call_tree, kernel_table, label_table, op_table, Forest, OpColumn};
use crate::model::{SliceRef, Trace};
use crate::parse::Parser;
use crate::view::aggregate::aggregate;
use crate::view::details::{self, brief};
use crate::view::frame::{self, GapShade, Hit, ViewState};
use crate::view::overview::overview;
use crate::view::rows::{RowMode, HIDDEN};
use crate::view::ruler::format_duration;
use crate::view::search::Search;
use crate::view::tracks::{TrackLayout, FOLDED_ROWS};
use crate::view::viewport::Viewport;
use crate::view::{colour, Timeline};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// Runs once when the page instantiates the module.
#[wasm_bindgen(start)]
pub fn start() {
    install_panic_hook();
}

/// The crate version, so the page (and tests) can tell which build is loaded.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The message of the last panic, if any (the page shows it when a call throws).
#[wasm_bindgen]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow().clone())
}

/// Routes Rust panics to `console.error`, with a JS stack trace attached, and keeps the message.
///
/// Without this a panic in wasm only shows up as an opaque `RuntimeError: unreachable`.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = format!("sightline panicked: {info}");
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(message.clone()));
            // Passing an Error object makes the console show where it was thrown.
            web_sys::console::error_2(
                &JsValue::from_str(&message),
                &js_sys::Error::new(&message).into(),
            );
        }));
    });
}

/// The palette as JSON `[[light, dark], ...]`, indexed by the slot in a frame's rectangles.
#[wasm_bindgen]
pub fn palette() -> String {
    json(&colour::PALETTE)
}

/// The geometry and flag values a painter needs to read a frame (JSON), from `view::frame` and
/// `view::tracks`, so the page never hard-codes them.
#[wasm_bindgen]
pub fn constants() -> String {
    use crate::view::tracks::{BOX_PX, HEADER_PX, ROW_PX};
    json(&serde_json::json!({
        "rect_stride": frame::RECT_STRIDE,
        "flag_mark": frame::FLAG_MARK,
        "flag_match": frame::FLAG_MATCH,
        "flag_dim": frame::FLAG_DIM,
        "flag_selected": frame::FLAG_SELECTED,
        "box_px": BOX_PX,
        "row_px": ROW_PX,
        "header_px": HEADER_PX,
        "folded_rows": FOLDED_ROWS,
    }))
}

/// Words for the idle analysis' wait kinds (JSON object kind -> phrase), for the idle chart.
#[wasm_bindgen]
pub fn wait_kinds() -> String {
    let m: serde_json::Map<String, serde_json::Value> = idle::WaitKind::ALL
        .iter()
        .map(|k| (json(k).trim_matches('"').to_string(), k.phrase().into()))
        .collect();
    json(&m)
}

fn err(message: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&message.to_string()).into()
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    // Serializing plain data structures cannot fail; "null" keeps the page going if it ever did.
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

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

struct Loaded {
    trace: Trace,
    timeline: Timeline,
    tracks: TrackLayout,
    vp: Viewport,
    st: ViewState,
    /// Steps, idle time and findings, once [`Session::analyse`] ran.
    analyses: Option<Analyses>,
    /// The operator trees every table reads, built with the analyses.
    forest: Option<Forest>,
}

struct Analyses {
    steps: StepsReport,
    idle: IdleReport,
    findings: Vec<Finding>,
}

/// Idle gaps reported one by one (with what the CPU was doing), and so shaded on the timeline.
const VIEWER_GAPS: usize = 500;

enum State {
    Reading(Parser),
    Ready(Box<Loaded>),
    /// `finish` failed or is running; nothing more can be done with this session.
    Done,
}

/// One opened trace, from its first bytes to the views of it.
#[wasm_bindgen]
pub struct Session {
    state: State,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    fn loaded(&self) -> Result<&Loaded, JsValue> {
        match &self.state {
            State::Ready(l) => Ok(l),
            _ => Err(err("no trace is loaded in this session")),
        }
    }

    fn loaded_mut(&mut self) -> Result<&mut Loaded, JsValue> {
        match &mut self.state {
            State::Ready(l) => Ok(l),
            _ => Err(err("no trace is loaded in this session")),
        }
    }
}

impl Loaded {
    fn relayout(&mut self) {
        self.tracks = TrackLayout::with_rows(
            &self.trace,
            &self.timeline.row_counts(),
            &self.st.collapsed,
            &self.st.expanded,
        );
        self.vp.set_content_height(self.tracks.height);
    }

    fn slice(&self, lane: u32, index: u32) -> Result<SliceRef, JsValue> {
        let ok = self
            .trace
            .lanes
            .get(lane as usize)
            .is_some_and(|l| (index as usize) < l.slices.len());
        if ok {
            Ok(SliceRef { lane, index })
        } else {
            Err(err(format!("no slice {index} on lane {lane}")))
        }
    }

    /// Selects `r`, opens its group and brings it into view; returns its details.
    fn select(&mut self, r: SliceRef, reveal: bool) -> String {
        self.st.selection = Some(r);
        self.st.arrows = details::arrows(&self.trace, &self.timeline, r);
        let lane = &self.trace.lanes[r.lane as usize];
        let row = self.timeline.row_of(&self.trace, r);
        let deep = row != HIDDEN && row as u32 >= FOLDED_ROWS;
        let mut changed = self.st.collapsed.remove(&lane.process);
        if deep {
            changed |= self.st.expanded.insert(r.lane);
        }
        if changed {
            self.relayout();
        }
        if reveal {
            let s = &self.trace.lanes[r.lane as usize].slices;
            let (a, b) = (s.start_ns[r.index as usize], s.end_ns(r.index as usize));
            self.vp.reveal(a as f64, b as f64);
            if let Some((_, y, _)) =
                frame::slice_box(&self.trace, &self.timeline, &self.tracks, &self.vp, r)
            {
                if y < 0.0 || y > self.vp.height_px - 20.0 {
                    self.vp.scroll_by(y - self.vp.height_px / 3.0);
                }
            }
        }
        json(&details::details(&self.trace, &self.timeline, r))
    }

    fn hit(&self, x: f64, y: f64) -> Option<Hit> {
        frame::hit(
            &self.trace,
            &self.timeline,
            &self.tracks,
            &self.vp,
            &self.st.gaps,
            x,
            y,
        )
    }

    fn analyses(&self) -> Result<&Analyses, JsValue> {
        self.analyses
            .as_ref()
            .ok_or_else(|| err("the analyses have not run yet (call analyse)"))
    }

    fn gap(&self, i: usize) -> Option<&idle::Gap> {
        self.analyses.as_ref()?.idle.gaps.get(i)
    }
}

/// A tooltip's lines for an idle gap: its length and what the CPU was doing.
fn gap_tooltip(g: &idle::Gap) -> serde_json::Value {
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
    serde_json::json!({
        "title": format!("GPU {} idle for {}", g.device, format_duration(g.dur_ns as f64)),
        "lines": [format!("meanwhile on the CPU: {}", doing.join(", ")), ended],
    })
}

#[wasm_bindgen]
impl Session {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Session {
        Session {
            state: State::Reading(Parser::new()),
        }
    }

    /// Feeds the next bytes of the file (any size, split anywhere; `.gz` is decompressed here).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        match &mut self.state {
            State::Reading(p) => {
                p.feed(chunk);
                Ok(())
            }
            _ => Err(err("this session has finished reading")),
        }
    }

    /// Bytes fed so far.
    pub fn bytes_fed(&self) -> f64 {
        match &self.state {
            State::Reading(p) => p.bytes_fed() as f64,
            State::Ready(l) => l.trace.stats.input_bytes as f64,
            State::Done => 0.0,
        }
    }

    /// Trace events read so far.
    pub fn events_read(&self) -> f64 {
        match &self.state {
            State::Reading(p) => p.events_read() as f64,
            State::Ready(l) => l.trace.stats.events_total as f64,
            State::Done => 0.0,
        }
    }

    /// Ends the input, builds the model and the timeline index for a `width x height` view.
    /// Returns the summary as JSON; throws the parser's message when the input is not a trace.
    pub fn finish(&mut self, width: f64, height: f64) -> Result<String, JsValue> {
        let State::Reading(parser) = std::mem::replace(&mut self.state, State::Done) else {
            return Err(err("this session has already finished"));
        };
        let trace = parser.finish().map_err(err)?;
        let mut timeline = Timeline::new(&trace);
        timeline.set_mode(
            &trace,
            RowMode {
                python: true,
                fold: true,
            },
        );
        let vp = Viewport::new(trace.span_ns(), width, height);
        let mut loaded = Loaded {
            trace,
            timeline,
            tracks: TrackLayout::default(),
            vp,
            st: ViewState::default(),
            analyses: None,
            forest: None,
        };
        loaded.relayout();
        let summary = self::json(&summarize(&loaded.trace));
        self.state = State::Ready(Box::new(loaded));
        Ok(summary)
    }

    /// Bytes of wasm heap the trace and its index hold.
    pub fn heap_bytes(&self) -> Result<f64, JsValue> {
        let l = self.loaded()?;
        Ok((l.trace.heap_bytes() + l.timeline.heap_bytes()) as f64)
    }

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
                let s = &l.trace.lanes[r.lane as usize].slices;
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
        let f = frame::layout(&l.trace, &l.timeline, &l.tracks, &l.vp, &l.st);
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
                let b = brief(&l.trace, r);
                let cat = if b.category.is_empty() {
                    "no category".into()
                } else {
                    b.category
                };
                serde_json::json!({
                    "title": b.name,
                    "lines": [
                        format!("{} · {cat} · {}", format_duration(b.dur_ns as f64), lane_name(&l.trace, r.lane as usize)),
                        format!("starts at {}", format_duration(b.start_ns as f64)),
                    ],
                })
            }
            Some(Hit::Gap(i)) => match l.gap(i) {
                Some(g) => gap_tooltip(g),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(Some(json(&v)))
    }

    /// A click at `(x, y)`: selects the slice there (returns its details JSON), folds or unfolds
    /// a group header (returns `{"group": process}`) or a deep lane's rows (x < 0, on its name:
    /// returns `{"fold_lane": lane}`), selects an idle gap's time range (returns `{"gap": ...}`,
    /// the idle analysis' gap), or clears the selection (returns `null`).
    pub fn click(&mut self, x: f64, y: f64) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        match l.hit(x, y) {
            Some(Hit::Slice(r)) => Ok(l.select(r, false)),
            Some(Hit::Group(p)) => {
                if !l.st.collapsed.remove(&p) {
                    l.st.collapsed.insert(p);
                }
                l.relayout();
                Ok(json(&serde_json::json!({ "group": p })))
            }
            Some(Hit::LaneName(lane)) => {
                if !l.st.expanded.remove(&lane) {
                    l.st.expanded.insert(lane);
                }
                l.relayout();
                Ok(json(&serde_json::json!({ "fold_lane": lane })))
            }
            Some(Hit::Gap(i)) => {
                let g = l.gap(i).map(|g| (g.start_ns, g.end_ns, json(g)));
                match g {
                    Some((a, b, text)) => {
                        l.st.selection = None;
                        l.st.arrows.clear();
                        l.st.range = Some((a as f64, b as f64));
                        Ok(format!("{{\"gap\":{text}}}"))
                    }
                    None => Ok("null".into()),
                }
            }
            None => {
                l.st.selection = None;
                l.st.arrows.clear();
                Ok("null".into())
            }
        }
    }

    /// Selects a slice and brings it into view; returns its details JSON.
    pub fn select(&mut self, lane: u32, index: u32) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        let r = l.slice(lane, index)?;
        Ok(l.select(r, true))
    }

    /// Details JSON of any slice, without selecting it.
    pub fn details(&self, lane: u32, index: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let r = l.slice(lane, index)?;
        Ok(json(&details::details(&l.trace, &l.timeline, r)))
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
        let s = Search::substring(&l.trace, query);
        let n = s.count as u32;
        l.st.search = (!query.is_empty()).then_some(s);
        Ok(n)
    }

    /// Highlights slices named exactly `name` (a table row); returns how many.
    pub fn highlight_name(&mut self, name: &str) -> Result<u32, JsValue> {
        let l = self.loaded_mut()?;
        let s = Search::exact(&l.trace, name);
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
            Some(s) => s.step(&l.trace, from, forward),
            None => None,
        };
        Ok(found.map(|r| l.select(r, true)))
    }

    /// Selects the time range between pixels `x0` and `x1`; returns its aggregation by name (JSON).
    pub fn select_range(&mut self, x0: f64, x1: f64, limit: u32) -> Result<String, JsValue> {
        let vp = &self.loaded()?.vp;
        let (a, b) = (vp.t_of(x0.min(x1)), vp.t_of(x0.max(x1)));
        self.select_range_ns(a, b, limit)
    }

    /// Slices of the whole trace grouped by name (JSON), the `limit` largest.
    pub fn names_table(&self, limit: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let t = aggregate(&l.trace, &l.timeline, 0, l.trace.span_ns(), limit as usize);
        Ok(json(&t))
    }

    /// Busy fraction over time in `buckets` buckets, for the overview strip (JSON).
    pub fn overview(&self, buckets: u32) -> Result<String, JsValue> {
        Ok(json(&overview(&self.loaded()?.trace, buckets as usize)))
    }

    /// Runs the analyses (links, steps, idle gaps, findings); the idle gaps are then shaded on the
    /// GPU lanes. The tables need [`Session::build_tables`] too: two calls, so that the page can
    /// yield to the browser between them on a big trace.
    pub fn analyse(&mut self) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        let trace = &l.trace;
        let links = Links::build(trace);
        let steps = steps::analyze_with(trace, &links);
        let opts = IdleOptions {
            max_gaps: VIEWER_GAPS,
            ..IdleOptions::default()
        };
        let idle = idle::analyze_with(trace, &links, &opts);
        let findings = findings::analyze_with(trace, &links, &steps, &idle);
        l.st.gaps = idle
            .gaps
            .iter()
            .map(|g| GapShade {
                device: g.device,
                start_ns: g.start_ns,
                end_ns: g.end_ns,
            })
            .collect();
        l.analyses = Some(Analyses {
            steps,
            idle,
            findings,
        });
        Ok(())
    }

    /// An analysis as JSON: `"steps"` (StepsReport), `"idle"` (IdleReport, up to 500 gaps),
    /// `"findings"` (a list of Finding).
    pub fn report(&self, kind: &str) -> Result<String, JsValue> {
        let a = self.loaded()?.analyses()?;
        match kind {
            "steps" => Ok(json(&a.steps)),
            "idle" => Ok(json(&a.idle)),
            "findings" => Ok(json(&a.findings)),
            _ => Err(err(format!("no report named '{kind}'"))),
        }
    }

    /// Builds the per-thread operator trees the tables read (see [`Session::table`]).
    pub fn build_tables(&mut self) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.forest = Some(Forest::build(&l.trace));
        Ok(())
    }

    /// A table as JSON: `"ops"` (the operator table, `by_shape` groups by input shapes; sorted by
    /// self device time when the trace has GPU time, else self CPU), `"kernels"`, `"labels"`, or
    /// `"calltree"` (the top-down call tree).
    pub fn table(&self, kind: &str, by_shape: bool) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let forest = l
            .forest
            .as_ref()
            .ok_or_else(|| err("the tables are not built yet (call build_tables)"))?;
        let t = &l.trace;
        match kind {
            "ops" => {
                let mut ops = op_table(t, forest, by_shape);
                ops.sort_by(if ops.has_device_time() {
                    OpColumn::SelfDevice
                } else {
                    OpColumn::SelfCpu
                });
                Ok(json(&ops))
            }
            "kernels" => Ok(json(&kernel_table(t, forest))),
            "labels" => Ok(json(&label_table(t, forest))),
            "calltree" => Ok(json(&call_tree(t, forest))),
            _ => Err(err(format!("no table named '{kind}'"))),
        }
    }

    /// Marks the time range `[t0, t1]` (ns) as selected and shows it (a finding's evidence).
    pub fn show_evidence(&mut self, t0: f64, t1: f64) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.st.range = Some((t0.min(t1), t0.max(t1)));
        l.vp.show_range(t0.min(t1), t0.max(t1));
        Ok(())
    }
}

/// Links and embedding (`www/js/url.js`, `www/js/embed.js`): the visible window and the selection
/// as numbers a URL hash or a parent page can carry, and the trace's own clock for Perfetto's
/// `timeStart`/`timeEnd`, which are in the file's time base rather than from the trace start.
#[wasm_bindgen]
impl Session {
    /// The visible window `[start_ns, end_ns]`, ns from the trace start.
    pub fn window_ns(&self) -> Result<Vec<f64>, JsValue> {
        let vp = &self.loaded()?.vp;
        Ok(vec![vp.start_ns, vp.end_ns()])
    }

    /// Shows exactly `[t0, t1]` (ns from the trace start), within the zoom bounds.
    pub fn set_window(&mut self, t0: f64, t1: f64) -> Result<(), JsValue> {
        self.loaded_mut()?.vp.set_window(t0, t1);
        Ok(())
    }

    /// The file's `ts` of the trace start in ns, as decimal text: an epoch-scale `i64` does not
    /// fit a JavaScript number exactly.
    pub fn origin_ns(&self) -> Result<String, JsValue> {
        Ok(self.loaded()?.trace.meta.origin_ns.to_string())
    }

    /// What is selected: JSON `{"slice": [lane, index] | null, "range": [start_ns, end_ns] | null}`.
    pub fn selection(&self) -> Result<String, JsValue> {
        let st = &self.loaded()?.st;
        Ok(json(&serde_json::json!({
            "slice": st.selection.map(|r| [r.lane, r.index]),
            "range": st.range.map(|(a, b)| [a, b]),
        })))
    }

    /// Selects the time range `[t0, t1]` (ns from the trace start); returns its aggregation by
    /// name (JSON), as [`Session::select_range`] does for pixels.
    pub fn select_range_ns(&mut self, t0: f64, t1: f64, limit: u32) -> Result<String, JsValue> {
        if !(t0.is_finite() && t1.is_finite()) {
            return Err(err("a time range needs two finite times"));
        }
        let l = self.loaded_mut()?;
        let (a, b) = (t0.min(t1), t0.max(t1));
        l.st.range = Some((a, b));
        let t = aggregate(
            &l.trace,
            &l.timeline,
            a as i64,
            b.ceil() as i64,
            limit as usize,
        );
        Ok(json(&t))
    }
}

/// Rows of the timeline: Python frames shown or hidden (see `view::rows`).
#[wasm_bindgen]
impl Session {
    /// True when the trace holds Python frames (`with_stack=True`).
    pub fn has_python_frames(&self) -> Result<bool, JsValue> {
        let t = &self.loaded()?.trace;
        Ok(t.strings
            .find("python_function")
            .is_some_and(|c| t.lanes.iter().any(|l| l.slices.cat.contains(&c))))
    }

    /// Shows or hides Python frames; the lanes are re-laid (operators and labels take the rows
    /// the frames held). Returns whether anything changed.
    pub fn set_python_frames(&mut self, show: bool) -> Result<bool, JsValue> {
        let l = self.loaded_mut()?;
        let mode = RowMode {
            python: show,
            fold: true,
        };
        let changed = l.timeline.set_mode(&l.trace, mode);
        if changed {
            l.relayout();
        }
        Ok(changed)
    }
}
