//! Level of detail: what to draw of one row of a lane so that a frame costs pixels, not events.
//!
//! Each lane's slices are split by row (`depth`) into a [`RowIndex`]: slice indices in start order
//! plus a prefix sum of durations. Slices on one row never overlap (a model invariant), so both
//! starts and ends increase along a row, and the slices crossing any time window are one contiguous
//! run found by binary search.
//!
//! [`summarize_row`] walks the visible run. A slice at least `min_px` wide becomes a [`Item::Slice`].
//! Narrower slices are merged: all slices starting in the same pixel column are jumped over with one
//! exponential search, counted, and their busy time read off the prefix sums; adjacent columns
//! coalesce into one [`Item::Mark`] (a density mark) that covers exactly the whole pixel columns its
//! slices touch (Perfetto and speedscope draw merged runs the same way): a column holding work is
//! never left empty, and a column between two runs that holds nothing is never painted. So a row yields at most about two items per
//! pixel column and costs O(columns * log(slices)), whatever the number of slices.
//!
//! If the no-overlap invariant were broken the output would still cover every slice, only with
//! marks that are less tight; nothing panics.

use super::rows::{LaneRows, HIDDEN};
use crate::model::Slices;
use crate::ordered::{gallop, partition};
use rustc_hash::FxHashMap;

/// The slices of one row of a lane, in start order, with cumulative durations.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RowIndex {
    /// Indices into the lane's [`Slices`].
    pub idx: Vec<u32>,
    /// `busy[k]` = sum of the durations of `idx[..k]` (so one longer than `idx`).
    busy: Vec<i64>,
}

/// The rows of one lane.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LaneIndex {
    pub rows: Vec<RowIndex>,
}

impl LaneIndex {
    /// The index of a lane drawn with the model's rows.
    pub fn new(s: Slices<'_>) -> LaneIndex {
        LaneIndex::with_rows(s, &LaneRows::default())
    }

    /// The index of a lane drawn with `drawn` rows (slices not drawn are left out).
    pub fn with_rows(s: Slices<'_>, drawn: &LaneRows) -> LaneIndex {
        let row = |i: usize| drawn.of(s, i);
        // Each row's length first, so that its columns are made their size at once: grown by
        // doubling, they held up to twice that with the old blocks beside (in the page, 53 MB
        // above the index's 67 MB on the 1 GB scaled trace, and a wasm memory never shrinks).
        let mut counts: Vec<usize> = Vec::new();
        for i in 0..s.len() {
            let d = row(i);
            if d == HIDDEN {
                continue;
            }
            if counts.len() <= d as usize {
                counts.resize(d as usize + 1, 0);
            }
            counts[d as usize] += 1;
        }
        let mut rows: Vec<RowIndex> = counts
            .iter()
            .map(|&n| {
                let mut busy = Vec::with_capacity(n + 1);
                busy.push(0);
                RowIndex {
                    idx: Vec::with_capacity(n),
                    busy,
                }
            })
            .collect();
        for i in 0..s.len() {
            let d = row(i);
            if d == HIDDEN {
                continue;
            }
            let r = &mut rows[d as usize];
            r.idx.push(i as u32);
            let last = *r.busy.last().unwrap_or(&0);
            r.busy.push(last + s.dur_ns[i].max(0));
        }
        LaneIndex { rows }
    }

    /// Heap bytes of the index (for the figures in the summary).
    pub fn heap_bytes(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.idx.capacity() * 4 + r.busy.capacity() * 8)
            .sum()
    }
}

/// One thing to draw in a row. Positions are pixels of the viewport, unclipped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item {
    /// A slice wide enough to be drawn alone; `index` is its index in the lane.
    Slice { index: u32, x0: f64, x1: f64 },
    /// Slices narrower than `min_px`, merged: positions `first..end` of the row, `rep` (a lane
    /// index) is the longest of the first slices of its pixel columns (it gives the colour and the
    /// tooltip), `busy_ns` their summed duration; `x0..x1` are whole pixel columns (see
    /// [`columns`]).
    Mark {
        first: u32,
        end: u32,
        rep: u32,
        x0: f64,
        x1: f64,
        busy_ns: i64,
    },
}

/// The window being drawn, in row terms: time at x = 0, ns per pixel, width in pixels.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub start_ns: f64,
    pub ns_per_px: f64,
    pub width_px: f64,
}

impl Window {
    fn x(&self, t: i64) -> f64 {
        (t as f64 - self.start_ns) / self.ns_per_px
    }

