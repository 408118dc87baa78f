//! Many traces of one distributed job in the page (`www/js/ranks.js`): each rank is read in its
//! own Session (its own worker), which hands over its digest ([`Session::digest`]); the cross-rank
//! report is computed from the digests alone ([`ranks_report`]), so a rank's worker can be ended
//! once its digest is taken. A rank shown in the stacked timeline keeps its Session, with its CPU
//! threads folded ([`Session::fold_cpu`]) so each rank is a band of its GPU streams.

use super::session::Session;
use super::{err, json};
use crate::analysis::columns::WithTables;
use crate::analysis::digest::Digest;
use crate::analysis::ranks::{analyze, Align};
use crate::query::tables;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
impl Session {
    /// Folds every process group that holds no GPU lane (the CPU threads), when the trace has
    /// GPU lanes; a CPU-only trace stays as it is. Returns how many groups were folded.
    pub fn fold_cpu(&mut self) -> Result<u32, JsValue> {
        let l = self.loaded_mut()?;
        let gpu: std::collections::HashSet<u32> = l
            .trace()
            .lanes
            .iter()
            .filter(|x| x.is_gpu())
            .map(|x| x.process)
            .collect();
        if gpu.is_empty() {
            return Ok(0);
        }
        let mut folded = 0;
        for lane in &l.derived.trace().lanes {
            if !gpu.contains(&lane.process) && l.st.collapsed.insert(lane.process) {
                folded += 1;
            }
        }
        l.relayout();
        Ok(folded)
    }
}

/// The cross-rank report (`sightline ranks --json`'s object) of `digests`, a JSON array of
/// [`Session::digest`] results, its tables' declared columns beside it ([`WithTables`]: the ranks
/// and the collectives); `align` is `auto`, `none` or `collectives`.
#[wasm_bindgen]
pub fn ranks_report(digests: &str, align: &str) -> Result<String, JsValue> {
    let mode = Align::parse(align).ok_or_else(|| {
        err(format!(
            "align takes auto, none or collectives, not '{align}'"
        ))
    })?;
    let all: Vec<Digest> = serde_json::from_str(digests)
        .map_err(|e| err(format!("the ranks' digests do not read: {e}")))?;
    let report = analyze(&all, mode);
    let declared = tables::tables_of("ranks");
    Ok(json(&WithTables::new(declared, &[], &report)))
}
