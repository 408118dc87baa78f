//! The critical path and what-if replays: the properties every trace must keep (the path spans the
//! step, an unedited replay reproduces it, scaling every weight scales the step, an edit off the
//! path buys nothing), known answers on hand-made traces, the known straggler of the gloo job, and
//! the `path` command's JSON and errors.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;
use crate::common::analyse;

use serde_json::Value;
use sightline::analysis::critical::graph::EdgeKind;
use sightline::analysis::critical::hotspot;
use sightline::analysis::critical::whatif::{self, Edit};
use sightline::analysis::critical::PathOptions;
use sightline::analysis::links::Links;
use sightline::analysis::steps;
use sightline::model::Trace;
use sightline::parse::parse_bytes;

fn parse(events: &[String]) -> Trace {
    parse_bytes(format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")).as_bytes()).unwrap()
}

#[test]
fn every_trace_keeps_the_paths_properties() {
    let mut windows = 0;
    for path in common::all_shared_traces() {
        let trace = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let (links, a) = analyse(&trace);
        let name = path.display().to_string();
        let g = &a.graph;
        assert_eq!(g.order.len(), g.time.len(), "{name}: every node ordered");
        for p in a.paths(&trace, &links) {
            // Contiguous segments spanning the window; shares summing to 100.
            let span = p.end_us - p.start_us;
            assert!((p.length_us - span).abs() < 1e-6, "{name} {}", p.step);
            let covered: f64 = p.segments.iter().map(|s| s.end_us - s.start_us).sum();
            assert!(
                (covered - span).abs() < 1e-3,
                "{name} {}: {covered} of {span}",
                p.step
            );
            for w in p.segments.windows(2) {
                assert!(
                    (w[0].end_us - w[1].start_us).abs() < 1e-6,
                    "{name} {}",
                    p.step
                );
            }
            if span > 0.0 {
                let total: f64 = p.bound_by.values().sum();
                assert!((total - 100.0).abs() < 1e-6, "{name} {}: {total}", p.step);
            }
            windows += 1;
        }
        // Replaying the measured weights gives the measured steps; every weight times k gives k
        // times each step.
        let same = whatif::predict(&a, &vec![1.0; g.edges.len()]);
        for s in &same {
            assert!(
                (s.predicted_us - s.measured_us).abs() < 1e-6,
                "{name} {}",
                s.step
            );
        }
        // Every weight times 2 never shortens a step (a step replays from its measured start;
        // a kernel the step before launched keeps its start and doubles its duration, so a step
        // can grow past twice its length by that kernel's overhang).
        let doubled = whatif::predict(&a, &vec![2.0; g.edges.len()]);
        for s in &doubled {
            assert!(
                s.predicted_us >= s.measured_us - 1e-6,
                "{name} {}: {} vs {}",
                s.step,
                s.predicted_us,
                s.measured_us
            );
        }
        // Removing CPU time and device ops off a step's path, inside the step, changes nothing:
        // the path keeps its weights and everything else only moves earlier.
        let paths = a.paths(&trace, &links);
        let (Some(w), Some(p)) = (a.windows.first(), paths.first()) else {
            continue;
        };
        let on_path: std::collections::HashSet<_> =
            p.segments.iter().filter_map(|s| s.slice).collect();
        let (t0, t1) = (g.time[w.start as usize], g.time[w.end as usize]);
        let mut factor = vec![1.0; g.edges.len()];
        let mut removed = 0;
        for (k, e) in g.edges.iter().enumerate() {
            // What an edit scales: CPU time and device durations (never negative).
            let edited = matches!(e.kind, EdgeKind::Cpu | EdgeKind::Device(_));
            let inside = g.time[e.from as usize] >= t0 && g.time[e.to as usize] <= t1;
            if let Some(r) = g.slice(e).filter(|_| edited && inside) {
                if !on_path.contains(&r) {
                    factor[k] = 0.0;
                    removed += 1;
                }
            }
        }
        let s = &whatif::predict(&a, &factor)[0];
        assert!(
            (s.predicted_us - s.measured_us).abs() < 1e-6,
            "{name} {}: {removed} edges off the path removed: {} -> {}",
            s.step,
            s.measured_us,
            s.predicted_us
        );
    }
    assert!(windows > 20, "{windows} steps followed");
}

/// One thread launches a kernel, runs a CPU op, then synchronizes: the path runs through the
/// kernel and the sync; removing the kernel saves its time up to the CPU op's end; removing the
/// CPU op saves nothing, since the device was the bound.
#[test]
fn a_sync_waits_for_the_device_and_what_if_knows_it() {
    let ev = vec![
        r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200}"#.to_string(),
        r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10}"#.to_string(),
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":5,"args":{"correlation":1}}"#.to_string(),
        r#"{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":150,"args":{"device":0,"stream":7,"correlation":1}}"#.to_string(),
        r#"{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":20,"dur":30}"#.to_string(),
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":60,"dur":105}"#.to_string(),
        r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":10}"#.to_string(),
    ];
    let trace = parse(&ev);
    let (links, a) = analyse(&trace);
    let paths = a.paths(&trace, &links);
    let p = &paths[0];
    assert_eq!(p.step, "ProfilerStep#1");
    assert_eq!(p.length_us, 200.0);
    let kinds: Vec<(&str, &str, f64)> = p
        .segments
        .iter()
        .map(|s| (s.bound_by, s.name.as_str(), s.end_us - s.start_us))
        .collect();
    assert_eq!(
        kinds,
        [
            ("cpu_op", "aten::mm", 2.0),
            ("kernel_launch_overhead", "gemm", 8.0),
            ("gpu_compute", "gemm", 150.0),
            ("sync_wait", "", 5.0),
            ("cpu_untraced", "ProfilerStep#1", 35.0),
        ]
    );
    assert_eq!(p.hta_bound_by["gpu_compute_bound"], 75.0);
    let predict = |edit: &str| {
        let edits = [Edit::parse(edit).unwrap()];
        let (factor, matched) = whatif::factors(&trace, &a, &edits);
        assert_eq!(matched, [1], "{edit}");
        whatif::predict(&a, &factor)[0].predicted_us
    };
    // Without the kernel the sync returns when the CPU reaches it, at 60: 60 + 35.
    assert_eq!(predict("gemm=0"), 95.0);
    assert_eq!(predict("aten::add=0"), 200.0);
    assert_eq!(predict("gemm*0.5"), 200.0 - 75.0);
    assert_eq!(predict("kernels*2"), 350.0);
    // An edit on an operator carries the device work it launched: without `aten::mm` and its
    // gemm the CPU reaches the sync at 50 and finds nothing to wait for (50 + 35); `cpu:` and
    // `self:` leave the gemm, which ends at 8 + 150 and returns the sync at 163 (+ 35).
    assert_eq!(predict("aten::mm=0"), 85.0);
    assert_eq!(predict("cpu:aten::mm=0"), 198.0);
    assert_eq!(predict("self:aten::mm=0"), 198.0);
}

