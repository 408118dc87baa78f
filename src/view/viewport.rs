//! The visible window of the timeline: which time sits at the left edge, how many nanoseconds a
//! pixel covers, and how far the tracks are scrolled.
//!
//! Coordinates are CSS pixels of the timeline area (the lane-name gutter and the ruler are not part
//! of it); `x = 0` is its left edge and `y = 0` the top of the first track. Time is `f64` ns from the
//! trace start: exact to the nanosecond for spans up to 104 days, so no epoch-scale precision loss.
//!
//! Invariants kept by every method: `ns_per_px` lies in [`MIN_NS_PER_PX`, the whole span over a
//! quarter of the width], the window overlaps the trace by at least half its width, and the vertical
//! scroll stays inside the content.

/// The deepest zoom: a nanosecond spread over 20 pixels.
pub const MIN_NS_PER_PX: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Time at `x = 0`, ns from the trace start (may be negative: a margin before the first event).
    pub start_ns: f64,
    pub ns_per_px: f64,
    pub width_px: f64,
    pub height_px: f64,
    /// Vertical scroll of the tracks, in px from the top of the content.
    pub scroll_px: f64,
    /// The trace span the window is kept on.
    span_ns: f64,
    /// Total height of the tracks, for clamping the scroll.
    content_px: f64,
}

impl Viewport {
    /// A window showing the whole trace.
    pub fn new(span_ns: i64, width_px: f64, height_px: f64) -> Viewport {
        let mut v = Viewport {
            start_ns: 0.0,
            ns_per_px: 1.0,
            width_px: width_px.max(1.0),
            height_px: height_px.max(1.0),
            scroll_px: 0.0,
            span_ns: span_ns.max(1) as f64,
            content_px: 0.0,
        };
        v.reset();
        v
    }

    /// The time at pixel `x`.
    pub fn t_of(&self, x: f64) -> f64 {
        self.start_ns + x * self.ns_per_px
    }

    /// The pixel of time `t`.
    pub fn x_of(&self, t: f64) -> f64 {
        (t - self.start_ns) / self.ns_per_px
    }

    /// The time at the right edge.
    pub fn end_ns(&self) -> f64 {
        self.t_of(self.width_px)
    }

    /// Shows the whole trace with a small margin on both sides (key `0`).
    pub fn reset(&mut self) {
        self.show_range(0.0, self.span_ns);
    }

    /// Shows `[t0, t1]` with a 2% margin each side (key `F`, a finding's evidence, a step).
    pub fn show_range(&mut self, t0: f64, t1: f64) {
        let (t0, t1) = if t1 > t0 {
            (t0, t1)
        } else {
            (t0 - 50.0, t0 + 50.0)
        };
        let pad = (t1 - t0) * 0.02;
        self.ns_per_px = (t1 - t0 + 2.0 * pad) / self.width_px;
        self.start_ns = t0 - pad;
        self.clamp();
    }

    /// Shows exactly `[t0, t1]`, edge to edge, as far as the zoom bounds allow (a link's or an
    /// embedding page's time range: reading the window back gives the same numbers).
    pub fn set_window(&mut self, t0: f64, t1: f64) {
        if !(t0.is_finite() && t1.is_finite()) {
            return;
        }
        let (t0, t1) = if t1 > t0 { (t0, t1) } else { (t1, t0) };
        self.ns_per_px = ((t1 - t0) / self.width_px).max(MIN_NS_PER_PX);
        self.start_ns = t0;
        self.clamp();
    }

    /// Brings `[t0, t1]` into view: centres it at the current zoom when it is off screen, or zooms
    /// out to it when it is wider than the window.
    pub fn reveal(&mut self, t0: f64, t1: f64) {
        let visible = self.end_ns() - self.start_ns;
        if t1 - t0 > visible {
            self.show_range(t0, t1);
        } else if t0 < self.start_ns || t1 > self.end_ns() {
            self.start_ns = (t0 + t1) / 2.0 - visible / 2.0;
            self.clamp();
        }
    }

    /// Centres time `t`, keeping the zoom (a click on the overview strip).
    pub fn center_on(&mut self, t: f64) {
        if t.is_finite() {
            self.start_ns = t - self.width_px * self.ns_per_px / 2.0;
            self.clamp();
        }
    }

    /// Zooms by `factor` (< 1 zooms in) keeping the time under pixel `x` where it is.
    pub fn zoom_at(&mut self, x: f64, factor: f64) {
        if !(factor.is_finite() && factor > 0.0) {
            return;
        }
        let t = self.t_of(x);
        self.ns_per_px = (self.ns_per_px * factor).clamp(MIN_NS_PER_PX, self.max_ns_per_px());
        self.start_ns = t - x * self.ns_per_px;
        self.clamp();
    }

    /// Moves the window by `dx` pixels (positive: later times come into view).
    pub fn pan_px(&mut self, dx: f64) {
        if dx.is_finite() {
            self.start_ns += dx * self.ns_per_px;
            self.clamp();
        }
    }

    /// Scrolls the tracks by `dy` pixels.
    pub fn scroll_by(&mut self, dy: f64) {
        if dy.is_finite() {
            self.scroll_px += dy;
            self.clamp();
        }
    }

