//! Findings across ranks, each with evidence on the right rank's own timeline:
//! [`STRAGGLER_RANK`] (from [`super::stragglers`]; ranks late by scheduling noise cause little
//! waiting and stay out), [`COLLECTIVE_WAIT_HEAVY`], [`LOW_COMM_OVERLAP`] (HTA's measure of
//! overlap) and [`UNBALANCED_RANKS`].

use super::matching::{median, total, Matched};
use super::{RankFinding, RankRange, RanksReport};
use crate::analysis::digest::Digest;
use crate::analysis::findings::types::{Pricing, Rule, Severity, Theme, Threshold, Value};

/// How late a straggler is, as a share of the median step time, and at the least.
const LATE_SHARE: f64 = 0.05;
const LATE_MIN_NS: i64 = 100_000;
/// The waits a straggler caused, as a share of all ranks' step time, from which it counts, and
/// from which it is critical.
const CAUSED_SHARE: f64 = 0.10;
const CAUSED_CRITICAL: f64 = 0.25;
/// The ranks' waits in collectives, as a share of their step time, from which they are heavy.
const WAIT_SHARE: f64 = 0.10;
/// The overlap of communication with compute under which it is low, and the exposed
/// communication's share of the step time from which that matters.
const LOW_OVERLAP_PCT: f64 = 50.0;
const EXPOSED_SHARE: f64 = 0.10;
/// The busiest rank's compute over the median rank's from which the ranks are unbalanced, and
/// the least difference.
const IMBALANCE: f64 = 1.2;
const IMBALANCE_MIN_NS: i64 = 1_000_000;

pub const STRAGGLER_RANK: Rule = Rule {
    id: "straggler_rank",
    theme: Theme::Ranks,
    severity: Severity::Warning,
    recording: false,
    meaning: "a rank that makes the others wait: the straggler of some steps, with its own \
              critical path in them",
    fires: "a rank is a step's straggler at least {late} of the median step time (and {late_min}) \
            late, and the waits it caused in those steps total {caused} of all ranks' step time \
            or more; one finding per rank, critical from {critical}",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[
        Threshold::new("late", Value::Share(LATE_SHARE)),
        Threshold::new("late_min", Value::Ns(LATE_MIN_NS)),
        Threshold::new("caused", Value::Share(CAUSED_SHARE)),
        Threshold::new("critical", Value::Share(CAUSED_CRITICAL)),
    ],
};

pub const COLLECTIVE_WAIT_HEAVY: Rule = Rule {
    id: "collective_wait_heavy",
    theme: Theme::Ranks,
    severity: Severity::Warning,
    recording: false,
    meaning: "ranks spend much of their time waiting in collectives for the last rank to arrive",
    fires: "the ranks' waits in collectives total {share} of their step time or more (of their \
            trace spans, without steps)",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[Threshold::new("share", Value::Share(WAIT_SHARE))],
};

pub const LOW_COMM_OVERLAP: Rule = Rule {
    id: "low_comm_overlap",
    theme: Theme::Ranks,
    severity: Severity::Warning,
    recording: false,
    meaning: "communication does not hide behind computation",
    fires: "a rank overlaps less than {overlap} of its communication with compute (HTA's \
            measure) and its exposed communication is {exposed} of its step time or more",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[
        Threshold::new("overlap", Value::Pct(LOW_OVERLAP_PCT)),
        Threshold::new("exposed", Value::Share(EXPOSED_SHARE)),
    ],
};

pub const UNBALANCED_RANKS: Rule = Rule {
    id: "unbalanced_ranks",
    theme: Theme::Ranks,
    severity: Severity::Warning,
    recording: false,
    meaning: "ranks do unequal work: the others wait for the busiest at every collective",
    fires: "the busiest rank computes {ratio} the median rank or more, and {more} more",
    whatif: "-",
    pricing: Pricing::None,
    thresholds: &[
        Threshold::new("ratio", Value::Times(IMBALANCE)),
        Threshold::new("more", Value::Ns(IMBALANCE_MIN_NS)),
    ],
};

/// The rules across ranks, in the order the reference lists them.
pub const RULES: [&Rule; 4] = [
    &STRAGGLER_RANK,
    &COLLECTIVE_WAIT_HEAVY,
    &LOW_COMM_OVERLAP,
    &UNBALANCED_RANKS,
];
const MAX_EVIDENCE: usize = 10;

/// A duration given in µs, in the findings' words ([`crate::units::duration`]).
fn time(us: f64) -> String {
    crate::units::duration(us * 1e3)
}