/// Rank 2 of the gloo job sleeps 40 ms inside `slow_rank_work` in steps 3 and 5: on its own trace
/// the path runs through the sleep, and removing it predicts those steps 40 ms shorter.
#[test]
fn the_straggler_sleep_is_on_its_path_and_removing_it_saves_it() {
    let dir = common::shared_fixtures().join("pytorch-cpu-ranks/gloo4_straggler");
    let trace = parse_bytes(&std::fs::read(dir.join("worker2.pt.trace.json.gz")).unwrap()).unwrap();
    let (links, a) = analyse(&trace);
    for p in a.paths(&trace, &links) {
        let slow: f64 = p
            .segments
            .iter()
            .filter(|s| s.name == "slow_rank_work" || s.name.contains("sleep"))
            .map(|s| s.end_us - s.start_us)
            .sum();
        let straggling = p.step == "ProfilerStep#3" || p.step == "ProfilerStep#5";
        assert_eq!(slow > 39_000.0, straggling, "{}: {slow} us", p.step);
    }
    let edits = [Edit::parse("slow_rank_work=0").unwrap()];
    let (factor, _) = whatif::factors(&trace, &a, &edits);
    for s in whatif::predict(&a, &factor) {
        let straggling = s.step == "ProfilerStep#3" || s.step == "ProfilerStep#5";
        if straggling {
            assert!(
                (s.saving_us - 40_000.0).abs() < 2_000.0,
                "{}: {}",
                s.step,
                s.saving_us
            );
        } else {
            assert_eq!(s.saving_us, 0.0, "{}", s.step);
        }
    }
}

