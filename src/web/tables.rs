//! The analyses and tables a page shows: steps, idle time and findings (`report`), the operator
//! forest and its tables (`table`), slices by name. The analyses run in slices
//! (`analyse_step`), so that frames asked for meanwhile are drawn between them.

use super::session::{Loaded, Session};
use super::{err, json};
use crate::analysis::critical::savings::{self, Assessed};
use crate::analysis::findings::{self, Finding};
use crate::analysis::flops::{kernels::annotate, Flops};
use crate::analysis::idle::{self, IdleOptions, IdleReport};
use crate::analysis::links::Links;
use crate::analysis::slicing::{poll_once, Slicer};
use crate::analysis::steps::{self, StepsReport};
use crate::analysis::tables::{
    call_tree, kernel_table, label_table, module_table, op_table, Forest, OpColumn,
};
use crate::model::Trace;
use crate::view::aggregate::aggregate;
use crate::view::frame::GapShade;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

pub(super) struct Analyses {
    pub(super) steps: StepsReport,
    pub(super) idle: IdleReport,
    /// In the analysis' order, as the digest lists them.
    pub(super) findings: Vec<Finding>,
    /// The same with what each fix would save, in the report's order (largest saving first), as
    /// the page lists them.
    pub(super) assessed: Vec<Assessed>,
    /// The modelled operator calls, for the FLOPs columns and the roofline (`web/flops.rs`).
    pub(super) flops: Flops,
}

/// The analysis under way in a session, polled a slice at a time by [`Session::analyse_step`]:
/// first the analyses the panels show, then the operator forest the tables read.
pub(super) enum Running {
    Analyses(Pin<Box<dyn Future<Output = Analyses>>>),
    Tables(Pin<Box<dyn Future<Output = Forest>>>),
}

/// Units of work (slices or events visited; see `analysis::slicing`) between two pauses: a call
/// of 3 ms at the median, 11 ms at p95, of the release wasm build on the 1 GB scaled owlv2 trace
/// on a 2-core machine (BENCHMARKS.md), where the analyses take as long as in one go.
pub(super) const SLICE_UNITS: u32 = 300_000;

/// Idle gaps reported one by one (with what the CPU was doing), and so shaded on the timeline.
const VIEWER_GAPS: usize = 500;

/// Links, steps, idle gaps (500 attributed), FLOPs and findings with their savings, pausing as `y`
/// says (the savings' what-if replays in one go, where a finding calls for one).
async fn analyses(trace: Rc<Trace>, mut y: Slicer) -> Analyses {
    let (trace, y) = (&*trace, &mut y);
    let links = Links::build_sliced(trace, y).await;
    let steps = steps::analyze_sliced(trace, &links, y).await;
    let opts = IdleOptions {
        max_gaps: VIEWER_GAPS,
        ..IdleOptions::default()
    };
    let idle = idle::analyze_sliced(trace, &links, &opts, y).await;
    let flops = Flops::build_sliced(trace, &links, y).await;
    let findings = findings::analyze_sliced(trace, &links, &steps, &idle, &flops, y).await;
    let assessed = savings::assess(trace, &links, &steps, findings.clone());
    Analyses {
        steps,
        idle,
        findings,
        assessed,
        flops,
    }
}

async fn forest(trace: Rc<Trace>, mut y: Slicer) -> Forest {
    Forest::build_sliced(&trace, &mut y).await
}

impl Loaded {
    pub(super) fn analyses(&self) -> Result<&Analyses, JsValue> {
        self.analyses
            .as_ref()
            .ok_or_else(|| err("the analyses have not run yet (call analyse_step)"))
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

    /// Runs the next slice of the analyses: links, steps, idle gaps, FLOPs and findings, then
    /// the operator forest the tables read. Returns `"analyses"` when this call completed the
    /// analyses ([`Session::report`] answers from then on, and the idle gaps are shaded on the
    /// GPU lanes), `"tables"` when it completed the forest ([`Session::table`]; so does every
    /// call after it), and `""` when there is more to do. Each call does about `units` units of
    /// work (0: the default, [`SLICE_UNITS`]; the call that starts a phase sets it for the whole
    /// phase), so that a page whose Session is in a worker gets the frames asked for meanwhile
    /// drawn between the calls.
    pub fn analyse_step(&mut self, units: u32) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        if l.forest.is_some() {
            return Ok("tables".into());
        }
        let y = Slicer::every(u64::from(if units == 0 { SLICE_UNITS } else { units }));
        let trace = Rc::clone(&l.trace);
        let running = l.running.get_or_insert_with(|| match l.analyses {
            None => Running::Analyses(Box::pin(analyses(trace, y))),
            Some(_) => Running::Tables(Box::pin(forest(trace, y))),
        });
        match running {
            Running::Analyses(f) => {
                let Some(a) = poll_once(f.as_mut()) else {
                    return Ok(String::new());
                };
                l.st.gaps = a
                    .idle
                    .gaps
                    .iter()
                    .map(|g| GapShade {
                        device: g.device,
                        start_ns: g.start_ns,
                        end_ns: g.end_ns,
                    })
                    .collect();
                l.analyses = Some(a);
                l.running = None;
                Ok("analyses".into())
            }
            Running::Tables(f) => {
                let Some(forest) = poll_once(f.as_mut()) else {
                    return Ok(String::new());
                };
                l.forest = Some(forest);
                l.running = None;
                Ok("tables".into())
            }
        }
    }

    /// An analysis as JSON: `"steps"` (StepsReport), `"idle"` (IdleReport, up to 500 gaps),
    /// `"findings"` (a list of Finding, each with its fix's `saving` where it has one, largest
    /// saving first, as `sightline report --json` lists them), `"recording"` (the notes on how the
    /// trace was recorded, `report --json`'s `recording`).
    pub fn report(&self, kind: &str) -> Result<String, JsValue> {
        let a = self.loaded()?.analyses()?;
        match kind {
            "steps" => Ok(json(&a.steps)),
            "idle" => Ok(json(&a.idle)),
            "findings" | "recording" => {
                let notes = kind == "recording";
                let list: Vec<_> = a
                    .assessed
                    .iter()
                    .filter(|x| x.finding.is_recording() == notes)
                    .collect();
                Ok(json(&list))
            }
            _ => Err(err(format!("no report named '{kind}'"))),
        }
    }

    /// A table as JSON: `"ops"` (the operator table, `by_shape` groups by input shapes; sorted by
    /// self device time when the trace has GPU time, else self CPU), `"kernels"`, `"labels"`,
    /// `"modules"` (the `nn.Module` tree), or `"calltree"` (the top-down call tree).
    pub fn table(&self, kind: &str, by_shape: bool) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let forest = l
            .forest
            .as_ref()
            .ok_or_else(|| err("the tables are not built yet (call analyse_step)"))?;
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
            "modules" => Ok(json(&module_table(t, forest))),
            "calltree" => Ok(json(&call_tree(t, forest))),
            _ => Err(err(format!("no table named '{kind}'"))),
        }
    }
}
