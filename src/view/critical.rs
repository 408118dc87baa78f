//! The critical-path panel (`www/js/critical.js`): each step's path length and what bounds it,
//! all steps' shares, the longest segments with their slices, and the answers to what-if edits
//! typed in the panel, from `analysis::critical`. The path drawn on the timeline is
//! [`super::path`].

use super::path::{slices_and_hops, Hop};
use crate::analysis::critical::whatif::{self, Edit, Prediction, WhatIf};
use crate::analysis::critical::{Analysis, PathReport, Segment, CATEGORIES};
use crate::analysis::graphs::Attribution;
use crate::analysis::links::Links;
use crate::model::{SliceRef, Trace};
use serde::Serialize;
use std::collections::BTreeMap;

/// Segments listed as the path's longest, over all steps.
const LONGEST: usize = 12;

/// The critical-path panel of a trace and the path drawn on its timeline.
pub struct PathPanel {
    pub summary: PathSummary,
    /// The slices on the steps' paths and where the paths change lanes, for [`PathView`].
    pub slices: Vec<SliceRef>,
    pub hops: Vec<Hop>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PathSummary {
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
struct StepRow {
    step: String,
    start_ns: i64,
    end_ns: i64,
    length_us: f64,
    bound_by: BTreeMap<&'static str, f64>,
    hta_bound_by: BTreeMap<&'static str, f64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Answer {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    error: Option<String>,
    edits: Vec<EditRow>,
    steps: Vec<Prediction>,
    mean_measured_us: f64,
    mean_predicted_us: f64,
    mean_saving_us: f64,
    saving_pct: f64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
struct EditRow {
    text: String,
    matched: usize,
}

impl PathPanel {
    /// The panel of the paths of `analysis`, the steps' critical-path graph.
    /// A replayed device op's segment names its captured operator where `capture` is given.
    pub fn build(
        trace: &Trace,
        links: &Links,
        analysis: &Analysis,
        capture: Option<&Attribution>,
    ) -> PathPanel {
        let paths = analysis.paths(trace, links);
        let (slices, hops) = slices_and_hops(&paths, links);
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
                    segment: Segment {
                        captured_by: capture.and_then(|c| c.captured_by(s.slice)),
                        ..s.clone()
                    },
                })
            })
            .collect();
        longest.sort_by(|a, b| b.dur_us.total_cmp(&a.dur_us));
        longest.truncate(LONGEST);
        let ns = |us: f64| (us * 1e3).round() as i64;
        let summary = PathSummary {
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
        PathPanel {
            summary,
            slices,
            hops,
        }
    }
}

impl Answer {
    /// Each step's prediction under `text`'s edits (one a line, in the CLI's syntax) on the
    /// steps' critical-path graph; an edit that does not parse or matches nothing is `error`.
    pub fn of(trace: &Trace, analysis: &Analysis, text: &str) -> Answer {
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
        let (factor, matched) = whatif::factors(trace, analysis, &edits);
        let steps = whatif::predict(analysis, &factor);
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
