//! The analyses and tables a page shows, one method per question: the steps, idle time, findings
//! and recording notes once the analyses have run; the operator, kernel, label, module, graph and
//! compiled tables (each the query layer's request type of that name) and the call tree once the
//! operator forest is built; slices by name. The analyses run in slices (`analyse_step`), so that
//! frames asked for meanwhile are drawn between them.

use super::session::{Analysed, Loaded, Session};
use super::{err, json};
use crate::analysis::columns::{WithColumns, WithTables};
use crate::analysis::idle::{self, IdleOptions};
use crate::analysis::slicing::{poll_once, Slicer};
use crate::analysis::tables::call_tree;
use crate::query::{
    tables, Compiled, Graphs, Idle, Kernels, Labels, Modules, Opened, Ops, Question, Steps,
};
use crate::view::aggregate::aggregate;
use crate::view::frame::GapShade;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Units of work (slices or events visited; see `analysis::slicing`) between two pauses: a call
/// of 3 ms at the median, 11 ms at p95, of the release wasm build on the 1 GB scaled owlv2 trace
/// on a 2-core machine (BENCHMARKS.md), where the analyses take as long as in one go.
pub(super) const SLICE_UNITS: u32 = 300_000;

/// Bytes of wasm memory the analyses add per slice of the model, with room to spare: the page's
/// loading worker grew by 98 (1 GB scaled owlv2 trace, 3.2 M slices) and 124 (300 MB) bytes a
/// slice from the timeline drawn to every analysis done (BENCHMARKS.md).
const ANALYSES_BYTES_PER_SLICE: f64 = 160.0;

/// The most linear memory a wasm32 module can have: 65,536 pages of 64 KiB.
const WASM32_MAX_BYTES: f64 = 4_294_967_296.0;

/// Idle time as the page counts it: the longest 500 gaps reported one by one (with what the CPU
/// was doing), and so shaded on the timeline. Every panel asks the store with these options.
pub(super) fn page_idle() -> IdleOptions {
    page_idle_question().options()
}

/// The idle question the page asks: exact, up to 500 gaps of each device.
fn page_idle_question() -> Idle {
    Idle {
        hta: false,
        top: Some(500),
    }
}

/// A declared table's answer as JSON, its columns and sort beside its rows
/// ([`WithColumns`]): the page lays the table out from them.
fn declared<T: serde::Serialize>(name: &str, answer: &T) -> String {
    let table = tables::declared(name).expect("a declared table");
    json(&WithColumns::new(table, &[], answer))
}

impl Loaded {
    /// Fails until the analyses have run: what needs them is not computed in one go in a call
    /// (the page would stop drawing meanwhile).
    pub(super) fn analysed(&self) -> Result<(), JsValue> {
        match self.analysed {
            Analysed::Nothing => Err(err("the analyses have not run yet (call analyse_step)")),
            _ => Ok(()),
        }
    }

    /// Idle gap `i` of the page's report, once the analyses have run.
    pub(super) fn gap(&self, i: usize) -> Option<idle::Gap> {
        self.analysed().ok()?;
        self.derived.idle(&page_idle()).gaps.get(i).cloned()
    }
}

#[wasm_bindgen]
impl Session {
    /// Slices of the whole trace grouped by name (JSON), the `limit` largest.
    pub fn names_table(&self, limit: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let t = aggregate(
            l.trace(),
            &l.timeline,
            0,
            l.trace().span_ns(),
            limit as usize,
        );
        Ok(json(&t))
    }

    /// Empty when the analyses can run in what is left of this module's memory (`limit_bytes`
    /// in all, or 0 for wasm32's 4 GiB); otherwise why not, for the page to show in their place.
    /// A wasm module out of memory stops dead (a trap the Session does not survive), so a trace
    /// whose analyses cannot fit keeps its timeline and details rather than losing them halfway
    /// through the analyses.
    pub fn analyses_room(&self, limit_bytes: f64) -> Result<String, JsValue> {
        let l = self.loaded()?;
        let limit = if limit_bytes > 0.0 {
            limit_bytes
        } else {
            WASM32_MAX_BYTES
        };
        let need = l.trace().slice_count() as f64 * ANALYSES_BYTES_PER_SLICE;
        let have = super::memory_bytes();
        if have + need <= limit {
            return Ok(String::new());
        }
        const GIB: f64 = (1u64 << 30) as f64;
        Ok(format!(
            "Not analysed: this page's memory is {:.1} GiB with the timeline, and the analyses \
             would need about {:.1} GiB more, past the {:.1} GiB a browser gives it. The timeline \
             and the details work; `sightline report FILE` runs the analyses natively.",
            have / GIB,
            need / GIB,
            limit / GIB
        ))
    }

