//! Rows of one lane: each slice's `depth`, following what contains what.
//!
//! Rule: a slice is drawn one row below the deepest longer slice it overlaps. Slices are placed
//! longest first; each goes on the row after the deepest row already holding a slice that overlaps
//! it in time. When slices nest properly, the longer slices overlapping one are exactly its
//! ancestors, so its row is its nesting depth. When two overlap without nesting, the longer one is
//! the parent: with `with_stack=True`, a `ProfilerStep#N` or `record_function` range starts inside
//! the short Python frame that enters it (`profiler.py(...): step`, `_record_function_enter_new`)
//! and ends inside another (`__exit__`); those frames are drawn under the range, on the rows of its
//! operators, which they do not overlap. So every step sits on one row with its operators on the
//! rows below, and depth stays bounded by the real nesting instead of growing by one for every
//! range that outlives the frame it started in (which the former stack rule did, cumulatively).
//!
//! Perfetto's JSON importer drops a slice that ends after its parent; here nothing is dropped, and
//! two slices on one row never overlap: a slice lands below every slice it overlaps that was
//! placed before it, and above every one placed after it.
//!
//! A zero-length slice counts as 1 ns long, so it nests in what it touches the start of. One pass
//! finds the *tangled* slices (those overlapping one without nesting, and the slices containing
//! them: with `with_stack=True`, the steps, the frames they cross and the frames around those); they
//! are placed by a max segment tree over their distinct times (O(t log t)), and every other slice
//! by one pass with a stack (O(n)), directly under its innermost container. A lane whose slices all
//! nest has no tangled slice. The slices stay in their (start, longer first) order.

/// Max of the rows (plus one; 0 = none) placed over each elementary time interval: a bottom-up
/// segment tree. Values are only ever raised, so a tag never needs pushing down: a point's value
/// is the max of the tags on its leaf's path to the root.
struct MaxTree {
    cap: usize,
    /// Max over the node's whole subtree, tags included.
    max: Vec<u16>,
    /// Raised for the node's whole range.
    tag: Vec<u16>,
}

impl MaxTree {
    fn new(n: usize) -> MaxTree {
        let cap = n.next_power_of_two().max(2);
        MaxTree {
            cap,
            max: vec![0; 2 * cap],
            tag: vec![0; 2 * cap],
        }
    }

    /// Raises `[a, b)` (non-empty) to at least `v`.
    fn raise(&mut self, a: usize, b: usize, v: u16) {
        let (mut l, mut r) = (a + self.cap, b + self.cap);
        while l < r {
            if l & 1 == 1 {
                self.tag[l] = self.tag[l].max(v);
                self.max[l] = self.max[l].max(v);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.tag[r] = self.tag[r].max(v);
                self.max[r] = self.max[r].max(v);
            }
            l >>= 1;
            r >>= 1;
        }
        // The nodes raised are children of the paths from the two boundary leaves to the root.
        for leaf in [a + self.cap, b - 1 + self.cap] {
            let mut k = leaf >> 1;
            while k >= 1 {
                self.max[k] = self.max[k].max(self.max[2 * k]).max(self.max[2 * k + 1]);
                k >>= 1;
            }
        }
    }

