//! Stragglers: per step, the rank the others waited for, how late it was and why.
//!
//! - In each matched collective of a step, the last rank to arrive makes every other participant wait
//!   (their wait, [`super::matching`]). The step's straggler is the rank whose late arrivals caused the
//!   most waiting over the step's collectives; `wait_caused` is that total.
//! - `late` is, in the collective where it caused the most waiting, its arrival minus the median
//!   arrival of the others.
//! - The cause compares what the straggler's step thread did before that collective (its `before`
//!   activities, [`super::digest`]) with the other participants': the activity with the largest
//!   excess over the others' median (a `record_function` label, the DataLoader, CPU operators, Python,
//!   or nothing recorded: idle or untraced work).

use super::digest::Activity;
use super::matching::{median, total, Matched};
use super::{us, Straggler};
use crate::analysis::digest::Digest;
use std::collections::BTreeMap;

pub fn find(digests: &[&Digest], matched: &[Matched]) -> Vec<Straggler> {
    // step -> digest -> (caused, best instance, its caused)
    let mut by: BTreeMap<i64, BTreeMap<usize, (i64, usize, i64)>> = BTreeMap::new();
    for (mi, m) in matched.iter().enumerate() {
        let (d0, i0) = m.parts[0];
        let Some(step) = digests[d0].distributed.collectives[i0].step else {
            continue;
        };
        if m.parts.len() < 2 {
            continue;
        }
        let caused = total(
            m.wait_ns
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != m.last)
                .map(|(_, w)| w),
        );
        if caused <= 0 {
            continue;
        }
        let e = by
            .entry(step)
            .or_default()
            .entry(m.parts[m.last].0)
            .or_insert((0, mi, 0));
        e.0 = e.0.saturating_add(caused);
        if caused > e.2 {
            e.1 = mi;
            e.2 = caused;
        }
    }
    let mut out = Vec::new();
    for (step, ranks) in by {
        let Some((&d, &(caused, mi, _))) = ranks
            .iter()
            .max_by_key(|(d, e)| (e.0, std::cmp::Reverse(**d)))
        else {
            continue;
        };
        let m = &matched[mi];
        let mut others: Vec<i64> = (0..m.parts.len())
            .filter(|&k| k != m.last)
            .map(|k| m.arrival_ns[k])
            .collect();
        let late = m.last_arrival_ns.saturating_sub(median(&mut others));
        let (_, li) = m.parts[m.last];
        let inst = &digests[d].distributed.collectives[li];
        let theirs: Vec<&[Activity]> = m
            .parts
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != m.last)
            .map(|(_, &(od, oi))| digests[od].distributed.collectives[oi].before.as_slice())
            .collect();
        let step_name = digests[d]
            .real_steps()
            .iter()
            .find(|s| s.number == Some(step))
            .map_or_else(|| format!("ProfilerStep#{step}"), |s| s.name.clone());
        out.push(Straggler {
            step: step_name,
            rank: digests[d].distributed.rank.unwrap_or(-1),
            late_us: us(late),
            wait_caused_us: us(caused),
            cause: cause(&inst.before, &theirs, late),
            collective: inst.what.name.clone(),
            start_ns: inst.start_ns,
            end_ns: inst.end_ns,
        });
    }
    out
}

/// The activity with the largest excess over the others' median, in words; it explains the delay only
/// when the excess is at least a quarter of `late_ns`.
fn cause(mine: &[Activity], theirs: &[&[Activity]], late_ns: i64) -> String {
    let best = mine
        .iter()
        .map(|a| {
            let mut other: Vec<i64> = theirs
                .iter()
                .map(|t| t.iter().find(|x| x.what == a.what).map_or(0, |x| x.ns))
                .collect();
            let m = if other.is_empty() {
                0
            } else {
                median(&mut other)
            };
            (a.ns - m, a)
        })
        .max_by_key(|(excess, a)| (*excess, std::cmp::Reverse(a.what.clone())));
    match best {
        Some((excess, a)) if excess > 0 && 4 * excess >= late_ns => {
            let what = match a.what.as_str() {
                "DataLoader" => "the DataLoader".to_string(),
                "CPU operators" => "CPU operators".to_string(),
                "Python" => "Python code".to_string(),
                "nothing recorded" => "nothing recorded on its step thread (idle or untraced work)"
                    .to_string(),
                label => format!("record_function {label}"),
            };
            format!(
                "{what}: {}, {} more than the other ranks' median",
                crate::units::duration(a.ns as f64),
                crate::units::duration(excess as f64)
            )
        }
        _ => "no activity before the collective stands out against the other ranks (the delay may be \
              on another thread or device)"
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acts(v: &[(&str, i64)]) -> Vec<Activity> {
        v.iter()
            .map(|(w, ns)| Activity {
                what: w.to_string(),
                ns: *ns,
            })
            .collect()
    }

    #[test]
    fn cause_is_the_largest_excess() {
        let mine = acts(&[("forward", 10_000_000), ("slow", 40_000_000)]);
        let a = acts(&[("forward", 9_000_000)]);
        let b = acts(&[("forward", 11_000_000), ("slow", 1_000_000)]);
        let c = cause(&mine, &[&a, &b], 41_000_000);
        assert!(c.starts_with("record_function slow: 40.0 ms"), "{c}");
        let small = cause(&mine, &[&a, &b], 1_000_000_000);
        assert!(small.starts_with("no activity"), "{small}");
        let none = cause(&acts(&[("forward", 1)]), &[&acts(&[("forward", 5)])], 1);
        assert!(none.starts_with("no activity"), "{none}");
    }
}
