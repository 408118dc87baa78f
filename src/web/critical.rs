//! The critical path on the page (`www/js/critical.js`): the panel (`view::critical`), the path
//! drawn on the timeline (`view::path`) and what-if replays, on the steps' critical-path graph
//! that the findings' savings built (`Derived::critical`), so a what-if costs the edits' factors
//! and one replay of the graph, not a rebuild.

use super::session::{Analysed, Loaded, Session};
use super::{err, json};
use crate::view::critical::{Answer, PathPanel};
use crate::view::path::PathView;
use wasm_bindgen::prelude::*;

impl Loaded {
    /// The critical-path panel, built on first use; needs the analyses (the steps).
    fn path_panel(&mut self) -> Result<&PathPanel, JsValue> {
        if self.analysed == Analysed::Nothing {
            return Err(err(
                "the critical path needs the analyses (call analyse_step)",
            ));
        }
        let panel = match self.path.take() {
            Some(p) => p,
            None => {
                let d = &self.derived;
                let analysis = d.critical().map_err(err)?;
                PathPanel::build(d.trace(), d.links(), analysis, d.attribution())
            }
        };
        Ok(self.path.insert(panel))
    }
}

#[wasm_bindgen]
impl Session {
    /// The critical path of each step (JSON): per step its length and each category's share, all
    /// steps' shares, the longest segments with their slices. Needs the analyses (the steps).
    pub fn critical_path(&mut self) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        Ok(json(&l.path_panel()?.summary))
    }

    /// Draws the path on the timeline (its slices, the rest dimmed, arrows where it changes
    /// lanes), or stops drawing it.
    pub fn show_critical_path(&mut self, on: bool) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.st.path = None;
        if on {
            l.path_panel()?;
            let Some(p) = &l.path else { return Ok(()) };
            l.st.path = Some(PathView::new(
                l.derived.trace(),
                &l.timeline,
                &p.slices,
                p.hops.clone(),
            ));
        }
        Ok(())
    }

    /// Each step's measured and predicted length under `edits`, one a line in the CLI's syntax
    /// (`NAME=0`, `NAME*F`; NAME a slice name with `*` globs, or `DataLoader`, `kernels`,
    /// `memcpy`, `communication`), as JSON. An edit that does not parse or matches nothing comes
    /// back as `error`, not thrown: it is the user's to fix.
    pub fn what_if(&mut self, edits: &str) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        l.path_panel()?;
        let d = &l.derived;
        let analysis = d.critical().map_err(err)?;
        Ok(json(&Answer::of(d.trace(), analysis, edits)))
    }
}
