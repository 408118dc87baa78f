//! Collective instances matched across ranks, and per rank the arrival, the wait for the last arrival
//! (skew) and the transfer after it.
//!
//! - Two instances match when they have the same process group, name, step, size (fixed-size
//!   collectives only) and sequence number ([`super::digest`]). A matched collective with fewer
//!   participants than the ranks that ran that process group is *partial* (a trace window that cut it).
//! - On each rank, with its clock offset applied: arrival = the instance's start; last arrival = the
//!   latest over the participants; wait = last arrival - arrival (within the instance); transfer =
//!   end - max(arrival, last arrival). Wait + transfer is the instance's duration on that rank.
//! - The instance's transfer time is the median of its participants' transfers; algbw = S / that time
//!   and busbw = algbw x the operation's factor ([`super::collective::Collective::bus_factor`]).

use super::digest::Distributed;
use super::digest::Instance;
use std::collections::BTreeMap;

/// One collective instance across its participants.
#[derive(Debug, Clone)]
pub struct Matched {
    /// (digest index, instance index) of each participant, by digest index.
    pub parts: Vec<(usize, usize)>,
    /// Per participant, aligned: arrival, end (absolute ns).
    pub arrival_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    pub wait_ns: Vec<i64>,
    pub transfer_ns: Vec<i64>,
    pub last_arrival_ns: i64,
    /// Index into `parts` of the last to arrive.
    pub last: usize,
    /// Median of the participants' transfer times.
    pub instance_transfer_ns: i64,
    pub partial: bool,
}

type Key = (String, String, Option<i64>, Option<i64>, u32);

fn key(c: &Instance) -> Key {
    (
        c.what.process_group.clone(),
        c.what.name.clone(),
        c.step,
        c.what.size_key(),
        c.seq,
    )
}

/// The instances of every rank grouped by match key, in key order (deterministic).
pub fn group(ranks: &[&Distributed]) -> Vec<Vec<(usize, usize)>> {
    let mut by: BTreeMap<Key, Vec<(usize, usize)>> = BTreeMap::new();
    for (d, digest) in ranks.iter().enumerate() {
        for (i, c) in digest.collectives.iter().enumerate() {
            by.entry(key(c)).or_default().push((d, i));
        }
    }
    by.into_values().collect()
}

/// Sum that saturates: cross-rank totals of values from damaged clocks must not overflow.
pub fn total<'a>(v: impl IntoIterator<Item = &'a i64>) -> i64 {
    v.into_iter().fold(0i64, |a, &b| a.saturating_add(b))
}

/// Median of a non-empty slice (the lower middle for an even count, so the result is a member).
pub fn median(v: &mut [i64]) -> i64 {
    v.sort_unstable();
    v[(v.len() - 1) / 2]
}

/// Matches the instances and computes waits and transfers, with `offset_ns[d]` added to digest d's
/// clock.
pub fn match_all(ranks: &[&Distributed], offset_ns: &[i64]) -> Vec<Matched> {
    // Ranks per process group, to tell partial matches.
    let mut group_ranks: BTreeMap<&str, usize> = BTreeMap::new();
    for d in ranks {
        let mut pgs: Vec<&str> = d
            .collectives
            .iter()
            .map(|c| c.what.process_group.as_str())
            .collect();
        pgs.sort_unstable();
        pgs.dedup();
        for pg in pgs {
            *group_ranks.entry(pg).or_default() += 1;
        }
    }
    group(ranks)
        .into_iter()
        .map(|parts| {
            let abs = |d: usize, t: i64| {
                ranks[d]
                    .clock_origin_ns
                    .saturating_add(t)
                    .saturating_add(offset_ns[d])
            };
            let arrival_ns: Vec<i64> = parts
                .iter()
                .map(|&(d, i)| abs(d, ranks[d].collectives[i].start_ns))
                .collect();
            let end_ns: Vec<i64> = parts
                .iter()
                .map(|&(d, i)| abs(d, ranks[d].collectives[i].end_ns))
                .collect();
            let (last, &last_arrival_ns) = arrival_ns
                .iter()
                .enumerate()
                .max_by_key(|(k, &a)| (a, std::cmp::Reverse(*k)))
                .expect("a group has a participant");
            let wait_ns: Vec<i64> = arrival_ns
                .iter()
                .zip(&end_ns)
                .map(|(&a, &e)| last_arrival_ns.min(e).saturating_sub(a).max(0))
                .collect();
            let transfer_ns: Vec<i64> = arrival_ns
                .iter()
                .zip(&end_ns)
                .map(|(&a, &e)| e.saturating_sub(a.max(last_arrival_ns)).max(0))
                .collect();
            let instance_transfer_ns = median(&mut transfer_ns.clone());
            let (d0, i0) = parts[0];
            let pg = ranks[d0].collectives[i0].what.process_group.as_str();
            let partial = parts.len() < group_ranks.get(pg).copied().unwrap_or(0);
            Matched {
                parts,
                arrival_ns,
                end_ns,
                wait_ns,
                transfer_ns,
                last_arrival_ns,
                last,
                instance_transfer_ns,
                partial,
            }
        })
        .collect()
}
