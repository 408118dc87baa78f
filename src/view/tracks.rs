//! Vertical layout of the timeline: process groups, each with a header and its lanes, one row per
//! slice depth.
//!
//! Lanes come in the model's order (CPU processes, then GPU devices), grouped by their process.
//! Lanes without slices are left out, and so is a group left with no lane. A collapsed group keeps
//! its header only. A lane deeper than [`FOLDED_ROWS`] (Python stacks reach 50 rows and more)
//! shows [`FOLDED_ROWS`] rows until it is expanded, so the GPU lanes below stay in reach: its
//! operators, its Python frames left out (`rows::capped`, through `Timeline::set_expanded`). Positions are in content pixels (before vertical scrolling).

use crate::analysis::summary::lane_name;
use crate::model::{LaneKind, Trace};
use rustc_hash::FxHashSet;
use serde::Serialize;

/// Height of a process group's header.
pub const HEADER_PX: f64 = 22.0;
/// Height of one slice row (the box is [`BOX_PX`] tall, the rest is a gap).
pub const ROW_PX: f64 = 18.0;
/// Height of a slice box.
pub const BOX_PX: f64 = 16.0;
/// Space above and below a lane's rows.
pub const LANE_PAD_PX: f64 = 3.0;
/// Rows a lane shows until it is expanded.
pub const FOLDED_ROWS: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TrackKind {
    /// The header of a process group; `process` indexes [`Trace::processes`].
    Group { process: u32, collapsed: bool },
    /// A lane; `lane` indexes [`Trace::lanes`]. It shows `rows` of its `all_rows` rows.
    Lane {
        lane: u32,
        rows: u32,
        all_rows: u32,
        gpu: bool,
    },
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Track {
    #[serde(flatten)]
    pub kind: TrackKind,
    /// Top, in content pixels.
    pub y: f64,
    pub height: f64,
    pub title: String,
}

/// The tracks, top to bottom, and the total height.
#[derive(Debug, Clone, Default)]
pub struct TrackLayout {
    pub tracks: Vec<Track>,
    pub height: f64,
}

impl TrackLayout {
    /// Lays out every non-empty lane; `collapsed` holds process indices whose lanes are hidden,
    /// `expanded` lane indices that show all their rows.
    pub fn new(
        trace: &Trace,
        collapsed: &FxHashSet<u32>,
        expanded: &FxHashSet<u32>,
    ) -> TrackLayout {
        let rows: Vec<u32> = trace.lanes.iter().map(|l| l.rows).collect();
        TrackLayout::with_rows(trace, &rows, collapsed, expanded)
    }

    /// Like [`Self::new`], with the rows each lane is drawn with (`Timeline::row_counts`).
    pub fn with_rows(
        trace: &Trace,
        lane_rows: &[u32],
        collapsed: &FxHashSet<u32>,
        expanded: &FxHashSet<u32>,
    ) -> TrackLayout {
        let mut tracks = Vec::new();
        let mut y = 0.0;
        let mut i = 0;
        let lanes = &trace.lanes;
        while i < lanes.len() {
            let process = lanes[i].process;
            let mut end = i;
            while end < lanes.len() && lanes[end].process == process {
                end += 1;
            }
            let members: Vec<usize> = (i..end).filter(|&l| lane_rows[l] > 0).collect();
            i = end;
            if members.is_empty() {
                continue;
            }
            let is_collapsed = collapsed.contains(&process);
            tracks.push(Track {
                kind: TrackKind::Group {
                    process,
                    collapsed: is_collapsed,
                },
                y,
                height: HEADER_PX,
                title: group_title(trace, process as usize, members[0]),
            });
            y += HEADER_PX;
            if is_collapsed {
                continue;
            }
            for l in members {
                let lane = &lanes[l];
                let all_rows = lane_rows[l].max(1);
                let rows = if expanded.contains(&(l as u32)) {
                    all_rows
                } else {
                    all_rows.min(FOLDED_ROWS)
                };
                let height = rows as f64 * ROW_PX + 2.0 * LANE_PAD_PX;
                tracks.push(Track {
                    kind: TrackKind::Lane {
                        lane: l as u32,
                        rows,
                        all_rows,
                        gpu: lane.is_gpu(),
                    },
                    y,
                    height,
                    title: lane_name(trace, l),
                });
                y += height;
            }
        }
        TrackLayout { tracks, height: y }
    }

    /// The track at content height `y`, if any.
    pub fn at(&self, y: f64) -> Option<&Track> {
        let i = self.tracks.partition_point(|t| t.y + t.height <= y);
        self.tracks.get(i).filter(|t| t.y <= y)
    }

    /// Indices of the tracks that intersect `[y0, y1)`.
    pub fn visible(&self, y0: f64, y1: f64) -> std::ops::Range<usize> {
        let a = self.tracks.partition_point(|t| t.y + t.height <= y0);
        let b = self.tracks.partition_point(|t| t.y < y1);
        a..b.max(a)
    }

    /// The track of a lane (`None` when its group is collapsed or it has no slices).
    pub fn lane_track(&self, lane: u32) -> Option<&Track> {
        self.tracks
            .iter()
            .find(|t| matches!(t.kind, TrackKind::Lane { lane: l, .. } if l == lane))
    }

    /// The header of a process group.
    pub fn group_track(&self, process: u32) -> Option<&Track> {
        self.tracks
            .iter()
            .find(|t| matches!(t.kind, TrackKind::Group { process: p, .. } if p == process))
    }
}

/// Top of row `depth` of a lane track, in content pixels.
pub fn row_y(track: &Track, depth: u32) -> f64 {
    track.y + LANE_PAD_PX + depth as f64 * ROW_PX
}

/// The row of a lane track under content height `y` (may be past the last row).
pub fn row_at(track: &Track, y: f64) -> Option<u32> {
    let r = (y - track.y - LANE_PAD_PX) / ROW_PX;
    (r >= 0.0).then_some(r as u32)
}

fn group_title(trace: &Trace, process: usize, first_lane: usize) -> String {
    let lane = &trace.lanes[first_lane];
    let p = trace.processes.get(process);
    if let LaneKind::GpuStream { device, .. } = lane.kind {
        let dev = trace.meta.device_properties.iter().find(|d| d.id == device);
        return match dev {
            Some(d) if !d.name.is_empty() => format!("GPU {device} · {}", d.name),
            _ => format!("GPU {device}"),
        };
    }
    let name = p.and_then(|p| p.name.as_deref()).unwrap_or("process");
    match p.and_then(|p| p.pid_label.clone()) {
        Some(label) => format!("{name} ({label})"),
        None => format!("{name} (pid {})", lane.pid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    fn trace() -> Trace {
        let json = r#"{"traceEvents":[
          {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"python3"}},
          {"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"main"}},
          {"ph":"X","name":"a","cat":"cpu_op","pid":1,"tid":7,"ts":0,"dur":10},
          {"ph":"X","name":"b","cat":"cpu_op","pid":1,"tid":7,"ts":1,"dur":5},
          {"ph":"X","name":"c","cat":"cpu_op","pid":1,"tid":8,"ts":2,"dur":5},
          {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":3,"dur":2,"args":{"device":0,"stream":7}}
        ]}"#;
        parse_bytes(json.as_bytes()).unwrap()
    }

    #[test]
    fn groups_lanes_and_rows() {
        let t = trace();
        let layout = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        let kinds: Vec<_> = layout
            .tracks
            .iter()
            .map(|t| (t.kind, t.title.as_str()))
            .collect();
        assert_eq!(kinds.len(), 5, "{kinds:?}");
        assert!(matches!(
            kinds[0].0,
            TrackKind::Group {
                collapsed: false,
                ..
            }
        ));
        assert_eq!(kinds[0].1, "python3 (pid 1)");
        assert!(matches!(
            kinds[1].0,
            TrackKind::Lane {
                rows: 2,
                gpu: false,
                ..
            }
        ));
        assert_eq!(kinds[1].1, "main");
        assert!(matches!(kinds[3].0, TrackKind::Group { .. }));
        assert_eq!(kinds[3].1, "GPU 0");
        assert!(matches!(kinds[4].0, TrackKind::Lane { gpu: true, .. }));
        // Tracks tile the content without gaps.
        for w in layout.tracks.windows(2) {
            assert_eq!(w[0].y + w[0].height, w[1].y);
        }
        let last = layout.tracks.last().unwrap();
        assert_eq!(layout.height, last.y + last.height);
    }

    #[test]
    fn collapsing_keeps_the_header_only() {
        let t = trace();
        let cpu = t.lanes[0].process;
        let layout = TrackLayout::new(&t, &[cpu].into_iter().collect(), &FxHashSet::default());
        assert_eq!(layout.tracks.len(), 3);
        assert!(matches!(
            layout.tracks[0].kind,
            TrackKind::Group {
                collapsed: true,
                ..
            }
        ));
        assert!(layout.lane_track(0).is_none());
        assert!(layout.group_track(cpu).is_some());
    }

    #[test]
    fn deep_lanes_fold_until_expanded() {
        let mut ev = Vec::new();
        for d in 0..40 {
            ev.push(format!(
                r#"{{"ph":"X","name":"f{d}","pid":1,"tid":1,"ts":{d},"dur":{}}}"#,
                100 - 2 * d
            ));
        }
        let t = parse_bytes(format!("[{}]", ev.join(",")).as_bytes()).unwrap();
        let none = FxHashSet::default();
        let folded = TrackLayout::new(&t, &none, &none);
        let lane = folded.lane_track(0).unwrap();
        assert!(matches!(
            lane.kind,
            TrackKind::Lane {
                rows: FOLDED_ROWS,
                all_rows: 40,
                ..
            }
        ));
        let open = TrackLayout::new(&t, &none, &[0].into_iter().collect());
        assert!(matches!(
            open.lane_track(0).unwrap().kind,
            TrackKind::Lane { rows: 40, .. }
        ));
        assert!(open.height > folded.height);
    }

    #[test]
    fn lookup_by_height() {
        let t = trace();
        let layout = TrackLayout::new(&t, &FxHashSet::default(), &FxHashSet::default());
        for (i, tr) in layout.tracks.iter().enumerate() {
            let mid = tr.y + tr.height / 2.0;
            assert_eq!(layout.at(mid).map(|x| x.y), Some(tr.y));
            assert_eq!(layout.visible(mid, mid + 0.5), i..i + 1);
        }
        assert!(layout.at(-1.0).is_none());
        assert!(layout.at(layout.height + 1.0).is_none());
        assert_eq!(layout.visible(-100.0, 1e9), 0..layout.tracks.len());
        let lane = layout.lane_track(0).unwrap();
        assert_eq!(row_at(lane, row_y(lane, 1) + 1.0), Some(1));
        assert_eq!(row_at(lane, lane.y), None);
    }
}
