//! Durations in words, one rule for every text Sightline writes outside its tables: findings,
//! their savings and hotspots, the comparison's headline and explanation, the ranks' findings.
//! The page's `www/js/format.js` (`duration`) follows the same rule, and `tests/units.rs` runs
//! both on the same values. Tables keep their column's unit instead (PyTorch's `_format_time` in
//! `ops`, milliseconds with fixed decimals in `idle` and `steps`), as their figures are read down
//! a column and compared with PyTorch's and HTA's.

/// A duration in ns with three significant digits: `850 ns`, `12.3 µs`, `1.50 ms`, `2.04 s`
/// (no decimals from 100 on); `–` for a value that is not finite, as the page writes it.
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".to_string();
    }
    let a = ns.abs();
    let (unit, name) = if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else if a >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    let v = ns / unit;
    let d = if unit == 1.0 || v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{} {name}", fixed(v, d))
}

/// JavaScript's `Number.prototype.toFixed(d)`, which the page's text uses: the exact value
/// rounded to `d` decimals, a tie away from zero (`1.125` -> `1.13`, where Rust's formatting
/// rounds a tie to even, `1.12`), and no sign on a negative zero.
fn fixed(v: f64, d: usize) -> String {
    let a = v.abs();
    // A tie at `d` <= 2 decimals is k + 0.5/10^d, exactly an f64 of at most 55 digits after
    // the point (it is at least 0.005): 80 digits show whether `a` is one.
    let exact = format!("{a:.80}");
    let after = exact.split_once('.').map_or("", |(_, f)| f);
    let tie = after.as_bytes().get(d) == Some(&b'5') && after[d + 1..].bytes().all(|b| b == b'0');
    let p = 10f64.powi(d as i32);
    // The tie times 10^d is k + 0.5, which the product holds exactly; `round` takes it away
    // from zero, and k + 1 over 10^d prints as its d decimals.
    let a = if tie { (a * p).round() / p } else { a };
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}{a:.d$}")
}

/// [`duration`] with its sign, `+` for a gain or none: `+1.50 ms`, `-850 ns`.
pub fn signed_duration(ns: f64) -> String {
    if ns < 0.0 {
        duration(ns)
    } else {
        format!("+{}", duration(ns))
    }
}
