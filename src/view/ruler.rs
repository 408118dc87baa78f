//! The time ruler: tick positions with labels in sensible units, and duration formatting.
//!
//! Ticks fall on round times (1, 2 or 5 times a power of ten ns) about every [`TICK_PX`] pixels;
//! their labels are times from the trace start in the unit of the tick spacing, with just enough
//! decimals to tell neighbouring ticks apart.

use super::viewport::Viewport;
use serde::Serialize;

/// Aim for a tick about every this many pixels.
pub const TICK_PX: f64 = 110.0;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Tick {
    pub x: f64,
    pub label: String,
}

/// The spacing of ticks for `ns_per_px`: the smallest 1/2/5 x 10^k ns at least `TICK_PX` wide.
pub fn tick_step_ns(ns_per_px: f64) -> f64 {
    let want = (ns_per_px * TICK_PX).max(1.0);
    let mut p = 10f64.powf(want.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            if m * p >= want * (1.0 - 1e-12) {
                return m * p;
            }
        }
        p *= 10.0;
    }
}

/// Ticks of the window, left to right.
pub fn ticks(vp: &Viewport) -> Vec<Tick> {
    let step = tick_step_ns(vp.ns_per_px);
    let first = (vp.start_ns / step).ceil() as i64;
    let last = (vp.end_ns() / step).floor() as i64;
    (first..=last)
        .filter(|&k| k >= 0)
        .map(|k| {
            let t = k as f64 * step;
            Tick {
                x: vp.x_of(t),
                label: format_time(t, step, vp.end_ns()),
            }
        })
        .collect()
}

/// A time from the trace start, in the unit that suits `scale_ns` (the largest time shown), with
/// the decimals that `resolution_ns` (the tick step) needs.
pub fn format_time(t_ns: f64, resolution_ns: f64, scale_ns: f64) -> String {
    let (unit, name) = unit_for(scale_ns.max(resolution_ns));
    let decimals = (-(resolution_ns / unit).log10() - 1e-9)
        .ceil()
        .clamp(0.0, 6.0) as usize;
    format!("{:.*} {name}", decimals, t_ns / unit)
}

/// A duration with three significant digits: `850 ns`, `12.3 µs`, `1.50 ms`, `2.04 s`.
pub fn format_duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    let (unit, name) = unit_for(ns.abs());
    let v = ns / unit;
    let decimals = if unit == 1.0 || v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {name}")
}

fn unit_for(ns: f64) -> (f64, &'static str) {
    if ns >= 1e9 {
        (1e9, "s")
    } else if ns >= 1e6 {
        (1e6, "ms")
    } else if ns >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round_and_wide_enough() {
        for npp in [0.05, 0.9, 1.0, 3.3, 1e3, 2.5e4, 7e7] {
            let s = tick_step_ns(npp);
            assert!(s >= npp * TICK_PX * 0.999, "npp={npp} step={s}");
            assert!(s < npp * TICK_PX * 5.01, "npp={npp} step={s}");
            let mant = s / 10f64.powf(s.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mant - m).abs() < 1e-9),
                "{s}"
            );
        }
    }

    #[test]
    fn labels() {
        assert_eq!(format_time(0.0, 1e6, 5e6), "0 ms");
        assert_eq!(format_time(1.5e6, 5e5, 5e6), "1.5 ms");
        assert_eq!(format_time(2e9, 1e9, 3e9), "2 s");
        assert_eq!(format_time(800.0, 200.0, 900.0), "800 ns");
        assert_eq!(format_time(1.5e4, 5e3, 2e4), "15 µs");
        assert_eq!(format_time(600_000_100.0, 100.0, 6e8), "600.0001 ms");
        assert_eq!(format_duration(850.0), "850 ns");
        assert_eq!(format_duration(12_345.0), "12.3 µs");
        assert_eq!(format_duration(1.5e6), "1.50 ms");
        assert_eq!(format_duration(2.04e9), "2.04 s");
        assert_eq!(format_duration(0.0), "0 ns");
    }

    #[test]
    fn ticks_cover_the_window_and_are_distinct() {
        let mut vp = Viewport::new(1_211_780_000, 1200.0, 600.0);
        for _ in 0..25 {
            let t = ticks(&vp);
            assert!(t.len() >= 3 && t.len() <= 12, "{}", t.len());
            assert!(t.iter().all(|k| k.x >= -0.5 && k.x <= vp.width_px + 0.5));
            for w in t.windows(2) {
                assert_ne!(w[0].label, w[1].label);
            }
            vp.zoom_at(300.0, 0.5);
        }
    }
}
