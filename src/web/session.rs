//! The trace a page has open: the parser while bytes arrive, then the model, its timeline index
//! and the view state, all in wasm memory (in a Web Worker on the page; see `www/js/worker/`).

use super::{err, json};
use crate::analysis::derived::Derived;
use crate::analysis::summary::summarize;
use crate::model::Trace;
use crate::parse::{Parser, Part};
use crate::view::critical::PathPanel;
use crate::view::frame::ViewState;
use crate::view::rows::RowMode;
use crate::view::tracks::TrackLayout;
use crate::view::viewport::Viewport;
use crate::view::Timeline;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// How far [`Session::analyse_step`](super::tables) has come.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Analysed {
    Nothing,
    /// Links, steps, idle time, FLOPs and findings with their savings are kept in `derived`.
    Analyses,
    /// The operator forest too.
    Tables,
}

pub(super) struct Loaded {
    /// The trace and every analysis of it, each computed once, on first use (the panels, the
    /// tables, the digest, the memory and critical-path views all ask it). Shared with the
    /// analysis under way (`running`), which outlives any one call.
    pub(super) derived: Rc<Derived>,
    pub(super) timeline: Timeline,
    pub(super) tracks: TrackLayout,
    pub(super) vp: Viewport,
    pub(super) st: ViewState,
    pub(super) analysed: Analysed,
    /// The phase `analyse_step` is running, between its slices; it fills `derived`.
    pub(super) running: Option<Pin<Box<dyn Future<Output = ()>>>>,
    /// The critical-path panel and the path drawn on the timeline, once asked for.
    pub(super) path: Option<PathPanel>,
    /// The memory chart's last window of columns (`memory_columns`), keyed by its first and last
    /// ns and its columns: the frames that only scroll, select or search ask for the same again.
    pub(super) memory_columns: Option<((i64, i64, u32), Vec<f64>)>,
}

impl Loaded {
    pub(super) fn trace(&self) -> &Trace {
        self.derived.trace()
    }
}

pub(super) enum State {
    Reading(Parser),
    /// Parsing one range of a file for another session to join (`web/parts.rs`).
    Part(Box<Part>),
    Ready(Box<Loaded>),
    /// `finish` failed or is running; nothing more can be done with this session.
    Done,
}

/// One opened trace, from its first bytes to the views of it.
#[wasm_bindgen]
pub struct Session {
    pub(super) state: State,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub(super) fn loaded(&self) -> Result<&Loaded, JsValue> {
        match &self.state {
            State::Ready(l) => Ok(l),
            _ => Err(err("no trace is loaded in this session")),
        }
    }

    pub(super) fn loaded_mut(&mut self) -> Result<&mut Loaded, JsValue> {
        match &mut self.state {
            State::Ready(l) => Ok(l),
            _ => Err(err("no trace is loaded in this session")),
        }
    }
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
            State::Part(p) => {
                p.feed(chunk);
                Ok(())
            }
            _ => Err(err("this session has finished reading")),
        }
    }

    /// The size of what will be fed, when it is known before (a file's or a part's length): the
    /// model's columns are reserved for it instead of doubling as they grow (`Parser::expect_size`).
    pub fn expect_bytes(&mut self, bytes: f64) {
        match &mut self.state {
            State::Reading(p) => p.expect_size(bytes as u64),
            State::Part(p) => p.expect_len(bytes as u64),
            _ => {}
        }
    }

    /// Feeds JSON the page inflated from a gzip file (in a worker of its own), `compressed`
    /// bytes of the file read so far; see `Parser::feed_inflated`.
    pub fn feed_inflated(&mut self, json: &[u8], compressed: f64) -> Result<(), JsValue> {
        match &mut self.state {
            State::Reading(p) => p.feed_inflated(json, compressed as u64).map_err(err),
            _ => Err(err("this session is not reading a whole file")),
        }
    }

    /// Bytes fed so far.
    pub fn bytes_fed(&self) -> f64 {
        match &self.state {
            State::Reading(p) => p.bytes_fed() as f64,
            State::Part(p) => p.bytes_fed() as f64,
            State::Ready(l) => l.trace().stats.input_bytes as f64,
            State::Done => 0.0,
        }
    }

    /// Trace events read so far.
    pub fn events_read(&self) -> f64 {
        match &self.state {
            State::Reading(p) => p.events_read() as f64,
            State::Part(p) => p.events_read() as f64,
            State::Ready(l) => l.trace().stats.events_total as f64,
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
        let timeline = Timeline::in_mode(
            &trace,
            RowMode {
                python: true,
                fold: true,
            },
        );
        let vp = Viewport::new(trace.span_ns(), width, height);
        let mut loaded = Loaded {
            derived: Rc::new(Derived::new(trace)),
            timeline,
            tracks: TrackLayout::default(),
            vp,
            st: ViewState::default(),
            analysed: Analysed::Nothing,
            running: None,
            path: None,
            memory_columns: None,
        };
        loaded.relayout();
        let summary = self::json(&summarize(loaded.trace()));
        self.state = State::Ready(Box::new(loaded));
        Ok(summary)
    }

    /// Bytes of wasm heap the trace and its index hold.
    pub fn heap_bytes(&self) -> Result<f64, JsValue> {
        let l = self.loaded()?;
        Ok((l.trace().heap_bytes() + l.timeline.heap_bytes()) as f64)
    }
}