    /// Runs the next slice of the analyses: links, steps, idle gaps, FLOPs and findings, then
    /// the operator forest the tables read. Returns `"analyses"` when this call completed the
    /// analyses ([`Session::steps`], `idle`, `findings` answer from then on, and the idle gaps
    /// are shaded on the GPU lanes), `"tables"` when it completed the forest ([`Session::ops`]
    /// and the other tables; so does every
    /// call after it), and `""` when there is more to do. Each call does about `units` units of
    /// work (0: the default, [`SLICE_UNITS`]; the call that starts a phase sets it for the whole
    /// phase), so that a page whose Session is in a worker gets the frames asked for meanwhile
    /// drawn between the calls.
    pub fn analyse_step(&mut self, units: u32) -> Result<String, JsValue> {
        let l = self.loaded_mut()?;
        if l.analysed == Analysed::Tables {
            return Ok("tables".into());
        }
        let running = l.running.get_or_insert_with(|| {
            let mut y = Slicer::every(u64::from(if units == 0 { SLICE_UNITS } else { units }));
            let d = Rc::clone(&l.derived);
            match l.analysed {
                Analysed::Nothing => Box::pin(async move {
                    d.findings_sliced(&page_idle(), &mut y).await;
                }),
                _ => Box::pin(async move {
                    d.forest_sliced(&mut y).await;
                }),
            }
        });
        if poll_once(running.as_mut()).is_none() {
            return Ok(String::new());
        }
        l.running = None;
        if l.analysed == Analysed::Nothing {
            l.st.gaps = l
                .derived
                .idle(&page_idle())
                .gaps
                .iter()
                .map(|g| GapShade {
                    device: g.device,
                    start_ns: g.start_ns,
                    end_ns: g.end_ns,
                })
                .collect();
            l.analysed = Analysed::Analyses;
            Ok("analyses".into())
        } else {
            l.analysed = Analysed::Tables;
            Ok("tables".into())
        }
    }

    /// The steps (JSON `StepsReport`, the query layer's [`Steps`]), with the steps' declared
    /// `columns` and `sort` beside them.
    pub fn steps(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        l.analysed()?;
        let answer = Steps {}.answer(&Opened::of(&l.derived)).map_err(err)?;
        Ok(declared("steps", &answer))
    }

    /// Idle time (JSON `IdleReport`, [`Idle`] as the page asks it: up to 500 gaps).
    pub fn idle(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        l.analysed()?;
        let o = Opened::of(&l.derived);
        Ok(json(&*page_idle_question().answer(&o).map_err(err)?))
    }

    /// The findings (JSON, a list of `Assessed`: each with its fix's `saving` where it has one,
    /// largest saving first, as `sightline report --json` lists them).
    pub fn findings(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        l.analysed()?;
        Ok(json(&l.derived.findings(&page_idle()).findings))
    }

    /// The notes on how the trace was recorded (JSON, `report --json`'s `recording`).
    pub fn recording(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        l.analysed()?;
        Ok(json(&l.derived.findings(&page_idle()).recording))
    }

    /// The operator table ([`Ops`]; `by_shape` groups by input shapes too), sorted by self device
    /// time when the trace has GPU time, else self CPU; JSON with its `columns` and `sort`
    /// (`analysis::columns`).
    pub fn ops(&self, by_shape: bool) -> Result<String, JsValue> {
        let o = self.tables()?;
        let ops = Ops {
            by_shape,
            ..Ops::default()
        };
        Ok(declared("ops", &ops.answer(&o).map_err(err)?))
    }

    /// The device ops by name ([`Kernels`]), with their columns and sort.
    pub fn kernels(&self) -> Result<String, JsValue> {
        let o = self.tables()?;
        Ok(declared(
            "kernels",
            &Kernels::default().answer(&o).map_err(err)?,
        ))
    }

    /// The `record_function` labels ([`Labels`]), with their columns and sort.
    pub fn labels(&self) -> Result<String, JsValue> {
        let o = self.tables()?;
        Ok(declared("labels", &Labels {}.answer(&o).map_err(err)?))
    }

    /// The `nn.Module` tree ([`Modules`]), with its columns and sort.
    pub fn modules(&self) -> Result<String, JsValue> {
        let o = self.tables()?;
        Ok(declared("modules", &Modules {}.answer(&o).map_err(err)?))
    }

    /// The CUDA/HIP graph replays ([`Graphs`], as `sightline graphs --json`), with their columns
    /// and sort.
    pub fn graphs(&self) -> Result<String, JsValue> {
        let o = self.tables()?;
        Ok(declared(
            "graphs",
            &Graphs::default().answer(&o).map_err(err)?,
        ))
    }

    /// What `torch.compile` ran ([`Compiled`], as `sightline compiled --json`), with the
    /// declarations of its tables beside it ([`WithTables`]: graphs, their kernels, frames,
    /// compile work).
    pub fn compiled(&self) -> Result<String, JsValue> {
        let o = self.tables()?;
        let answer = Compiled {}.answer(&o).map_err(err)?;
        let declared = tables::tables_of("compiled");
        Ok(json(&WithTables::new(declared, &[], answer)))
    }

    /// The top-down call tree (JSON): the page's own view of the operator forest, which no other
    /// front end asks for.
    pub fn call_tree(&self) -> Result<String, JsValue> {
        self.tables()?;
        let l = self.loaded()?;
        Ok(declared(
            "calltree",
            &call_tree(l.trace(), l.derived.forest()),
        ))
    }
}

impl Session {
    /// The store as the query layer asks it, once the tables are built.
    fn tables(&self) -> Result<Opened<'_>, JsValue> {
        let l = self.loaded()?;
        if l.analysed != Analysed::Tables {
            return Err(err("the tables are not built yet (call analyse_step)"));
        }
        Ok(Opened::of(&l.derived))
    }
}
