//! A CUDA/HIP graph capture given to a replay: the capture trace is read in a session of its
//! own (another worker), which hands over what its captures dispatched (`capture_of`, a small
//! JSON); the replay's session applies it (`use_capture`), and from then on its operator and
//! kernel tables, its Graphs tab and a replayed op's details name the operators that issued the
//! replayed ops ([`crate::analysis::graphs::Attribution`]). Of several captures (a run's
//! `capture_traces/` under `sightline serve`), `capture_pairs` tells which names the most.

use super::session::{Analysed, Session};
use super::{err, json};
use crate::analysis::graphs::{Capture, CaptureMatch};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
impl Session {
    /// What this trace's graph captures dispatched, as JSON for `use_capture`; an error when it
    /// recorded no capture (no StreamBeginCapture ... StreamEndCapture).
    pub fn capture_of(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let capture = Capture::read(l.trace(), l.derived.links());
        if capture.captures.is_empty() {
            return Err(err(
                "this trace recorded no graph capture (no StreamBeginCapture and \
                 StreamEndCapture calls): open the trace recorded while the graphs were captured",
            ));
        }
        Ok(json(&capture))
    }

    /// How many of this trace's replayed ops a capture (`capture_of`'s JSON) names, without
    /// applying it: of several captures found for a trace, the page applies the one naming most.
    pub fn capture_pairs(&self, capture: &str) -> Result<f64, JsValue> {
        let l = self.loaded()?;
        if l.analysed < Analysed::Analyses {
            return Err(err("the analyses are not done yet (call analyse_step)"));
        }
        let capture: Capture =
            serde_json::from_str(capture).map_err(|e| err(format!("not a capture: {e}")))?;
        let d = &l.derived;
        Ok(CaptureMatch::pair(d.trace(), d.graphs(), &capture).attributed_ops as f64)
    }

    /// Applies a capture (`capture_of` of the capture trace's session) to the graphs this trace
    /// replays. Returns how it paired (`captures`, `dispatches`, `attributed_ops`,
    /// `unattributed_ops`, as `sightline graphs --json`'s `capture`).
    pub fn use_capture(&mut self, capture: &str) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        // The critical-path panel, once built, names no captured operator: built again on ask.
        l.path = None;
        if l.analysed < Analysed::Analyses {
            return Err(err("the analyses are not done yet (call analyse_step)"));
        }
        if l.derived.graphs().launches == 0 {
            return Err(err("this trace replays no CUDA/HIP graph"));
        }
        let capture: Capture =
            serde_json::from_str(capture).map_err(|e| err(format!("not a capture: {e}")))?;
        let a = l.derived.set_capture(capture).map_err(err)?;
        if a.matched.attributed_ops == 0 {
            return Err(err(
                "the capture names none of the replayed ops: it was recorded for other graphs",
            ));
        }
        Ok(json(&a.matched))
    }
}
