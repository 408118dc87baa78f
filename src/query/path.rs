//! The critical path of each step and what an edit of durations would buy
//! ([`crate::analysis::critical`]): for one trace, or for the ranks of one job, their graphs
//! joined at matched collectives.

use super::{flag, text_list, Opened, Question};
use crate::analysis::critical::job::Rank;
use crate::analysis::critical::whatif::Edit;
use crate::analysis::critical::{PathOptions, PathReport};
use serde::Deserialize;

/// The critical path of each step: what bounds it, its segments, and with `what_if` edits each
/// step's predicted time and saving.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Path {
    /// Only the step of this name (ProfilerStep#N)
    pub step: Option<String>,
    /// Instances of this record_function label as the steps
    pub annotation: Option<String>,
    /// Which instance of the annotation, from 0
    pub instance: Option<usize>,
    /// Follow the path as HTA 0.5.0 does (one trace at a time)
    #[serde(deserialize_with = "flag")]
    pub hta: bool,
    /// Edits of durations replayed on the graph: 'NAME=0' (removed), 'NAME*F' (scaled),
    /// 'rankR:NAME=0'; NAME is a slice name with * globs, DataLoader, kernels, memcpy, pageable,
    /// communication, untraced, float64, self:NAME, NAME+gaps or A|B
    #[serde(deserialize_with = "text_list")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<String>>"))]
    pub what_if: Vec<Edit>,
}

impl Path {
    fn options(&self) -> Result<PathOptions, String> {
        if self.instance.is_some() && self.annotation.is_none() {
            return Err("instance counts the instances of an annotation: name one".to_string());
        }
        Ok(PathOptions {
            step: self.step.clone(),
            annotation: self
                .annotation
                .clone()
                .map(|n| (n, self.instance.unwrap_or(0))),
            hta: self.hta,
        })
    }

    /// The paths of `traces`: several are the ranks of one job (one graph, joined at their
    /// collectives), unless `hta`, which follows each alone. A replayed op's segment names the
    /// operator that captured it, from its rank's capture.
    pub fn answer_all(&self, traces: &[Opened<'_>]) -> Result<PathReport, String> {
        let opts = self.options()?;
        let edits = &self.what_if;
        let report = if traces.len() > 1 && !opts.hta {
            let ranks = traces
                .iter()
                .map(|t| Rank {
                    trace: t.derived.trace(),
                    links: t.derived.links(),
                    steps: t.derived.steps(),
                    file: file_name(t.file),
                })
                .collect();
            let mut report = PathReport::of_job(ranks, &opts, edits)?;
            for seg in report.paths.iter_mut().flat_map(|p| &mut p.segments) {
                let capture = traces
                    .iter()
                    .find(|t| t.derived.trace().rank() == seg.rank)
                    .and_then(|t| t.derived.attribution());
                seg.captured_by = capture.and_then(|c| c.captured_by(seg.slice));
            }
            report
        } else {
            let mut report = PathReport::default();
            for t in traces {
                let one = t.derived.path(&opts, edits).map_err(|e| {
                    if t.file.is_empty() {
                        e
                    } else {
                        format!("{}: {e}", t.file)
                    }
                })?;
                report.append(one);
            }
            report
        };
        if let Some(e) = report.unmatched_edit() {
            return Err(e);
        }
        Ok(report)
    }
}

impl<'a> Question<'a> for Path {
    type Answer = PathReport;
    fn answer(&self, t: &Opened<'a>) -> Result<PathReport, String> {
        self.answer_all(std::slice::from_ref(t))
    }
}

/// A path's last component: a rank's file as the job's report names it.
fn file_name(file: &str) -> &str {
    std::path::Path::new(file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(file)
}
