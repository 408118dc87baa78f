//! The rows a lane is drawn with: the model's rows, or the lane re-laid without its Python frames,
//! with the frames that span (nearly) the whole lane folded into one labelled row.
//!
//! With `with_stack=True` the first rows of the main thread are the same frames for the whole
//! trace (`<module>`, `spawn_main`, `_bootstrap`, `run`, ...), and the operators start 20 and more
//! rows down. Folding: the leading rows that each hold one slice lasting at least [`FOLD_SHARE`] of
//! the lane's extent are drawn as one row holding the deepest of them, labelled with the chain; the
//! rows below move up. Hiding Python frames (`python_function`) re-lays the other slices with the
//! parser's rule ([`crate::parse::layout_rows`]), so operators and labels take the rows the frames
//! held; `nn.Module` frames (Python frames too) stay, so the operators keep the modules that hold
//! them. A lane deeper than the rows it shows until expanded ([`capped`]) is drawn so until then,
//! so the operators 20 rows down a `with_stack` thread are in view without expanding it. None of this changes the model: details,
//! tables and analyses still see every slice.

use crate::model::category::{Kind, Kinds};
use crate::model::{Slices, StrId, Trace};

/// Depth of a slice that is not drawn (a folded or hidden frame).
pub const HIDDEN: u16 = u16::MAX;
/// A leading row is folded when its one slice lasts at least this share of the lane's extent.
pub const FOLD_SHARE: f64 = 0.9;

/// How lanes are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMode {
    /// Draw Python frames (else re-lay the lane without them).
    pub python: bool,
    /// Fold the frames spanning (nearly) the whole lane into one row.
    pub fold: bool,
}

impl RowMode {
    /// The model's rows, nothing folded or hidden.
    pub const MODEL: RowMode = RowMode {
        python: true,
        fold: false,
    };
}

/// The drawn rows of one lane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneRows {
    /// Row of each slice ([`HIDDEN`] when not drawn); `None` when it is the model's `depth`.
    pub depth: Option<Vec<u16>>,
    pub rows: u32,
    /// Names of the folded frames, outermost first; row 0 holds the last of them.
    pub folded: Vec<StrId>,
}

impl LaneRows {
    /// The drawn row of slice `i` ([`HIDDEN`] when it is not drawn).
    pub fn of(&self, s: Slices<'_>, i: usize) -> u16 {
        match &self.depth {
            Some(d) => d[i],
            None => s.depth[i],
        }
    }
}

/// Whether slice `i` is a Python frame other than an `nn.Module` one (`module[name]` says which
/// names are those).
fn is_frame(s: Slices<'_>, kinds: &Kinds, module: &[bool], i: usize) -> bool {
    kinds.of_cat(s.cat[i]) == Kind::Python && !module.get(s.name[i].0 as usize).is_some_and(|&m| m)
}

/// Lays out one lane in `mode`; `module[name]` says whether a name is an `nn.Module` frame's.
pub fn lane_rows(s: Slices<'_>, kinds: &Kinds, module: &[bool], mode: RowMode) -> LaneRows {
    let is_python = |i: usize| is_frame(s, kinds, module, i);
    let mut depth: Option<Vec<u16>> = None;
    if !mode.python && (0..s.len()).any(is_python) {
        let keep: Vec<usize> = (0..s.len()).filter(|&i| !is_python(i)).collect();
        let start: Vec<i64> = keep.iter().map(|&i| s.start_ns[i]).collect();
        let dur: Vec<i64> = keep.iter().map(|&i| s.dur_ns[i]).collect();
        let mut sub = vec![0u16; keep.len()];
        crate::parse::layout_rows(&start, &dur, &mut sub);
        let mut d = vec![HIDDEN; s.len()];
        for (k, &i) in keep.iter().enumerate() {
            d[i] = sub[k];
        }
        depth = Some(d);
    }
    let row_of = |depth: &Option<Vec<u16>>, i: usize| match depth {
        Some(d) => d[i],
        None => s.depth[i],
    };
    let mut folded = Vec::new();
    if mode.fold {
        let spanning = spanning_rows(s, |i| row_of(&depth, i));
        if spanning.len() >= 2 {
            let k = spanning.len() as u16 - 1;
            let d: Vec<u16> = (0..s.len())
                .map(|i| match row_of(&depth, i) {
                    HIDDEN => HIDDEN,
                    r if r < k => HIDDEN,
                    r => r - k,
                })
                .collect();
            folded = spanning.iter().map(|&i| s.name[i]).collect();
            depth = Some(d);
        }
    }
    let rows = (0..s.len())
        .map(|i| row_of(&depth, i))
        .filter(|&r| r != HIDDEN)
        .map(|r| r as u32 + 1)
        .max()
        .unwrap_or(0);
    LaneRows {
        depth,
        rows,
        folded,
    }
}

