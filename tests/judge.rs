//! Judged against the truth: real CPU training traces with one known reef each and the same
//! program with it fixed (`tests/fixtures/judge/`, recorded by its `record.py`, measured in its
//! `<pair>.truth.json`). On each base trace the reef's finding must be among the first three, its
//! fix's saving within 25% of the measured one; on the fixed trace no finding of that kind may be
//! among the first three.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::Value;
use sightline::analysis::critical::savings::Assessed;
use sightline::analysis::critical::whatif::{self, Edit};
use sightline::analysis::derived::Derived;
use sightline::parse::parse_bytes;
use std::path::{Path, PathBuf};

fn judge_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/judge")
}

fn truths() -> Vec<Value> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(judge_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".truth.json"))
        .collect();
    v.sort();
    v.iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect()
}

struct Judged {
    d: Derived,
    /// The costs, as `report` ranks them (the recording notes apart).
    findings: Vec<Assessed>,
}

fn judge(file: &str) -> Judged {
    let bytes = std::fs::read(judge_dir().join(file)).unwrap();
    let trace = parse_bytes(&bytes).unwrap();
    let d = Derived::new(trace);
    let findings = d.findings(&Default::default()).findings.clone();
    Judged { d, findings }
}

/// The findings that name a reef: its id, and for the DataLoader the part the truth names
/// (fetching or collating), which the finding's sentence says.
fn names_reef(f: &Assessed, reef: &str, part: Option<&str>) -> bool {
    let id = f.finding.id;
    // The float64 detour and the permute copy are one fix in the fixed program.
    let named = match reef {
        "copies_dtype" => id == "dtype_round_trip" || id == "cpu_copy_overhead",
        r => id == r,
    };
    named
        && part.is_none_or(|p| {
            let said = match p {
                "fetch" => "Most of it is fetching the samples",
                "collate" => "Most of it is collating the batch",
                other => panic!("unknown DataLoader part {other}"),
            };
            f.finding.detail.contains(said)
        })
}

/// The median over the steps of what the edits save (the truth is a median of step times).
fn median_saving_ms(j: &Judged, edits: &[String]) -> f64 {
    let a = j.d.critical().unwrap();
    let edits: Vec<Edit> = edits.iter().map(|e| Edit::parse(e).unwrap()).collect();
    let (factor, matched) = whatif::factors(j.d.trace(), a, &edits);
    assert!(matched.iter().all(|&m| m > 0), "every edit matches");
    let mut saved: Vec<f64> = whatif::predict(a, &factor)
        .iter()
        .map(|p| p.saving_us / 1e3)
        .collect();
    saved.sort_by(f64::total_cmp);
    saved[saved.len() / 2]
}