    fn end_ns(&self) -> f64 {
        self.start_ns + self.width_px * self.ns_per_px
    }
}

impl RowIndex {
    pub fn len(&self) -> usize {
        self.idx.len()
    }

    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }

    fn start(&self, s: &Slices, k: usize) -> i64 {
        s.start_ns[self.idx[k] as usize]
    }

    fn end(&self, s: &Slices, k: usize) -> i64 {
        s.end_ns(self.idx[k] as usize)
    }

    /// Summed duration of row positions `a..b`.
    pub fn busy_ns(&self, a: usize, b: usize) -> i64 {
        self.busy[b] - self.busy[a]
    }

    /// Row positions of the slices that intersect `[t0, t1]` (a slice ending exactly at `t0` or
    /// starting exactly at `t1` counts, so zero-length slices at the edges are kept).
    pub fn overlapping(&self, s: &Slices, t0: f64, t1: f64) -> std::ops::Range<usize> {
        let a = partition(0, self.len(), |k| (self.end(s, k) as f64) < t0);
        let b = partition(a, self.len(), |k| (self.start(s, k) as f64) <= t1);
        a..b
    }

    /// The position of the slice containing time `t`, or else the nearest one within `tol_ns`.
    pub fn at_time(&self, s: &Slices, t: f64, tol_ns: f64) -> Option<usize> {
        let k = partition(0, self.len(), |k| (self.end(s, k) as f64) < t);
        let dist = |k: usize| {
            let (a, b) = (self.start(s, k) as f64, self.end(s, k) as f64);
            if t < a {
                a - t
            } else if t > b {
                t - b
            } else {
                0.0
            }
        };
        [k.checked_sub(1), Some(k)]
            .into_iter()
            .flatten()
            .filter(|&k| k < self.len())
            .map(|k| (dist(k), k))
            .filter(|&(d, _)| d <= tol_ns)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| k)
    }
}

/// The items of the rows drawn in one window, kept for the frames after it: a frame that only
/// scrolls, selects, searches or shades (no pan, no zoom, no resize) reuses them instead of walking
/// its rows again, which zoomed out on a large trace means every pixel column's slices.
#[derive(Debug, Default)]
pub struct ItemCache {
    /// The window the items are for, as bits: `start_ns`, `ns_per_px`, `width_px`.
    window: Option<[u64; 3]>,
    rows: FxHashMap<(u32, u32), Vec<Item>>,
    items: usize,
}

/// At most this many items are kept (about 10 MB); scrolling through more rows starts over.
const CACHED_ITEMS: usize = 1 << 18;

impl ItemCache {
    /// Forgets every row: their slices moved (another row layout).
    pub fn clear(&mut self) {
        self.window = None;
        self.rows.clear();
        self.items = 0;
    }

    /// What to draw of row `depth` of `lane` (its `row` of slices `s`) in `win`, as
    /// [`summarize_row`] gives it, summarized on the first call for this window.
    pub fn row(
        &mut self,
        s: &Slices,
        row: &RowIndex,
        (lane, depth): (u32, u32),
        win: Window,
        min_px: f64,
    ) -> &[Item] {
        let key = [
            win.start_ns.to_bits(),
            win.ns_per_px.to_bits(),
            win.width_px.to_bits(),
        ];
        if self.window != Some(key) || self.items > CACHED_ITEMS {
            self.clear();
            self.window = Some(key);
        }
        let items = &mut self.items;
        self.rows.entry((lane, depth)).or_insert_with(|| {
            let mut out = Vec::new();
            summarize_row(s, row, win, min_px, &mut out);
            *items += out.len();
            out
        })
    }
}