/// `full` in at most `cap` rows, for a lane not expanded: a lane with Python frames is re-laid
/// without them but for its `nn.Module` frames (as "Hide Python frames" does) under the row of
/// the frames spanning the lane when `full` folded them, so its operators take the first rows;
/// then the rows past `cap` are left out. `None` when `full` fits. Rows of operators, labels and
/// modules interleave with frames all down a `with_stack` thread, so keeping whole rows of
/// `full` would still have left most operators below the cut.
pub fn capped(
    full: &LaneRows,
    s: Slices<'_>,
    kinds: &Kinds,
    module: &[bool],
    cap: u32,
) -> Option<LaneRows> {
    if full.rows <= cap {
        return None;
    }
    let frames = (0..s.len()).any(|i| full.of(s, i) != HIDDEN && is_frame(s, kinds, module, i));
    if !frames {
        let depth = (0..s.len())
            .map(|i| match full.of(s, i) {
                r if r == HIDDEN || u32::from(r) >= cap => HIDDEN,
                r => r,
            })
            .collect();
        return Some(LaneRows {
            depth: Some(depth),
            rows: cap,
            folded: full.folded.clone(),
        });
    }
    let relaid = lane_rows(
        s,
        kinds,
        module,
        RowMode {
            python: false,
            fold: false,
        },
    );
    // The folded row stays on top, labelled with its chain, and the rest go one row down.
    let top = u16::from(!full.folded.is_empty());
    let depth: Vec<u16> = (0..s.len())
        .map(|i| {
            if top == 1 && full.of(s, i) == 0 && is_frame(s, kinds, module, i) {
                return 0;
            }
            match relaid.of(s, i) {
                HIDDEN => HIDDEN,
                r if u32::from(r + top) >= cap => HIDDEN,
                r => r + top,
            }
        })
        .collect();
    Some(LaneRows {
        depth: Some(depth),
        rows: (relaid.rows + u32::from(top)).min(cap),
        folded: full.folded.clone(),
    })
}

/// The slices of the leading rows that hold one slice each, lasting at least [`FOLD_SHARE`] of
/// the lane's extent; outermost first.
fn spanning_rows(s: Slices<'_>, row: impl Fn(usize) -> u16) -> Vec<usize> {
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    // Per row: how many slices, and one of them.
    let mut per_row: Vec<(u32, usize)> = Vec::new();
    for i in 0..s.len() {
        let r = row(i);
        if r == HIDDEN {
            continue;
        }
        first = first.min(s.start_ns[i]);
        last = last.max(s.end_ns(i));
        let r = r as usize;
        if per_row.len() <= r {
            per_row.resize(r + 1, (0, 0));
        }
        per_row[r].0 += 1;
        per_row[r].1 = i;
    }
    if per_row.is_empty() {
        return Vec::new();
    }
    let extent = (last - first) as f64;
    per_row
        .iter()
        .take_while(|&&(n, i)| n == 1 && s.dur_ns[i] as f64 >= FOLD_SHARE * extent)
        .map(|&(_, i)| i)
        .collect()
}

/// Whether each interned name is an `nn.Module` frame's.
pub fn module_names(trace: &Trace) -> Vec<bool> {
    trace
        .strings
        .each(|n| n.starts_with(crate::analysis::tables::modules::MODULE_PREFIX))
}

