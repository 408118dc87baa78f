//! Clock alignment on matched collectives.
//!
//! Ranks on one host share a clock; ranks on different hosts do not. A collective ends at nearly
//! the same moment on every participant (the last one to arrive releases them all), so the offset of
//! a rank's clock against the reference rank (the lowest) is the median, over the collectives both
//! took part in, of (reference end - this rank's end).
//! - `none`: no offsets (rule `none`).
//! - `collectives`: every rank gets its own offset (rule `collective_ends`).
//! - `auto` (the default): only ranks on another host than the reference are moved, by one offset
//!   per host (the median over all that host's ranks' matched collectives; rule `other_host`); ranks on
//!   the reference's host keep their clock (`same_host`), and so does every rank when the traces do
//!   not name their hosts (`host_unknown`).
//!
//! A rank with no collective matched with the reference keeps its clock (`no_matched_collectives`).

use super::digest::Distributed;
use super::matching::{group, median};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Align {
    Auto,
    None,
    Collectives,
}

impl Align {
    pub fn parse(s: &str) -> Option<Align> {
        match s {
            "auto" => Some(Align::Auto),
            "none" => Some(Align::None),
            "collectives" => Some(Align::Collectives),
            _ => None,
        }
    }
}

/// Offsets (ns, added to each digest's clock) and the rule that chose each. `ranks[0]` is the
/// reference.
pub fn offsets(ranks: &[&Distributed], mode: Align) -> (Vec<i64>, Vec<&'static str>) {
    let n = ranks.len();
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    if mode == Align::None {
        return (vec![0; n], vec!["none"; n]);
    }
    // Per digest, (reference end - its end) over collectives matched with the reference.
    let mut diffs: Vec<Vec<i64>> = vec![Vec::new(); n];
    for parts in group(ranks) {
        let Some(&(_, ri)) = parts.iter().find(|p| p.0 == 0) else {
            continue;
        };
        let end = |d: usize, i: usize| {
            ranks[d]
                .clock_origin_ns
                .saturating_add(ranks[d].collectives[i].end_ns)
        };
        let reference = end(0, ri);
        for &(d, i) in &parts {
            diffs[d].push(reference.saturating_sub(end(d, i)));
        }
    }
    let mut off = vec![0i64; n];
    let mut rule = vec!["reference"; n];
    let hosts_known = ranks.iter().all(|d| d.host.is_some());
    for d in 1..n {
        rule[d] = match mode {
            Align::Collectives => {
                if diffs[d].is_empty() {
                    "no_matched_collectives"
                } else {
                    off[d] = median(&mut diffs[d].clone());
                    "collective_ends"
                }
            }
            _ if !hosts_known => "host_unknown",
            _ if ranks[d].host == ranks[0].host => "same_host",
            _ => {
                let mut all: Vec<i64> = (1..n)
                    .filter(|&e| ranks[e].host == ranks[d].host)
                    .flat_map(|e| diffs[e].iter().copied())
                    .collect();
                if all.is_empty() {
                    "no_matched_collectives"
                } else {
                    off[d] = median(&mut all);
                    "other_host"
                }
            }
        };
    }
    (off, rule)
}
