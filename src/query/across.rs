//! Across traces, from their digests: two runs compared (`diff`) and the ranks of one job
//! (`ranks`). A front end reads each file and gives its digest (a trace digested, or a digest a
//! `sightline digest` wrote, decided once by [`digest_of_bytes`] and `native::digest_of`).

use super::{flag, text_list};
use crate::analysis::derived::Derived;
use crate::analysis::diff::gate::{Condition, Verdict};
use crate::analysis::diff::{diff, DiffOptions, Mode};
use crate::analysis::digest::Digest;
use crate::analysis::ranks::{Align, OverlapScope};
use crate::parse::{ParseError, Parser};
use serde::{Deserialize, Serialize};

/// Before and after: operators, device ops, labels, steps, idle time and findings of two traces
/// (or digests), per step unless `total`, and the `fail_if` conditions checked.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Diff {
    /// Totals over the traces instead of per step
    #[serde(deserialize_with = "flag")]
    pub total: bool,
    /// Match operators by input shape too
    #[serde(deserialize_with = "flag")]
    pub by_shape: bool,
    /// Conditions as the CLI's --fail-if takes them: step_time>+5%,
    /// op:aten::copy_.self_cpu>+10%, finding:pageable_memcpy
    #[serde(deserialize_with = "text_list")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<String>>"))]
    pub fail_if: Vec<Condition>,
}

/// What `diff --json` prints, MCP's `diff` answers and Python's `diff()` returns.
#[derive(Serialize)]
pub struct DiffAnswer {
    pub base_file: String,
    pub new_file: String,
    #[serde(flatten)]
    pub diff: crate::analysis::diff::Diff,
    pub fail_if: Vec<Verdict>,
}

impl DiffAnswer {
    /// The first `n` rows of each table.
    pub fn keep_top(&mut self, n: usize) {
        self.diff.ops.truncate(n);
        self.diff.kernels.truncate(n);
        self.diff.labels.truncate(n);
    }

    /// Whether a `fail_if` condition holds (the CLI exits 1).
    pub fn failed(&self) -> bool {
        self.fail_if.iter().any(|v| v.failed)
    }
}

impl Diff {
    /// The two digests compared and the conditions checked; `base_file` and `new_file` are the
    /// names the answer shows.
    pub fn answer(
        &self,
        base: &Digest,
        new: &Digest,
        base_file: &str,
        new_file: &str,
    ) -> Result<DiffAnswer, String> {
        let opts = DiffOptions {
            by_shape: self.by_shape,
            mode: if self.total {
                Mode::Total
            } else {
                Mode::PerStep
            },
        };
        let diff = diff(base, new, &opts);
        let fail_if = self
            .fail_if
            .iter()
            .map(|c| c.check(&diff))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DiffAnswer {
            base_file: base_file.to_string(),
            new_file: new_file.to_string(),
            diff,
            fail_if,
        })
    }
}

/// The traces of one distributed job side by side: per-rank table, collectives matched across
/// ranks (wait, transfer, bus bandwidth), communication-computation overlap, stragglers per step.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Ranks {
    /// Align clocks on matched collectives: auto (only across hosts, the default), none or
    /// collectives
    pub align: Option<Align>,
    /// Communication-computation overlap over every device op, not HTA's steps
    #[serde(deserialize_with = "flag")]
    pub whole_trace: bool,
}

impl Ranks {
    pub fn align(&self) -> Align {
        self.align.unwrap_or(Align::Auto)
    }

    pub fn scope(&self) -> OverlapScope {
        if self.whole_trace {
            OverlapScope::WholeTrace
        } else {
            OverlapScope::HtaSteps
        }
    }
}

/// The digest of a trace's bytes, or of a digest's JSON (what `sightline digest` writes): BASE
/// and NEW of a diff may be either. Neither: why the bytes are not a trace.
pub fn digest_of_bytes(data: &[u8]) -> Result<Digest, ParseError> {
    let mut p = Parser::new();
    p.feed(data);
    p.finish()
        .map(|trace| Derived::new(trace).digest(""))
        .or_else(|e| serde_json::from_slice(data).map_err(|_| e))
}
