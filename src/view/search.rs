//! Search by name: which names match, how many slices carry them, and stepping through the matches
//! in time order.
//!
//! Matching is on interned names, so a query costs one pass over the distinct strings and one over
//! the name columns (to count); nothing per match is stored. Next/previous walk the lanes from the
//! current match in `(start, lane, index)` order, which is a total order, so stepping visits every
//! match exactly once in each direction.

use crate::model::{SliceRef, StrId, Trace};
use crate::ordered::partition;

#[derive(Debug, Clone)]
pub struct Search {
    pub query: String,
    /// Per interned string: does it match?
    names: Vec<bool>,
    /// Number of slices whose name matches.
    pub count: usize,
    /// The match last stepped to.
    pub current: Option<SliceRef>,
}

impl Search {
    /// Case-insensitive substring search; an empty query matches nothing.
    pub fn substring(trace: &Trace, query: &str) -> Search {
        let q = query.to_lowercase();
        Self::build(trace, query, |s| {
            !q.is_empty() && (s.contains(&q) || s.to_lowercase().contains(&q))
        })
    }

    /// Slices named exactly `name` (a table row clicked).
    pub fn exact(trace: &Trace, name: &str) -> Search {
        Self::build(trace, name, |s| s == name)
    }

    fn build(trace: &Trace, query: &str, pred: impl Fn(&str) -> bool) -> Search {
        let names: Vec<bool> = (0..trace.strings.len() as u32)
            .map(|i| i != 0 && pred(trace.str(StrId(i))))
            .collect();
        let count = trace
            .lanes
            .iter()
            .flat_map(|l| trace.slices_of(l).name.iter())
            .filter(|n| names.get(n.0 as usize).copied().unwrap_or(false))
            .count();
        Search {
            query: query.to_string(),
            names,
            count,
            current: None,
        }
    }

    pub fn is_match(&self, name: StrId) -> bool {
        self.names.get(name.0 as usize).copied().unwrap_or(false)
    }

    /// Moves to the next (or previous) match after the current one, or after time `from_ns` when
    /// there is none yet; wraps around at the ends.
    pub fn step(&mut self, trace: &Trace, from_ns: f64, forward: bool) -> Option<SliceRef> {
        if self.count == 0 {
            return None;
        }
        let key = match self.current {
            Some(r) => Key::of(trace, r),
            None if forward => Key::before(from_ns),
            None => Key::after(from_ns),
        };
        let found = self
            .neighbour(trace, key, forward)
            .or_else(|| self.neighbour(trace, Key::edge(forward), forward));
        self.current = found;
        found
    }

    /// The nearest match strictly after (or before) `key`.
    fn neighbour(&self, trace: &Trace, key: Key, forward: bool) -> Option<SliceRef> {
        let mut best: Option<(Key, SliceRef)> = None;
        for (l, lane) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(lane);
            let key_of = |i: usize| Key {
                start: s.start_ns[i],
                lane: l as u32,
                index: i as i64,
            };
            // Keys grow with the index inside a lane, so the order is one binary search away.
            let hit = if forward {
                let from = partition(0, s.len(), |i| key_of(i) <= key);
                (from..s.len()).find(|&i| self.is_match(s.name[i]))
            } else {
                let to = partition(0, s.len(), |i| key_of(i) < key);
                (0..to).rev().find(|&i| self.is_match(s.name[i]))
            };
            if let Some(i) = hit {
                let k = key_of(i);
                if best.is_none_or(|(b, _)| (k < b) == forward) {
                    best = Some((
                        k,
                        SliceRef {
                            lane: l as u32,
                            index: i as u32,
                        },
                    ));
                }
            }
        }
        best.map(|(_, r)| r)
    }
}

/// A position in the total order of slices: start, then lane, then index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    start: i64,
    lane: u32,
    index: i64,
}

impl Key {
    fn of(trace: &Trace, r: SliceRef) -> Key {
        Key {
            start: trace.columns.start_ns[trace.row(r)],
            lane: r.lane,
            index: r.index as i64,
        }
    }

    /// Just before every slice starting at or after `t`.
    fn before(t: f64) -> Key {
        Key {
            start: t.ceil() as i64,
            lane: 0,
            index: -1,
        }
    }

    /// Just after every slice starting at or before `t`.
    fn after(t: f64) -> Key {
        Key {
            start: t.floor() as i64,
            lane: u32::MAX,
            index: i64::MAX,
        }
    }

    /// Before the first slice (forward) or after the last one (backward).
    fn edge(forward: bool) -> Key {
        if forward {
            Key::before(i64::MIN as f64)
        } else {
            Key::after(i64::MAX as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    fn trace() -> Trace {
        let mut ev = Vec::new();
        for i in 0..40 {
            let (tid, name) = (i % 3, ["aten::mm", "aten::add", "Mm_kernel"][i % 3]);
            ev.push(format!(
                r#"{{"ph":"X","name":"{name}","cat":"cpu_op","pid":1,"tid":{tid},"ts":{},"dur":1}}"#,
                (i / 2) * 2
            ));
        }
        parse_bytes(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
    }

    /// The oracle: every match, sorted by (start, lane, index).
    fn all(trace: &Trace, s: &Search) -> Vec<SliceRef> {
        let mut v: Vec<(i64, SliceRef)> = Vec::new();
        for (l, lane) in trace.lanes.iter().enumerate() {
            for i in 0..lane.slice_count() {
                if s.is_match(trace.slices_of(lane).name[i]) {
                    v.push((
                        trace.slices_of(lane).start_ns[i],
                        SliceRef {
                            lane: l as u32,
                            index: i as u32,
                        },
                    ));
                }
            }
        }
        v.sort();
        v.into_iter().map(|(_, r)| r).collect()
    }

    #[test]
    fn steps_visit_every_match_in_order_both_ways() {
        let t = trace();
        let mut s = Search::substring(&t, "MM");
        let want = all(&t, &s);
        assert_eq!(s.count, want.len());
        assert!(want.len() > 10);
        let fwd: Vec<_> = (0..want.len())
            .map(|_| s.step(&t, 0.0, true).unwrap())
            .collect();
        assert_eq!(fwd, want);
        // Wraps around.
        assert_eq!(s.step(&t, 0.0, true), Some(want[0]));
        s.current = None;
        let back: Vec<_> = (0..want.len())
            .map(|_| s.step(&t, 1e12, false).unwrap())
            .collect();
        assert_eq!(back, want.iter().rev().copied().collect::<Vec<_>>());
    }

    #[test]
    fn starts_from_a_time_and_matches_exactly_or_nothing() {
        let t = trace();
        let mut s = Search::exact(&t, "aten::add");
        let want = all(&t, &s);
        let got = s.step(&t, 20_000.0, true).unwrap();
        assert_eq!(
            got,
            *want
                .iter()
                .find(|r| t.columns.start_ns[t.row(**r)] >= 20_000)
                .unwrap()
        );
        assert!(want.iter().all(|r| t.slice_name(*r) == "aten::add"));
        let mut none = Search::substring(&t, "");
        assert_eq!(none.count, 0);
        assert_eq!(none.step(&t, 0.0, true), None);
    }
}
