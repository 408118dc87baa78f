//! The analyses and tables a page shows: steps, idle time and findings (`analyse`, `report`),
//! the operator forest and its tables (`build_tables`, `table`), slices by name.

use super::session::{Loaded, Session};
use super::{err, json};
use crate::analysis::findings::{self, Finding};
use crate::analysis::flops::{kernels::annotate, Flops};
use crate::analysis::idle::{self, IdleOptions, IdleReport};
use crate::analysis::links::Links;
use crate::analysis::steps::{self, StepsReport};
use crate::analysis::tables::{call_tree, kernel_table, label_table, op_table, Forest, OpColumn};
use crate::view::aggregate::aggregate;
use crate::view::frame::GapShade;
use wasm_bindgen::prelude::*;

pub(super) struct Analyses {
    pub(super) steps: StepsReport,
    pub(super) idle: IdleReport,
    pub(super) findings: Vec<Finding>,
    /// The modelled operator calls, for the FLOPs columns and the roofline (`web/flops.rs`).
    pub(super) flops: Flops,
}

/// What [`Session::analyse_stage`] has computed so far, until `findings` completes the analyses.
#[derive(Default)]
pub(super) struct Staged {
    links: Option<Links>,
    steps: Option<StepsReport>,
    idle: Option<IdleReport>,
}

/// The stages of [`Session::analyse`], in the order they must run.
const STAGES: [&str; 4] = ["links", "steps", "idle", "findings"];

/// Idle gaps reported one by one (with what the CPU was doing), and so shaded on the timeline.
const VIEWER_GAPS: usize = 500;

impl Loaded {
    pub(super) fn analyses(&self) -> Result<&Analyses, JsValue> {
        self.analyses
            .as_ref()
            .ok_or_else(|| err("the analyses have not run yet (call analyse)"))
    }

    pub(super) fn gap(&self, i: usize) -> Option<&idle::Gap> {
        self.analyses.as_ref()?.idle.gaps.get(i)
    }
}

#[wasm_bindgen]
impl Session {
    /// Slices of the whole trace grouped by name (JSON), the `limit` largest.
    pub fn names_table(&self, limit: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let t = aggregate(&l.trace, &l.timeline, 0, l.trace.span_ns(), limit as usize);
        Ok(json(&t))
    }

    /// Runs the analyses (links, steps, idle gaps, findings); the idle gaps are then shaded on the
    /// GPU lanes. The tables need [`Session::build_tables`] too.
    pub fn analyse(&mut self) -> Result<(), JsValue> {
        for stage in STAGES {
            self.analyse_stage(stage)?;
        }
        Ok(())
    }

    /// Runs one stage of [`Session::analyse`]: `"links"`, `"steps"`, `"idle"`, then `"findings"`,
    /// which completes them. Separate calls, so that a page whose Session is in a worker gets
    /// its frames drawn between them while the analyses run in the background.
    pub fn analyse_stage(&mut self, stage: &str) -> Result<(), JsValue> {
        let l = self.loaded_mut()?;
        let trace = &l.trace;
        let st = &mut l.staged;
        let missing = |what: &str| {
            err(format!(
                "the '{stage}' stage needs the '{what}' stage first"
            ))
        };
        match stage {
            "links" => st.links = Some(Links::build(trace)),
            "steps" => {
                let links = st.links.as_ref().ok_or_else(|| missing("links"))?;
                st.steps = Some(steps::analyze_with(trace, links));
            }
            "idle" => {
                let links = st.links.as_ref().ok_or_else(|| missing("links"))?;
                let opts = IdleOptions {
                    max_gaps: VIEWER_GAPS,
                    ..IdleOptions::default()
                };
                st.idle = Some(idle::analyze_with(trace, links, &opts));
            }
            "findings" => {
                let links = st.links.take().ok_or_else(|| missing("links"))?;
                let steps = st.steps.take().ok_or_else(|| missing("steps"))?;
                let idle = st.idle.take().ok_or_else(|| missing("idle"))?;
                let flops = Flops::build(trace, &links);
                let findings = findings::analyze_with_flops(trace, &links, &steps, &idle, &flops);
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
                    flops,
                });
            }
            _ => return Err(err(format!("no analysis stage named '{stage}'"))),
        }
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
            "kernels" => {
                let mut table = kernel_table(t, forest);
                // The FLOPs columns, once the analyses have run (they always have on the page).
                if let Some(a) = &l.analyses {
                    annotate(&mut table, t, &a.flops);
                }
                Ok(json(&table))
            }
            "labels" => Ok(json(&label_table(t, forest))),
            "calltree" => Ok(json(&call_tree(t, forest))),
            _ => Err(err(format!("no table named '{kind}'"))),
        }
    }
}
