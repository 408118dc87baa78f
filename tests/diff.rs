//! `sightline diff` against the truth: pairs of real traces that differ by one known change, each
//! with PyTorch's own `key_averages()`; the same models on two kinds of GPU; and the properties
//! every diff has (a trace against itself is all zeros; swapping the sides negates it).
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use serde_json::Value;
use sightline::analysis::derived::Derived;
use sightline::analysis::diff::{diff, Diff, DiffOptions, KernelMatch, Mode, Presence};
use sightline::analysis::digest::Digest;
use sightline::analysis::tables::{op_table, Forest};
use sightline::model::Trace;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn parse_file(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    sightline::parse::parse_bytes(&bytes).unwrap()
}

fn digest(path: &Path) -> Digest {
    Derived::new(parse_file(path)).digest("")
}

fn real(name: &str) -> PathBuf {
    common::shared_fixtures().join("real").join(name)
}

/// Every before/after pair with truth: `NAME.base.*` and `NAME.new.*` in the shared pairs folder
/// and in `tests/fixtures/pairs/`. Returns (name, base trace, new trace, base truth, new truth).
fn pairs() -> Vec<(String, PathBuf, PathBuf, Value, Value)> {
    let mut out = Vec::new();
    for dir in [
        common::shared_fixtures().join("pytorch-cpu-pairs"),
        common::local_fixture("pairs"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter_map(|n| n.strip_suffix(".base.truth.json").map(str::to_string))
            .collect();
        names.sort();
        for name in names {
            let trace = |side: &str| {
                ["pt.trace.json.gz", "pt.trace.json"]
                    .iter()
                    .map(|ext| dir.join(format!("{name}.{side}.{ext}")))
                    .find(|p| p.exists())
                    .unwrap_or_else(|| panic!("no {side} trace for {name} in {}", dir.display()))
            };
            let truth = |side: &str| -> Value {
                let p = dir.join(format!("{name}.{side}.truth.json"));
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
            };
            out.push((
                name.clone(),
                trace("base"),
                trace("new"),
                truth("base"),
                truth("new"),
            ));
        }
    }
    out
}

/// PyTorch's rows keyed by (name, input shapes as a JSON value): (count, self CPU, CPU total).
fn truth_rows(truth: &Value, by_shape: bool) -> HashMap<(String, Value), (u64, f64, f64)> {
    let key = if by_shape {
        "key_averages_by_input_shape"
    } else {
        "key_averages"
    };
    truth[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}"))
        .iter()
        .map(|r| {
            let shapes = if by_shape {
                let s = r["input_shapes"].as_str().unwrap();
                serde_json::from_str(s).unwrap_or(Value::String(s.to_string()))
            } else {
                Value::Null
            };
            (
                (r["key"].as_str().unwrap().to_string(), shapes),
                (
                    r["count"].as_u64().unwrap(),
                    r["self_cpu_us"].as_f64().unwrap(),
                    r["cpu_total_us"].as_f64().unwrap(),
                ),
            )
        })
        .collect()
}

#[test]
fn every_operator_row_is_the_difference_of_pytorchs_two_tables() {
    let pairs = pairs();
    assert!(!pairs.is_empty(), "no before/after pairs found");
    for (name, base_path, new_path, base_truth, new_truth) in pairs {
        let (base, new) = (digest(&base_path), digest(&new_path));
        for by_shape in [false, true] {
            let tb = truth_rows(&base_truth, by_shape);
            let tn = truth_rows(&new_truth, by_shape);
            for mode in [Mode::Total, Mode::PerStep] {
                let d = diff(&base, &new, &DiffOptions { mode, by_shape });
                let (kb, kn) = match mode {
                    Mode::Total => (1.0, 1.0),
                    Mode::PerStep => (base.steps.active as f64, new.steps.active as f64),
                };
                let mut seen = 0;
                for r in &d.ops {
                    let key = (
                        r.name.clone(),
                        r.input_shapes.clone().unwrap_or(Value::Null),
                    );
                    let zero = (0, 0.0, 0.0);
                    let b = tb.get(&key).copied().unwrap_or(zero);
                    let n = tn.get(&key).copied().unwrap_or(zero);
                    assert!(
                        tb.contains_key(&key) || tn.contains_key(&key),
                        "{name}: {key:?} is in neither of PyTorch's tables"
                    );
                    seen += 1;
                    let what = format!("{name} {mode:?} by_shape={by_shape} {key:?}");
                    assert_eq!(
                        r.status,
                        match (tb.contains_key(&key), tn.contains_key(&key)) {
                            (true, false) => Presence::Removed,
                            (false, true) => Presence::Added,
                            _ => Presence::Both,
                        },
                        "{what}"
                    );
                    if mode == Mode::Total {
                        assert_eq!(r.base.calls.0, b.0 as f64, "{what} base calls");
                        assert_eq!(r.new.calls.0, n.0 as f64, "{what} new calls");
                    } else {
                        assert_eq!(r.base.calls.0, b.0 as f64 / kb, "{what} base calls");
                        assert_eq!(r.new.calls.0, n.0 as f64 / kn, "{what} new calls");
                    }
                    let expect_self = n.1 / kn - b.1 / kb;
                    assert!(
                        (r.delta_self_cpu_us - expect_self).abs() <= 1e-6,
                        "{what}: delta self CPU {} vs PyTorch {expect_self}",
                        r.delta_self_cpu_us
                    );
                    let expect_total = n.2 / kn - b.2 / kb;
                    let total = r.new.cpu_total_us - r.base.cpu_total_us;
                    assert!(
                        (total - expect_total).abs() <= 1e-6,
                        "{what}: delta CPU total {total} vs PyTorch {expect_total}"
                    );
                }
                let union = tb
                    .keys()
                    .chain(tn.keys())
                    .collect::<std::collections::HashSet<_>>();
                assert_eq!(seen, union.len(), "{name}: one diff row per operator");
            }
        }
        println!("{name}: operator rows equal PyTorch's differences, with and without shapes");
    }
}

/// The pair's known change shows in the headline: `workers` moved the DataLoader to worker
/// processes, so its in-process DataLoader time falls and the single-process iterator is gone.
#[test]
fn the_workers_pair_says_the_dataloader_got_faster() {
    let dir = common::shared_fixtures().join("pytorch-cpu-pairs");
    let d = diff(
        &digest(&dir.join("workers.base.pt.trace.json.gz")),
        &digest(&dir.join("workers.new.pt.trace.json.gz")),
        &DiffOptions::default(),
    );
    let dl = d
        .steps
        .delta
        .breakdown
        .iter()
        .find(|c| c.category == "DataLoader")
        .unwrap();
    assert!(dl.us < -1000.0, "DataLoader per step {}", dl.us);
    assert_eq!(d.summary.contributors[0].name, "DataLoader");
    assert!(
        d.summary.headline.contains("DataLoader -"),
        "{}",
        d.summary.headline
    );
    let single = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    let multi = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
    let row = |n: &str| d.ops.iter().find(|o| o.name == n).unwrap();
    assert_eq!(row(single).status, Presence::Removed);
    assert_eq!(row(multi).status, Presence::Added);
    assert_eq!(row(single).new.calls.0, 0.0);
    assert_eq!(row(multi).base.calls.0, 0.0);
}

/// The pairs made by `tests/fixtures/pairs/make.py` show their one change.
#[test]
fn the_made_pairs_show_their_change() {
    let dir = common::local_fixture("pairs");
    let pair = |name: &str, by_shape: bool| {
        diff(
            &digest(&dir.join(format!("{name}.base.pt.trace.json.gz"))),
            &digest(&dir.join(format!("{name}.new.pt.trace.json.gz"))),
            &DiffOptions {
                mode: Mode::PerStep,
                by_shape,
            },
        )
    };
    let d = pair("contiguous", false);
    let row = |n: &str| d.ops.iter().find(|o| o.name == n).unwrap();
    assert_eq!(row("aten::contiguous").status, Presence::Removed);
    assert_eq!(row("aten::contiguous").base.calls.0, 1.0);
    assert_eq!(
        (
            row("aten::copy_").base.calls.0,
            row("aten::copy_").new.calls.0
        ),
        (3.0, 2.0)
    );

    let d = pair("batch", true);
    let conv = |shape: &str| {
        d.ops
            .iter()
            .find(|o| {
                o.name == "aten::conv2d"
                    && o.input_shapes
                        .as_ref()
                        .unwrap()
                        .to_string()
                        .starts_with(shape)
            })
            .unwrap_or_else(|| panic!("no aten::conv2d row with {shape}"))
            .status
    };
    assert_eq!(conv("[[32,3,32,32]"), Presence::Removed);
    assert_eq!(conv("[[64,3,32,32]"), Presence::Added);
}

/// The same model on H100 and MI300X: operators of one name pair up with each trace's own
/// operator table on its side, and GPU ops whose names differ (cuBLAS/CUTLASS vs hipBLASLt,
/// FlashAttention vs `attn_fwd`) pair up through their launching operator and module.
#[test]
fn cross_hardware_pairs_match_operators_by_name_and_kernels_through_launchers() {
    for (h100, mi300) in [
        (
            "tracelens_h100_bert_small_stack_mem.json.gz",
            "tracelens_mi300_bert_small.json.gz",
        ),
        (
            "tracelens_h100_falconsai_vit.json.gz",
            "tracelens_mi300_falconsai_vit.json.gz",
        ),
    ] {
        let (tb, tn) = (parse_file(&real(h100)), parse_file(&real(mi300)));
        let (b, n) = (Derived::new(&tb).digest(""), Derived::new(&tn).digest(""));
        let d = diff(
            &b,
            &n,
            &DiffOptions {
                mode: Mode::Total,
                by_shape: false,
            },
        );
        // Operators: each side of a row is that trace's own row, exactly.
        let (ob, on) = (
            op_table(&tb, &Forest::build(&tb), false),
            op_table(&tn, &Forest::build(&tn), false),
        );
        let mut both = 0;
        for r in &d.ops {
            let find = |t: &sightline::analysis::tables::OpTable| {
                t.rows.iter().find(|x| x.name == r.name).map(|x| {
                    (
                        x.calls as f64,
                        x.self_cpu_us,
                        x.cpu_total_us,
                        x.self_device_us,
                        x.device_total_us,
                    )
                })
            };
            let side = |s: &sightline::analysis::diff::OpSide| {
                (
                    s.calls.0,
                    s.self_cpu_us,
                    s.cpu_total_us,
                    s.self_device_us,
                    s.device_total_us,
                )
            };
            let zero = (0.0, 0.0, 0.0, 0.0, 0.0);
            assert_eq!(
                side(&r.base),
                find(&ob).unwrap_or(zero),
                "{h100} {}",
                r.name
            );
            assert_eq!(
                side(&r.new),
                find(&on).unwrap_or(zero),
                "{mi300} {}",
                r.name
            );
            if r.status == Presence::Both {
                both += 1;
            }
        }
        let names = |t: &sightline::analysis::tables::OpTable| {
            t.rows
                .iter()
                .map(|r| r.name.clone())
                .collect::<std::collections::HashSet<_>>()
        };
        let common_names = names(&ob).intersection(&names(&on)).count();
        assert_eq!(
            both, common_names,
            "{h100}: every shared operator is one row"
        );
        assert!(d
            .ops
            .iter()
            .any(|o| o.name == "aten::addmm" && o.status == Presence::Both));

        // Kernels: all GPU time is in some row, and nearly all of it in rows with both sides.
        let total = |f: fn(&sightline::analysis::diff::KernelDiff) -> f64| -> f64 {
            d.kernels.iter().map(f).sum()
        };
        assert!((total(|k| k.base.total_us) * 1000.0 - b.summary.gpu_time_ns as f64).abs() < 1.0);
        assert!((total(|k| k.new.total_us) * 1000.0 - n.summary.gpu_time_ns as f64).abs() < 1.0);
        let paired = |side: fn(&sightline::analysis::diff::KernelDiff) -> f64| -> f64 {
            d.kernels
                .iter()
                .filter(|k| k.status == Presence::Both)
                .map(side)
                .sum::<f64>()
        };
        let (pb, pn) = (
            paired(|k| k.base.total_us) / total(|k| k.base.total_us),
            paired(|k| k.new.total_us) / total(|k| k.new.total_us),
        );
        println!("{h100} vs {mi300}: GPU time in paired kernel rows {pb:.3} / {pn:.3}");
        assert!(pb > 0.9 && pn > 0.9, "{h100}: paired {pb} / {pn}");
        // The GEMMs of aten::addmm pair through the launcher though their names differ.
        let gemm = d
            .kernels
            .iter()
            .find(|k| {
                k.matched_by == KernelMatch::Launcher
                    && k.launcher.as_deref() == Some("aten::addmm")
                    && k.status == Presence::Both
            })
            .unwrap_or_else(|| panic!("{h100}: no addmm GEMM paired through its launcher"));
        assert!(gemm.module.as_deref().unwrap().starts_with("nn.Module: "));
        assert!(gemm.base.names.iter().all(|x| !gemm.new.names.contains(x)));
    }
}

/// Every number of a diff, flattened with its path, for the property checks.
fn numbers(v: &Value, path: String, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => out.push((path, n.as_f64().unwrap())),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                numbers(x, format!("{path}[{i}]"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                numbers(x, format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

fn deltas(d: &Diff) -> Vec<(String, f64)> {
    let v = serde_json::to_value(d).unwrap();
    let mut all = Vec::new();
    numbers(&v, String::new(), &mut all);
    all.retain(|(p, _)| {
        let leaf = p.rsplit('.').next().unwrap();
        leaf.starts_with("delta") || p.starts_with(".steps.delta") || p.starts_with(".idle.delta")
    });
    all
}

fn sample_traces() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "tracelens_h100_bert_small_stack_mem.json.gz",
        "tracelens_mi300_bert_small.json.gz",
        "hta_a100_alexnet_cuda_sync.json.gz",
        "param_dlrm_v100_rank0of8.pt.trace.json.gz",
    ]
    .iter()
    .map(|n| real(n))
    .collect();
    let dir = common::shared_fixtures().join("pytorch-cpu-pairs");
    v.push(dir.join("workers.base.pt.trace.json.gz"));
    v.push(dir.join("workers.new.pt.trace.json.gz"));
    v
}

#[test]
fn a_trace_against_itself_is_all_zeros() {
    for p in sample_traces() {
        let a = digest(&p);
        for by_shape in [false, true] {
            for mode in [Mode::PerStep, Mode::Total] {
                let d = diff(&a, &a, &DiffOptions { mode, by_shape });
                let what = format!("{} {mode:?} {by_shape}", p.display());
                for (path, x) in deltas(&d) {
                    // `steps.delta.step_time_pct` is 0 too; nothing else may move.
                    assert_eq!(x, 0.0, "{what}: {path}");
                }
                assert!(d.ops.iter().all(|o| o.status == Presence::Both));
                assert!(d
                    .kernels
                    .iter()
                    .all(|k| k.status == Presence::Both && k.matched_by == KernelMatch::Name));
                assert!(d
                    .ops
                    .iter()
                    .all(|o| o.ratio_self_cpu.is_none_or(|r| r == 1.0)));
                let f = &d.findings;
                assert!(f.added.is_empty() && f.removed.is_empty() && f.changed.is_empty());
                assert!(d.summary.contributors.is_empty(), "{what}");
                assert!(d.summary.explained.is_empty(), "{what}");
                assert_eq!(d.summary.explained_pct, None, "{what}");
            }
        }
    }
}

#[test]
fn swapping_the_sides_negates_the_diff() {
    let traces = sample_traces();
    let digests: Vec<Digest> = traces.iter().map(|p| digest(p)).collect();
    for (i, j) in [(0, 1), (4, 5), (2, 3), (0, 4)] {
        for by_shape in [false, true] {
            let opts = DiffOptions {
                mode: Mode::PerStep,
                by_shape,
            };
            let ab = diff(&digests[i], &digests[j], &opts);
            let ba = diff(&digests[j], &digests[i], &opts);
            let what = format!("{} vs {}", traces[i].display(), traces[j].display());
            // Rows are ordered by the size of their change, the same both ways.
            let (dab, dba) = (deltas(&ab), deltas(&ba));
            assert_eq!(dab.len(), dba.len(), "{what}");
            for ((p, x), (q, y)) in dab.iter().zip(&dba) {
                assert_eq!(p, q, "{what}");
                // `devices` in idle.delta is a count of the difference, not signed; a percent
                // change is relative to a different base each way.
                if p.ends_with(".devices") {
                    assert_eq!(x, y);
                } else if !p.ends_with("_pct") {
                    assert_eq!(*x, -*y, "{what}: {p}");
                }
            }
            for (r, s) in ab.ops.iter().zip(&ba.ops) {
                assert_eq!((&r.name, &r.input_shapes), (&s.name, &s.input_shapes));
                assert_eq!(r.base, s.new, "{what} {}", r.name);
                let swapped = match r.status {
                    Presence::Added => Presence::Removed,
                    Presence::Removed => Presence::Added,
                    Presence::Both => Presence::Both,
                };
                assert_eq!(s.status, swapped);
            }
            for (r, s) in ab.kernels.iter().zip(&ba.kernels) {
                assert_eq!((&r.launcher, &r.module), (&s.launcher, &s.module));
                assert_eq!((&r.base, &r.new), (&s.new, &s.base));
                assert_eq!(r.matched_by, s.matched_by);
            }
            let ids = |v: &[sightline::analysis::diff::FindingDiff]| {
                v.iter()
                    .map(|f| {
                        let c = f.crossed.as_ref().map(|c| (c.base, c.new, c.threshold));
                        (f.finding.id.clone(), c)
                    })
                    .collect::<Vec<_>>()
            };
            let swapped = |v: &[sightline::analysis::diff::FindingDiff]| {
                v.iter()
                    .map(|f| {
                        let c = f.crossed.as_ref().map(|c| (c.new, c.base, c.threshold));
                        (f.finding.id.clone(), c)
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(ids(&ab.findings.added), swapped(&ba.findings.removed));
            assert_eq!(ids(&ab.findings.removed), swapped(&ba.findings.added));
            assert_eq!(ab.findings.changed.len(), ba.findings.changed.len());
            let names = |d: &Diff| {
                d.summary
                    .contributors
                    .iter()
                    .map(|c| (c.source, c.name.clone(), c.delta_us))
                    .collect::<Vec<_>>()
            };
            let negated: Vec<_> = names(&ba).into_iter().map(|(s, n, x)| (s, n, -x)).collect();
            assert_eq!(names(&ab), negated, "{what}");
            // The explanation names the same categories and operators, negated.
            let why = |d: &Diff| {
                let s = &d.summary;
                let parts: Vec<_> = s
                    .explained
                    .iter()
                    .map(|c| {
                        let ops: Vec<_> = c.operators.iter().map(|o| o.name.clone()).collect();
                        (c.category.clone(), c.explained_us, ops)
                    })
                    .collect();
                (parts, s.explained_pct, s.unexplained_us)
            };
            let (pa, pct_a, ua) = why(&ab);
            let (pb, pct_b, ub) = why(&ba);
            let pb: Vec<_> = pb.into_iter().map(|(c, x, o)| (c, -x, o)).collect();
            assert_eq!(pa, pb, "{what}");
            assert_eq!(pct_a, pct_b, "{what}");
            assert_eq!(ua, ub.map(|u| -u), "{what}");
        }
    }
}

#[test]
fn a_digest_survives_json_and_equals_a_fresh_one() {
    let p = real("tracelens_h100_bert_small_stack_mem.json.gz");
    let a = digest(&p);
    let text = serde_json::to_string(&a).unwrap();
    let back: Digest = serde_json::from_str(&text).unwrap();
    assert_eq!(a, back);
    assert_eq!(a, digest(&p), "a digest is a function of the trace");
    // The digest is small next to the trace: it holds sums, not events.
    let trace_bytes = 1_100_000;
    assert!(text.len() * 5 < trace_bytes, "{} bytes", text.len());
}

fn sightline(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn workers(side: &str) -> String {
    common::shared_fixtures()
        .join(format!("pytorch-cpu-pairs/workers.{side}.pt.trace.json.gz"))
        .to_string_lossy()
        .to_string()
}

#[test]
fn cli_json_has_the_documented_fields() {
    let (b, n) = (workers("base"), workers("new"));
    let (code, out, err) = sightline(&["diff", &b, &n, "--json", "--by-shape"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for k in [
        "steps", "ops", "kernels", "labels", "idle", "findings", "summary",
    ] {
        assert!(!v[k].is_null(), "no {k}");
    }
    for side in ["base", "new", "delta"] {
        assert!(v["steps"][side]["step_time_us"].is_number(), "steps.{side}");
        assert!(v["steps"][side]["steps"].is_number(), "steps.{side}");
    }
    for k in ["added", "removed", "changed"] {
        assert!(v["findings"][k].is_array());
    }
    let op = &v["ops"][0];
    for k in [
        "name",
        "input_shapes",
        "base",
        "new",
        "delta_self_cpu_us",
        "delta_self_device_us",
        "ratio_self_cpu",
    ] {
        assert!(op.get(k).is_some(), "ops[0].{k}");
    }
    assert!(op["input_shapes"].is_array(), "{}", op["input_shapes"]);
    for side in ["base", "new"] {
        for k in [
            "calls",
            "self_cpu_us",
            "cpu_total_us",
            "self_device_us",
            "device_total_us",
        ] {
            assert!(op[side][k].is_number(), "ops[0].{side}.{k}");
        }
    }
    // An op absent from one side has zeros there.
    let added = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["status"] == "added")
        .unwrap();
    assert_eq!(added["base"]["calls"], 0);
    assert_eq!(added["base"]["self_cpu_us"], 0.0);
    assert!(added["ratio_self_cpu"].is_null());
    assert_eq!(v["mode"], "per_step");

    let (_, out, _) = sightline(&["diff", &b, &n, "--json", "--total", "--top", "3"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mode"], "total");
    assert_eq!(v["ops"].as_array().unwrap().len(), 3);
    assert!(v["ops"][0].get("input_shapes").is_none());
}

#[test]
fn fail_if_exits_one_with_the_reason_and_bad_input_exits_two() {
    let (b, n) = (workers("base"), workers("new"));
    // The DataLoader moved out of the process: the in-process DataLoader time per step fell.
    let (code, out, err) = sightline(&["diff", &b, &n, "--fail-if", "step:DataLoader<-10%"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("step:DataLoader<-10% fails"), "{err}");
    let (code, _, err) = sightline(&["diff", &b, &n, "--fail-if=step:DataLoader>+10%"]);
    assert_eq!(code, 0, "{err}");
    // Against itself nothing moves: every gate passes.
    let mut args = vec!["diff", &b, &b];
    for gate in [
        "step_time>+0%",
        "op:aten::copy_.self_cpu>+10%",
        "op:aten::addmm.calls>0",
        "finding:few_active_steps",
        "gpu_idle>0us",
    ] {
        args.extend(["--fail-if", gate]);
    }
    let (code, out, err) = sightline(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("ok   ").count(), 5, "{out}");
    // Per-step calls: one more mul per step fails an absolute gate the other way round.
    let (code, _, err) = sightline(&["diff", &n, &b, "--fail-if", "op:aten::mul.calls>+1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("aten::mul"), "{err}");
    // Several conditions: any one failing fails the run, and each failure is named.
    let (code, _, err) = sightline(&[
        "diff",
        &b,
        &n,
        "--fail-if",
        "step:DataLoader<-10%",
        "--fail-if",
        "step_time>+50%",
    ]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");

    for bad in [
        vec!["diff", &b],
        vec!["diff", &b, &n, "--fail-if", "wall_time>5%"],
        vec!["diff", &b, &n, "--fail-if", "op:no::such_op.self_cpu>5%"],
        vec!["diff", &b, &n, "--per-step", "--total"],
        vec!["diff", &b, "/nonexistent/trace.json"],
    ] {
        let (code, out, err) = sightline(&bad);
        assert_eq!(code, 2, "{bad:?}: {out}{err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
    let html = common::local_fixture("parse/page.html");
    let (code, _, err) = sightline(&["diff", &b, html.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not a trace"), "{err}");
}

#[test]
fn a_saved_digest_stands_for_its_trace() {
    let (b, n) = (workers("base"), workers("new"));
    let (code, saved, _) = sightline(&["digest", &b]);
    assert_eq!(code, 0);
    let path = std::env::temp_dir().join(format!("sightline-digest-{}.json", std::process::id()));
    std::fs::write(&path, saved).unwrap();
    let (_, from_trace, _) = sightline(&["diff", &b, &n, "--json"]);
    let (code, from_digest, err) = sightline(&["diff", path.to_str().unwrap(), &n, "--json"]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(code, 0, "{err}");
    let strip = |s: &str| {
        let mut v: Value = serde_json::from_str(s).unwrap();
        v.as_object_mut().unwrap().remove("base_file");
        v
    };
    assert_eq!(strip(&from_trace), strip(&from_digest));
}

/// The headline tells the median step, as the Overviews do: one slow step (the `num_workers=4`
/// run's 206.5 ms last step) moves a mean, not a median.
#[test]
fn the_headline_tells_the_median_step() {
    let d = diff(
        &digest(
            &common::shared_fixtures()
                .join("real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz"),
        ),
        &digest(
            &common::shared_fixtures()
                .join("gpu-training/kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz"),
        ),
        &DiffOptions::default(),
    );
    let s = &d.summary;
    assert_eq!(s.statistic, "median");
    assert!(
        (s.step_time_base_us - 176_273.0).abs() < 1.0,
        "{}",
        s.step_time_base_us
    );
    assert!(
        (s.step_time_new_us - 125_087.0).abs() < 1.0,
        "{}",
        s.step_time_new_us
    );
    assert!(!s.noise, "{}", s.headline);
    assert!(
        s.headline
            .starts_with("median step 176 ms -> 125 ms, -51.2 ms"),
        "{}",
        s.headline
    );
    // The means stay in the steps' rows.
    assert!((d.steps.new.step_time_us - 142_754.0).abs() < 1.0);
}

/// A change within how much a run's steps differ among themselves is noise: said so, and no row
/// that moved less is named (the CPU pair's `aten::mul` self CPU -0.7 ms), while the DataLoader,
/// steady from step to step, still is.
#[test]
fn a_change_within_the_noise_is_told_as_noise() {
    let dir = common::shared_fixtures().join("pytorch-cpu-pairs");
    let d = diff(
        &digest(&dir.join("workers.base.pt.trace.json.gz")),
        &digest(&dir.join("workers.new.pt.trace.json.gz")),
        &DiffOptions::default(),
    );
    let s = &d.summary;
    assert!(s.noise, "{}", s.headline);
    assert!(s.step_time_delta_us.abs() < s.noise_us);
    assert!(s.headline.contains("within the noise"), "{}", s.headline);
    assert!(
        s.contributors.iter().all(|c| c.source == "step"),
        "{:?}",
        s.contributors
    );
    assert_eq!(s.contributors[0].name, "DataLoader");
}

fn judge(name: &str) -> PathBuf {
    common::local_fixture("judge").join(name)
}

/// A finding that only crossed its threshold is not told as one that appeared: with the
/// untraced time gone, the same optimizer loop's share of the shorter steps rises over 15%
/// (`optimizer_step_heavy` in NEW only), and the untraced time's share falls under its
/// threshold without going to nothing. The annotations of `annotation_overhead`'s fixed program
/// are gone: that finding went, and says nothing of a threshold.
#[test]
fn a_finding_that_crossed_its_threshold_says_so_with_both_figures() {
    let d = diff(
        &digest(&judge("untraced_cpu_time.base.pt.trace.json.gz")),
        &digest(&judge("untraced_cpu_time.fixed.pt.trace.json.gz")),
        &DiffOptions::default(),
    );
    let added = d
        .findings
        .added
        .iter()
        .find(|f| f.finding.id == "optimizer_step_heavy")
        .expect("optimizer_step_heavy in NEW only");
    let c = added.crossed.as_ref().expect("it crossed its threshold");
    assert_eq!((c.unit.as_str(), c.threshold), ("share", 0.15));
    assert!(c.base < 0.15 && 0.15 <= c.new, "{c:?}");
    assert_eq!(
        c.text(),
        format!(
            "{:.1}% -> {:.1}% (threshold 15.0%)",
            c.base * 100.0,
            c.new * 100.0
        )
    );
    let removed = d
        .findings
        .removed
        .iter()
        .find(|f| f.finding.id == "untraced_cpu_time")
        .expect("untraced_cpu_time in BASE only");
    let c = removed.crossed.as_ref().expect("it crossed its threshold");
    assert!(
        c.new > 0.0 && c.new < c.threshold && c.threshold <= c.base,
        "{c:?}"
    );

    let gone = diff(
        &digest(&judge("annotation_overhead.base.pt.trace.json.gz")),
        &digest(&judge("annotation_overhead.fixed.pt.trace.json.gz")),
        &DiffOptions::default(),
    );
    let f = &gone.findings.removed[0];
    assert_eq!(f.finding.id, "annotation_overhead");
    assert!(f.crossed.is_none(), "{:?}", f.crossed);

    // In JSON the finding keeps its fields, and `crossed` sits beside them.
    let v = serde_json::to_value(&d).unwrap();
    let a = v["findings"]["added"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "optimizer_step_heavy")
        .unwrap();
    for k in ["id", "severity", "title", "detail"] {
        assert!(a[k].is_string(), "{k}");
    }
    for k in ["base", "new", "threshold"] {
        assert!(a["crossed"][k].is_number(), "crossed.{k}");
    }
    assert_eq!(a["crossed"]["unit"], "share");
}

/// A finding raised by both traces at another severity tells the rule's figure in each: what
/// moved it. BASE is the untraced-time trace's digest; NEW the same with that finding one step
/// more severe and its figure doubled, as a second run of a worse program would record.
#[test]
fn a_finding_that_changed_severity_tells_both_figures() {
    let base = digest(&judge("untraced_cpu_time.base.pt.trace.json.gz"));
    let mut new = base.clone();
    let id = "untraced_cpu_time";
    let f = new.findings.iter_mut().find(|f| f.id == id).unwrap();
    f.severity = if f.severity == "critical" {
        "warning".into()
    } else {
        "critical".into()
    };
    let m = new.measured.get_mut(id).expect("the rule's figure is kept");
    m.value *= 2.0;
    let d = diff(&base, &new, &DiffOptions::default());
    let c = d
        .findings
        .changed
        .iter()
        .find(|c| c.id == id)
        .expect("its severity changed");
    let moved = c.measured.as_ref().expect("both measured it");
    let b = base.measured[id].value;
    assert_eq!((moved.base, moved.new), (b, 2.0 * b));
    assert_eq!(moved.unit, base.measured[id].unit);
    assert_eq!(
        moved.text(),
        format!("{:.1}% -> {:.1}%", b * 100.0, b * 200.0)
    );
    let v = serde_json::to_value(&d).unwrap();
    let row = &v["findings"]["changed"][0];
    assert_eq!(row["measured"]["new"].as_f64(), Some(2.0 * b));
}

/// Compile work inside the steps is measured wherever compiled code runs: compiled once before
/// the steps (0%), it crosses the threshold in the trace that recompiles inside them (99.9%).
/// FP32 GEMMs' share is measured on a GPU with Tensor Cores (the H100) whether it fires or not.
#[test]
fn compile_work_and_fp32_gemms_are_measured_where_they_can_be() {
    let compiled = |name: &str| digest(&common::local_fixture(&format!("compiled/{name}.json.gz")));
    let d = diff(
        &compiled("compiled_once"),
        &compiled("recompiles"),
        &DiffOptions::default(),
    );
    let f = d
        .findings
        .added
        .iter()
        .find(|f| f.finding.id == "compile_in_steps")
        .expect("compile_in_steps in NEW only");
    let c = f.crossed.as_ref().expect("it crossed its threshold");
    assert_eq!((c.base, c.threshold, c.unit.as_str()), (0.0, 0.05, "share"));
    assert!(c.new > 0.9, "{c:?}");

    let h100 = digest(&real("tracelens_h100_bert_small_stack_mem.json.gz"));
    let m = &h100.measured["fp32_gemm_on_tensor_core_gpu"];
    assert_eq!((m.threshold, m.unit.as_str()), (0.05, "share"));
    assert!((0.0..0.05).contains(&m.value), "{m:?}");
    // No torch.compile, no share of compile work.
    assert!(!h100.measured.contains_key("compile_in_steps"));
}

/// A digest written before the rules' figures were kept compares as before: no `crossed`.
#[test]
fn a_digest_without_the_rules_figures_still_compares() {
    let old = |p: &Path| -> Digest {
        let mut v = serde_json::to_value(digest(p)).unwrap();
        v.as_object_mut().unwrap().remove("measured").unwrap();
        serde_json::from_value(v).unwrap()
    };
    let (b, n) = (
        judge("untraced_cpu_time.base.pt.trace.json.gz"),
        judge("untraced_cpu_time.fixed.pt.trace.json.gz"),
    );
    for (base, new) in [
        (old(&b), digest(&n)),
        (digest(&b), old(&n)),
        (old(&b), old(&n)),
    ] {
        let d = diff(&base, &new, &DiffOptions::default());
        assert!(d
            .findings
            .added
            .iter()
            .any(|f| f.finding.id == "optimizer_step_heavy"));
        assert!(d
            .findings
            .added
            .iter()
            .chain(&d.findings.removed)
            .all(|f| f.crossed.is_none()));
    }
}

/// The CLI's text says "crossed its threshold" with both figures.
#[test]
fn the_cli_tells_a_crossed_threshold() {
    let (b, n) = (
        judge("untraced_cpu_time.base.pt.trace.json.gz"),
        judge("untraced_cpu_time.fixed.pt.trace.json.gz"),
    );
    let (code, out, err) = sightline(&["diff", b.to_str().unwrap(), n.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.contains("(optimizer_step_heavy)"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("  + [warning]"), "{line}");
    assert!(line.contains(": crossed its threshold, "), "{line}");
    assert!(line.ends_with("(threshold 15.0%)"), "{line}");
}

fn v100_pair() -> Diff {
    diff(
        &digest(
            &common::shared_fixtures()
                .join("real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz"),
        ),
        &digest(
            &common::shared_fixtures()
                .join("gpu-training/kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz"),
        ),
        &DiffOptions::default(),
    )
}

/// The V100 pair's change (`num_workers=0` to 4) is the DataLoader's: its category comes first,
/// named by the single-process iterator's `__next__` that the workers took over, and the
/// explanation says how much of the median step's change the named operators leave over.
#[test]
fn the_v100_pair_is_explained_by_the_dataloader() {
    let d = v100_pair();
    let s = &d.summary;
    let first = &s.explained[0];
    assert_eq!(first.category, "DataLoader");
    assert!(
        (first.delta_us + 59_454.0).abs() < 1.0,
        "the DataLoader's median moved {}",
        first.delta_us
    );
    assert_eq!(
        first.operators[0].name,
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    );
    // The named operators cover the whole category (its figure is the spans' whole time).
    assert_eq!(first.explained_us, first.delta_us);
    // Each category explains at most its own change, with its sign.
    for c in &s.explained {
        assert!(c.explained_us.abs() <= c.delta_us.abs(), "{c:?}");
        assert!(c.explained_us == 0.0 || c.explained_us.signum() == c.delta_us.signum());
        assert!(c
            .operators
            .iter()
            .all(|o| o.delta_us.signum() == c.delta_us.signum()));
    }
    let other = s.explained.iter().find(|c| c.category == "Other");
    assert!(other.is_none_or(|c| c.operators.is_empty() && c.explained_us == 0.0));
    let explained: f64 = s.explained.iter().map(|c| c.explained_us).sum();
    let unexplained = s.unexplained_us.expect("an explanation");
    assert!((s.step_time_delta_us - explained - unexplained).abs() < 1e-6);
    let pct = s.explained_pct.expect("a share explained");
    assert!(
        (pct - 100.0 * (1.0 - unexplained.abs() / s.step_time_delta_us.abs())).abs() < 1e-9,
        "{pct}"
    );
    // Either the target is reached, or the rest is told: here the breakdown's spans (extended to
    // the device work) and the median of sums leave a few ms the categories do not hold.
    assert!(pct > 85.0, "{pct}");
    assert!(
        pct >= 90.0 || s.explanation[0].contains("unexplained"),
        "{:?}",
        s.explanation
    );
    assert!(
        s.explanation[0].starts_with(&format!("explained: {pct:.0}% of the change")),
        "{}",
        s.explanation[0]
    );
    assert_eq!(s.explanation.len(), 1 + s.explained.len());
    // What is left is mostly no cause: the median steps (176.3 -> 125.1 ms) against the sums of
    // the categories' medians (177.7 -> 121.8 ms over the plugin's spans), said as such.
    let gap = s
        .median_gap_us
        .expect("the gap, where something is explained");
    assert!((3_000.0..6_000.0).contains(&gap), "{gap}");
    assert!(
        gap.abs() > 0.75 * unexplained.abs(),
        "{gap} of {unexplained}"
    );
    assert!(
        s.explanation[0].contains(" of it held by no category: the categories' medians moved -"),
        "{}",
        s.explanation[0]
    );
}

/// Time in no operator is not explained: the untraced pair's change is mostly Other (the
/// `time.sleep` and Python between the operators), which is named but left unexplained.
#[test]
fn time_in_no_operator_is_left_unexplained() {
    let d = diff(
        &digest(&judge("untraced_cpu_time.base.pt.trace.json.gz")),
        &digest(&judge("untraced_cpu_time.fixed.pt.trace.json.gz")),
        &DiffOptions::default(),
    );
    let s = &d.summary;
    assert_eq!(s.explained[0].category, "Other", "{:?}", s.explanation);
    assert!(s.explained[0].operators.is_empty());
    assert_eq!(s.explained[0].explained_us, 0.0);
    assert!(s.explained_pct.unwrap() < 50.0, "{:?}", s.explanation);
    assert!(
        s.explanation[1].contains("time in no operator"),
        "{:?}",
        s.explanation
    );
}

/// A change within the noise is not explained, and the CLI prints the explanation under the
/// headline.
#[test]
fn the_cli_prints_the_explanation_under_the_headline() {
    let dir = common::shared_fixtures().join("pytorch-cpu-pairs");
    let d = diff(
        &digest(&dir.join("workers.base.pt.trace.json.gz")),
        &digest(&dir.join("workers.new.pt.trace.json.gz")),
        &DiffOptions::default(),
    );
    assert!(d.summary.noise);
    assert!(d.summary.explained.is_empty() && d.summary.explanation.is_empty());
    assert_eq!(d.summary.unexplained_us, None);
    assert_eq!(d.summary.median_gap_us, None);

    let (b, n) = (
        judge("dataloader_getitem.base.pt.trace.json.gz"),
        judge("dataloader_getitem.fixed.pt.trace.json.gz"),
    );
    let (code, out, err) = sightline(&["diff", b.to_str().unwrap(), n.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("median step"))
        .unwrap();
    assert!(lines[at + 1].starts_with("explained: "), "{out}");
    assert!(
        lines[at + 2].trim_start().starts_with("DataLoader"),
        "{out}"
    );
    let (_, json, _) = sightline(&["diff", b.to_str().unwrap(), n.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let summary = &v["summary"];
    assert!(summary["explained_pct"].is_number());
    assert!(summary["unexplained_us"].is_number());
    assert!(summary["median_gap_us"].is_number());
    let c = &summary["explained"][0];
    assert_eq!(c["category"], "DataLoader");
    for k in ["delta_us", "explained_us"] {
        assert!(c[k].is_number(), "{k}");
    }
    assert!(c["operators"][0]["name"].is_string());
    assert!(c["operators"][0]["delta_us"].is_number());
    assert_eq!(
        summary["explanation"].as_array().unwrap().len(),
        1 + summary["explained"].as_array().unwrap().len()
    );
}

/// The digest's self CPU inside DataLoader spans is a part of the operator table's: in the
/// `num_workers=0` run the batch's copies and divisions run inside `__next__` (the breakdown's
/// DataLoader time, not CPU Exec); with workers they run in other processes.
#[test]
fn a_digest_keeps_the_self_cpu_inside_the_dataloader() {
    let base = digest(&real("kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz"));
    let mut traces = sample_traces();
    traces.push(real("kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz"));
    for p in traces {
        let d = digest(&p);
        for (name, ns) in &d.dataloader_self_cpu {
            let all: i64 = d
                .ops
                .iter()
                .filter(|o| &o.name == name && (o.kind == "op" || o.kind == "annotation"))
                .map(|o| o.self_cpu_ns)
                .sum();
            assert!(*ns <= all, "{}: {name} {ns} of {all}", p.display());
        }
    }
    let inside: HashMap<&str, i64> = base
        .dataloader_self_cpu
        .iter()
        .map(|(n, ns)| (n.as_str(), *ns))
        .collect();
    for name in ["aten::copy_", "aten::div", "aten::to"] {
        assert!(inside.get(name).is_some_and(|&ns| ns > 0), "{name}");
    }
}