    /// New size of the timeline area; the time at the left edge and the zoom stay.
    pub fn resize(&mut self, width_px: f64, height_px: f64) {
        self.width_px = width_px.max(1.0);
        self.height_px = height_px.max(1.0);
        self.clamp();
    }

    /// Total height of the tracks (changes when a group is collapsed).
    pub fn set_content_height(&mut self, content_px: f64) {
        self.content_px = content_px.max(0.0);
        self.clamp();
    }

    fn max_ns_per_px(&self) -> f64 {
        (self.span_ns * 4.0 / self.width_px).max(MIN_NS_PER_PX)
    }

    fn clamp(&mut self) {
        self.ns_per_px = self.ns_per_px.clamp(MIN_NS_PER_PX, self.max_ns_per_px());
        let visible = self.width_px * self.ns_per_px;
        let lo = -visible / 2.0;
        let hi = self.span_ns - visible / 2.0;
        self.start_ns = self.start_ns.clamp(lo.min(hi), hi.max(lo));
        let max_scroll = (self.content_px - self.height_px).max(0.0);
        self.scroll_px = self.scroll_px.clamp(0.0, max_scroll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn starts_fitted_with_margins() {
        let v = Viewport::new(1_000_000, 1000.0, 500.0);
        assert!(v.start_ns < 0.0 && v.end_ns() > 1_000_000.0);
        assert!(close(v.x_of(500_000.0), 500.0));
    }

    #[test]
    fn zoom_keeps_the_time_under_the_cursor() {
        let mut v = Viewport::new(1_000_000_000, 1200.0, 500.0);
        for (x, f) in [(100.0, 0.5), (900.0, 0.1), (0.0, 0.8), (1199.0, 1.7)] {
            let t = v.t_of(x);
            v.zoom_at(x, f);
            assert!(close(v.t_of(x), t), "x={x} f={f}");
        }
    }

    #[test]
    fn zoom_is_bounded_both_ways() {
        let mut v = Viewport::new(1_000, 1000.0, 500.0);
        for _ in 0..100 {
            v.zoom_at(500.0, 0.1);
        }
        assert_eq!(v.ns_per_px, MIN_NS_PER_PX);
        for _ in 0..100 {
            v.zoom_at(500.0, 10.0);
        }
        assert!(close(v.ns_per_px, 4.0));
    }

    #[test]
    fn pan_stays_on_the_trace() {
        let mut v = Viewport::new(1_000_000, 1000.0, 500.0);
        v.zoom_at(500.0, 0.01);
        v.pan_px(1e12);
        assert!(v.start_ns < 1_000_000.0 && v.end_ns() > 1_000_000.0);
        v.pan_px(-1e12);
        assert!(v.start_ns < 0.0 && v.end_ns() > 0.0);
        v.pan_px(f64::NAN);
        assert!(v.start_ns.is_finite());
    }

    #[test]
    fn show_range_and_reveal() {
        let mut v = Viewport::new(1_000_000, 1000.0, 500.0);
        v.show_range(1000.0, 2000.0);
        assert!(v.start_ns < 1000.0 && v.end_ns() > 2000.0 && v.end_ns() < 2100.0);
        let npp = v.ns_per_px;
        v.reveal(500_000.0, 500_010.0);
        assert_eq!(v.ns_per_px, npp);
        assert!(v.start_ns < 500_000.0 && v.end_ns() > 500_010.0);
        // A zero-length range still gives a finite, positive zoom.
        v.center_on(900_000.0);
        assert!(close(v.x_of(900_000.0), 500.0));
        v.show_range(7.0, 7.0);
        assert!(v.ns_per_px >= MIN_NS_PER_PX && v.ns_per_px.is_finite());
    }

    #[test]
    fn set_window_is_exact_and_bounded() {
        let mut v = Viewport::new(1_000_000, 1000.0, 500.0);
        v.set_window(1000.0, 2000.0);
        assert!(close(v.start_ns, 1000.0) && close(v.end_ns(), 2000.0));
        v.set_window(5000.0, 3000.0);
        assert!(close(v.start_ns, 3000.0) && close(v.end_ns(), 5000.0));
        // Outside the trace or wider than the zoom bounds: clamped like any other move.
        v.set_window(-1e12, 1e12);
        assert!(close(v.ns_per_px, 4000.0));
        assert!(v.start_ns < 1_000_000.0 && v.end_ns() > 0.0);
        v.set_window(10.0, 10.0);
        assert_eq!(v.ns_per_px, MIN_NS_PER_PX);
        let before = v;
        v.set_window(f64::NAN, 1.0);
        assert_eq!(v, before);
    }

    #[test]
    fn scroll_is_clamped_to_the_content() {
        let mut v = Viewport::new(1000, 1000.0, 300.0);
        v.set_content_height(1000.0);
        v.scroll_by(5000.0);
        assert_eq!(v.scroll_px, 700.0);
        v.set_content_height(200.0);
        assert_eq!(v.scroll_px, 0.0);
        v.scroll_by(-10.0);
        assert_eq!(v.scroll_px, 0.0);
    }

    #[test]
    fn empty_trace_does_not_divide_by_zero() {
        let mut v = Viewport::new(0, 0.0, 0.0);
        v.zoom_at(0.0, 0.5);
        assert!(v.ns_per_px.is_finite() && v.ns_per_px > 0.0);
        assert!(v.start_ns.is_finite());
    }
}