/// What the straggler's own critical path in a step ran through: "; its critical path in
/// ProfilerStep#3: slow_rank_work 40.2 ms (cpu_op), ...".
fn path_quote(d: Option<&Digest>, step: &str) -> String {
    let Some(s) = d.and_then(|d| d.real_steps().iter().find(|s| s.name == step)) else {
        return String::new();
    };
    if s.path.is_empty() {
        return String::new();
    }
    let items: Vec<String> = s
        .path
        .iter()
        .map(|p| {
            let name = if p.name.is_empty() {
                "(nothing recorded)"
            } else {
                p.name.as_str()
            };
            format!("{name} {} ({})", time(p.ns as f64 / 1e3), p.bound_by)
        })
        .collect();
    format!("; its critical path in {step}: {}", items.join(", "))
}

/// A rank's time in steps (its span without steps), ns.
fn step_time(d: &Digest) -> i64 {
    if d.real_steps().is_empty() {
        d.summary.span_ns
    } else {
        total(&d.real_steps().iter().map(|s| s.dur_ns).collect::<Vec<_>>())
    }
}

fn step_ranges(d: &Digest) -> Vec<RankRange> {
    d.real_steps()
        .iter()
        .take(3)
        .map(|s| RankRange {
            rank: d.distributed.rank.unwrap_or(-1),
            start_ns: s.start_ns,
            end_ns: s.start_ns + s.dur_ns,
        })
        .collect()
}