    /// The max over `[a, b)` (non-empty).
    fn max_of(&self, a: usize, b: usize) -> u16 {
        let mut m = 0;
        // Tags of the nodes above the range's pieces.
        for leaf in [a + self.cap, b - 1 + self.cap] {
            let mut k = leaf >> 1;
            while k >= 1 {
                m = m.max(self.tag[k]);
                k >>= 1;
            }
        }
        let (mut l, mut r) = (a + self.cap, b + self.cap);
        while l < r {
            if l & 1 == 1 {
                m = m.max(self.max[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                m = m.max(self.max[r]);
            }
            l >>= 1;
            r >>= 1;
        }
        m
    }
}

/// Gives every slice of a sorted lane its row (see the module docs). Returns (rows, slices that
/// overlap the slice opened just before them without fitting inside it).
#[cfg(test)]
pub(crate) fn assign_depths(s: &mut crate::model::SliceColumns) -> (u32, u32) {
    assign_rows(&s.start_ns, &s.dur_ns, &mut s.depth)
}

/// [`assign_depths`] on a lane's columns: the finish writes the rows while the flows read the
/// starts and durations.
pub(crate) fn assign_rows(start_ns: &[i64], dur_ns: &[i64], depth: &mut [u16]) -> (u32, u32) {
    let rows = layout_rows(start_ns, dur_ns, depth);
    (rows, count_overlapping(start_ns, dur_ns))
}

/// The rule of the module docs on bare columns (the view re-lays a lane without its Python frames
/// with it): writes each slice's row to `depth`, returns the number of rows.
pub fn layout_rows(start_ns: &[i64], dur_ns: &[i64], depth: &mut [u16]) -> u32 {
    let n = start_ns.len();
    // Half-open spans, a zero-length slice as 1 ns.
    let span = |i: usize| {
        let a = start_ns[i];
        (a, (a + dur_ns[i]).max(a.saturating_add(1)))
    };
    let tangled = tangled(n, span);
    let mut rows = 0u32;
    let placed =
        (!tangled.is_empty()).then(|| place_tangled(dur_ns, span, &tangled, depth, &mut rows));
    // The nested slices, by one pass with a stack of the nested slices open (they contain one
    // another, so the innermost is on top).
    let mut open: Vec<(i64, u16)> = Vec::new();
    let mut next_time = 0;
    for (i, d) in depth.iter_mut().enumerate().take(n) {
        if tangled.get(i) == Some(&true) {
            continue;
        }
        let (a, b) = span(i);
        while open.last().is_some_and(|&(e, _)| e <= a) {
            open.pop();
        }
        let row = match (open.last(), &placed) {
            (Some(&(_, r)), _) => r.saturating_add(1).min(u16::MAX - 1),
            // Outermost nested slice: below the tangled slices containing it, the only ones placed
            // before it that overlap it. They all cover its start, so a point query finds them.
            (None, Some((times, tree))) => {
                while next_time < times.len() && times[next_time] <= a {
                    next_time += 1;
                }
                if next_time == 0 {
                    0
                } else {
                    tree.max_of(next_time - 1, next_time).min(u16::MAX - 1)
                }
            }
            (None, None) => 0,
        };
        *d = row;
        rows = rows.max(row as u32 + 1);
        open.push((b, row));
    }
    rows
}

/// Which slices are *tangled*: they overlap a slice without nesting in it or around it, or contain
/// one that does. Empty when none is (every slice nests). Where nothing tangled overlaps it, the
/// rule gives a slice the row below its innermost container, so only tangled slices need the
/// segment tree; the others are laid out by a stack (`layout_rows`). Why that is exact: a slice
/// that overlaps a nested one either contains it (then it is placed first) or is contained in it
/// (then it is nested too), so nested slices never raise a tangled one, and the tangled slices
/// overlapping a nested one all contain it.
///
/// One pass in lane order over the open slices, kept sorted by end (the latest at the bottom): the
/// slices a new one crosses are those above where it goes, and everything open then is tangled, as
/// it contains the new slice or crosses it. A tangled slice has only tangled ones below it, so
/// marking stops at the first already marked. A lane where slices cross many open ones at once
/// (more than a few per slice in all) is marked tangled whole: the segment tree bounds the time.
fn tangled(n: usize, span: impl Fn(usize) -> (i64, i64)) -> Vec<bool> {
    let mut open: Vec<(i64, u32)> = Vec::new();
    let mut tangled: Vec<bool> = Vec::new();
    let mut budget = 4 * n + 1024;
    for i in 0..n {
        let (a, b) = span(i);
        while open.last().is_some_and(|&(e, _)| e <= a) {
            open.pop();
        }
        // Slices with the same start come longer first, so the ones ending before this one began
        // earlier and end inside it.
        let at = open.len() - open.iter().rev().take_while(|&&(e, _)| e < b).count();
        if at == open.len() {
            open.push((b, i as u32));
            continue;
        }
        budget = match budget.checked_sub(open.len() - at) {
            Some(left) => left,
            None => return vec![true; n],
        };
        if tangled.is_empty() {
            tangled = vec![false; n];
        }
        open.insert(at, (b, i as u32));
        tangled[i] = true;
        for &(_, j) in open.iter().rev() {
            if std::mem::replace(&mut tangled[j as usize], true) && (j as usize) != i {
                break;
            }
        }
    }
    tangled
}

/// The rule for the tangled slices alone, longest first over a max segment tree of their distinct
/// times; writes their rows and raises `rows`. Returns the times and the tree, for the nested
/// slices directly under tangled ones.
fn place_tangled(
    dur_ns: &[i64],
    span: impl Fn(usize) -> (i64, i64),
    tangled: &[bool],
    depth: &mut [u16],
    rows: &mut u32,
) -> (Vec<i64>, MaxTree) {
    let members: Vec<u32> = (0..tangled.len() as u32)
        .filter(|&i| tangled[i as usize])
        .collect();
    let m = members.len();
    // Each member's start and end as an index into the distinct times: the starts come sorted (lane
    // order), the ends are sorted once, and one merge gives both their ranks, instead of a binary
    // search per end point (which dominated the time on large lanes).
    let mut ends: Vec<(i64, u32)> = members
        .iter()
        .enumerate()
        .map(|(k, &i)| (span(i as usize).1, k as u32))
        .collect();
    ends.sort_unstable();
    let mut times: Vec<i64> = Vec::with_capacity(2 * m);
    let (mut first, mut last) = (vec![0u32; m], vec![0u32; m]);
    let (mut s, mut e) = (0, 0);
    while s < m || e < m {
        let start = (s < m).then(|| span(members[s] as usize).0);
        let t = match start {
            Some(a) if e == m || a <= ends[e].0 => a,
            _ => ends[e].0,
        };
        if times.last() != Some(&t) {
            times.push(t);
        }
        let rank = (times.len() - 1) as u32;
        if start == Some(t) {
            first[s] = rank;
            s += 1;
        } else {
            last[ends[e].1 as usize] = rank;
            e += 1;
        }
    }
    // Longest first; among equals, the earlier in lane order (start, then file order) is the parent.
    let mut order: Vec<u32> = (0..m as u32).collect();
    order.sort_unstable_by_key(|&k| (std::cmp::Reverse(dur_ns[members[k as usize] as usize]), k));
    let mut tree = MaxTree::new(times.len());
    for &k in &order {
        let (a, b) = (first[k as usize] as usize, last[k as usize] as usize);
        // Rows are stored plus one, so the row below the deepest overlapping one is the max itself.
        let row = tree.max_of(a, b).min(u16::MAX - 1);
        tree.raise(a, b, row + 1);
        depth[members[k as usize] as usize] = row;
        *rows = (*rows).max(row as u32 + 1);
    }
    (times, tree)
}

/// Slices that start inside the slice opened just before them and end after it: the overlaps
/// without nesting that the observations report.
fn count_overlapping(start_ns: &[i64], dur_ns: &[i64]) -> u32 {
    let mut open: Vec<i64> = Vec::new();
    let mut overlapping = 0u32;
    for (&start, &dur) in start_ns.iter().zip(dur_ns) {
        let end = start + dur;
        while open.last().is_some_and(|&e| e <= start) {
            open.pop();
        }
        if open.last().is_some_and(|&e| end > e) {
            overlapping += 1;
        }
        open.push(end);
    }
    overlapping
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SliceColumns;

    fn lane(spans: &[(i64, i64)]) -> SliceColumns {
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.sort_by_key(|&i| (spans[i].0, std::cmp::Reverse(spans[i].1), i));
        let mut s = SliceColumns::default();
        for i in order {
            s.push_span(spans[i].0, spans[i].1);
        }
        s
    }

    /// What `with_stack=True` writes around `prof.step()`: under a loop frame, a `step` frame with
    /// two frames inside; each `ProfilerStep#N` starts in the innermost frame of one `step` call
    /// and ends in the next, and holds an operator with a child. The former stack rule put each
    /// step three rows below the one before.
    #[test]
    fn steps_that_outlive_their_frames_stay_on_one_row() {
        let mut spans = vec![(0, 10_000)];
        for k in 0..20 {
            let t = 100 + k * 400;
            spans.extend([(t, 30), (t + 5, 20), (t + 10, 10)]); // step -> enter -> record_function
            spans.push((t + 15, 400)); // ProfilerStep#k: ends inside the next step frame
            spans.extend([(t + 100, 200), (t + 120, 50)]); // an operator and its child
        }
        let mut s = lane(&spans);
        let (rows, overlapping) = assign_depths(&mut s);
        assert_eq!(
            rows, 5,
            "loop, step, its two frames under it, and the innermost"
        );
        assert!(overlapping >= 20);
        let depth_of = |start: i64, dur: i64| {
            (0..s.len())
                .find(|&i| s.start_ns[i] == start && s.dur_ns[i] == dur)
                .map(|i| s.depth[i])
                .unwrap()
        };
        for k in 0..20 {
            let t = 100 + k * 400;
            assert_eq!(depth_of(t + 15, 400), 1, "step {k}");
            assert_eq!(depth_of(t + 100, 200), 2, "operator of step {k}");
            assert_eq!(depth_of(t + 120, 50), 3, "its child");
        }
    }

    #[test]
    fn zero_length_slices_nest_in_what_they_touch() {
        let mut s = lane(&[(0, 10), (0, 0), (0, 0), (10, 0)]);
        assert_eq!(assign_depths(&mut s).0, 3);
        assert_eq!(s.depth, vec![0, 1, 2, 0]);
    }
}
#[cfg(test)]
mod oracle {
    use super::*;

    /// The rule as written, O(n^2): longest first, one row below the deepest overlapping one.
    fn naive(start: &[i64], dur: &[i64]) -> Vec<u16> {
        let n = start.len();
        let span = |i: usize| (start[i], (start[i] + dur[i]).max(start[i] + 1));
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(dur[i]), i));
        let mut depth = vec![0u16; n];
        let mut placed: Vec<usize> = Vec::new();
        for i in order {
            let (a, b) = span(i);
            depth[i] = placed
                .iter()
                .filter(|&&j| {
                    let (c, d) = span(j);
                    a < d && c < b
                })
                .map(|&j| depth[j] + 1)
                .max()
                .unwrap_or(0);
            placed.push(i);
        }
        depth
    }

