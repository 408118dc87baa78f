//! Everything at once: the findings (with what each fix saves per step), notes on how the trace
//! was recorded, the top operators, the steps and device idle time: `sightline report`, MCP's
//! `report`, Python's `Trace.report()`.

use super::trace::GAPS;
use super::{flag, Opened, Question};
use crate::analysis::derived::Judged;
use crate::analysis::idle::IdleReport;
use crate::analysis::steps::StepsReport;
use crate::analysis::summary::{self, Cut};
use crate::analysis::tables::OpTable;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The operators a report shows unless told `top`.
pub const TOP_OPERATORS: usize = 15;

/// Everything at once: findings (what costs time, each with evidence and what its fix saves per
/// step), notes on how the trace was recorded, top operators, steps and idle time.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Report {
    /// Count idle time as HTA 0.5.0 does
    #[serde(deserialize_with = "flag")]
    pub hta: bool,
    /// Operators shown (default 15) and idle gaps per device listed one by one (default 10)
    pub top: Option<usize>,
}

impl Report {
    /// How many operators a front end shows of the answer's whole table.
    pub fn operators(&self) -> usize {
        self.top.unwrap_or(TOP_OPERATORS)
    }

    fn idle(&self) -> super::Idle {
        super::Idle {
            hta: self.hta,
            top: Some(self.top.unwrap_or(GAPS)),
        }
    }
}

#[derive(Serialize)]
pub struct ReportAnswer<'a> {
    pub file: &'a str,
    pub schema: &'a str,
    pub rank: i64,
    pub span_ns: i64,
    /// How far a truncated file got and what it lost; `None` for a complete file.
    pub cut: Option<Cut>,
    pub parse_seconds: f64,
    /// Seconds the analyses took, by the front end's clock (the core has none); 0 until it sets
    /// them.
    pub analysis_seconds: f64,
    /// The operator table (key_averages) with the capture charges the store was given, sorted by
    /// self device time when device time was charged, else self CPU; every row (a front end
    /// shows [`Report::operators`]).
    pub top_operators: OpTable,
    pub steps: &'a StepsReport,
    pub idle: Arc<IdleReport>,
    /// `findings`: what costs time, ordered by what fixing each would save per step (the
    /// critical path's what-if), where a fix is a change of durations; the others after, by
    /// severity. `recording`: notes on how the trace was recorded (no stacks, no shapes, memory
    /// profiling on, device activities only, few active steps), apart, never above a cost.
    #[serde(flatten)]
    pub judged: Arc<Judged>,
}

impl<'a> Question<'a> for Report {
    type Answer = ReportAnswer<'a>;
    fn answer(&self, t: &Opened<'a>) -> Result<ReportAnswer<'a>, String> {
        let d = t.derived;
        let io = self.idle().options();
        // Two threads, along the findings' chain. The rules need the links, steps, idle time and
        // FLOPs; their savings need the rules and the critical path's graph, which needs the
        // links and steps. So one side builds the links, the steps, the FLOPs and the graph,
        // then the savings; the other the operator forest (the table's), idle time, then the
        // rules (the getters wait for a result being built instead of building it again). 1 GB
        // scaled trace: links 0.10 s, steps 0.10, FLOPs 0.09, graph 0.24 on one side; forest
        // 0.29, idle 0.05, rules 0.20 on the other; both sides done at 0.52-0.55 s, then the
        // savings (0.17, on both cores). A trace with no what-if to replay builds the graph for
        // nothing, beside the rules. One core (or wasm): one side after the other.
        crate::cores::both(
            true,
            || {
                d.steps();
                d.flops();
                // An error (no step to follow) is kept too, and the findings' savings read it.
                let _ = d.critical();
            },
            || {
                d.forest();
                d.idle(&io);
                d.flops();
                d.steps();
                // The rules' results are kept per option value, which a second asker would
                // build again: the savings wait for them.
                d.found(&io);
            },
        );
        let judged = d.findings(&io);
        let trace = d.trace();
        let mut top_operators = d.op_table(false);
        top_operators.sort_by(top_operators.default_sort());
        Ok(ReportAnswer {
            file: t.file,
            schema: &trace.meta.schema,
            rank: trace.rank(),
            span_ns: trace.span_ns(),
            cut: summary::cut(trace),
            parse_seconds: t.parse_seconds,
            analysis_seconds: 0.0,
            top_operators,
            steps: d.steps(),
            idle: d.idle(&io),
            judged,
        })
    }
}
