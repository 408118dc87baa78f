//! A critical path drawn on the timeline: which slices a frame shows as on the path (the rest is
//! dimmed) and the arrows where the path goes from one lane to another.
//!
//! The path comes as its slices and its lane changes ([`Hop`]); what a frame asks is answered by
//! lookup, so its cost follows the items drawn, not the path's length: a slice drawn alone by a
//! hash lookup, a density mark (merged sub-pixel slices) by a binary search over the path's slices
//! of its row, and the arrows by a binary search for the window's time. Rows follow the timeline's
//! row mode: [`PathView::relayout`] after the mode changes.

use super::rows::HIDDEN;
use super::Timeline;
use crate::analysis::critical::StepPath;
use crate::analysis::links::Links;
use crate::model::{SliceRef, Trace};
use rustc_hash::{FxHashMap, FxHashSet};

/// Where the path leaves one lane for another: from `from` at `from_ns` to `to` at `to_ns`
/// (ns from the trace start, `from_ns <= to_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub from: SliceRef,
    pub from_ns: i64,
    pub to: SliceRef,
    pub to_ns: i64,
}

/// The slices of the steps' paths (each once) and their lane changes. A hop leaves a lane at the
/// end of the last segment there and arrives where the next segment's slice is: at the start of a
/// device op for the wait before it (a launch or the stream's queue), else where the segment
/// starts. A hop to a launched op leaves from its launch call when the call is on the lane left.
pub fn slices_and_hops(paths: &[StepPath], links: &Links) -> (Vec<SliceRef>, Vec<Hop>) {
    let ns = |us: f64| (us * 1e3).round() as i64;
    let mut slices = Vec::new();
    let mut hops = Vec::new();
    for p in paths {
        let mut last: Option<(SliceRef, f64)> = None;
        for s in &p.segments {
            let Some(r) = s.slice else { continue };
            slices.push(r);
            if let Some((q, left_us)) = last.filter(|(q, _)| q.lane != r.lane) {
                let from = match s.kind {
                    "launch" => links.launch(r).filter(|l| l.lane == q.lane).unwrap_or(q),
                    _ => q,
                };
                let arrive_us = match s.kind {
                    "launch" | "stream" => s.end_us,
                    _ => s.start_us,
                };
                hops.push(Hop {
                    from,
                    from_ns: ns(left_us),
                    to: r,
                    to_ns: ns(arrive_us.max(left_us)),
                });
            }
            last = Some((r, s.end_us));
        }
    }
    slices.sort_unstable();
    slices.dedup();
    (slices, hops)
}

#[derive(Debug, Default)]
pub struct PathView {
    slices: FxHashSet<SliceRef>,
    /// Per lane and drawn row, the path's slices as `(start_ns, end_ns)`, sorted by start.
    rows: FxHashMap<(u32, u16), Vec<(i64, i64)>>,
    /// Sorted by `from_ns`.
    hops: Vec<Hop>,
    /// The longest hop, so that a window's search can start early enough.
    longest_hop_ns: i64,
}

impl PathView {
    pub fn new(trace: &Trace, tl: &Timeline, slices: &[SliceRef], mut hops: Vec<Hop>) -> Self {
        hops.sort_by_key(|h| (h.from_ns, h.to_ns));
        let mut view = PathView {
            slices: slices.iter().copied().collect(),
            rows: FxHashMap::default(),
            longest_hop_ns: hops.iter().map(|h| h.to_ns - h.from_ns).max().unwrap_or(0),
            hops,
        };
        view.relayout(trace, tl);
        view
    }

    /// Files the slices under their rows in the timeline's current row mode.
    pub fn relayout(&mut self, trace: &Trace, tl: &Timeline) {
        self.rows.clear();
        for &r in &self.slices {
            let row = tl.row_of(trace, r);
            if row == HIDDEN {
                continue;
            }
            let s = trace.slices(r.lane as usize);
            let i = r.index as usize;
            self.rows
                .entry((r.lane, row))
                .or_default()
                .push((s.start_ns[i], s.end_ns(i)));
        }
        for v in self.rows.values_mut() {
            v.sort_unstable();
        }
    }

