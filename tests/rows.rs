//! Rows follow what contains what: on every real trace, a lane needs about as many rows as its
//! deepest chain of containing slices (see `src/parse/rows.rs`), checked against an independent
//! O(n log n) count.

use crate::common;

use sightline::model::{Lane, SliceColumns, Slices, Trace};
use sightline::parse::parse_bytes;

/// Extra rows allowed above the containment depth: a short frame that a range outlives is drawn
/// under the range, one row deeper than its nesting alone would put it.
const SLACK: u32 = 2;

/// The naive oracle, O(n log n): 1 + the largest number of slices containing one slice (open at its
/// start and ending no earlier), counted with a Fenwick tree over the ends in (start, longer first)
/// order.
fn containment_depth(s: &Slices) -> u32 {
    let n = s.len();
    if n == 0 {
        return 0;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (s.start_ns[i], std::cmp::Reverse(s.dur_ns[i]), i));
    let mut ends: Vec<i64> = (0..n).map(|i| s.end_ns(i)).collect();
    ends.sort_unstable();
    ends.dedup();
    let mut fen = vec![0u32; ends.len() + 1];
    let (mut seen, mut best) = (0u32, 0u32);
    for &i in &order {
        // Earlier slices ending before `need` do not contain this one.
        let need = s.end_ns(i).max(s.start_ns[i] + 1);
        let k = ends.partition_point(|&e| e < need);
        let mut below = 0;
        let mut j = k;
        while j > 0 {
            below += fen[j];
            j &= j - 1;
        }
        best = best.max(seen - below);
        let mut j = ends.partition_point(|&e| e < s.end_ns(i)) + 1;
        while j < fen.len() {
            fen[j] += 1;
            j += j & j.wrapping_neg();
        }
        seen += 1;
    }
    best + 1
}

fn load(path: &std::path::Path) -> Trace {
    parse_bytes(&std::fs::read(path).unwrap()).unwrap()
}

/// On every real trace: each lane needs at least its containment depth in rows (slices containing
/// one another cannot share a row) and at most [`SLACK`] more; every `ProfilerStep#N` of a lane sits
/// on one row, and so does the first operator of each step. One test, so each file is parsed once.
#[test]
fn rows_follow_containment_and_steps_are_laid_out_alike() {
    for path in common::all_shared_traces() {
        check_rows(&path.display().to_string(), &load(&path));
    }
}

/// Each lane of `t` needs at least its containment depth in rows and at most [`SLACK`] more; on a
/// CPU lane every `ProfilerStep#N` sits on one row, and so does the first operator of each step.
fn check_rows(label: &str, t: &Trace) {
    for (l, lane) in t.lanes.iter().enumerate() {
        let oracle = containment_depth(&t.slices_of(lane));
        assert!(
            lane.rows >= oracle && lane.rows <= oracle + SLACK,
            "{label}: lane {l} has {} rows for a containment depth of {oracle}",
            lane.rows
        );
        if lane.is_gpu() {
            continue;
        }
        let s = t.slices_of(lane);
        let rows: Vec<(u16, Option<u16>)> = (0..s.len())
            .filter(|&i| t.str(s.name[i]).starts_with("ProfilerStep#"))
            .map(|i| (s.depth[i], first_operator_row(t, lane, i)))
            .collect();
        assert!(
            rows.windows(2).all(|w| w[0] == w[1]),
            "{label}: steps on rows (step, first operator) {rows:?}"
        );
    }
}

/// `tests/fixtures/rows/with_stack_steps.json` (made by `make.py` there): each step starts inside
/// the `prof.step()` frame that began inside the step before it. Placing every overlapping slice one
/// row deeper put each step deeper than the one before; by containment all four steps sit on the
/// row under the three frames that span the loop, and their operators two and three rows lower.
#[test]
fn steps_started_inside_a_frame_stay_on_one_row() {
    let path = common::local_fixture("rows/with_stack_steps.json");
    let t = load(&path);
    check_rows("with_stack_steps.json", &t);
    let lane = &t.lanes[0];
    let s = t.slices_of(lane);
    let row_of = |name: &str| -> Vec<u16> {
        (0..s.len())
            .filter(|&i| t.str(s.name[i]) == name)
            .map(|i| s.depth[i])
            .collect()
    };
    let steps: Vec<u16> = (0..s.len())
        .filter(|&i| t.str(s.name[i]).starts_with("ProfilerStep#"))
        .map(|i| s.depth[i])
        .collect();
    assert_eq!(steps, vec![3; 4]);
    assert_eq!(row_of("aten::linear"), vec![5; 4]);
    assert_eq!(row_of("aten::addmm"), vec![6; 4]);
    // Containment: exec > <module> > train > step > forward > linear > addmm.
    assert_eq!(containment_depth(&s), 7);
    assert!(lane.rows <= 7 + SLACK, "{} rows", lane.rows);
}

/// The row of the first operator (`cpu_op`) inside slice `i`.
fn first_operator_row(t: &Trace, lane: &Lane, i: usize) -> Option<u16> {
    let s = t.slices_of(lane);
    (i + 1..s.len())
        .take_while(|&j| s.start_ns[j] < s.end_ns(i))
        .find(|&j| t.str(s.cat[j]) == "cpu_op" && s.end_ns(j) <= s.end_ns(i))
        .map(|j| s.depth[j])
}

#[test]
fn the_oracle_counts_containment() {
    let mut s = SliceColumns::default();
    for (start, dur) in [(0, 100), (10, 50), (20, 5), (55, 30), (60, 10), (70, 0)] {
        s.push_span(start, dur);
    }
    // (55, 30) overlaps (10, 50) without nesting: inside (0, 100) only; (60, 10) inside both.
    assert_eq!(containment_depth(&s.all()), 3);
}
