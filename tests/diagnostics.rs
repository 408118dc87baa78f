//! Damage versus observations: a file as the profiler wrote it has no damage, whatever facts of
//! real traces (lost flow starts, slices overlapping without nesting) it holds; a broken file does.

use crate::common;

use sightline::analysis::summary::summarize;
use sightline::parse::parse_bytes;
use std::path::{Path, PathBuf};

/// Every trace under the shared fixtures, in every folder.
fn every_trace(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            every_trace(&p, out);
        } else if n.ends_with(".pt.trace.json.gz")
            || (n.ends_with(".json.gz") && p.parent().unwrap().ends_with("real"))
        {
            out.push(p);
        }
    }
}

#[test]
fn real_traces_have_no_damage_and_explain_their_observations() {
    let mut paths = Vec::new();
    every_trace(&common::shared_fixtures(), &mut paths);
    assert!(paths.len() >= 25, "found {} traces", paths.len());
    let mut observed = 0;
    for path in paths {
        let t = parse_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let s = summarize(&t);
        assert!(
            s.diagnostics.is_empty(),
            "{}: damage {:?}",
            path.display(),
            s.diagnostics
        );
        for o in &s.observations {
            assert!(o.count > 0 && !o.explanation.is_empty());
        }
        observed += s.observations.len();
    }
    assert!(
        observed > 0,
        "the real traces hold lost flow starts and overlaps"
    );
}

#[test]
fn damage_is_listed_and_observations_are_not_damage() {
    let bytes = std::fs::read(common::local_fixture("parse/truncated_mid_event.json")).unwrap();
    let s = summarize(&parse_bytes(&bytes).unwrap());
    assert!(s.truncated);
    assert!(s
        .diagnostics
        .iter()
        .any(|d| format!("{:?}", d.kind) == "Truncated"));
    let bytes = std::fs::read(common::local_fixture("parse/overlap_gpu.json")).unwrap();
    let s = summarize(&parse_bytes(&bytes).unwrap());
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert!(s
        .observations
        .iter()
        .any(|o| format!("{:?}", o.kind) == "OverlappingSlice"));
}

/// What adversarial files do is told as damage, each under its own kind, and no longer silently:
/// raw control characters in a name, a key written twice in an event or in the envelope (two
/// `traceEvents` arrays: both are read, the second after the first), a name of megabytes, and
/// nesting deeper than the timeline's rows.
#[test]
fn adversarial_files_are_told_not_silently_repaired() {
    use sightline::model::{DiagKind, LONG_NAME_BYTES};
    let kinds = |json: &str| -> Vec<(DiagKind, u64)> {
        let t = parse_bytes(json.as_bytes()).unwrap();
        t.diagnostics.damage().map(|d| (d.kind, d.count)).collect()
    };
    let x = |name: &str, ts: u32| {
        format!(r#"{{"ph":"X","name":"{name}","cat":"cpu_op","pid":1,"tid":1,"ts":{ts},"dur":5}}"#)
    };
    // A raw control character in a name: read as text, and told.
    let control = format!("{{\"traceEvents\":[{}]}}", x("a\u{1}b", 0));
    assert_eq!(kinds(&control), [(DiagKind::RepairedEvent, 1)]);
    // `dur` twice in one event: the last wins.
    let twice = r#"{"traceEvents":[{"ph":"X","name":"a","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":5,"dur":7}]}"#;
    assert_eq!(kinds(twice), [(DiagKind::DuplicateKey, 1)]);
    assert_eq!(
        parse_bytes(twice.as_bytes()).unwrap().slices(0).dur_ns[0],
        7000
    );
    // Two traceEvents arrays and a metadata key twice.
    let arrays = format!(
        r#"{{"schemaVersion":1,"traceEvents":[{}],"schemaVersion":2,"traceEvents":[{}]}}"#,
        x("a", 0),
        x("b", 10)
    );
    assert_eq!(kinds(&arrays), [(DiagKind::DuplicateKey, 2)]);
    assert_eq!(parse_bytes(arrays.as_bytes()).unwrap().slice_count(), 2);
    // A name of 1 MB.
    let long = format!("{{\"traceEvents\":[{}]}}", x(&"n".repeat(1 << 20), 0));
    assert_eq!(kinds(&long), [(DiagKind::LongName, 1)]);
    let just = format!(
        "{{\"traceEvents\":[{}]}}",
        x(&"n".repeat(LONG_NAME_BYTES), 0)
    );
    assert!(kinds(&just).is_empty());
    // 70,000 levels of nesting: rows stop at 65,534, and the rest is told.
    let n = 70_000u32;
    let events: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"ph":"X","name":"f","cat":"cpu_op","pid":1,"tid":1,"ts":{i},"dur":{}}}"#,
                2 * (n - i)
            )
        })
        .collect();
    let deep = format!("{{\"traceEvents\":[{}]}}", events.join(","));
    let told = kinds(&deep);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, DiagKind::DeepNesting);
    assert_eq!(told[0].1, u64::from(n - 65_534));
}

/// A name past 64 KiB is cut in every output, text and JSON, and `--full-names` gives it whole:
/// `report` on a trace with a name of 5 MB copied all of it (twice) into its output.
#[test]
fn outputs_cut_a_huge_name_unless_asked_for_it_whole() {
    let name = "n".repeat(5_000_000);
    let json = format!(
        r#"{{"traceEvents":[{{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":1000}},{{"ph":"X","name":"{name}","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":500}}]}}"#
    );
    let dir = std::env::temp_dir().join(format!("sightline-long-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("long.json");
    std::fs::write(&path, json).unwrap();
    let run = |args: &[&str]| -> String {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for cmd in ["report", "ops", "summary", "steps", "kernels", "labels"] {
        for json in [false, true] {
            let mut args = vec![cmd];
            if json {
                args.push("--json");
            }
            let out = run(&args);
            assert!(out.len() < 1_000_000, "{cmd} {json}: {} bytes", out.len());
        }
    }
    let ops = run(&["ops", "--json"]);
    assert!(
        ops.contains(&format!("… ({} more bytes)", 5_000_000 - 65_536)),
        "{ops:.300}"
    );
    let whole = run(&["ops", "--json", "--full-names"]);
    assert!(whole.contains(&name));
    let summary = run(&["summary"]);
    assert!(summary.contains("LongName"), "{summary:.2000}");
    std::fs::remove_dir_all(&dir).ok();
}