    pub fn contains(&self, r: SliceRef) -> bool {
        self.slices.contains(&r)
    }

    /// Whether a slice of the path on `lane`'s row `row` overlaps `[t0, t1]` (a density mark's
    /// columns). The slices of one row do not overlap, so only the last one starting before `t0`
    /// can reach into the window from the left.
    pub fn in_row(&self, lane: u32, row: u16, t0: f64, t1: f64) -> bool {
        let Some(v) = self.rows.get(&(lane, row)) else {
            return false;
        };
        let a = v.partition_point(|s| (s.0 as f64) < t0);
        let b = v.partition_point(|s| (s.0 as f64) <= t1);
        a < b || (a > 0 && v[a - 1].1 as f64 > t0)
    }

    /// The hops with a part in `[t0, t1]`.
    pub fn hops_in(&self, t0: f64, t1: f64) -> impl Iterator<Item = &Hop> {
        let from = t0 - self.longest_hop_ns as f64;
        let k = self.hops.partition_point(|h| (h.from_ns as f64) < from);
        self.hops[k..]
            .iter()
            .take_while(move |h| h.from_ns as f64 <= t1)
            .filter(move |h| h.to_ns as f64 >= t0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    fn trace() -> Trace {
        let ev = [
            r#"{"ph":"X","name":"outer","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":100}"#,
            r#"{"ph":"X","name":"a","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":10}"#,
            r#"{"ph":"X","name":"b","cat":"cpu_op","pid":1,"tid":1,"ts":40,"dur":10}"#,
            r#"{"ph":"X","name":"c","cat":"cpu_op","pid":1,"tid":1,"ts":70,"dur":10}"#,
        ];
        parse_bytes(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
    }

    fn at(t: &Trace, name: &str) -> SliceRef {
        let s = t.slices(0);
        let i = (0..s.len()).find(|&i| t.str(s.name[i]) == name).unwrap();
        SliceRef {
            lane: 0,
            index: i as u32,
        }
    }

    #[test]
    fn slices_and_marks_are_found_by_row_and_time() {
        let t = trace();
        let tl = Timeline::new(&t);
        let p = PathView::new(&t, &tl, &[at(&t, "a"), at(&t, "c")], Vec::new());
        assert!(p.contains(at(&t, "a")) && !p.contains(at(&t, "b")));
        assert!(!p.contains(at(&t, "outer")));
        let row = tl.row_of(&t, at(&t, "a"));
        // Marks over a (10..20 us), over c's end only, between them, over b.
        assert!(p.in_row(0, row, 5_000.0, 12_000.0));
        assert!(p.in_row(0, row, 79_000.0, 90_000.0));
        assert!(!p.in_row(0, row, 25_000.0, 35_000.0));
        assert!(!p.in_row(0, row, 40_000.0, 50_000.0));
        assert!(p.in_row(0, row, 0.0, 100_000.0));
        // Not on another row.
        assert!(!p.in_row(0, tl.row_of(&t, at(&t, "outer")), 0.0, 100_000.0));
    }

    #[test]
    fn hops_in_a_window_include_those_that_cross_it() {
        let t = trace();
        let tl = Timeline::new(&t);
        let (a, c) = (at(&t, "a"), at(&t, "c"));
        let hop = |from_ns, to_ns| Hop {
            from: a,
            from_ns,
            to: c,
            to_ns,
        };
        let p = PathView::new(&t, &tl, &[], vec![hop(50, 60), hop(0, 1_000), hop(10, 20)]);
        let got = |t0, t1| -> Vec<(i64, i64)> {
            p.hops_in(t0, t1).map(|h| (h.from_ns, h.to_ns)).collect()
        };
        assert_eq!(got(15.0, 55.0), vec![(0, 1_000), (10, 20), (50, 60)]);
        assert_eq!(got(500.0, 600.0), vec![(0, 1_000)]);
        assert_eq!(got(2_000.0, 3_000.0), vec![]);
    }
}
