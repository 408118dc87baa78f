//! The critical path on the page (`www/js/critical.js`): each step's path and what bounds it, the
//! path drawn on the timeline, and what-if replays, from `analysis::critical`.
//!
//! The dependency graph is built on the first call that needs it and kept with the trace, so a
//! what-if costs the edits' factors and one replay of the graph, not a rebuild. The steps' segments
//! are not kept: the page gets their totals and the longest ones, the timeline their slices and
//! lane changes.

use super::session::Session;
use super::tables::Analyses;
use super::{err, json};
use crate::analysis::critical::whatif::{self, Edit, Prediction, WhatIf};
use crate::analysis::critical::{Analysis, PathOptions, PathReport, Segment, CATEGORIES};
use crate::analysis::links::Links;
use crate::model::{SliceRef, Trace};
use crate::view::path::{slices_and_hops, Hop, PathView};
use serde::Serialize;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

/// Segments listed as the path's longest, over all steps.
const LONGEST: usize = 12;

/// What the page keeps of a trace's critical path.
pub(super) struct Critical {
    analysis: Analysis,
    summary: String,
    slices: Vec<SliceRef>,
    hops: Vec<Hop>,
}

#[derive(Serialize)]
struct Summary {
    /// The categories in their documented order.
    categories: &'static [&'static str],
    steps: Vec<StepRow>,
    /// All steps together: summed lengths, and each category's share of them in percent.
    total_us: f64,
    bound_by: BTreeMap<&'static str, f64>,
    longest: Vec<SegmentRow>,
    /// Slices on the paths, and the times they go from one lane to another.
    slices: usize,
    hops: usize,
}

#[derive(Serialize)]
struct StepRow {
    step: String,
    start_ns: i64,
    end_ns: i64,
    length_us: f64,
    bound_by: BTreeMap<&'static str, f64>,
    hta_bound_by: BTreeMap<&'static str, f64>,
}

#[derive(Serialize)]
struct SegmentRow {
    step: String,
    #[serde(flatten)]
    segment: Segment,
    dur_us: f64,
    /// The slice, for the page to select (none for time in no slice).
    at: Option<SliceRef>,
}

/// A what-if's answer: the edits with how many slices and device ops each matched, each step's
/// prediction, and the mean step; or `error` (an edit that does not parse or matches nothing).
#[derive(Serialize, Default)]
struct Answer {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    edits: Vec<EditRow>,
    steps: Vec<Prediction>,
    mean_measured_us: f64,
    mean_predicted_us: f64,
    mean_saving_us: f64,
    saving_pct: f64,
}

#[derive(Serialize)]
struct EditRow {
    text: String,
    matched: usize,
}

impl Critical {
    fn build(trace: &Trace, analyses: &Analyses) -> Result<Critical, JsValue> {
        let steps = &analyses.steps;
        let links = Links::build(trace);
        let analysis =
            Analysis::build(trace, &links, steps, &PathOptions::default()).map_err(err)?;
        let paths = analysis.paths(trace, &links);
        let (slices, hops) = slices_and_hops(&paths, &links);
        let total_us: f64 = paths.iter().map(|p| p.length_us).sum();
        let mut bound_by: BTreeMap<&'static str, f64> = BTreeMap::new();
        for p in &paths {
            for (&c, &pct) in &p.bound_by {
                *bound_by.entry(c).or_default() += pct * p.length_us / total_us.max(1e-9);
            }
        }
        let mut longest: Vec<SegmentRow> = paths
            .iter()
            .flat_map(|p| {
                p.segments.iter().map(|s| SegmentRow {
                    step: p.step.clone(),
                    dur_us: s.end_us - s.start_us,
                    at: s.slice,
                    segment: s.clone(),
                })
            })
            .collect();
        longest.sort_by(|a, b| b.dur_us.total_cmp(&a.dur_us));
        longest.truncate(LONGEST);
        let ns = |us: f64| (us * 1e3).round() as i64;
        let summary = Summary {
            categories: &CATEGORIES,
            steps: paths
                .iter()
                .map(|p| StepRow {
                    step: p.step.clone(),
                    start_ns: ns(p.start_us),
                    end_ns: ns(p.end_us),
                    length_us: p.length_us,
                    bound_by: p.bound_by.clone(),
                    hta_bound_by: p.hta_bound_by.clone(),
                })
                .collect(),
            total_us,
            bound_by,
            longest,
            slices: slices.len(),
            hops: hops.len(),
        };
        Ok(Critical {
            analysis,
            summary: json(&summary),
            slices,
            hops,
        })
    }