#[test]
fn each_reef_is_named_with_its_saving_and_gone_once_fixed() {
    let truths = truths();
    assert!(truths.len() >= 7, "the seven pairs of tests/fixtures/judge");
    let mut failures = Vec::new();
    for t in &truths {
        let pair = t["pair"].as_str().unwrap();
        let reef = t["cause"]["reef"].as_str().unwrap();
        let part = t["cause"]["part"].as_str();
        let measured = t["saving"]["per_step_ms"].as_f64().unwrap();
        let base = judge(t["base"]["file"].as_str().unwrap());
        let top: Vec<&Assessed> = base.findings.iter().take(3).collect();
        let ids: Vec<&str> = top.iter().map(|f| f.finding.id).collect();
        let cause: Vec<&Assessed> = top
            .iter()
            .copied()
            .filter(|f| names_reef(f, reef, part))
            .collect();
        if cause.is_empty() {
            failures.push(format!("{pair}: {reef} not in the top 3 {ids:?}"));
            continue;
        }
        let edits: Vec<String> = cause
            .iter()
            .flat_map(|f| f.saving.iter().flat_map(|s| s.edits.clone()))
            .collect();
        if edits.is_empty() {
            failures.push(format!("{pair}: {reef} has no saving"));
            continue;
        }
        let predicted = median_saving_ms(&base, &edits);
        let off = (predicted - measured).abs() / measured;
        if off > 0.25 {
            failures.push(format!(
                "{pair}: predicted {predicted:.1} ms ({edits:?}), measured {measured:.1} ms: {:.0}% off",
                100.0 * off
            ));
        }
        let fixed = judge(t["fixed"]["file"].as_str().unwrap());
        let left: Vec<&str> = fixed
            .findings
            .iter()
            .take(3)
            .filter(|f| names_reef(f, reef, part))
            .map(|f| f.finding.id)
            .collect();
        if !left.is_empty() {
            failures.push(format!(
                "{pair}: the fixed run still ranks {left:?} in its top 3"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The new rules' edits are what the page's "what if" button applies: each must parse and
/// match, and `self:`/`+gaps`/`|`/`untraced`/`float64` must mean what the rules price.
#[test]
fn the_rules_edits_parse_and_price_what_they_say() {
    let j = judge("small_op_storm.base.pt.trace.json.gz");
    let storm = j
        .findings
        .iter()
        .find(|f| f.finding.id == "small_op_storm")
        .expect("the storm is found");
    let edit = &storm.saving.as_ref().unwrap().edits[0];
    assert!(edit.contains('|') && edit.contains("+gaps*"), "{edit}");
    // The gaps between the loop's calls are part of what its fix saves.
    let without_gaps = edit.replace("+gaps", "");
    assert!(
        median_saving_ms(&j, std::slice::from_ref(edit))
            > median_saving_ms(&j, &[without_gaps]) + 1.0,
        "+gaps adds the Python time between the calls"
    );

    let j = judge("annotation_overhead.base.pt.trace.json.gz");
    // An annotation's own time is less than its whole (children included) only where it holds
    // operators; these hold none, so own and whole agree, and the gaps add to both.
    let own = median_saving_ms(&j, &["self:sample=0".into()]);
    let whole = median_saving_ms(&j, &["sample=0".into()]);
    let with_gaps = median_saving_ms(&j, &["self:sample+gaps=0".into()]);
    assert!((own - whole).abs() < 0.5, "{own} vs {whole}");
    assert!(with_gaps > own + 1.0, "{with_gaps} vs {own}");

    // A step's own time outside its operators is what `untraced` removes; the fixed run has
    // almost none.
    let base = median_saving_ms(
        &judge("untraced_cpu_time.base.pt.trace.json.gz"),
        &["untraced=0".into()],
    );
    let fixed = median_saving_ms(
        &judge("untraced_cpu_time.fixed.pt.trace.json.gz"),
        &["untraced=0".into()],
    );
    assert!(base > 10.0 * fixed.max(0.1), "{base} vs {fixed}");

    let j = judge("copies_dtype.base.pt.trace.json.gz");
    assert!(median_saving_ms(&j, &["float64*0.5".into()]) > 5.0);
    // The fixed program is float32 throughout: nothing for `float64` to match.
    let j = judge("copies_dtype.fixed.pt.trace.json.gz");
    let a = j.d.critical().unwrap();
    let (_, matched) = whatif::factors(j.d.trace(), a, &[Edit::parse("float64*0.5").unwrap()]);
    assert_eq!(matched, vec![0]);

    for bad in [
        "self:kernels=0",
        "untraced+gaps=0",
        "a||b=0",
        "self:+gaps=0",
    ] {
        assert!(Edit::parse(bad).is_err(), "{bad}");
    }
}

/// All of a trace's finding ids, costs and recording notes.
fn ids_of(path: &Path) -> Vec<&'static str> {
    let trace = parse_bytes(&std::fs::read(path).unwrap()).unwrap();
    crate::common::findings(&trace)
        .iter()
        .map(|f| f.id)
        .collect()
}

/// docs/findings.md's table of the profiling guides' lessons: each finding that checks one fires on a
/// real trace that breaks the lesson, and stays silent on one that keeps it.
#[test]
fn the_guides_checklist_holds_on_real_traces() {
    let shared = crate::common::shared_fixtures();
    let local = |p: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(p)
    };
    let judged = |p: &str| judge_dir().join(p);
    let cases: Vec<(&str, PathBuf, PathBuf)> = vec![
        (
            "no_cpu_activity",
            local("devices/cuda_only_alexnet.json.gz"),
            shared.join("real/hta_a100_alexnet_cuda_sync.json.gz"),
        ),
        (
            "no_input_shapes",
            shared.join("pytorch-cpu/cnn_noshapes_gz.pt.trace.json.gz"),
            shared.join("pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz"),
        ),
        (
            "memory_profiling_on",
            shared.join("pytorch-cpu/encoder_stack_memory.pt.trace.json.gz"),
            judged("small_op_storm.base.pt.trace.json.gz"),
        ),
        (
            "no_python_stack",
            judged("small_op_storm.base.pt.trace.json.gz"),
            shared.join("real/tracelens_h100_bert_small_stack_mem.json.gz"),
        ),
        (
            "few_active_steps",
            shared.join("real/param_dlrm_v100_rank0of8.pt.trace.json.gz"),
            judged("small_op_storm.base.pt.trace.json.gz"),
        ),
        (
            "warmup_outlier",
            judged("dataloader_getitem.base.pt.trace.json.gz"),
            judged("dataloader_getitem.fixed.pt.trace.json.gz"),
        ),
        (
            "cpu_copy_overhead",
            shared.join("real/param_dlrm_v100_rank0of8.pt.trace.json.gz"),
            shared.join("real/hta_v100_train_1rank_ns_resolution.pt.trace.json.gz"),
        ),
        (
            "pageable_memcpy",
            shared.join("real/hta_a100_alexnet_cuda_sync.json.gz"),
            shared.join("real/tracelens_h100_bert_small_stack_mem.json.gz"),
        ),
    ];
    for (id, fires, silent) in &cases {
        assert!(ids_of(fires).contains(id), "{id} on {}", fires.display());
        assert!(!ids_of(silent).contains(id), "{id} on {}", silent.display());
    }
    // The reefs' own lessons (annotations in loops, float64, the DataLoader's parts, small-op
    // loops, grouped optimizers, work outside operators) are the pairs' test above.
}