/// Every lane of a trace in `mode`.
pub fn trace_rows(trace: &Trace, mode: RowMode) -> Vec<LaneRows> {
    let kinds = Kinds::new(trace);
    let module = module_names(trace);
    trace
        .lanes
        .iter()
        .map(|l| {
            if mode == RowMode::MODEL {
                LaneRows {
                    depth: None,
                    rows: l.rows,
                    folded: Vec::new(),
                }
            } else {
                lane_rows(trace.slices_of(l), &kinds, &module, mode)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    /// A Python stack two frames deep over the whole thread, a step with an operator and its
    /// child, and a Python frame around the operator.
    fn trace() -> Trace {
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"<module>","cat":"python_function","pid":1,"tid":1,"ts":0,"dur":1000},
          {"ph":"X","name":"run","cat":"python_function","pid":1,"tid":1,"ts":1,"dur":998},
          {"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":10,"dur":500},
          {"ph":"X","name":"model.py(3): forward","cat":"python_function","pid":1,"tid":1,"ts":20,"dur":400},
          {"ph":"X","name":"aten::linear","cat":"cpu_op","pid":1,"tid":1,"ts":30,"dur":100},
          {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":40,"dur":50}
        ]}"#;
        parse_bytes(json.as_bytes()).unwrap()
    }

    fn rows_by_name(t: &Trace, r: &LaneRows) -> Vec<(String, u16)> {
        let s = t.slices(0);
        (0..s.len())
            .map(|i| (t.str(s.name[i]).to_string(), r.of(s, i)))
            .collect()
    }

    #[test]
    fn folds_the_frames_spanning_the_lane() {
        let t = trace();
        let kinds = Kinds::new(&t);
        let r = lane_rows(
            t.slices(0),
            &kinds,
            &[],
            RowMode {
                python: true,
                fold: true,
            },
        );
        assert_eq!(r.folded.len(), 2);
        assert_eq!(t.str(r.folded[0]), "<module>");
        assert_eq!(r.rows, 5);
        let rows = rows_by_name(&t, &r);
        assert_eq!(rows[0].1, HIDDEN);
        assert_eq!(rows[1], ("run".into(), 0));
        assert_eq!(rows[5], ("aten::mm".into(), 4));
    }

    #[test]
    fn hiding_python_frames_relays_the_operators() {
        let t = trace();
        let kinds = Kinds::new(&t);
        let r = lane_rows(
            t.slices(0),
            &kinds,
            &[],
            RowMode {
                python: false,
                fold: true,
            },
        );
        assert!(
            r.folded.is_empty(),
            "one row spanning the lane is not folded"
        );
        assert_eq!(r.rows, 3);
        let rows = rows_by_name(&t, &r);
        assert_eq!(rows[2], ("ProfilerStep#1".into(), 0));
        assert_eq!(rows[4], ("aten::linear".into(), 1));
        assert_eq!(rows[5], ("aten::mm".into(), 2));
        assert!(rows
            .iter()
            .filter(|(n, _)| !n.starts_with("aten") && !n.starts_with("Profiler"))
            .all(|&(_, d)| d == HIDDEN));
    }

    /// Hiding Python frames keeps the `nn.Module` frames: the operators stay under their modules.
    #[test]
    fn hiding_python_frames_keeps_the_modules() {
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":500},
          {"ph":"X","name":"model.py(3): forward","cat":"python_function","pid":1,"tid":1,"ts":10,"dur":400},
          {"ph":"X","name":"nn.Module: Linear_0","cat":"python_function","pid":1,"tid":1,"ts":20,"dur":300},
          {"ph":"X","name":"torch/nn/modules/linear.py(125): forward","cat":"python_function","pid":1,"tid":1,"ts":25,"dur":200},
          {"ph":"X","name":"aten::linear","cat":"cpu_op","pid":1,"tid":1,"ts":30,"dur":100}
        ]}"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let r = &trace_rows(
            &t,
            RowMode {
                python: false,
                fold: false,
            },
        )[0];
        let rows = rows_by_name(&t, r);
        assert_eq!(rows[0], ("ProfilerStep#1".into(), 0));
        assert_eq!(rows[1].1, HIDDEN);
        assert_eq!(rows[2], ("nn.Module: Linear_0".into(), 1));
        assert_eq!(rows[3].1, HIDDEN);
        assert_eq!(rows[4], ("aten::linear".into(), 2));
    }

    #[test]
    fn the_model_mode_is_the_model() {
        let t = trace();
        let r = trace_rows(&t, RowMode::MODEL);
        assert!(r[0].depth.is_none());
        assert_eq!(r[0].rows, t.lanes[0].rows);
    }
}