    /// Each step's prediction under `text`'s edits (one a line, in the CLI's syntax).
    fn what_if(&self, trace: &Trace, text: &str) -> Answer {
        let edits: Result<Vec<Edit>, String> = text
            .lines()
            .filter(|e| !e.trim().is_empty())
            .map(Edit::parse)
            .collect();
        let edits = match edits {
            Ok(e) if e.is_empty() => {
                return refused("write an edit: NAME=0 removes, NAME*F scales (kernels*0.5)".into())
            }
            Ok(e) => e,
            Err(e) => return refused(e),
        };
        let (factor, matched) = whatif::factors(trace, &self.analysis, &edits);
        let steps = whatif::predict(&self.analysis, &factor);
        let rows = edits
            .iter()
            .zip(&matched)
            .map(|(e, &matched)| EditRow {
                text: e.text.clone(),
                matched,
            })
            .collect();
        let report = PathReport {
            paths: Vec::new(),
            what_if: Some(WhatIf { edits, steps }),
            matched,
        };
        let unmatched = report.unmatched_edit();
        let steps = report.what_if.map(|w| w.steps).unwrap_or_default();
        let n = steps.len().max(1) as f64;
        let measured: f64 = steps.iter().map(|s| s.measured_us).sum();
        let saved: f64 = steps.iter().map(|s| s.saving_us).sum();
        Answer {
            error: unmatched,
            edits: rows,
            mean_measured_us: measured / n,
            mean_predicted_us: (measured - saved) / n,
            mean_saving_us: saved / n,
            saving_pct: if measured > 0.0 {
                100.0 * saved / measured
            } else {
                0.0
            },
            steps,
        }
    }
}

fn refused(error: String) -> Answer {
    Answer {
        error: Some(error),
        ..Answer::default()
    }
}

/// The trace's critical path, built on first use (the steps come from the analyses).
fn critical<'a>(
    slot: &'a mut Option<Critical>,
    trace: &Trace,
    analyses: Option<&Analyses>,
) -> Result<&'a Critical, JsValue> {
    let built = match slot.take() {
        Some(c) => c,
        None => {
            let a = analyses
                .ok_or_else(|| err("the critical path needs the analyses (call analyse_step)"))?;
            Critical::build(trace, a)?
        }
    };
    Ok(slot.insert(built))
}

#[wasm_bindgen]
impl Session {
    /// The critical path of each step (JSON): per step its length and each category's share, all
    /// steps' shares, the longest segments with their slices. Needs the analyses (the steps); the
    /// first call builds the dependency graph, which later calls and what-ifs reuse.
    pub fn critical_path(&mut self) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        let c = critical(&mut l.critical, &l.trace, l.analyses.as_ref())?;
        Ok(c.summary.clone())
    }

    /// Draws the path on the timeline (its slices, the rest dimmed, arrows where it changes
    /// lanes), or stops drawing it.
    pub fn show_critical_path(&mut self, on: bool) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        l.st.path = None;
        if on {
            let c = critical(&mut l.critical, &l.trace, l.analyses.as_ref())?;
            l.st.path = Some(PathView::new(
                &l.trace,
                &l.timeline,
                &c.slices,
                c.hops.clone(),
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
        let c = critical(&mut l.critical, &l.trace, l.analyses.as_ref())?;
        Ok(json(&c.what_if(&l.trace, edits)))
    }
}
