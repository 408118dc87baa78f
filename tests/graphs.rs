//! CUDA/HIP graph replays (`analysis::graphs`, `sightline graphs`, `ops --capture`) on a real
//! capture and replay pair (`tests/fixtures/graphs/`, SGLang on MI300X), against TraceLens' own
//! capture merge of the same pair.

use crate::common;
use serde_json::Value;
use sightline::analysis::derived::Derived;
use sightline::analysis::graphs::{Capture, CaptureMatch};
use sightline::analysis::tables::{op_table, op_table_charged, EventKind};
use sightline::model::Trace;
use sightline::parse::parse_bytes;
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    common::local_fixture("graphs")
        .join(name)
        .to_string_lossy()
        .to_string()
}

fn read(name: &str) -> Trace {
    parse_bytes(&std::fs::read(fixture(name)).unwrap()).unwrap()
}

fn capture() -> Capture {
    let d = Derived::new(read("sglang_decode.capture.json.gz"));
    Capture::read(d.trace(), d.links())
}

fn truth() -> Value {
    let bytes = common::gunzip(&std::fs::read(fixture("sglang_decode.tracelens.json.gz")).unwrap());
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn a_replay_is_one_graph_of_its_launch() {
    let d = Derived::new(read("sglang_decode.replay.json.gz"));
    let g = d.graphs();
    assert_eq!(g.launches, 1);
    assert_eq!(g.graphs.len(), 1);
    assert_eq!(g.graphs[0].ops_per_replay, 544);
    assert_eq!(g.replayed_ops, 544);
    // 9,656.404 µs of the trace's 9,779 µs of device time, as the file sums them.
    assert_eq!(g.replayed_device_ns, 9_656_404);
    assert!(g.uses_graphs() && g.replayed_share() > 0.98);
    assert_eq!(g.graphs[0].launch_cpu_ns, 1_572_609);
    assert_eq!(g.instantiations, 0);
}

#[test]
fn the_capture_names_every_replayed_kernel_as_tracelens_does() {
    let d = Derived::new(read("sglang_decode.replay.json.gz"));
    let cap = capture();
    assert_eq!(cap.captures.len(), 1);
    assert_eq!(cap.dispatches(), 544);
    let m = CaptureMatch::pair(d.trace(), d.graphs(), &cap);
    assert_eq!((m.attributed_ops, m.unattributed_ops), (544, 0));
    let ours = m.first_replays(d.trace(), d.graphs(), &cap);
    let truth = truth();
    let theirs = truth["kernels"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len());
    for (k, (a, t)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(a.name, t["name"].as_str().unwrap(), "kernel {k}");
        assert_eq!(
            a.dur_ns,
            (t["dur"].as_f64().unwrap() * 1e3).round() as i64,
            "kernel {k}"
        );
        // TraceLens' stack holds operators only (its tree has no annotations).
        assert_eq!(
            a.stack.first().map(String::as_str),
            t["op"].as_str(),
            "kernel {k}"
        );
        let ops: Vec<&str> = t["ops_stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(a.stack[..ops.len()], ops, "kernel {k}");
    }
    // The capture's order is kept: each replayed kernel takes the next dispatch.
    assert!(m.pairs[0].windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn the_operator_table_with_the_capture_charges_no_kernel_to_a_bare_annotation() {
    let d = Derived::new(read("sglang_decode.replay.json.gz"));
    let (trace, forest) = (d.trace(), d.forest());
    let before = op_table(trace, forest, false);
    let step = |t: &sightline::analysis::tables::OpTable| {
        t.rows
            .iter()
            .find(|r| r.name == "step[DECODE bs=32]")
            .unwrap()
            .self_device_us
    };
    // As PyTorch's key_averages charges it: the replay to the annotation around the launch.
    assert!(step(&before) > 9_600.0, "{}", step(&before));

    let cap = capture();
    let m = CaptureMatch::pair(trace, d.graphs(), &cap);
    let charges = m.charges(trace, d.graphs(), &cap, false);
    let after = op_table_charged(trace, forest, false, Some(&charges));
    // What stays with the annotation is what it launched eagerly (none of the replay).
    assert!(step(&after) < 10.0, "{}", step(&after));
    let total = |t: &sightline::analysis::tables::OpTable| -> f64 {
        t.rows.iter().map(|r| r.self_device_us).sum()
    };
    assert!(
        (total(&before) - total(&after)).abs() < 1e-6,
        "device time is moved, not made"
    );
    // Per operator, TraceLens' figures.
    let truth = truth();
    for (op, v) in truth["ops"].as_object().unwrap() {
        let row = after
            .rows
            .iter()
            .find(|r| &r.name == op && r.kind == EventKind::Op && r.self_cpu_us == 0.0)
            .unwrap_or_else(|| panic!("no captured row {op}"));
        assert!(
            (row.self_device_us - v["dur_us"].as_f64().unwrap()).abs() < 0.01,
            "{op}"
        );
    }
    let mm = after
        .rows
        .iter()
        .find(|r| r.name == "aten::mm" && r.self_cpu_us == 0.0)
        .unwrap();
    assert_eq!(mm.calls, 145);
    assert_eq!(mm.cpu_total_us, 0.0);
}

#[test]
fn advice_does_not_name_graphs_to_a_trace_that_uses_them() {
    for name in [
        "sglang_decode.replay.json.gz",
        "sglang_decode.capture.json.gz",
    ] {
        let d = Derived::new(read(name));
        let judged = d.findings(&Default::default());
        assert!(!judged.findings.is_empty(), "{name}");
        for a in judged.findings.iter() {
            let text = format!("{} {}", a.finding.detail, a.finding.advice);
            assert!(
                !text.contains("HIP graphs (torch"),
                "{name}: {}: {text}",
                a.finding.id
            );
            assert!(
                !text.contains("capture the step"),
                "{name}: {}: {text}",
                a.finding.id
            );
        }
    }
    // The capture trace instantiates its graph inside the window it records.
    let d = Derived::new(read("sglang_decode.capture.json.gz"));
    let ids: Vec<&str> = d
        .findings(&Default::default())
        .findings
        .iter()
        .map(|a| a.finding.id)
        .collect();
    assert!(ids.contains(&"graph_instantiation"), "{ids:?}");
}

#[test]
fn traces_without_graphs_have_none() {
    for path in common::all_shared_traces() {
        let t = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let d = Derived::new(&t);
        let g = d.graphs();
        assert_eq!(
            (g.launches, g.captures, g.instantiations),
            (0, 0, 0),
            "{path:?}"
        );
        assert!(!d
            .found(&Default::default())
            .findings
            .iter()
            .any(|f| f.id == "graph_instantiation"));
    }
}

#[test]
fn graphs_command_text_and_json() {
    let replay = fixture("sglang_decode.replay.json.gz");
    let cap = fixture("sglang_decode.capture.json.gz");
    let (code, out, err) = common::run_cli(&["graphs", &replay, "--capture", "none"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 graph launches replayed 544 device ops"),
        "{out}"
    );
    assert!(out.contains("--capture FILE"), "{out}");
    // Without --capture, the capture beside the replay (its name holds "capture") is read.
    let (code, out, err) = common::run_cli(&["graphs", &replay]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("graph capture: ") && err.contains("sglang_decode.capture.json.gz"));
    assert!(out.contains("names 544 of 544 replayed ops"), "{out}");
    let (code, out, err) = common::run_cli(&["graphs", &replay, "--capture", &cap, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["launches"], 1);
    assert_eq!(v["graphs"][0]["ops_per_replay"], 544);
    assert_eq!(v["capture"]["attributed_ops"], 544);
    assert_eq!(v["captured_ops"][0]["name"], "aten::mm");
    assert_eq!(v["first_replays"].as_array().unwrap().len(), 544);
    // ops --capture: the captured operators in the table; a capture that is none says so.
    let (code, out, err) = common::run_cli(&["ops", &replay, "--capture", &cap, "--json"]);
    assert_eq!(code, 0, "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(t["rows"][0]["name"], "aten::mm");
    let (code, _, err) = common::run_cli(&["ops", &replay, "--capture", &replay]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no graph capture in this trace"), "{err}");
    // report's top operators are ops' first rows, capture charges included (found beside it).
    let (code, out, err) = common::run_cli(&["report", &replay, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("graph capture: "), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        r["top_operators"]["rows"].as_array().unwrap()[..],
        t["rows"].as_array().unwrap()[..15]
    );
}

/// A temporary folder `sightline-{tag}-PID` holding the SGLang replay trace and an empty
/// `capture_traces/` beside it, as TraceLens lays them out: (folder, captures folder, trace).
fn replay_with_captures_folder(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("sightline-{tag}-{}", std::process::id()));
    let captures = dir.join("capture_traces");
    std::fs::create_dir_all(&captures).unwrap();
    let replay = dir.join("sglang_Qwen3-8B_decode.json.gz");
    std::fs::copy(fixture("sglang_decode.replay.json.gz"), &replay).unwrap();
    (dir, captures, replay)
}

#[test]
fn a_capture_laid_out_as_tracelens_has_it_is_found_and_names_each_kernels_operator() {
    // TraceLens' test data: the replay trace, and its captures in capture_traces/ beside it. A
    // file there that recorded no capture (here the replay itself) is passed over.
    let (dir, captures, replay) = replay_with_captures_folder("capture");
    std::fs::copy(
        fixture("sglang_decode.replay.json.gz"),
        captures.join("bs_1_rank0.json.gz"),
    )
    .unwrap();
    std::fs::copy(
        fixture("sglang_decode.capture.json.gz"),
        captures.join("bs_32_rank0.json.gz"),
    )
    .unwrap();
    let replay = replay.to_str().unwrap();
    let (code, out, err) = common::run_cli(&["kernels", replay, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bs_32_rank0.json.gz"), "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    let rows = t["rows"].as_array().unwrap();
    // Calls each operator (or annotation) launched, over every kernel.
    let by = |t: &Value, name: &str| -> u64 {
        t["rows"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["launched_by"].as_array().unwrap())
            .filter(|b| b["name"] == name)
            .map(|b| b["calls"].as_u64().unwrap())
            .sum()
    };
    // Of the 545 device ops the bare annotation around the graph launch launched, the one it
    // launched itself is left: the 544 replayed ones have their captured operators.
    assert_eq!(by(&t, "step[DECODE bs=32]"), 1);
    assert_eq!(by(&t, "aten::mm"), 145);
    let attention = rows
        .iter()
        .find(|r| r["name"].as_str().unwrap().contains("paged_attention"))
        .unwrap();
    assert_eq!(
        attention["launched_by"][0]["name"],
        "sglang_profiler::attention_paged_attention_ragged_100"
    );
    // --capture none: the graph launch's annotation, as PyTorch charges it.
    let (code, out, err) = common::run_cli(&["kernels", replay, "--json", "--capture", "none"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(by(&t, "step[DECODE bs=32]"), 545);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn with_many_files_beside_a_trace_only_its_ranks_are_read_and_rank1_is_not_rank01() {
    // More files than are read: the trace's rank (0, it has no distributedInfo) picks them by
    // the rank its name gives, as `sightline ranks` reads a name. `rank01` is rank 1: read by a
    // substring match of `rank0`, these 16 sort before the capture and push it out of the 16 read.
    let (dir, captures, replay) = replay_with_captures_folder("ranks-cap");
    for i in 0..16 {
        std::fs::write(
            captures.join(format!("bs_1_rank01_{i:02}.json")),
            r#"{"traceEvents": []}"#,
        )
        .unwrap();
    }
    std::fs::copy(
        fixture("sglang_decode.capture.json.gz"),
        captures.join("bs_32_rank0.json.gz"),
    )
    .unwrap();
    let (code, _, err) = common::run_cli(&["kernels", replay.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bs_32_rank0.json.gz"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_module_table_with_the_capture_charges_replayed_kernels_to_the_captured_modules() {
    let replay = fixture("sglang_decode.replay.json.gz");
    let cap = fixture("sglang_decode.capture.json.gz");
    // The replay alone has one module frame, the sampler's, after the graph launch: the
    // replayed ops are unattributed.
    let (code, out, err) = common::run_cli(&["modules", &replay, "--json", "--capture", "none"]);
    assert_eq!(code, 0, "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    let modules: Vec<&str> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["module"].as_str().unwrap())
        .collect();
    assert_eq!(modules, ["Sampler_0"]);
    let before = t["unattributed_device_us"].as_f64().unwrap();
    assert!(before > 9_700.0, "{before}");
    let (code, out, err) = common::run_cli(&["modules", &replay, "--json", "--capture", &cap]);
    assert_eq!(code, 0, "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    let rows = t["rows"].as_array().unwrap();
    let row = |m: &str| rows.iter().find(|r| r["module"] == m).unwrap();
    let model = row("Qwen3Model_0");
    assert_eq!(
        (model["calls"].as_u64(), model["depth"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(model["host_total_us"], 0.0);
    let attention = row("Qwen3Model_0/Qwen3DecoderLayer_0/Qwen3Attention_0/RadixAttention_0");
    assert_eq!(
        attention["parent"],
        "Qwen3Model_0/Qwen3DecoderLayer_0/Qwen3Attention_0"
    );
    assert!(attention["device_self_us"].as_f64().unwrap() > 0.0);
    assert!(t["unattributed_device_us"].as_f64().unwrap() < before - 9_000.0);
    assert_eq!(row("Sampler_0")["calls"], 1);
    // Device self over the rows plus unattributed is the trace's device time, as without it.
    let self_sum: f64 = rows
        .iter()
        .map(|r| r["device_self_us"].as_f64().unwrap())
        .sum();
    let total = self_sum + t["unattributed_device_us"].as_f64().unwrap();
    assert!(
        (total - t["device_time_us"].as_f64().unwrap()).abs() < 0.01,
        "{total}"
    );
    // A parent's total is its own self time plus its children's totals.
    let children: f64 = rows
        .iter()
        .filter(|r| r["parent"] == "Qwen3Model_0")
        .map(|r| r["device_total_us"].as_f64().unwrap())
        .sum();
    let expected = children + model["device_self_us"].as_f64().unwrap();
    assert!((model["device_total_us"].as_f64().unwrap() - expected).abs() < 0.01);
}

#[test]
fn a_replayed_kernel_on_the_critical_path_names_its_captured_operator() {
    let replay = fixture("sglang_decode.replay.json.gz");
    let cap = fixture("sglang_decode.capture.json.gz");
    let segments = |capture: &str| -> Vec<Value> {
        let (code, out, err) = common::run_cli(&["path", &replay, "--json", "--capture", capture]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["paths"][0]["segments"].as_array().unwrap().clone()
    };
    // Without the capture, the replayed kernels are on the path (HTA's leaves them off,
    // HTA#290) with no operator.
    let bare = segments("none");
    let device = |s: &&Value| s["bound_by"] == "gpu_compute";
    assert!(bare.iter().filter(device).count() > 500);
    assert!(bare.iter().all(|s| s.get("captured_by").is_none()));
    let named = segments(&cap);
    assert_eq!(named.len(), bare.len());
    let mm = named
        .iter()
        .filter(device)
        .filter(|s| s["captured_by"] == "aten::mm")
        .count();
    assert_eq!(mm, 145);
    // Only device ops the graph replayed are named: a CPU segment never is.
    assert!(named
        .iter()
        .filter(|s| s["kind"] == "cpu")
        .all(|s| s.get("captured_by").is_none()));
    // One FILE only takes --capture FILE.
    let (code, _, err) = common::run_cli(&["path", &replay, &replay, "--capture", &cap]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("give one FILE"), "{err}");
}