#[test]
fn path_json_has_the_documented_fields_and_bad_edits_exit_two() {
    let file = common::shared_fixtures().join("real/param_dlrm_v100_rank0of8.pt.trace.json.gz");
    let file = file.to_str().unwrap();
    let (code, out, err) = common::run_cli(&["path", file, "--json", "--what-if", "kernels*0.5"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["paths"][0];
    for key in [
        "rank",
        "step",
        "start_us",
        "end_us",
        "length_us",
        "bound_by",
        "segments",
    ] {
        assert!(p.get(key).is_some(), "{key}");
    }
    for key in [
        "start_us", "end_us", "rank", "lane", "name", "kind", "bound_by",
    ] {
        assert!(p["segments"][0].get(key).is_some(), "segment {key}");
    }
    let w = &v["what_if"];
    assert_eq!(w["edits"][0]["text"], "kernels*0.5");
    for key in ["rank", "step", "measured_us", "predicted_us", "saving_us"] {
        assert!(w["steps"][0].get(key).is_some(), "what_if {key}");
    }
    assert!(w["steps"][0]["saving_us"].as_f64().unwrap() >= 0.0);
    let (code, _, err) = common::run_cli(&["path", file, "--what-if", "no_such_op=0"]);
    assert_eq!(code, 2);
    assert!(err.contains("matches no slice"), "{err}");
    let (code, _, err) = common::run_cli(&["path", file, "--what-if", "aten::mm"]);
    assert_eq!(code, 2);
    assert!(err.contains("NAME=0"), "{err}");
    let (code, _, err) = common::run_cli(&["path", file, "--step", "ProfilerStep#99"]);
    assert_eq!(code, 2);
    assert!(err.contains("no step named"), "{err}");
    let (code, out, _) = common::run_cli(&["path", file]);
    assert_eq!(code, 0);
    assert!(out.contains("Critical path per step"), "{out}");
}

/// Findings whose fix is a change of durations carry its what-if saving and come first, largest
/// saving first (those saving at least 1% of the step); the saving is the replay of the same edits.
#[test]
fn findings_say_what_their_fix_saves_and_are_ordered_by_it() {
    let path = common::shared_fixtures().join("pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz");
    let (code, out, err) = common::run_cli(&["report", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let findings = v["findings"].as_array().unwrap();
    // A saving under 1% of the step makes its finding info, ranked with the rest.
    let savings: Vec<Option<f64>> = findings
        .iter()
        .map(|f| {
            let worth = f["saving"]["pct"].as_f64().is_some_and(|p| p >= 1.0);
            if !worth && f["saving"].is_object() {
                assert_eq!(f["severity"], "info", "{f}");
            }
            f["saving"]["per_step_us"].as_f64().filter(|_| worth)
        })
        .collect();
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(
        ids.contains(&"dataloader_bound") && ids.contains(&"cpu_copy_overhead"),
        "{ids:?}"
    );
    // Those with a saving first, in decreasing order.
    let with: Vec<f64> = savings.iter().map_while(|s| *s).collect();
    assert!(with.len() >= 2, "{savings:?}");
    assert!(
        savings[with.len()..].iter().all(|s| s.is_none()),
        "{savings:?}"
    );
    assert!(with.windows(2).all(|w| w[0] >= w[1]), "{with:?}");
    let dl = findings
        .iter()
        .find(|f| f["id"] == "dataloader_bound")
        .unwrap();
    assert_eq!(dl["saving"]["edits"][0], "DataLoader=0");
    assert!(dl["saving"]["sentence"]
        .as_str()
        .unwrap()
        .starts_with("Fixing this saves about"));
    // The same as the what-if itself.
    let trace = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
    let (_, a) = analyse(&trace);
    let (factor, _) = whatif::factors(&trace, &a, &[Edit::parse("DataLoader=0").unwrap()]);
    let p = whatif::predict(&a, &factor);
    let mean = p.iter().map(|s| s.saving_us).sum::<f64>() / p.len() as f64;
    let got = dl["saving"]["per_step_us"].as_f64().unwrap();
    assert!((got - mean).abs() < 1e-6, "{got} vs {mean}");
    // The finding keeps its own fields beside the saving.
    for key in ["id", "severity", "title", "detail", "advice", "evidence"] {
        assert!(dl.get(key).is_some(), "{key}");
    }
}

/// `--compat hta` against HTA 0.5.0's own `critical_path_analysis` on every shared trace it runs
/// on (`tests/fixtures/hta/critical_reference.json`, written by `make_critical_reference.py`): the
/// path's length (the sum of its edges) and each `bound_by` share. The issue allows 2% and 5
/// points; the graph is HTA's, so the bounds here are the rounding of the reference.
#[test]
fn compat_hta_agrees_with_htas_critical_path() {
    let reference: Value = serde_json::from_slice(
        &std::fs::read(common::local_fixture("hta/critical_reference.json")).unwrap(),
    )
    .unwrap();
    let cases = reference["paths"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let file = common::shared_fixtures().join(case["trace"].as_str().unwrap());
        let annotation = case["annotation"].as_str().unwrap();
        let instance = case["instance"].as_u64().unwrap().to_string();
        let (code, out, err) = common::run_cli(&[
            "path",
            file.to_str().unwrap(),
            "--compat",
            "hta",
            "--annotation",
            annotation,
            "--instance",
            &instance,
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let got: Value = serde_json::from_str(&out).unwrap();
        let path = &got["paths"][0];
        let label = format!("{} {annotation} #{instance}", case["trace"]);
        let want = case["length_us"].as_f64().unwrap();
        let length = path["length_us"].as_f64().unwrap();
        assert!(
            (length - want).abs() <= 1.0,
            "{label}: {length} us, HTA {want}"
        );
        let shares = path["bound_by"].as_object().unwrap();
        let want = case["bound_by"].as_object().unwrap();
        for (k, v) in want {
            let got = shares.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
            let v = v.as_f64().unwrap();
            assert!((got - v).abs() < 0.05, "{label} {k}: {got}%, HTA {v}%");
        }
        for (k, v) in shares {
            assert!(
                want.contains_key(k) || v.as_f64() == Some(0.0),
                "{label}: {k}"
            );
        }
        // The segments are the weighted edges of the path: they add up to its length.
        let sum: f64 = path["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["end_us"].as_f64().unwrap() - s["start_us"].as_f64().unwrap())
            .sum();
        assert!(
            (sum - length).abs() < 1.0,
            "{label}: segments {sum} of {length}"
        );
    }
    // A what-if replays Sightline's graph, not HTA's.
    let dlrm = common::shared_fixtures().join("real/param_dlrm_v100_rank0of8.pt.trace.json.gz");
    let (code, _, err) = common::run_cli(&[
        "path",
        dlrm.to_str().unwrap(),
        "--compat",
        "hta",
        "--what-if",
        "kernels*0.5",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--compat hta"), "{err}");
}

/// The four ranks of the gloo job as one graph: rank 0's slow steps run through rank 2's sleep
/// (the others wait for it in the all-reduce), the joined graph reproduces every rank's steps, and
/// removing rank 2's sleep predicts the steps of the ranks that only waited shorter too.
#[test]
fn the_ranks_join_at_collectives_and_the_waiting_ranks_gain() {
    use sightline::analysis::critical::job::{Job, Rank};
    let dir = common::shared_fixtures().join("pytorch-cpu-ranks/gloo4_straggler");
    let traces: Vec<Trace> = (0..4)
        .map(|r| {
            let f = dir.join(format!("worker{r}.pt.trace.json.gz"));
            parse_bytes(&std::fs::read(f).unwrap()).unwrap()
        })
        .collect();
    let links: Vec<Links> = traces.iter().map(Links::build).collect();
    let steps: Vec<_> = traces
        .iter()
        .zip(&links)
        .map(|(t, l)| steps::analyze_with(t, l))
        .collect();
    let files: Vec<String> = (0..4)
        .map(|r| format!("worker{r}.pt.trace.json.gz"))
        .collect();
    let ranks = (0..4)
        .map(|k| Rank {
            trace: &traces[k],
            links: &links[k],
            steps: &steps[k],
            file: &files[k],
        })
        .collect();
    let job = Job::build(ranks, &PathOptions::default()).unwrap();
    assert_eq!(job.joined, 12, "two all-reduces in each of 6 steps");
    let paths = job.paths();
    assert_eq!(paths.len(), 24);
    for p in &paths {
        let covered: f64 = p.segments.iter().map(|s| s.end_us - s.start_us).sum();
        assert!(
            (covered - p.length_us).abs() < 1e-3,
            "rank {} {}",
            p.rank,
            p.step
        );
        let through_sleep = p
            .segments
            .iter()
            .any(|s| s.rank == 2 && s.name == "slow_rank_work");
        let straggling = p.step == "ProfilerStep#3" || p.step == "ProfilerStep#5";
        assert_eq!(through_sleep, straggling, "rank {} {}", p.rank, p.step);
    }
    let (same, _) = job.predict(&[Edit::parse("slow_rank_work*1").unwrap()]);
    for s in &same {
        assert!((s.predicted_us - s.measured_us).abs() < 1e-6, "{s:?}");
    }
    let (steps, matched) = job.predict(&[Edit::parse("rank2:slow_rank_work=0").unwrap()]);
    assert_eq!(matched, [2]);
    for s in &steps {
        let straggling = s.step == "ProfilerStep#3" || s.step == "ProfilerStep#5";
        if straggling {
            // The sleep is 40 ms; the others had other work to finish meanwhile.
            assert!(s.saving_us > 25_000.0, "{s:?}");
        } else {
            assert!(s.saving_us.abs() < 2_000.0, "{s:?}");
        }
    }
}

/// Slack means what it says: a device op lengthened by less than its slack leaves its step as it
/// was; by more, the step grows. And the kernel table's time on the path is the paths' device time.
#[test]
fn slack_is_how_much_an_op_can_grow_and_the_tables_carry_it() {
    use sightline::analysis::critical::slack::{self, SliceTimes};
    use sightline::analysis::tables::{kernel_table, Forest};
    for name in [
        "real/param_dlrm_v100_rank0of8.pt.trace.json.gz",
        "real/hta_a100_alexnet_cuda_sync.json.gz",
    ] {
        let trace = common::shared_trace(name);
        let (links, a) = analyse(&trace);
        let paths = a.paths(&trace, &links);
        let times = SliceTimes::of(&trace, &a, &paths);
        let g = &a.graph;
        let mut tried = 0;
        for (k, e) in g.edges.iter().enumerate() {
            let (EdgeKind::Device(_), Some(r)) = (e.kind, g.slice(e)) else {
                continue;
            };
            let Some(slack) = times.slack(r).filter(|&s| s > 1_000 && e.weight > 0) else {
                continue;
            };
            let grow = |by: i64| {
                let mut factor = vec![1.0; g.edges.len()];
                factor[k] = (e.weight + by) as f64 / e.weight as f64;
                whatif::predict(&a, &factor)
            };
            let base = whatif::predict(&a, &vec![1.0; g.edges.len()]);
            for (s, b) in grow(slack * 9 / 10).iter().zip(&base) {
                assert!(
                    (s.predicted_us - b.predicted_us).abs() < 1e-3,
                    "{name} {s:?}"
                );
            }
            // Past its slack it delays its step's end.
            let longer: f64 = grow(slack + 1_000)
                .iter()
                .zip(&base)
                .map(|(s, b)| s.predicted_us - b.predicted_us)
                .sum();
            assert!(
                longer > 0.5,
                "{name}: {} by {slack}: {longer}",
                trace.slice_name(r)
            );
            tried += 1;
            if tried == 40 {
                break;
            }
        }
        assert!(tried > 5, "{name}: {tried}");
        let mut table = kernel_table(&trace, &Forest::build(&trace));
        slack::annotate_kernels(&mut table, &trace, &times);
        let on_path: f64 = table.rows.iter().map(|r| r.path.unwrap().on_path_us).sum();
        let device: f64 = paths
            .iter()
            .flat_map(|p| &p.segments)
            .filter(|s| s.kind == "device")
            .map(|s| s.end_us - s.start_us)
            .sum();
        assert!(
            (on_path - device).abs() < 1e-3,
            "{name}: {on_path} vs {device}"
        );
    }
    // The JSON columns.
    let file = common::shared_fixtures().join("real/param_dlrm_v100_rank0of8.pt.trace.json.gz");
    for cmd in ["ops", "kernels"] {
        let (code, out, err) = common::run_cli(&[cmd, file.to_str().unwrap(), "--path", "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let rows = v["rows"].as_array().unwrap();
        assert!(rows.iter().all(|r| r["on_path_us"].is_number()), "{cmd}");
        assert!(
            rows.iter().any(|r| r["on_path_us"].as_f64().unwrap() > 0.0),
            "{cmd}"
        );
        assert!(
            rows.iter()
                .any(|r| r["slack_us"].as_f64().is_some_and(|s| s > 0.0)),
            "{cmd}"
        );
        let (_, plain, _) = common::run_cli(&[cmd, file.to_str().unwrap(), "--json"]);
        assert!(!plain.contains("on_path_us"), "{cmd}: only when asked for");
    }
}

/// Prediction against reality (`tests/fixtures/critical/truth.json`, real runs made by
/// `make_pairs.py`): the what-if on each "before" run predicts the "after" run's measured step
/// times, where the cause was removed for real, within the truth's tolerance (20%), on every rank
/// and step, including the ranks that only waited for the straggler.
#[test]
fn what_if_predicts_the_real_runs_without_the_cause() {
    let dir = common::local_fixture("critical");
    let truth: Value =
        serde_json::from_slice(&std::fs::read(dir.join("truth.json")).unwrap()).unwrap();
    let tolerance = truth["tolerance"].as_f64().unwrap();
    let mut checked = 0;
    for (pair, t) in truth["pairs"].as_object().unwrap() {
        let before: Vec<String> = t["before"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| dir.join(f.as_str().unwrap()).display().to_string())
            .collect();
        let mut args: Vec<&str> = vec!["path"];
        args.extend(before.iter().map(|s| s.as_str()));
        for e in t["edits"].as_array().unwrap() {
            args.extend(["--what-if", e.as_str().unwrap()]);
        }
        args.push("--json");
        let (code, out, err) = common::run_cli(&args);
        assert_eq!(code, 0, "{pair}: {err}");
        let got: Value = serde_json::from_str(&out).unwrap();
        for s in got["what_if"]["steps"].as_array().unwrap() {
            let (rank, step) = (s["rank"].as_i64().unwrap(), s["step"].as_str().unwrap());
            let after = t["step_us"]["after"][rank.to_string()][step]
                .as_f64()
                .unwrap_or_else(|| panic!("{pair}: no after run of rank {rank} {step}"));
            let predicted = s["predicted_us"].as_f64().unwrap();
            let error = (predicted - after) / after;
            assert!(
                error.abs() <= tolerance,
                "{pair} rank {rank} {step}: predicted {predicted:.0} us, the run without the \
                 cause took {after:.0} us ({:+.1}%)",
                100.0 * error
            );
            checked += 1;
        }
    }
    assert!(checked >= 24 + 6, "{checked} steps checked");
}

/// A cross-stream wait recorded by `cuda_sync` events: kernel B on stream 20 waits (through
/// `cudaEventRecord` after A's launch and `cudaStreamWaitEvent`) for kernel A on stream 7. The
/// path runs from the step's closing synchronize back through B and A, and halving A brings B,
/// and the step, earlier.
#[test]
fn a_cross_stream_wait_joins_the_streams() {
    let ev = [
        r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":170}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":20,"dur":145,"args":{"correlation":5}}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":4,"args":{"correlation":1}}"#,
        r#"{"ph":"X","cat":"kernel","name":"A","pid":0,"tid":7,"ts":10,"dur":100,"args":{"device":0,"stream":7,"correlation":1}}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":6,"dur":2,"args":{"correlation":2}}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":9,"dur":2,"args":{"correlation":3}}"#,
        r#"{"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":20,"ts":12,"dur":1,"args":{"device":0,"stream":20,"correlation":3,"wait_on_stream":7,"wait_on_cuda_event_record_corr_id":2}}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":4,"args":{"correlation":4}}"#,
        r#"{"ph":"X","cat":"kernel","name":"B","pid":0,"tid":20,"ts":110,"dur":50,"args":{"device":0,"stream":20,"correlation":4}}"#,
        r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":10}"#,
    ];
    let trace = parse(&ev.iter().map(|e| e.to_string()).collect::<Vec<_>>());
    let (links, a) = analyse(&trace);
    let p = &a.paths(&trace, &links)[0];
    let names: Vec<(&str, &str)> = p
        .segments
        .iter()
        .map(|s| (s.name.as_str(), s.bound_by))
        .collect();
    assert!(names.contains(&("A", "gpu_compute")), "{names:?}");
    assert!(names.contains(&("B", "gpu_compute")), "{names:?}");
    assert!(
        !names.iter().any(|n| n.1 == "kernel_kernel_overhead"),
        "{names:?}"
    );
    let edits = [Edit::parse("A*0.5").unwrap()];
    let (factor, _) = whatif::factors(&trace, &a, &edits);
    let s = &whatif::predict(&a, &factor)[0];
    assert_eq!((s.measured_us, s.predicted_us), (170.0, 120.0));
}

/// The notes on how a trace was recorded (no stacks, no shapes, memory profiling on, device
/// activities only, few active steps) are `report --json`'s `recording`, apart from `findings`,
/// and never outrank a cost: on the CPU traces `no_python_stack` used to rank first or second.
#[test]
fn recording_notes_are_listed_apart_from_what_costs_time() {
    let recording: Vec<&str> = sightline::analysis::findings::reference::rules()
        .filter(|r| r.recording)
        .map(|r| r.id)
        .collect();
    let shared = common::shared_fixtures();
    for rel in [
        "pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz",
        "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz",
        "pytorch-cpu/cnn_noshapes_gz.pt.trace.json.gz",
        "real/param_dlrm_v100_rank0of8.pt.trace.json.gz",
    ] {
        let path = shared.join(rel);
        let (code, out, err) = common::run_cli(&["report", path.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let ids = |key: &str| -> Vec<String> {
            v[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["id"].as_str().unwrap().to_string())
                .collect()
        };
        let (costs, notes) = (ids("findings"), ids("recording"));
        assert!(
            costs.iter().all(|id| !recording.contains(&id.as_str())),
            "{rel}: {costs:?}"
        );
        assert!(
            notes.iter().all(|id| recording.contains(&id.as_str())),
            "{rel}: {notes:?}"
        );
        // Every finding of the rules is in one of the two lists, or told as context of the
        // cause that prices it; the hotspots come from the paths, beside the rules.
        let trace = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let context: String = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["context"].as_array().cloned().unwrap_or_default())
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        let mut all: Vec<String> = crate::common::findings(&trace)
            .iter()
            .map(|f| f.id.to_string())
            .filter(|id| !context.contains(&format!("({id})")))
            .collect();
        let mut both: Vec<String> = [costs.clone(), notes.clone()]
            .concat()
            .into_iter()
            .filter(|id| !hotspot::IDS.contains(&id.as_str()))
            .collect();
        all.sort();
        both.sort();
        assert_eq!(all, both, "{rel}");
        assert!(
            !notes.is_empty(),
            "{rel}: each of these traces has a note on its recording"
        );
    }
}

/// Every kind of edit, priced together as `report` prices its findings and each alone, on real
/// traces (CUDA, a CPU storm of small ops, a float64 detour, annotations): the same factors, the
/// same counts, the same predictions. And a named slice's edit reaches every CPU edge inside it,
/// found here by climbing each edge's holders.
#[test]
fn what_ifs_priced_together_equal_each_priced_alone() {
    let traces = [
        common::shared_trace("real/hta_a100_alexnet_cuda_sync.json.gz"),
        common::shared_trace("real/tracelens_h100_falconsai_vit.json.gz"),
        // 82,928 edges: over the count from which the edges are scaled on two cores.
        common::shared_trace("real/tracelens_h100_owlv2_stack_mem.json.gz"),
        parse_judge("small_op_storm.base.pt.trace.json.gz"),
        parse_judge("copies_dtype.base.pt.trace.json.gz"),
        parse_judge("annotation_overhead.base.pt.trace.json.gz"),
    ];
    let texts: &[&[&str]] = &[
        &["DataLoader=0"],
        &["aten::copy_|aten::to=0", "aten::contiguous*0.5"],
        &["pageable*0.5", "memcpy*0.5"],
        &["kernels*0.5", "communication=0"],
        &["float64*0.5"],
        &["untraced=0"],
        &["aten::*+gaps*0.5"],
        &["self:sample+gaps=0", "self:aten::add=0"],
        &["ProfilerStep*=0"],
        &["rank99:aten::*=0"],
    ];
    let sets: Vec<Vec<Edit>> = texts
        .iter()
        .map(|t| t.iter().map(|e| Edit::parse(e).unwrap()).collect())
        .collect();
    let refs: Vec<&[Edit]> = sets.iter().map(Vec::as_slice).collect();
    for trace in &traces {
        let (_, a) = analyse(trace);
        let g = &a.graph;
        let together = whatif::factors_each(trace, &a, &refs);
        assert_eq!(together.len(), sets.len());
        let factors: Vec<&[f64]> = together.iter().map(|(f, _)| f.as_slice()).collect();
        let predicted = whatif::predict_each(&a, &factors);
        for (k, set) in sets.iter().enumerate() {
            let (factor, matched) = whatif::factors(trace, &a, set);
            assert_eq!(together[k].0, factor, "{:?}", texts[k]);
            assert_eq!(together[k].1, matched, "{:?}", texts[k]);
            let alone = whatif::predict(&a, &factor);
            let same = alone
                .iter()
                .zip(&predicted[k])
                .all(|(x, y)| x.predicted_us.to_bits() == y.predicted_us.to_bits());
            assert!(same && alone.len() == predicted[k].len(), "{:?}", texts[k]);
        }
        // `untraced=0`: each CPU edge in no slice or only a step's, and their count, whichever
        // half of the edges (and core) they were in.
        let (factor, matched) = whatif::factors(trace, &a, &[Edit::parse("untraced=0").unwrap()]);
        let mut untraced = 0;
        for (x, e) in g.edges.iter().enumerate() {
            let want = e.kind == EdgeKind::Cpu
                && g.slice(e)
                    .is_none_or(|r| trace.slice_name(r).starts_with("ProfilerStep#"));
            untraced += want as usize;
            assert_eq!(factor[x] == 0.0, want, "untraced: edge {x}");
        }
        assert_eq!(matched, vec![untraced]);
        // `aten::add*0.5` (with its children) against `self:aten::add*0.5`: each CPU edge
        // charged to a slice is scaled when that slice, or for the first a slice holding it, is
        // an `aten::add`.
        for (text, own) in [("aten::add*0.5", false), ("self:aten::add*0.5", true)] {
            let (factor, _) = whatif::factors(trace, &a, &[Edit::parse(text).unwrap()]);
            for (x, e) in g.edges.iter().enumerate() {
                let (EdgeKind::Cpu, Some(r)) = (e.kind, g.slice(e)) else {
                    continue;
                };
                let s = trace.slices(r.lane as usize);
                let mut up = r.index;
                let mut held = false;
                while up != u32::MAX {
                    if trace.str(s.name[up as usize]) == "aten::add" {
                        held = true;
                        break;
                    }
                    if own {
                        break;
                    }
                    up = g.parent[r.lane as usize][up as usize];
                }
                assert_eq!(factor[x] == 0.5, held, "{text}: edge {x}");
            }
        }
    }
}

fn parse_judge(name: &str) -> Trace {
    let bytes = std::fs::read(common::local_fixture("judge").join(name)).unwrap();
    parse_bytes(&bytes).unwrap()
}
