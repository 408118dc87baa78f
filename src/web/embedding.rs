//! Links and embedding (`www/js/url.js`, `www/js/embed.js`): the visible window and the selection
//! as numbers a URL hash or a parent page can carry, and the trace's own clock for Perfetto's
//! `timeStart`/`timeEnd`, which are in the file's time base rather than from the trace start.

use super::session::Session;
use super::{err, json};
use crate::view::aggregate::aggregate_range;
use crate::view::panels::Selection;
use wasm_bindgen::prelude::*;

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
        Ok(self.loaded()?.trace().meta.origin_ns.to_string())
    }

    /// What is selected: JSON `{"slice": [lane, index] | null, "range": [start_ns, end_ns] | null}`.
    pub fn selection(&self) -> Result<String, JsValue> {
        let st = &self.loaded()?.st;
        Ok(json(&Selection {
            slice: st.selection.map(|r| [r.lane, r.index]),
            range: st.range.map(|(a, b)| [a, b]),
        }))
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
        let t = aggregate_range(
            l.derived.trace(),
            &l.timeline,
            a as i64,
            b.ceil() as i64,
            limit as usize,
        );
        Ok(json(&t))
    }
}