/// Appends what to draw of `row` in `win` to `out`; see the module docs.
pub fn summarize_row(s: &Slices, row: &RowIndex, win: Window, min_px: f64, out: &mut Vec<Item>) {
    let vis = row.overlapping(s, win.start_ns, win.end_ns());
    let (mut k, n) = (vis.start, vis.end);
    let mut open: Option<Item> = None;
    while k < n {
        let (x0, x1) = (win.x(row.start(s, k)), win.x(row.end(s, k)));
        if x1 - x0 >= min_px {
            out.extend(open.take());
            out.push(Item::Slice {
                index: row.idx[k],
                x0,
                x1,
            });
            k += 1;
            continue;
        }
        // Every slice starting in this pixel column: k..j.
        let col_end = win.start_ns + (x0.floor() + 1.0) * win.ns_per_px;
        let j = gallop(k + 1, n, |m| (row.start(s, m) as f64) < col_end);
        // Only the last of them can reach past the column; if it is wide it is drawn alone.
        let last = j - 1;
        let end = if last > k && win.x(row.end(s, last)) - win.x(row.start(s, last)) >= min_px {
            last
        } else {
            j
        };
        let rep = row.idx[k];
        let busy = row.busy_ns(k, end);
        let (c0, c1) = columns(x0, win.x(row.end(s, end - 1)));
        match &mut open {
            Some(Item::Mark {
                end: e,
                rep: r,
                x1,
                busy_ns,
                ..
            }) if c0 <= *x1 => {
                *e = end as u32;
                if s.dur_ns[rep as usize] > s.dur_ns[*r as usize] {
                    *r = rep;
                }
                *x1 = x1.max(c1);
                *busy_ns += busy;
            }
            _ => {
                out.extend(open.take());
                open = Some(Item::Mark {
                    first: k as u32,
                    end: end as u32,
                    rep,
                    x0: c0,
                    x1: c1,
                    busy_ns: busy,
                });
            }
        }
        k = end;
    }
    out.extend(open);
}

