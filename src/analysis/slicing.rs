//! Analyses that can stop and resume: cooperative pauses with no clock and no threads.
//!
//! A page holds its trace in one Web Worker, where a call runs to its end before the next message
//! (a frame to draw) is read. So the long analyses (links, steps, idle, FLOPs, findings with the
//! critical-path graph and the savings' what-ifs, the operator forest) are `async fn`s that call
//! [`Slicer::tick`] in their O(n) loops with the work just done (slices or events visited). The
//! tick returns `Poll::Pending` once each time a fixed amount of work has been done since the
//! last pause, and is ready at once otherwise: a counter compare. Whoever polls the analysis decides what a pause means: the page's Session polls it
//! once per call (`web/tables.rs`), so frames asked for meanwhile are drawn between slices;
//! [`block_on`] with [`Slicer::never`] runs it to the end, which is what the synchronous
//! functions (`Links::build`, `steps::analyze_with`, ...) are, for the CLI, Python and tests.
//!
//! The hottest passes tick once per chunk through [`each`] rather than once per entry.
//!
//! Pausing changes when work runs, never what it computes: every analysis gives the same result
//! with any budget (tested on the real fixtures in `tests/slicing.rs`).
//!
//! The sorts of a lane's or a table's worth of entries are sliced too ([`sort_by_key`]). Not
//! sliced: passes that are one library call (a column cloned, a lane's order checked), sorts of a
//! few thousand entries, and HTA mode's breakdowns, which the page does not use.

use std::future::Future;
use std::ops::Range;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

/// The units of a slice whose work is lookups in other tables (its launch found, its ancestors
/// walked, its name read): about as long as this many slices visited in a plain pass.
pub const LOOKUP: u64 = 8;

/// Counts the work done by an analysis and says when to pause. One per running analysis.
#[derive(Debug, Clone)]
pub struct Slicer {
    /// Units of work between two pauses; `u64::MAX`: never pause.
    budget: u64,
    /// Units left before the next pause.
    left: u64,
    /// Pauses so far.
    pauses: u64,
}

impl Slicer {
    /// A slicer that never pauses: the analysis runs to its end in one poll.
    pub fn never() -> Slicer {
        Slicer::every(u64::MAX)
    }

    /// A slicer that pauses once each time `units` units of work have been done (at least 1).
    pub fn every(units: u64) -> Slicer {
        let budget = units.max(1);
        Slicer {
            budget,
            left: budget,
            pauses: 0,
        }
    }

    /// How many times the analysis has paused so far.
    pub fn pauses(&self) -> u64 {
        self.pauses
    }

    /// Counts `units` of work just done; the returned future pauses the analysis once when the
    /// budget is used up, and completes at once otherwise.
    #[inline]
    pub fn tick(&mut self, units: u64) -> Tick {
        if units < self.left {
            self.left -= units;
            return Tick { pause: false };
        }
        self.left = self.budget;
        self.pauses += 1;
        Tick { pause: true }
    }
}

/// The future of one [`Slicer::tick`]: pending once when it pauses, then ready.
#[must_use = "a tick pauses only when awaited"]
pub struct Tick {
    pause: bool,
}