    /// A little xorshift generator: `next(m)` is in `0..m`.
    fn rng(mut x: u64) -> impl FnMut(i64) -> i64 {
        move |m: i64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m as u64) as i64
        }
    }

    fn check(case: &str, mut iv: Vec<(i64, i64)>) {
        iv.sort_by_key(|&(a, d)| (a, std::cmp::Reverse(d)));
        let (start, dur): (Vec<i64>, Vec<i64>) = iv.into_iter().unzip();
        let mut depth = vec![0u16; start.len()];
        let rows = layout_rows(&start, &dur, &mut depth);
        let want = naive(&start, &dur);
        assert_eq!(depth, want, "{case}");
        assert_eq!(
            rows,
            want.iter().map(|&d| d as u32 + 1).max().unwrap_or(0),
            "{case}"
        );
    }

    /// Random intervals: mostly tangled lanes.
    #[test]
    fn the_layout_agrees_with_the_rule_as_written() {
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..200 {
            let n = 1 + next(300) as usize;
            let iv = (0..n)
                .map(|_| (next(2000), [0, 1, 5, 50, 400][next(5) as usize] + next(3)))
                .collect();
            check(&format!("case {case}"), iv);
        }
    }

    /// Properly nested stacks (zero-length slices and shared ends included) with a few long slices
    /// thrown across them, as `with_stack=True` writes: the nested slices are laid out by the stack
    /// pass, under and beside the tangled ones.
    #[test]
    fn nested_lanes_with_a_few_crossings_agree_with_the_rule() {
        let mut next = rng(0x2545_f491_4f6c_dd1d);
        for case in 0..200 {
            let mut iv = Vec::new();
            let (mut t, mut open) = (0i64, Vec::new());
            for _ in 0..1 + next(400) {
                t += next(4);
                if open.is_empty() || next(2) == 0 {
                    open.push(t);
                } else {
                    let a = open.pop().unwrap();
                    iv.push((a, t - a));
                }
            }
            while let Some(a) = open.pop() {
                iv.push((a, t - a));
            }
            for _ in 0..next(4) {
                iv.push((next(t + 1), 1 + next(t / 2 + 1)));
            }
            check(&format!("case {case}"), iv);
        }
    }

    /// A staircase where every slice crosses all the open ones: past the crossing budget the whole
    /// lane goes to the segment tree.
    #[test]
    fn a_staircase_past_the_budget_agrees_with_the_rule() {
        let iv: Vec<(i64, i64)> = (0..3000).map(|k| (k, 1000)).collect();
        check("staircase", iv);
    }
}