/// The whole pixel columns a span from `x0` to `x1` touches, as `[c0, c1)` (at least one column,
/// also for a zero-length span). A mark covers exactly the columns its slices touch, so that
/// zoomed out no column that holds work looks empty and none that holds nothing is painted.
pub fn columns(x0: f64, x1: f64) -> (f64, f64) {
    let c0 = x0.floor();
    (c0, x1.ceil().max(c0 + 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SliceColumns;

    /// A deterministic generator (no rand crate): xorshift64*.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    /// One row of non-overlapping slices: mixes of tiny, medium and huge ones, some zero-length,
    /// some back to back.
    fn lane(rng: &mut Rng, n: usize) -> SliceColumns {
        let mut s = SliceColumns::default();
        let mut t = rng.below(1000) as i64;
        for _ in 0..n {
            let dur = match rng.below(10) {
                0 => 0,
                1..=6 => rng.below(50) as i64,
                7 | 8 => rng.below(5_000) as i64,
                _ => rng.below(500_000) as i64,
            };
            s.push_span(t, dur);
            t += dur + [0, 1, 30, 4000][rng.below(4) as usize];
        }
        s
    }

    fn window(rng: &mut Rng, span: i64) -> Window {
        let width_px = 50.0 + rng.below(1500) as f64;
        let ns_per_px = [0.3, 1.0, 7.5, 100.0, 3333.3, 1e6][rng.below(6) as usize];
        let start_ns = rng.below(span.max(1) as u64) as f64 - width_px * ns_per_px / 2.0;
        Window {
            start_ns,
            ns_per_px,
            width_px,
        }
    }

    /// The naive oracle: the same merge rule, one slice at a time, no searching.
    fn naive(s: &Slices, win: Window, min_px: f64) -> Vec<Item> {
        let mut out = Vec::new();
        let mut open: Option<Item> = None;
        let n = s.len();
        let vis: Vec<usize> = (0..n)
            .filter(|&i| s.end_ns(i) as f64 >= win.start_ns && s.start_ns[i] as f64 <= win.end_ns())
            .collect();
        let mut p = 0;
        while p < vis.len() {
            let i = vis[p];
            let (x0, x1) = (win.x(s.start_ns[i]), win.x(s.end_ns(i)));
            if x1 - x0 >= min_px {
                out.extend(open.take());
                out.push(Item::Slice {
                    index: i as u32,
                    x0,
                    x1,
                });
                p += 1;
                continue;
            }
            let col_end = win.start_ns + (x0.floor() + 1.0) * win.ns_per_px;
            let mut q = p + 1;
            while q < vis.len() && (s.start_ns[vis[q]] as f64) < col_end {
                q += 1;
            }
            let last = vis[q - 1];
            if q - 1 > p && win.x(s.end_ns(last)) - win.x(s.start_ns[last]) >= min_px {
                q -= 1;
            }
            let busy: i64 = vis[p..q].iter().map(|&i| s.dur_ns[i]).sum();
            let (c0, c1) = (
                x0.floor(),
                win.x(s.end_ns(vis[q - 1])).ceil().max(x0.floor() + 1.0),
            );
            match &mut open {
                Some(Item::Mark {
                    end,
                    rep,
                    x1,
                    busy_ns,
                    ..
                }) if c0 <= *x1 => {
                    *end = (vis[0] + q) as u32;
                    if s.dur_ns[i] > s.dur_ns[*rep as usize] {
                        *rep = i as u32;
                    }
                    *x1 = x1.max(c1);
                    *busy_ns += busy;
                }
                _ => {
                    out.extend(open.take());
                    open = Some(Item::Mark {
                        first: (vis[0] + p) as u32,
                        end: (vis[0] + q) as u32,
                        rep: i as u32,
                        x0: c0,
                        x1: c1,
                        busy_ns: busy,
                    });
                }
            }
            p = q;
        }
        out.extend(open);
        out
    }

    #[test]
    fn matches_the_naive_oracle() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let n = 1 + rng.below(3000) as usize;
            let l = lane(&mut rng, n);
            let idx = LaneIndex::new(l.all());
            let span = l.all().end_ns(l.all().len() - 1);
            for _ in 0..5 {
                let win = window(&mut rng, span);
                let min_px = [0.5, 1.0, 3.0][rng.below(3) as usize];
                let mut fast = Vec::new();
                summarize_row(&l.all(), &idx.rows[0], win, min_px, &mut fast);
                assert_eq!(fast, naive(&l.all(), win, min_px), "case {case} {win:?}");
            }
        }
    }

    #[test]
    fn covers_every_visible_slice_once_and_costs_pixels() {
        let mut rng = Rng(42);
        for _ in 0..100 {
            let l = lane(&mut rng, 20_000);
            let idx = LaneIndex::new(l.all());
            let row = &idx.rows[0];
            let span = l.all().end_ns(l.all().len() - 1);
            let win = window(&mut rng, span);
            let mut items = Vec::new();
            summarize_row(&l.all(), row, win, 1.0, &mut items);
            let vis = row.overlapping(&l.all(), win.start_ns, win.end_ns());
            let mut next = vis.start;
            let mut total_busy = 0;
            for it in &items {
                match *it {
                    Item::Slice { index, .. } => {
                        assert_eq!(index as usize, next);
                        total_busy += l.all().dur_ns[next];
                        next += 1;
                    }
                    Item::Mark {
                        first,
                        end,
                        rep,
                        x0,
                        x1,
                        busy_ns,
                    } => {
                        assert_eq!(first as usize, next);
                        assert!(end > first && (first..end).contains(&rep));
                        assert!(x1 >= x0);
                        total_busy += busy_ns;
                        next = end as usize;
                    }
                }
            }
            assert_eq!(next, vis.end);
            assert_eq!(total_busy, row.busy_ns(vis.start, vis.end));
            assert!(
                items.len() as f64 <= 2.0 * win.width_px + 4.0,
                "{} items",
                items.len()
            );
        }
    }

    #[test]
    fn at_time_finds_the_containing_or_nearest_slice() {
        let mut rng = Rng(7);
        for _ in 0..50 {
            let l = lane(&mut rng, 500);
            let s = l.all();
            let row = &LaneIndex::new(l.all()).rows[0];
            let span = s.end_ns(s.len() - 1);
            for _ in 0..50 {
                let t = rng.below(span as u64 + 10) as f64;
                let tol = [0.0, 3.0, 100.0][rng.below(3) as usize];
                let dist = |i: usize| {
                    let (a, b) = (s.start_ns[i] as f64, s.end_ns(i) as f64);
                    if t < a {
                        a - t
                    } else if t > b {
                        t - b
                    } else {
                        0.0
                    }
                };
                let best = (0..s.len()).map(dist).fold(f64::INFINITY, f64::min);
                match row.at_time(&s, t, tol) {
                    Some(k) => assert_eq!(dist(k), best),
                    None => assert!(best > tol),
                }
            }
        }
    }

    #[test]
    fn empty_rows() {
        let l = lane(&mut Rng(1), 0);
        assert!(LaneIndex::new(l.all()).rows.is_empty());
        let row = RowIndex::default();
        let mut out = Vec::new();
        let win = Window {
            start_ns: 0.0,
            ns_per_px: 1.0,
            width_px: 100.0,
        };
        summarize_row(
            &l.all(),
            &RowIndex {
                idx: vec![],
                busy: vec![0],
            },
            win,
            1.0,
            &mut out,
        );
        assert!(out.is_empty());
        assert_eq!(row.at_time(&l.all(), 0.0, 10.0), None);
    }
}