pub fn analyze(r: &RanksReport, digests: &[&Digest], matched: &[Matched]) -> Vec<RankFinding> {
    let mut out = Vec::new();
    let mut step_meds: Vec<i64> = r
        .ranks
        .iter()
        .filter(|x| x.steps > 0)
        .map(|x| (x.step_time_us * 1e3) as i64)
        .collect();
    let median_step_us = if step_meds.is_empty() {
        0.0
    } else {
        median(&mut step_meds) as f64 / 1e3
    };
    let by_rank = |rank: i64| digests.iter().find(|d| d.distributed.rank == Some(rank));

    let total_time = total(&digests.iter().map(|d| step_time(d)).collect::<Vec<_>>());

    // straggler_rank
    let threshold = (LATE_SHARE * median_step_us).max(LATE_MIN_NS as f64 / 1e3);
    let mut ranks: Vec<i64> = r
        .stragglers
        .iter()
        .filter(|s| s.late_us >= threshold)
        .map(|s| s.rank)
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    for rank in ranks {
        let late: Vec<_> = r
            .stragglers
            .iter()
            .filter(|s| s.rank == rank && s.late_us >= threshold)
            .collect();
        let caused: f64 = late.iter().map(|s| s.wait_caused_us).sum();
        let share = caused * 1e3 / total_time.max(1) as f64;
        if share < CAUSED_SHARE {
            continue;
        }
        let worst = late
            .iter()
            .max_by(|a, b| a.late_us.total_cmp(&b.late_us))
            .expect("at least one");
        let names: Vec<&str> = late.iter().map(|s| s.step.as_str()).collect();
        let mut evidence = Vec::new();
        for s in late.iter().take(MAX_EVIDENCE / 2) {
            if let Some(st) =
                by_rank(rank).and_then(|d| d.real_steps().iter().find(|x| x.name == s.step))
            {
                evidence.push(RankRange {
                    rank,
                    start_ns: st.cpu_start_ns,
                    end_ns: s.end_ns,
                });
            }
            evidence.push(RankRange {
                rank,
                start_ns: s.start_ns,
                end_ns: s.end_ns,
            });
        }
        out.push(RankFinding {
            id: STRAGGLER_RANK.id,
            steps: names.iter().map(|n| n.to_string()).collect(),
            severity: if share >= CAUSED_CRITICAL {
                Severity::Critical
            } else {
                STRAGGLER_RANK.severity
            },
            title: format!("Rank {rank} holds the others back"),
            detail: format!(
                "rank {rank} is {} late into the {} of {}; in {} step(s) ({}) the other ranks waited {} in all for it ({:.1}% of all ranks' step time); {}",
                time(worst.late_us),
                worst.collective,
                worst.step,
                late.len(),
                names.join(", "),
                time(caused),
                100.0 * share,
                worst.cause
            ) + &path_quote(by_rank(rank).copied(), &worst.step),
            advice: "Look at what this rank does before the collective that the others do not (its data loading, \
                     an extra computation, a host stall); balance the work or move it out of the step."
                .to_string(),
            evidence,
        });
    }

    // collective_wait_heavy
    let total_wait = total(matched.iter().flat_map(|m| m.wait_ns.iter()));
    if total_time > 0 && total_wait as f64 >= WAIT_SHARE * total_time as f64 {
        let mut waits: Vec<(i64, usize, usize)> = matched
            .iter()
            .flat_map(|m| {
                m.parts
                    .iter()
                    .enumerate()
                    .map(move |(k, &(d, i))| (m.wait_ns[k], d, i))
            })
            .filter(|w| w.0 > 0)
            .collect();
        waits.sort_by_key(|w| std::cmp::Reverse(w.0));
        out.push(RankFinding {
            id: COLLECTIVE_WAIT_HEAVY.id,
            steps: Vec::new(),
            severity: COLLECTIVE_WAIT_HEAVY.severity,
            title: "Ranks spend much of their time waiting in collectives".to_string(),
            detail: format!(
                "the ranks waited {} in collectives for the last rank to arrive, {:.1}% of their {} of step time",
                time(total_wait as f64 / 1e3),
                100.0 * total_wait as f64 / total_time as f64,
                time(total_time as f64 / 1e3)
            ),
            advice: "Waiting is skew between ranks, not transfer: find the rank that arrives last (see \
                     stragglers) and what delays it."
                .to_string(),
            evidence: waits
                .iter()
                .take(MAX_EVIDENCE)
                .map(|&(_, d, i)| RankRange {
                    rank: digests[d].distributed.rank.unwrap_or(-1),
                    start_ns: digests[d].distributed.collectives[i].start_ns,
                    end_ns: digests[d].distributed.collectives[i].end_ns,
                })
                .collect(),
        });
    }

    // low_comm_overlap
    let low: Vec<(&Digest, f64)> = digests
        .iter()
        .zip(&r.overlap)
        .filter_map(|(d, o)| {
            let pct = o.comm_comp_overlap_pct?;
            let exposed = d.distributed.exposed_communication_ns as f64
                >= EXPOSED_SHARE * step_time(d) as f64;
            (pct < LOW_OVERLAP_PCT && exposed && d.distributed.exposed_communication_ns > 0)
                .then_some((*d, pct))
        })
        .collect();
    if !low.is_empty() {
        let list: Vec<String> = low
            .iter()
            .map(|(d, p)| {
                format!(
                    "rank {} {:.1}% ({} exposed)",
                    d.distributed.rank.unwrap_or(-1),
                    p,
                    time(d.distributed.exposed_communication_ns as f64 / 1e3)
                )
            })
            .collect();
        out.push(RankFinding {
            id: LOW_COMM_OVERLAP.id,
            steps: Vec::new(),
            severity: LOW_COMM_OVERLAP.severity,
            title: "Communication does not hide behind computation".to_string(),
            detail: format!(
                "{} of {} rank(s) overlap less than {LOW_OVERLAP_PCT:.0}% of their communication with computation: {}",
                low.len(),
                digests.len(),
                list.join(", ")
            ),
            advice: "Let collectives run while computation continues: DDP bucketing (bucket_cap_mb), FSDP \
                     prefetch, async collectives waited on later."
                .to_string(),
            evidence: low
                .iter()
                .flat_map(|(d, _)| step_ranges(d))
                .take(MAX_EVIDENCE)
                .collect(),
        });
    }

    // unbalanced_ranks
    if digests.len() >= 2 {
        let mut compute: Vec<i64> = digests.iter().map(|d| d.distributed.compute_ns).collect();
        let med = median(&mut compute);
        if let Some(top) = digests
            .iter()
            .max_by_key(|d| (d.distributed.compute_ns, d.distributed.rank.map(|r| -r)))
        {
            if med > 0
                && top.distributed.compute_ns as f64 >= IMBALANCE * med as f64
                && top.distributed.compute_ns - med >= IMBALANCE_MIN_NS
            {
                out.push(RankFinding {
                    id: UNBALANCED_RANKS.id,
                    steps: Vec::new(),
                    severity: UNBALANCED_RANKS.severity,
                    title: "Ranks do unequal work".to_string(),
                    detail: format!(
                        "rank {} computes {} against the median rank's {} ({:.2}x); every collective waits for the busiest rank",
                        top.distributed.rank.unwrap_or(-1),
                        time(top.distributed.compute_ns as f64 / 1e3),
                        time(med as f64 / 1e3),
                        top.distributed.compute_ns as f64 / med as f64
                    ),
                    advice: "Balance the work across ranks: shard sizes, sequence lengths per batch, \
                             embedding tables per rank."
                        .to_string(),
                    evidence: step_ranges(top),
                });
            }
        }
    }
    out
}
