//! The `sightline` binary as a user runs it: exit codes, one-line errors, the JSON shape.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use std::process::Command;

#[test]
fn summary_json_has_the_documented_fields() {
    let path = common::shared_fixtures().join("real/hta_a100_alexnet_cuda_sync.json.gz");
    let (code, out, _) = common::run_cli(&["summary", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["events"]["total"], 1408);
    assert_eq!(v["events"]["by_phase"]["X"], 868);
    assert!(v["events"]["by_category"]["kernel"].as_u64().unwrap() > 0);
    assert!(v["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["kind"] == "gpu"));
    assert_eq!(v["truncated"], false);
    // A file as the profiler wrote it: no damage; its lost flow starts and overlaps are
    // observations, each with kind, count and explanation.
    assert_eq!(v["diagnostics"], serde_json::json!([]));
    let obs = v["observations"].as_array().unwrap();
    assert!(obs.iter().any(|o| o["kind"] == "flow_without_start"
        && o["count"].as_u64().unwrap() > 0
        && o["explanation"].as_str().unwrap().contains("start")));
    assert!(v["mb_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["file"]["gzipped"], true);
}

/// `modules --json`: the field names, a tree (every parent listed before its children), and
/// the text view indented under the device's word; a trace without modules says how to record them.
#[test]
fn modules_json_has_the_documented_fields() {
    let path = common::shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz");
    let (code, out, _) = common::run_cli(&["modules", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.len() > 40);
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        for key in [
            "module",
            "parent",
            "calls",
            "host_self_us",
            "host_total_us",
            "device_self_us",
            "device_total_us",
        ] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
        if let Some(p) = r["parent"].as_str() {
            assert!(seen.contains(p), "{p} before {}", r["module"]);
        }
        seen.insert(r["module"].as_str().unwrap().to_string());
    }
    assert_eq!(rows[0]["module"], "BertLMHeadModel_0");
    assert!(v["unattributed_device_us"].as_f64().is_some());
    let (code, out, _) = common::run_cli(&["modules", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        out.contains("GPU total") && out.contains("\n  BertModel_0 "),
        "{out}"
    );
    let cpu = common::shared_fixtures().join("real/hta_a100_alexnet_cuda_sync.json.gz");
    let (code, out, _) = common::run_cli(&["modules", cpu.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("with_modules=True"), "{out}");
}

#[test]
fn a_damaged_trace_exits_zero_and_says_so() {
    let path = common::local_fixture("parse/truncated_mid_event.json");
    let (code, out, _) = common::run_cli(&["summary", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("TRUNCATED"), "{out}");
    assert!(out.contains("Truncated x1"), "{out}");
}

#[test]
fn a_non_trace_exits_two_with_one_line() {
    for f in ["parse/page.html", "parse/other.json"] {
        let path = common::local_fixture(f);
        let (code, out, err) = common::run_cli(&["summary", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{f}");
        assert!(out.is_empty());
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("not a trace"), "{err}");
    }
    let (code, _, err) = common::run_cli(&["summary", "/nonexistent/trace.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("No such file"), "{err}");
    let (code, _, _) = common::run_cli(&["frobnicate", "x.json"]);
    assert_eq!(code, 2);
}

/// Runs the command with its stdout piped, reads `take` bytes of it and closes the pipe as
/// `| head -c TAKE` would (0: closed before the command writes); its exit status and stderr.
fn with_stdout_closed_after(args: &[&str], take: usize) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    out.read_exact(&mut vec![0u8; take]).unwrap();
    drop(out);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), err)
}

#[test]
fn a_closed_pipe_is_not_a_crash() {
    // Over 64 KiB of output, more than a pipe buffers: the writer meets the closed end.
    let path = common::shared_fixtures().join("real/tracelens_h100_owlv2_stack_mem.json.gz");
    let (status, err) = with_stdout_closed_after(&["kernels", path.to_str().unwrap(), "--json"], 1);
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.code().is_some(), "ended by a signal: {status:?}");
}

#[test]
fn help_prints_the_usage_and_exits_zero() {
    for flag in ["help", "--help", "-h"] {
        let (code, out, _) = common::run_cli(&[flag]);
        assert_eq!(code, 0, "{flag}");
        assert!(
            out.contains("diff BASE NEW") && out.contains("ranks PATH"),
            "{flag}: {out}"
        );
    }
    let (code, _, err) = common::run_cli(&[]);
    assert_eq!(code, 2);
    assert!(err.contains("summary FILE"));
}

/// An unknown flag is an error with a suggestion, not silently ignored (`--jsn` printed text).
#[test]
fn an_unknown_flag_or_missing_value_exits_two_with_a_suggestion() {
    let t = common::local_fixture("parse").join("begin_end.json");
    let t = t.to_str().unwrap();
    let (code, out, err) = common::run_cli(&["report", t, "--jsn"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("--jsn") && err.contains("--json"), "{err}");
    let (code, _, err) = common::run_cli(&["ops", t, "--top"]);
    assert_eq!(code, 2);
    assert!(err.contains("--top"), "{err}");
    let (code, _, err) = common::run_cli(&["ops", t, "--top", "many"]);
    assert_eq!(code, 2);
    assert!(err.contains("many"), "{err}");
    let (code, _, err) = common::run_cli(&["reprot", t]);
    assert_eq!(code, 2);
    assert!(err.contains("report"), "{err}");
}

/// Every command has its own help from the one grammar, and every flag the usage text listed
/// before the grammar was declared still parses with its old spelling.
#[test]
fn every_command_has_its_help_and_keeps_its_flags() {
    let flags: &[(&str, &[&str])] = &[
        ("summary", &["--json"]),
        (
            "ops",
            &["--json", "--by-shape", "--path", "--sort", "--top"],
        ),
        ("kernels", &["--json", "--path", "--top"]),
        ("labels", &["--json", "--top"]),
        ("compiled", &["--json"]),
        (
            "path",
            &[
                "--step",
                "--annotation",
                "--instance",
                "--what-if",
                "--json",
                "--compat",
            ],
        ),
        ("modules", &["--json", "--top"]),
        ("idle", &["--json", "--compat", "--top"]),
        ("steps", &["--json"]),
        (
            "memory",
            &["--json", "--points", "--at", "--allocations", "--top"],
        ),
        ("flops", &["--json", "--top"]),
        ("report", &["--json", "--compat", "--top"]),
        (
            "diff",
            &[
                "--json",
                "--per-step",
                "--total",
                "--by-shape",
                "--top",
                "--fail-if",
            ],
        ),
        ("digest", &[]),
        ("ranks", &["--json", "--align", "--whole-trace"]),
        ("serve", &["--port", "--host"]),
    ];
    for (cmd, fl) in flags {
        let (code, out, err) = common::run_cli(&[cmd, "--help"]);
        assert_eq!(code, 0, "{cmd}: {err}");
        for f in *fl {
            assert!(out.contains(f), "{cmd} --help lacks {f}:\n{out}");
        }
        assert!(out.contains("--full-names"), "{cmd}: {out}");
    }
    let (code, out, _) = common::run_cli(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("sightline {}", env!("CARGO_PKG_VERSION"))
    );
    let t = common::local_fixture("judge").join("copies_dtype.fixed.pt.trace.json.gz");
    let t = t.to_str().unwrap();
    for args in [
        vec![
            "ops",
            t,
            "--sort",
            "self_cpu_time_total",
            "--top",
            "3",
            "--by-shape",
            "--json",
        ],
        vec!["memory", t, "--points", "5", "--at", "-1", "--json"],
        vec![
            "path",
            t,
            "--what-if",
            "aten::*=0",
            "--what-if",
            "untraced=0",
            "--json",
        ],
        vec!["idle", t, "--compat", "hta", "--full-names", "--json"],
    ] {
        let (code, out, err) = common::run_cli(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    }
}

/// A reader that stops early (`sightline ... | head`) closes the pipe: the command exits quietly,
/// with no panic on stderr.
#[test]
fn a_reader_that_stops_early_is_no_error() {
    let trace = common::shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz");
    let trace = trace.to_str().unwrap();
    for args in [vec!["completions", "bash"], vec!["ops", trace]] {
        // Closed before the command writes: its first write meets a broken pipe.
        let (status, err) = with_stdout_closed_after(&args, 0);
        assert!(status.success(), "{args:?}: {status} {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `sightline completions SHELL` prints a script that names the commands and their flags.
#[test]
fn completions_are_generated_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = common::run_cli(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        for word in ["report", "ranks", "what-if", "fail-if"] {
            assert!(out.contains(word), "{shell} lacks {word}");
        }
    }
    let (code, _, err) = common::run_cli(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("bash"), "{err}");
}

/// `snapshot FILE --json`: the report's figures as the analysis computes them; two files give the
/// diff; a pickle that names code and a trace are each refused with exit 2 and a sentence.
#[test]
fn snapshot_reports_diffs_and_refuses() {
    let dir = common::local_fixture("snapshot");
    let training = dir.join("training.pickle.gz");
    let (code, out, _) = common::run_cli(&["snapshot", training.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let snap = sightline::snapshot::read(&std::fs::read(&training).unwrap()).unwrap();
    let m = sightline::snapshot::analysis::device_memory(&snap, 0);
    assert_eq!(v["devices"][0]["peak_bytes"], m.peak_bytes);
    assert_eq!(
        v["segments"]["reserved_bytes"],
        sightline::snapshot::analysis::segments(&snap).reserved_bytes
    );
    assert_eq!(v["stats"]["gzipped"], true);
    assert!(
        v["devices"][0]["at_peak"]["by_category"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    let (code, out, _) = common::run_cli(&["snapshot", training.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("live at the peak, by category:"), "{out}");
    let oom = dir.join("oom.pickle");
    let (code, out, _) = common::run_cli(&["snapshot", oom.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("out of memory at entry"), "{out}");
    let every = dir.join("every_key.pickle");
    let (code, out, _) = common::run_cli(&[
        "snapshot",
        training.to_str().unwrap(),
        every.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0);
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(d["devices"][0]["delta_peak_bytes"].as_i64().unwrap() < 0);
    let bad = dir.join("malicious.pickle");
    let (code, _, err) = common::run_cli(&["snapshot", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("refused") && err.contains("GLOBAL"), "{err}");
    let trace = common::local_fixture("parse/trailing_comma.json");
    let (code, _, err) = common::run_cli(&["snapshot", trace.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not a memory snapshot"), "{err}");
    let (code, _, err) = common::run_cli(&["summary", every.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("memory snapshot"), "{err}");
}
