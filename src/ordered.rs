//! Searches of ordered runs, shared by the view (a row's slices in a window) and the analyses (an
//! operator's memory events): positions in a range where a predicate, true then false along it,
//! turns false.

/// First position in `lo..hi` where `pred` turns false (`pred` true then false along the range).
pub(crate) fn partition(lo: usize, hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Like [`partition`], but probes `lo`, `lo+1`, `lo+3`, ... first: cheap when the answer is near.
pub(crate) fn gallop(lo: usize, hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    let mut step = 1;
    let mut base = lo;
    while base < hi && pred(base) {
        let next = base + step;
        if next >= hi || !pred(next) {
            return partition(base + 1, next.min(hi), &pred);
        }
        base = next + 1;
        step *= 2;
    }
    base.min(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallop_agrees_with_partition() {
        let v: Vec<i64> = (0..1000).map(|i| i * 3).collect();
        for lo in [0, 1, 10, 999, 1000] {
            for x in [-1, 0, 5, 300, 2997, 5000] {
                let p = |m: usize| v[m] < x;
                assert_eq!(
                    gallop(lo, v.len(), p),
                    partition(lo, v.len(), p),
                    "lo={lo} x={x}"
                );
            }
        }
    }
}
