//! Range aggregation: the slices inside a time range, grouped by name and category (shift-drag on
//! the timeline; over the whole trace it is the "slices by name" table).
//!
//! A slice counts when it intersects the range; `in_range_ns` is the part of its duration inside
//! the range, `total_ns` its whole duration. Nested slices each count (a parent and its child both
//! appear), as in the timeline. Cost: O(slices in the range), found per row by binary search.
//!
//! Because nested and parallel calls of one name each count, `in_range_ns` can exceed the range
//! itself. [`aggregate_range`] (a selection on the timeline) also gives each kept row `covered_ns`:
//! the time inside the range during which at least one of its slices runs (their union over every
//! lane), which never does. The whole-trace table leaves it out: it would sort every slice.

use super::Timeline;
use crate::model::{StrId, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NameRow {
    pub name: String,
    pub category: String,
    pub count: u64,
    pub in_range_ns: i64,
    pub total_ns: i64,
    pub avg_ns: f64,
    pub max_ns: i64,
    /// Time inside the range covered by at least one slice of the row (nested and parallel calls
    /// counted once); only from [`aggregate_range`].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub covered_ns: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RangeTable {
    pub start_ns: i64,
    pub end_ns: i64,
    /// Slices intersecting the range.
    pub slices: u64,
    /// Distinct (name, category) groups; `rows` holds at most the `limit` largest.
    pub groups: usize,
    /// Largest `in_range_ns` first.
    pub rows: Vec<NameRow>,
}

#[derive(Default)]
struct Acc {
    count: u64,
    in_range: i64,
    total: i64,
    max: i64,
}

/// Aggregates `[t0, t1]` over every lane; keeps the `limit` largest groups.
pub fn aggregate(trace: &Trace, tl: &Timeline, t0: i64, t1: i64, limit: usize) -> RangeTable {
    let (t0, t1) = (t0.min(t1), t0.max(t1));
    let mut groups: FxHashMap<(StrId, StrId), Acc> = FxHashMap::default();
    let mut slices = 0;
    for (lane, index) in trace.lanes.iter().zip(&tl.lanes) {
        let s = trace.slices_of(lane);
        for row in &index.rows {
            for k in row.overlapping(&s, t0 as f64, t1 as f64) {
                let i = row.idx[k] as usize;
                let (a, b) = (s.start_ns[i], s.end_ns(i));
                let a_in = a.max(t0);
                let b_in = b.min(t1);
                let acc = groups.entry((s.name[i], s.cat[i])).or_default();
                acc.count += 1;
                acc.in_range += (b_in - a_in).max(0);
                acc.total += s.dur_ns[i];
                acc.max = acc.max.max(s.dur_ns[i]);
                slices += 1;
            }
        }
    }
    let n = groups.len();
    let mut rows: Vec<NameRow> = groups
        .into_iter()
        .map(|((name, cat), a)| NameRow {
            name: trace.str(name).to_string(),
            category: trace.str(cat).to_string(),
            count: a.count,
            in_range_ns: a.in_range,
            total_ns: a.total,
            avg_ns: a.total as f64 / a.count as f64,
            max_ns: a.max,
            covered_ns: None,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.in_range_ns
            .cmp(&a.in_range_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.category.cmp(&b.category))
    });
    rows.truncate(limit);
    RangeTable {
        start_ns: t0,
        end_ns: t1,
        slices,
        groups: n,
        rows,
    }
}

/// [`aggregate`] of a selected range, with each kept row's `covered_ns`.
pub fn aggregate_range(trace: &Trace, tl: &Timeline, t0: i64, t1: i64, limit: usize) -> RangeTable {
    let mut table = aggregate(trace, tl, t0, t1, limit);
    let (t0, t1) = (table.start_ns, table.end_ns);
    let kept: FxHashMap<(&str, &str), usize> = table
        .rows
        .iter()
        .enumerate()
        .map(|(k, r)| ((r.name.as_str(), r.category.as_str()), k))
        .collect();
    // The clipped intervals of each kept row, from every lane and nesting level.
    let mut spans: Vec<Vec<(i64, i64)>> = vec![Vec::new(); table.rows.len()];
    for (lane, index) in trace.lanes.iter().zip(&tl.lanes) {
        let s = trace.slices_of(lane);
        for row in &index.rows {
            for k in row.overlapping(&s, t0 as f64, t1 as f64) {
                let i = row.idx[k] as usize;
                let key = (trace.str(s.name[i]), trace.str(s.cat[i]));
                if let Some(&g) = kept.get(&key) {
                    let (a, b) = (s.start_ns[i].max(t0), s.end_ns(i).min(t1));
                    if b > a {
                        spans[g].push((a, b));
                    }
                }
            }
        }
    }
    drop(kept);
    for (row, mut v) in table.rows.iter_mut().zip(spans) {
        row.covered_ns = Some(union_ns(&mut v));
    }
    table
}

/// Length of the union of intervals.
fn union_ns(v: &mut [(i64, i64)]) -> i64 {
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &(a, b) in v.iter() {
        cur = match cur {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    total + cur.map_or(0, |(a, b)| b - a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    #[test]
    fn clips_to_the_range_and_matches_a_naive_scan() {
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"outer","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":100},
          {"ph":"X","name":"mm","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":20},
          {"ph":"X","name":"mm","cat":"cpu_op","pid":1,"tid":1,"ts":40,"dur":20},
          {"ph":"X","name":"mm","cat":"cpu_op","pid":1,"tid":1,"ts":70,"dur":20},
          {"ph":"X","name":"mm","cat":"kernel","pid":0,"tid":7,"ts":45,"dur":30,"args":{"device":0,"stream":7}}
        ]}"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let tl = Timeline::new(&t);
        let r = aggregate(&t, &tl, 50_000, 80_000, 10);
        let row = |name: &str, cat: &str| {
            r.rows
                .iter()
                .find(|x| x.name == name && x.category == cat)
                .unwrap()
        };
        assert_eq!(r.slices, 4);
        assert_eq!(r.groups, 3);
        assert_eq!(row("outer", "cpu_op").in_range_ns, 30_000);
        let mm = row("mm", "cpu_op");
        assert_eq!(
            (mm.count, mm.in_range_ns, mm.total_ns, mm.max_ns),
            (2, 20_000, 40_000, 20_000)
        );
        assert_eq!(row("mm", "kernel").in_range_ns, 25_000);
        assert_eq!(r.rows[0].name, "outer");
        // The whole trace: every slice once.
        let all = aggregate(&t, &tl, 0, t.span_ns(), 1);
        assert_eq!(all.slices as usize, t.slice_count());
        assert_eq!(all.rows.len(), 1);
        assert_eq!(all.rows[0].covered_ns, None);
    }

    #[test]
    fn covered_time_counts_nested_and_parallel_calls_once() {
        // `f` nests in itself on one thread and runs at the same time on another.
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"f","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":100},
          {"ph":"X","name":"f","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":50},
          {"ph":"X","name":"f","cat":"cpu_op","pid":1,"tid":2,"ts":50,"dur":80},
          {"ph":"X","name":"g","cat":"cpu_op","pid":1,"tid":2,"ts":140,"dur":10}
        ]}"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let tl = Timeline::new(&t);
        let r = aggregate_range(&t, &tl, 20_000, 120_000, 10);
        let f = r.rows.iter().find(|x| x.name == "f").unwrap();
        // Summed: 80 + 40 + 70 us; covered: 20..120 us.
        assert_eq!(f.in_range_ns, 190_000);
        assert_eq!(f.covered_ns, Some(100_000));
        let mut naive = vec![(0, 10), (5, 7), (20, 30), (30, 31), (40, 50), (45, 48)];
        assert_eq!(union_ns(&mut naive), 10 + 11 + 10);
    }
}
