//! Interval arithmetic on half-open `[start, end)` spans in ns: unions, intersections, differences.

/// Merges spans into sorted, disjoint ones (touching spans join). Empty spans are dropped.
pub fn union(mut spans: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    spans.retain(|s| s.1 > s.0);
    spans.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Total length of disjoint spans.
pub fn length(spans: &[(i64, i64)]) -> i64 {
    spans.iter().map(|s| s.1 - s.0).sum()
}

/// Length of the intersection of two unions (each sorted and disjoint, as [`union`] returns).
pub fn overlap(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            total += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// Length of a union inside `[lo, hi)`.
pub fn length_within(spans: &[(i64, i64)], lo: i64, hi: i64) -> i64 {
    overlap(spans, &[(lo, hi)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naive oracle: count covered nanoseconds one by one.
    fn covered(spans: &[(i64, i64)], t: i64) -> bool {
        spans.iter().any(|s| s.0 <= t && t < s.1)
    }

    #[test]
    fn union_and_overlap_match_a_pointwise_oracle() {
        let mut seed = 7u64;
        let mut next = |m: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as i64) % m
        };
        for _ in 0..200 {
            let mk = |n: usize, next: &mut dyn FnMut(i64) -> i64| -> Vec<(i64, i64)> {
                (0..n)
                    .map(|_| {
                        let a = next(100);
                        (a, a + next(20))
                    })
                    .collect()
            };
            let na = next(6) as usize;
            let nb = next(6) as usize;
            let a = mk(na, &mut next);
            let b = mk(nb, &mut next);
            let (ua, ub) = (union(a.clone()), union(b.clone()));
            let both = (0..130)
                .filter(|&t| covered(&a, t) && covered(&b, t))
                .count();
            let only_a = (0..130).filter(|&t| covered(&a, t)).count();
            assert_eq!(length(&ua), only_a as i64);
            assert_eq!(overlap(&ua, &ub), both as i64);
            assert!(ua.windows(2).all(|w| w[0].1 < w[1].0));
            let inside = (10..50).filter(|&t| covered(&a, t)).count();
            assert_eq!(length_within(&ua, 10, 50), inside as i64);
        }
    }
}
