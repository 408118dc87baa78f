//! One trace's questions that are not tables: what it holds, its steps, one step, device idle
//! time, memory, its digest.

use super::{flag, Opened, Question};
use crate::analysis::critical::{PathOptions, Segment};
use crate::analysis::idle::{IdleOptions, IdleReport, Mode};
use crate::analysis::memory::{self, MemoryOptions, MemoryReport};
use crate::analysis::steps::StepsReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the trace holds: events by phase and category, lanes, devices, diagnostics of a damaged
/// file, parse speed.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {}

#[derive(Serialize)]
pub struct SummaryAnswer {
    #[serde(flatten)]
    pub summary: crate::analysis::summary::Summary,
    pub parse_seconds: f64,
    /// JSON read per second: the file's JSON (inflated) over `parse_seconds`.
    pub mb_per_s: f64,
}

impl<'a> Question<'a> for Summary {
    type Answer = SummaryAnswer;
    fn answer(&self, t: &Opened<'a>) -> Result<SummaryAnswer, String> {
        let summary = t.derived.summary();
        let mb_per_s = summary.file.json_bytes as f64 / 1e6 / t.parse_seconds.max(1e-9);
        Ok(SummaryAnswer {
            summary,
            parse_seconds: t.parse_seconds,
            mb_per_s,
        })
    }
}

/// `ProfilerStep#N` spans with the TensorBoard plugin's time breakdown (kernel, memcpy,
/// communication, runtime, dataloader, CPU exec, other), device utilization, step statistics.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Steps {}

impl<'a> Question<'a> for Steps {
    type Answer = &'a StepsReport;
    fn answer(&self, t: &Opened<'a>) -> Result<&'a StepsReport, String> {
        Ok(t.derived.steps())
    }
}

/// One step: its span, the TensorBoard plugin's breakdown, device utilization, and what bounds it
/// on its critical path, with the path's longest segments.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Step {
    /// The step's name (ProfilerStep#N), as steps lists them
    pub name: String,
}

/// The longest segments of the step's path an answer gives, in time order.
const STEP_SEGMENTS: usize = 5;

#[derive(Serialize)]
pub struct StepAnswer<'a> {
    pub step: &'a crate::analysis::steps::Step,
    /// Share of the step's critical path by category, in percent (empty when the path cannot be
    /// followed: `path_error` says why).
    pub bound_by: BTreeMap<&'static str, f64>,
    /// The path's longest segments, in time order.
    pub longest_segments: Vec<Segment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_error: Option<String>,
}

impl<'a> Question<'a> for Step {
    type Answer = StepAnswer<'a>;
    fn answer(&self, t: &Opened<'a>) -> Result<StepAnswer<'a>, String> {
        let d = t.derived;
        let steps = &d.steps().steps;
        let step = steps.iter().find(|s| s.name == self.name).ok_or_else(|| {
            let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
            format!("no step '{}'; the steps: {}", self.name, names.join(", "))
        })?;
        let opts = PathOptions {
            step: Some(self.name.clone()),
            ..PathOptions::default()
        };
        let (bound_by, longest_segments, path_error) = match d.path(&opts, &[]) {
            Ok(mut r) if !r.paths.is_empty() => {
                let p = r.paths.swap_remove(0);
                let mut segments = p.segments;
                let length = |s: &Segment| s.end_us - s.start_us;
                segments.sort_by(|a, b| length(b).total_cmp(&length(a)));
                segments.truncate(STEP_SEGMENTS);
                segments.sort_by(|a, b| a.start_us.total_cmp(&b.start_us));
                (p.bound_by, segments, None)
            }
            Ok(_) => (BTreeMap::new(), Vec::new(), None),
            Err(e) => (BTreeMap::new(), Vec::new(), Some(e)),
        };
        Ok(StepAnswer {
            step,
            bound_by,
            longest_segments,
            path_error,
        })
    }
}

/// The idle gaps listed one by one unless a request says how many.
pub const GAPS: usize = 10;

/// Device idle time: HTA's temporal and per-stream breakdowns, the longest idle gaps of each
/// device and what the CPU was doing in each.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Idle {
    /// Count as HTA 0.5.0 does
    #[serde(deserialize_with = "flag")]
    pub hta: bool,
    /// The longest gaps of each device one by one (default 10)
    pub top: Option<usize>,
}

impl Idle {
    /// How the store counts it (its idle time is kept per options).
    pub fn options(&self) -> IdleOptions {
        IdleOptions {
            mode: if self.hta { Mode::Hta } else { Mode::Exact },
            max_gaps: self.top.unwrap_or(GAPS),
        }
    }
}

impl<'a> Question<'a> for Idle {
    type Answer = Arc<IdleReport>;
    fn answer(&self, t: &Opened<'a>) -> Result<Arc<IdleReport>, String> {
        Ok(t.derived.idle(&self.options()))
    }
}

/// Memory per device (`profile_memory=True`): peak allocated and reserved, what held the peak by
/// operator and Python frame, the curve, what was live at a time.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Memory {
    /// The curve in N points, min/max per bucket (default 100)
    pub points: Option<usize>,
    /// What was live at this time, in µs from the trace start
    pub at_us: Option<f64>,
    /// Every allocation: address, size, allocated and freed at and by, lifetime
    #[serde(deserialize_with = "flag")]
    pub allocations: bool,
    /// The N largest holders and live allocations (default 10)
    pub top: Option<usize>,
}

/// A memory report, or for a trace without `[memory]` events `{"devices": []}`.
pub struct MemoryAnswer(pub Option<MemoryReport>);

impl Serialize for MemoryAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(r) => r.serialize(s),
            None => serde_json::json!({ "devices": [] }).serialize(s),
        }
    }
}

impl<'a> Question<'a> for Memory {
    type Answer = MemoryAnswer;
    fn answer(&self, t: &Opened<'a>) -> Result<MemoryAnswer, String> {
        let d = t.derived;
        let trace = d.trace();
        if trace.memory.is_empty() {
            return Ok(MemoryAnswer(None));
        }
        let options = MemoryOptions {
            points: u32::try_from(self.points.unwrap_or(100))
                .map_err(|_| "points is too large".to_string())?,
            top: self.top.unwrap_or(10),
            at_ns: self.at_us.map(|us| (us * 1e3) as i64),
            table: self.allocations,
        };
        Ok(MemoryAnswer(Some(memory::report(
            trace,
            d.memory(),
            &d.steps().steps,
            &options,
        ))))
    }
}

/// The trace's digest: the compact analyses `diff` and `ranks` compare.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Digest {}

impl<'a> Question<'a> for Digest {
    type Answer = crate::analysis::digest::Digest;
    /// The file's name (not its folder) gives the rank when the trace does not, as `ranks` reads it.
    fn answer(&self, t: &Opened<'a>) -> Result<Self::Answer, String> {
        let name = std::path::Path::new(t.file)
            .file_name()
            .map_or_else(|| t.file.to_string(), |n| n.to_string_lossy().into_owned());
        Ok(t.derived.digest(&name))
    }
}
