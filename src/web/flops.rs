//! FLOPs on the page: the roofline (points per op and shape, the device's roofs) and the
//! FLOPs columns of the operator table by shape, from the calls the analyses modelled
//! (`analysis::flops`, kept with the trace's other analyses).

use super::session::Session;
use super::{err, json};
use crate::analysis::columns::Row;
use crate::analysis::flops::FlopsRow;
use crate::view::panels::{FlopsCall, Roofline};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
impl Session {
    /// The FLOPs rows (as `sightline flops --json`), the device and its roofs (JSON). Needs the
    /// analyses ([`Session::analyse`]).
    pub fn flops_report(&self) -> Result<String, JsValue> {
        let l = self.loaded()?;
        l.analysed()?;
        let report = l.derived.flops().report(l.trace());
        let roofs = report.peaks.map_or_else(Vec::new, |p| {
            p.roofs(
                report
                    .rows
                    .iter()
                    .map(|r| (r.dtype.as_str(), r.family.matrix())),
            )
        });
        Ok(json(&Roofline {
            columns: FlopsRow::COLUMNS,
            device: report.device,
            peaks: report.peaks,
            roofs,
            rows: report.rows,
        }))
    }

    /// The calls of FLOPs row `row` (in `flops_report`'s order; the first 50), with their times
    /// (JSON list of {lane, index, start_ns, dur_ns}).
    pub fn flops_calls(&self, row: u32) -> Result<String, JsValue> {
        let l = self.loaded()?;
        l.analysed()?;
        let report = l.derived.flops().report(l.trace());
        let r = report
            .rows
            .get(row as usize)
            .ok_or_else(|| err(format!("no FLOPs row {row}")))?;
        let calls: Vec<FlopsCall> = r
            .slices
            .iter()
            .map(|s| {
                let sl = l.trace().slices(s.lane as usize);
                FlopsCall {
                    lane: s.lane,
                    index: s.index,
                    start_ns: sl.start_ns[s.index as usize],
                    dur_ns: sl.dur_ns[s.index as usize],
                }
            })
            .collect();
        Ok(json(&calls))
    }
}