impl Future for Tick {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.pause {
            self.pause = false;
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Entries an [`each`] pass runs between two ticks.
const CHUNK: usize = 1024;

/// Runs `body(state, i)` for each `i` in `0..n`, [`CHUNK`] entries at a time, ticking between
/// chunks with the units the calls returned. For the hottest passes: a loop with an await in its
/// body keeps its locals in the future's memory, where the compiler cannot hold them in
/// registers (about 3x slower natively on the forest's passes); a chunk runs in a function of its
/// own, on `state` passed to it.
pub async fn each<S: ?Sized>(
    y: &mut Slicer,
    n: usize,
    state: &mut S,
    mut body: impl FnMut(&mut S, usize) -> u64,
) {
    let mut lo = 0;
    while lo < n {
        let hi = (lo + CHUNK).min(n);
        let units = run(state, lo..hi, &mut body);
        y.tick(units).await;
        lo = hi;
    }
}

#[inline(never)]
fn run<S: ?Sized, F: FnMut(&mut S, usize) -> u64>(
    state: &mut S,
    range: Range<usize>,
    body: &mut F,
) -> u64 {
    let mut units = 0;
    for i in range {
        units += body(state, i);
    }
    units
}

/// Runs of this many entries are sorted whole by [`sort_by_key`] before they are merged.
const SORT_RUN: usize = 4096;

/// Sorts `v` by `key`, stably, pausing as `y` says: the same order as `slice::sort_by_key`. Runs
/// of [`SORT_RUN`] entries are sorted one at a time, then merged pairwise, an entry per unit; two
/// runs already in order (as in a lane sorted but for a few partial overlaps) are joined as they
/// are.
pub async fn sort_by_key<T: Copy, K: Ord>(v: &mut Vec<T>, key: impl Fn(&T) -> K, y: &mut Slicer) {
    let n = v.len();
    for run in v.chunks_mut(SORT_RUN) {
        run.sort_by_key(&key);
        // About log2(SORT_RUN) / 3 units an entry: comparisons are cheaper than a slice visited.
        y.tick(4 * run.len() as u64).await;
    }
    let mut out: Vec<T> = Vec::with_capacity(if n > SORT_RUN { n } else { 0 });
    let mut width = SORT_RUN;
    while width < n {
        out.clear();
        for lo in (0..n).step_by(2 * width) {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j) = (lo, mid);
            if mid < hi && key(&v[mid]) < key(&v[mid - 1]) {
                while i < mid && j < hi {
                    // Ties take the left run's entry first: stable.
                    if key(&v[j]) < key(&v[i]) {
                        out.push(v[j]);
                        j += 1;
                    } else {
                        out.push(v[i]);
                        i += 1;
                    }
                    y.tick(1).await;
                }
            }
            out.extend_from_slice(&v[i..mid]);
            out.extend_from_slice(&v[j..hi]);
            y.tick(((mid - i) + (hi - j)) as u64).await;
        }
        std::mem::swap(v, &mut out);
        width *= 2;
    }
}

/// Runs a future to its end on this thread, polling again at each pause. Nothing wakes it: the
/// futures here pause only at a [`Tick`], which is ready on the next poll.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// Polls a future once: `Some(output)` when it completed in this poll.
pub fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>) -> Option<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    match future.poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn count_to(n: u64, y: &mut Slicer) -> u64 {
        let mut sum = 0;
        for i in 0..n {
            sum += i;
            y.tick(1).await;
        }
        sum
    }

    #[test]
    fn a_slicer_pauses_once_per_budget_and_resumes_where_it_stopped() {
        let mut y = Slicer::every(10);
        let mut f = Box::pin(count_to(95, &mut y));
        let mut polls = 1;
        let sum = loop {
            if let Some(v) = poll_once(f.as_mut()) {
                break v;
            }
            polls += 1;
        };
        drop(f);
        assert_eq!(sum, (0..95).sum::<u64>());
        assert_eq!(y.pauses(), 9);
        assert_eq!(polls, 10);
    }

    #[test]
    fn a_never_slicer_completes_in_one_poll() {
        let mut y = Slicer::never();
        let mut f = Box::pin(count_to(1000, &mut y));
        assert_eq!(poll_once(f.as_mut()), Some((0..1000).sum::<u64>()));
    }

    #[test]
    fn the_sliced_sort_is_the_stable_sort() {
        // Pseudo-random keys with many ties (a linear congruential generator: no dependency).
        let mut x: u64 = 12345;
        for n in [
            0,
            1,
            5,
            SORT_RUN - 1,
            SORT_RUN,
            SORT_RUN + 1,
            3 * SORT_RUN + 17,
            20_000,
        ] {
            let v: Vec<(u32, u32)> = (0..n as u32)
                .map(|i| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((x >> 33) as u32 % 500, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            let mut got = v.clone();
            let mut y = Slicer::every(100);
            block_on(sort_by_key(&mut got, |e| e.0, &mut y));
            assert_eq!(got, want, "{n} entries");
            // Sorted already, or sorted but for the last few: joined without a merge.
            let mut got = want.clone();
            if n >= 2 {
                got.swap(n - 1, n - 2);
            }
            let mut again = got.clone();
            again.sort_by_key(|e| e.0);
            block_on(sort_by_key(&mut got, |e| e.0, &mut Slicer::never()));
            assert_eq!(got, again, "{n} entries, nearly sorted");
        }
    }

    #[test]
    fn block_on_runs_a_pausing_future_to_its_end() {
        let mut y = Slicer::every(1);
        assert_eq!(block_on(count_to(50, &mut y)), (0..50).sum::<u64>());
        assert_eq!(y.pauses(), 50);
    }
}
