//! Searches of ordered runs, shared by the view (a row's slices in a window) and the analyses (an
//! operator's memory events): positions in a range where a predicate, true then false along it,
//! turns false. And runs made: items grouped by a key, each group in the order given.

/// `items` grouped by their key in `0..groups`, each group in the order the items come: group
/// `g`'s are `values[start[g]..start[g + 1]]`, returned as `(start, values)`. A counting sort into
/// one list (the critical path's edges by node, a thread's chain children by parent), where a
/// `Vec` per group is an allocation each. `items` is called twice: to count, then to place.
pub(crate) fn grouped<I: Iterator<Item = (usize, u32)>>(
    groups: usize,
    items: impl Fn() -> I,
) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; groups + 1];
    for (g, _) in items() {
        start[g + 1] += 1;
    }
    for g in 0..groups {
        start[g + 1] += start[g];
    }
    let mut fill = start.clone();
    let mut values = vec![0u32; start[groups] as usize];
    for (g, v) in items() {
        values[fill[g] as usize] = v;
        fill[g] += 1;
    }
    (start, values)
}

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
    fn groups_hold_their_items_in_order() {
        let keys = [2usize, 0, 2, 3, 0, 2];
        let (start, values) = grouped(5, || keys.iter().enumerate().map(|(i, &g)| (g, i as u32)));
        assert_eq!(start, [0, 2, 2, 5, 6, 6]);
        assert_eq!(values, [1, 4, 0, 2, 5, 3]);
        assert_eq!(grouped(0, std::iter::empty), (vec![0], vec![]));
    }

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
