//! The overview strip: how busy the GPUs were over the whole trace, in fixed time buckets.
//!
//! Busy = inside the union of every GPU event interval (kernels, memcpy, memset; not
//! `gpu_user_annotation`, as `analysis::idle` counts busy time), over all devices.
//! A trace without GPU events shows the union of top-level CPU slices instead, and says so in
//! its label.

use crate::model::category::Kinds;
use crate::model::Trace;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Overview {
    pub label: String,
    pub span_ns: i64,
    /// Busy fraction (0..=1) of each of the equal buckets covering `[0, span_ns]`.
    pub values: Vec<f32>,
}

pub fn overview(trace: &Trace, buckets: usize) -> Overview {
    let buckets = buckets.max(1);
    let span = trace.span_ns().max(1);
    let kinds = Kinds::new(trace);
    let mut spans: Vec<(i64, i64)> = trace
        .gpu_lanes()
        .flat_map(|(_, l)| {
            let s = trace.slices_of(l);
            (0..s.len())
                .filter(|&i| kinds.of_cat(s.cat[i]).is_gpu_busy())
                .map(move |i| (s.start_ns[i], s.end_ns(i)))
        })
        .collect();
    let label = if spans.is_empty() {
        spans = trace
            .lanes
            .iter()
            .filter(|l| !l.is_gpu())
            .flat_map(|l| {
                let s = trace.slices_of(l);
                (0..s.len())
                    .filter(|&i| s.depth[i] == 0)
                    .map(move |i| (s.start_ns[i], s.end_ns(i)))
            })
            .collect();
        "CPU busy (any thread)"
    } else {
        "GPU busy"
    };
    spans.sort_unstable();
    let mut values = vec![0f64; buckets];
    let width = span as f64 / buckets as f64;
    let mut add = |a: i64, b: i64| {
        let (a, b) = (a as f64, b as f64);
        let first = ((a / width) as usize).min(buckets - 1);
        let last = ((b / width) as usize).min(buckets - 1);
        for (k, v) in values.iter_mut().enumerate().take(last + 1).skip(first) {
            let lo = a.max(k as f64 * width);
            let hi = b.min((k + 1) as f64 * width);
            *v += (hi - lo).max(0.0);
        }
    };
    let mut cur: Option<(i64, i64)> = None;
    for (a, b) in spans {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            _ => {
                if let Some((ca, cb)) = cur {
                    add(ca, cb);
                }
                cur = Some((a, b));
            }
        }
    }
    if let Some((ca, cb)) = cur {
        add(ca, cb);
    }
    Overview {
        label: label.to_string(),
        span_ns: span,
        values: values
            .into_iter()
            .map(|v| (v / width).clamp(0.0, 1.0) as f32)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_bytes;

    #[test]
    fn gpu_union_per_bucket() {
        // Two overlapping kernels on two streams cover [0, 30) of a 100 us span; an annotation
        // spanning everything does not count.
        let json = r#"{"traceEvents":[
          {"ph":"X","name":"a","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":100},
          {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":0,"dur":20,"args":{"device":0,"stream":7}},
          {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":8,"ts":10,"dur":20,"args":{"device":0,"stream":8}},
          {"ph":"X","name":"s","cat":"gpu_user_annotation","pid":0,"tid":9,"ts":0,"dur":100,"args":{"device":0,"stream":9}}
        ]}"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let o = overview(&t, 10);
        assert_eq!(o.label, "GPU busy");
        assert_eq!(
            o.values,
            vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        );
        let o = overview(&t, 4);
        assert_eq!(o.values, vec![1.0, 0.2, 0.0, 0.0]);
    }

    #[test]
    fn cpu_only_trace() {
        let json = r#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":50},
                       {"ph":"X","name":"b","pid":1,"tid":1,"ts":75,"dur":25}]"#;
        let t = parse_bytes(json.as_bytes()).unwrap();
        let o = overview(&t, 4);
        assert!(o.label.starts_with("CPU"));
        assert_eq!(o.values, vec![1.0, 1.0, 0.0, 1.0]);
    }
}
