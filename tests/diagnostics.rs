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
