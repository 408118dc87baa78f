//! Each rank against the job's median rank: its step time and idle time as a ratio to the median
//! rank's, and whether it is the slowest. Read from the report's rank rows ([`super::RankRow`]:
//! the median of its steps' lengths, their `ProfilerStep` spans, and the idle time in the rank's
//! window); the median is a rank's own figure, the lower middle of an even count, as the
//! cross-rank findings take it ([`super::matching::median`]). The Python package's
//! `sightline.ray.across_ranks` returns these beside the rows.

use super::RankRow;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankVersus {
    pub rank: i64,
    /// The rank's step time over the median rank's; `None` for a rank without steps or a median
    /// of zero.
    pub step_time_vs_median: Option<f64>,
    /// The rank's idle time over the median rank's; `None` for a median of zero.
    pub idle_vs_median: Option<f64>,
    /// The rank has the longest step time of the ranks with steps (every rank that ties).
    pub slowest: bool,
}

/// The lower middle of `v` (a rank's own figure), `None` for none.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[(v.len() - 1) / 2])
}

/// One entry per row, in the rows' order (by rank).
pub fn versus_median(rows: &[RankRow]) -> Vec<RankVersus> {
    let stepped = || rows.iter().filter(|r| r.steps > 0);
    let med_step = median(stepped().map(|r| r.step_time_us).collect());
    let med_idle = median(rows.iter().map(|r| r.idle_us).collect());
    let slowest = stepped().map(|r| r.step_time_us).max_by(f64::total_cmp);
    let ratio = |x: f64, m: Option<f64>| m.filter(|&m| m > 0.0).map(|m| x / m);
    rows.iter()
        .map(|r| RankVersus {
            rank: r.rank,
            step_time_vs_median: (r.steps > 0)
                .then(|| ratio(r.step_time_us, med_step))
                .flatten(),
            idle_vs_median: ratio(r.idle_us, med_idle),
            slowest: r.steps > 0 && Some(r.step_time_us) == slowest,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranks::digest::Basis;

    fn row(rank: i64, steps: usize, step_time_us: f64, idle_us: f64) -> RankRow {
        RankRow {
            rank,
            file: format!("rank{rank}.json"),
            host: None,
            basis: Basis::Cpu,
            steps,
            step_time_us,
            step_times_us: vec![step_time_us; steps],
            compute_us: 0.0,
            communication_us: 0.0,
            exposed_communication_us: 0.0,
            memcpy_us: 0.0,
            idle_us,
            host_wait_idle_us: 0.0,
            kernels: 0,
            peak_memory_bytes: None,
            collective_wait_us: 0.0,
            collectives: 0,
        }
    }

    #[test]
    fn against_the_median_rank_the_lower_middle() {
        let rows = [
            row(0, 3, 100.0, 10.0),
            row(1, 3, 200.0, 40.0),
            row(2, 3, 400.0, 0.0),
            row(3, 3, 100.0, 20.0),
        ];
        let v = versus_median(&rows);
        // Step times 100, 100, 200, 400: the median rank's is 100; idle 0, 10, 20, 40: 10.
        let steps: Vec<f64> = v.iter().map(|x| x.step_time_vs_median.unwrap()).collect();
        assert_eq!(steps, [1.0, 2.0, 4.0, 1.0]);
        let idle: Vec<f64> = v.iter().map(|x| x.idle_vs_median.unwrap()).collect();
        assert_eq!(idle, [1.0, 4.0, 0.0, 2.0]);
        let slowest: Vec<bool> = v.iter().map(|x| x.slowest).collect();
        assert_eq!(slowest, [false, false, true, false]);
    }

    #[test]
    fn a_rank_without_steps_is_not_compared_by_step_time() {
        let rows = [row(0, 0, 0.0, 0.0), row(1, 2, 50.0, 0.0)];
        let v = versus_median(&rows);
        assert_eq!(v[0].step_time_vs_median, None);
        assert!(!v[0].slowest && v[1].slowest);
        assert_eq!(v[1].step_time_vs_median, Some(1.0));
        // Every idle time zero: no ratio.
        assert_eq!(v[1].idle_vs_median, None);
        assert!(versus_median(&[]).is_empty());
    }
}
