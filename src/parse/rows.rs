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
//! A zero-length slice counts as 1 ns long, so it nests in what it touches the start of. A lane
//! whose slices all nest is laid out by one pass with a stack (O(n)); otherwise the lookups are a
//! max segment tree over the lane's distinct times (O(n log n)). The slices stay in their
//! (start, longer first) order.

use crate::model::Slices;

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
pub(crate) fn assign_depths(s: &mut Slices) -> (u32, u32) {
    let rows = layout_rows(&s.start_ns, &s.dur_ns, &mut s.depth);
    (rows, count_overlapping(s))
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
    // Where every slice nests in the ones open at its start (most lanes: GPU streams, CPU threads
    // without Python stacks), the rule gives the nesting depth, which one pass with a stack finds.
    if let Some(rows) = nesting_depths(n, span, depth) {
        return rows;
    }
    let mut times: Vec<i64> = Vec::with_capacity(2 * n);
    for i in 0..n {
        let (a, b) = span(i);
        times.push(a);
        times.push(b);
    }
    times.sort_unstable();
    times.dedup();
    let at = |t: i64| times.partition_point(|&x| x < t);
    // Longest first; among equals, the earlier in lane order (start, then file order) is the parent.
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(dur_ns[i as usize]), i));
    let mut tree = MaxTree::new(times.len());
    let mut rows = 0u32;
    for &i in &order {
        let i = i as usize;
        let (a, b) = span(i);
        let (a, b) = (at(a), at(b));
        // Rows are stored plus one, so the row below the deepest overlapping one is the max itself.
        let row = tree.max_of(a, b).min(u16::MAX - 1);
        tree.raise(a, b, row + 1);
        depth[i] = row;
        rows = rows.max(row as u32 + 1);
    }
    rows
}

/// The nesting depths of slices sorted by (start, longer first), or `None` as soon as one slice
/// overlaps an open slice without nesting in it.
fn nesting_depths(n: usize, span: impl Fn(usize) -> (i64, i64), depth: &mut [u16]) -> Option<u32> {
    let mut open: Vec<i64> = Vec::new();
    let mut rows = 0u32;
    for (i, d) in depth.iter_mut().enumerate().take(n) {
        let (a, b) = span(i);
        while open.last().is_some_and(|&e| e <= a) {
            open.pop();
        }
        if open.last().is_some_and(|&e| b > e) {
            return None;
        }
        *d = open.len().min(u16::MAX as usize - 1) as u16;
        rows = rows.max(*d as u32 + 1);
        open.push(b);
    }
    Some(rows)
}

/// Slices that start inside the slice opened just before them and end after it: the overlaps
/// without nesting that the observations report.
fn count_overlapping(s: &Slices) -> u32 {
    let mut open: Vec<i64> = Vec::new();
    let mut overlapping = 0u32;
    for i in 0..s.len() {
        let (start, end) = (s.start_ns[i], s.end_ns(i));
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

    fn lane(spans: &[(i64, i64)]) -> Slices {
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.sort_by_key(|&i| (spans[i].0, std::cmp::Reverse(spans[i].1), i));
        let mut s = Slices::default();
        for i in order {
            s.start_ns.push(spans[i].0);
            s.dur_ns.push(spans[i].1);
            s.depth.push(0);
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

    #[test]
    fn the_segment_tree_agrees_with_the_rule_as_written() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |m: i64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m as u64) as i64
        };
        for case in 0..200 {
            let n = 1 + next(300) as usize;
            let mut iv: Vec<(i64, i64)> = (0..n)
                .map(|_| (next(2000), [0, 1, 5, 50, 400][next(5) as usize] + next(3)))
                .collect();
            iv.sort_by_key(|&(a, d)| (a, std::cmp::Reverse(d)));
            let (start, dur): (Vec<i64>, Vec<i64>) = iv.into_iter().unzip();
            let mut depth = vec![0u16; n];
            let rows = layout_rows(&start, &dur, &mut depth);
            let want = naive(&start, &dur);
            assert_eq!(depth, want, "case {case}");
            assert_eq!(rows, want.iter().map(|&d| d as u32 + 1).max().unwrap());
        }
    }
}
