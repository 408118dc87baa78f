//! Browser unit tests: run in headless chromium by wasm-bindgen-test-runner
//! (`CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown`).
#![cfg(target_arch = "wasm32")]

use std::io::Read;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The sample bundled with the viewer (www/samples, see README).
const SAMPLE_GZ: &[u8] =
    include_bytes!("../www/samples/tracelens_h100_bert_small_stack_mem.json.gz");

/// The sample's JSON, inflated.
fn sample_json() -> Vec<u8> {
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(SAMPLE_GZ)
        .read_to_end(&mut json)
        .unwrap();
    json
}

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(sightline::web::version(), env!("CARGO_PKG_VERSION"));
}

#[wasm_bindgen_test]
fn the_warm_up_reads_its_trace_through_every_stage_of_a_load() {
    let got: serde_json::Value =
        serde_json::from_str(&sightline::web::warm_up().expect("warm-up")).unwrap();
    // 150 steps of 32 events (4 operators with a Python frame, a launch, a kernel, a flow's two
    // ends and a memory event each; the step, its frame and a copy), and 5 metadata events.
    assert_eq!(got["events"], 150 * 32 + 5, "{got}");
    assert_eq!(got["slices"], 150 * 20, "{got}");
    assert_eq!(got["flows"], 150 * 4, "{got}");
    // A healthy trace: nothing to warn about.
    assert_eq!(got["diagnostics"], 0, "{got}");
    assert!(got["ops"].as_u64().unwrap() >= 6, "{got}");
    // The synthetic steps copy pageable memory on the way: a finding says so.
    assert!(got["findings"].as_u64().unwrap() >= 1, "{got}");
}

#[wasm_bindgen_test]
fn serde_json_round_trips() {
    let text = r#"{"traceEvents":[{"ph":"X","name":"aten::mm","ts":1.5,"dur":2,"args":{"Sequence number":7}}],"displayTimeUnit":"ms"}"#;
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(value["traceEvents"][0]["name"], "aten::mm");
    assert_eq!(value["traceEvents"][0]["ts"].as_f64(), Some(1.5));
    let again: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&value).unwrap()).unwrap();
    assert_eq!(again, value);
}

#[wasm_bindgen_test]
fn bundled_sample_gunzips_and_parses() {
    let mut text = String::new();
    flate2::read::GzDecoder::new(SAMPLE_GZ)
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text.len(), 1_078_563);
    let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(events.len(), 2551);
    let kernels = events.iter().filter(|e| e["cat"] == "kernel").count();
    assert_eq!(kernels, 60);
}

#[wasm_bindgen_test]
fn parser_reads_the_bundled_sample_in_the_browser() {
    let trace = sightline::parse::parse_bytes(SAMPLE_GZ).unwrap();
    assert_eq!(trace.stats.events_total, 2551);
    assert!(!trace.stats.truncated);
    let gpu_lanes = trace
        .lanes
        .iter()
        .filter(|lane| matches!(lane.kind, sightline::model::LaneKind::GpuStream { .. }))
        .count();
    assert!(gpu_lanes > 0, "the sample has GPU stream lanes");
}

/// The direct reader on each string search this module has (`simd128` and portable) gives the
/// model `read_object` alone gives, in whole and in uneven chunks, on the sample and on damaged
/// and odd input (the native tests check every path against the oracle on far more; this checks
/// the wasm SIMD search, which only runs here).
#[wasm_bindgen_test]
fn every_simd_path_reads_what_the_oracle_reads() {
    use sightline::parse::{Parser, Reader, SimdPath};
    let sample = sample_json();
    let inputs: [(&str, &[u8]); 4] = [
        ("sample", &sample),
        (
            "control_chars_and_na",
            include_bytes!("fixtures/parse/control_chars_and_na.json"),
        ),
        (
            "odd_structures",
            include_bytes!("fixtures/parse/odd_structures.json"),
        ),
        (
            "legacy_strings",
            include_bytes!("fixtures/parse/legacy_strings.json"),
        ),
    ];
    let read = |bytes: &[u8], reader: Reader, chunk: usize| {
        let mut p = Parser::with_reader(reader);
        for c in bytes.chunks(chunk) {
            p.feed(c);
        }
        format!("{:?}", p.finish())
    };
    let paths = SimdPath::available();
    // The plain module (no simd128) has the portable search alone.
    let simd = cfg!(target_feature = "simd128") as usize;
    assert_eq!(paths.len(), 1 + simd, "{paths:?}");
    for (name, bytes) in inputs {
        let want = read(bytes, Reader::Objects, 1 << 20);
        for &path in &paths {
            for chunk in [1 << 20, 4093] {
                let got = read(bytes, Reader::Direct(path), chunk);
                assert!(got == want, "{name}: {path:?} in chunks of {chunk} differs");
            }
        }
    }
}

/// The wasm SIMD string search reads each event of the sample, and of mutated copies of each,
/// exactly as the portable one does (same acceptance, ends, flags and spans): a difference in
/// what a reader refuses would not show in the model, which the fallback reads alike.
#[wasm_bindgen_test]
fn the_simd128_search_reads_each_event_as_the_portable_one() {
    use sightline::parse::{direct_read_spans, SimdPath};
    let paths = SimdPath::available();
    let Some(&simd) = paths.get(1) else {
        // The plain module: the portable search alone.
        return;
    };
    let sample = sample_json();
    // Each `{` that starts a line or follows `[`/`,` starts an event candidate.
    let starts: Vec<usize> = (1..sample.len())
        .filter(|&i| sample[i] == b'{' && matches!(sample[i - 1], b'[' | b',' | b'\n' | b' '))
        .collect();
    let mut read = 0;
    // xorshift64: each mutation replays from the seed.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const SPECIAL: &[u8] = b"\"\\{}[],: \n\t\x01\x1f\x7f\x80x0-e.\xc3\xa9";
    for &s in &starts {
        let mut text = sample[s..(s + 1200).min(sample.len())].to_vec();
        let portable = direct_read_spans(SimdPath::Portable, &text);
        assert_eq!(direct_read_spans(simd, &text), portable);
        read += portable.is_some() as usize;
        for _ in 0..4 {
            let at = (next() % text.len() as u64) as usize;
            text[at] = SPECIAL[(next() % SPECIAL.len() as u64) as usize];
            assert_eq!(
                direct_read_spans(simd, &text),
                direct_read_spans(SimdPath::Portable, &text),
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }
    assert!(read * 10 >= starts.len() * 9, "{read} of {}", starts.len());
}

/// The browser glue end to end on the bundled sample: fed in uneven chunks, finished, analysed,
/// drawn, clicked, searched, aggregated. Every result is the JSON or typed array the page reads.
#[wasm_bindgen_test]
fn session_reads_the_sample_and_answers_the_page() {
    use sightline::web::Session;
    let mut s = Session::new();
    for chunk in SAMPLE_GZ.chunks(7_919) {
        s.feed(chunk).unwrap();
    }
    assert_eq!(s.bytes_fed(), SAMPLE_GZ.len() as f64);
    let summary: serde_json::Value =
        serde_json::from_str(&s.finish(1000.0, 600.0).unwrap()).unwrap();
    assert_eq!(summary["events"]["total"], 2551);
    assert!(
        s.feed(b"more").is_err(),
        "a finished session takes no more bytes"
    );
    assert!(s.ops(false).is_err(), "tables need their trees");
    while s.analyse_step(0).unwrap() != "analyses" {}
    assert!(
        s.ops(false).is_err(),
        "the analyses alone do not build the tables"
    );
    analyse(&mut s);

    let frame = s.frame().unwrap();
    let meta: serde_json::Value = serde_json::from_str(&frame.meta()).unwrap();
    assert!(frame.rects().length() > 0);
    assert!(!meta["tracks"].as_array().unwrap().is_empty());

    let ops: serde_json::Value = serde_json::from_str(&s.ops(false).unwrap()).unwrap();
    assert!(ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == "aten::addmm"));
    // The declared columns beside the rows (`analysis::columns`), which the page lays out.
    assert_eq!(ops["columns"][0]["key"], "name");
    assert_eq!(ops["sort"]["key"], "self_device_us");
    let findings: serde_json::Value = serde_json::from_str(&s.findings().unwrap()).unwrap();
    assert!(findings.is_array());
    // Of a command with several tables, each one's declaration by the member holding its rows.
    let compiled: serde_json::Value = serde_json::from_str(&s.compiled().unwrap()).unwrap();
    assert_eq!(
        compiled["tables"]["graphs[].kernels"]["columns"][0]["key"],
        "name"
    );
    assert!(compiled["frames"].is_array());

    // Search selects a match and returns the same details as `details`.
    assert!(s.search("aten::addmm").unwrap() > 0);
    let picked: serde_json::Value =
        serde_json::from_str(&s.search_step(true).unwrap().unwrap()).unwrap();
    assert_eq!(picked["name"], "aten::addmm");
    let (lane, index) = (
        picked["lane"].as_u64().unwrap() as u32,
        picked["index"].as_u64().unwrap() as u32,
    );
    let again: serde_json::Value = serde_json::from_str(&s.details(lane, index).unwrap()).unwrap();
    assert_eq!(again, picked);
    assert!(s.details(lane, u32::MAX).is_err());

    let range: serde_json::Value =
        serde_json::from_str(&s.select_range(0.0, 1000.0, 50).unwrap()).unwrap();
    assert!(range["slices"].as_u64().unwrap() > 0);
}

#[wasm_bindgen_test]
fn a_non_trace_is_a_readable_error() {
    let mut s = sightline::web::Session::new();
    s.feed(b"<html><body>not a trace</body></html>").unwrap();
    let e = s.finish(800.0, 600.0).unwrap_err();
    let msg = js_sys::Error::from(e).message();
    assert!(String::from(msg).contains("not a trace"));
    assert!(s.frame().is_err());
}

/// What links and embedding read and set through a Session (`www/js/url.js`, `www/js/embed.js`).
#[wasm_bindgen_test]
fn session_window_selection_and_origin_for_links() {
    let mut s = sightline::web::Session::new();
    for chunk in SAMPLE_GZ.chunks(10_000) {
        s.feed(chunk).unwrap();
    }
    s.finish(1000.0, 500.0).unwrap();
    // The sample's first event: ts 1419247332500.684 µs.
    assert_eq!(s.origin_ns().unwrap(), "1419247332500684");
    s.set_window(900e3, 1300e3).unwrap();
    let w = s.window_ns().unwrap();
    assert!(
        (w[0] - 900e3).abs() < 1e-6 && (w[1] - 1300e3).abs() < 1e-6,
        "{w:?}"
    );
    assert_eq!(s.selection().unwrap(), r#"{"range":null,"slice":null}"#);
    s.select(0, 0).unwrap();
    let table = s.select_range_ns(1100e3, 1000e3, 10).unwrap();
    assert!(table.contains("\"start_ns\":1000000"), "{table}");
    assert_eq!(
        s.selection().unwrap(),
        r#"{"range":[1000000.0,1100000.0],"slice":[0,0]}"#
    );
    assert!(s.select_range_ns(f64::NAN, 1.0, 10).is_err());
}

/// Runs `analyse_step` until the tables are built, as the page does.
fn analyse(s: &mut sightline::web::Session) {
    while s.analyse_step(0).unwrap() != "tables" {}
}

/// The analyses in small slices (as the page runs them in its worker, frames drawn between the
/// calls) give what one slice each gives: the reports, the tables and the shaded gaps.
#[wasm_bindgen_test]
fn analyses_in_slices_equal_one_slice() {
    let open = || {
        let mut s = sightline::web::Session::new();
        s.feed(SAMPLE_GZ).unwrap();
        s.finish(1000.0, 500.0).unwrap();
        s
    };
    let mut whole = open();
    assert_eq!(whole.analyse_step(u32::MAX).unwrap(), "analyses");
    assert_eq!(whole.analyse_step(u32::MAX).unwrap(), "tables");
    assert_eq!(
        whole.analyse_step(u32::MAX).unwrap(),
        "tables",
        "done stays done"
    );
    let mut sliced = open();
    let mut steps = Vec::new();
    loop {
        let done = sliced.analyse_step(500).unwrap();
        // A frame between two slices, as the page draws them.
        sliced.frame().unwrap();
        if done == "analyses" {
            assert!(sliced.ops(false).is_err(), "the forest comes next");
        }
        steps.push(done.clone());
        if done == "tables" {
            break;
        }
    }
    let paused = steps.iter().filter(|d| d.is_empty()).count();
    assert!(
        paused > 10,
        "{paused} pauses for the sample in slices of 500"
    );
    use sightline::web::Session;
    type Answer = fn(&Session) -> Result<String, wasm_bindgen::JsValue>;
    let answers: [(&str, Answer); 7] = [
        ("steps", Session::steps),
        ("idle", Session::idle),
        ("findings", Session::findings),
        ("ops", |s| s.ops(false)),
        ("kernels", Session::kernels),
        ("labels", Session::labels),
        ("call_tree", Session::call_tree),
    ];
    for (name, answer) in answers {
        assert_eq!(answer(&sliced).unwrap(), answer(&whole).unwrap(), "{name}");
    }
    assert_eq!(
        sliced.frame().unwrap().meta(),
        whole.frame().unwrap().meta()
    );
}

/// The critical path's Session calls on the sample (one BERT step on an H100, CPU bound), as
/// `sightline path --json` answers: the step's path, the path drawn over the dimmed rest, and
/// what-ifs replayed on the kept graph, an edit that matches nothing answered, not thrown.
#[wasm_bindgen_test]
fn critical_path_calls_answer_the_toggle_and_the_what_if() {
    use serde_json::Value;
    let mut s = sightline::web::Session::new();
    s.feed(SAMPLE_GZ).unwrap();
    s.finish(1000.0, 500.0).unwrap();
    assert!(s.critical_path().is_err(), "needs the analyses' steps");
    analyse(&mut s);
    let sm: Value = serde_json::from_str(&s.critical_path().unwrap()).unwrap();
    assert_eq!(sm["steps"].as_array().unwrap().len(), 1);
    assert_eq!(sm["steps"][0]["step"], "ProfilerStep#6");
    assert!((sm["steps"][0]["length_us"].as_f64().unwrap() - 4426.114).abs() < 1e-6);
    let shares: f64 = sm["bound_by"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((shares - 100.0).abs() < 1e-6, "{shares}");
    assert!(!sm["longest"].as_array().unwrap().is_empty());

    let flag_path = 16;
    let path_boxes = |s: &sightline::web::Session| {
        let rects = s.frame().unwrap().rects().to_vec();
        rects
            .chunks(6)
            .filter(|r| (r[4] as u32 >> 8) & flag_path != 0)
            .count()
    };
    assert_eq!(path_boxes(&s), 0);
    s.show_critical_path(true).unwrap();
    assert!(path_boxes(&s) > 0);
    // Rows laid out again (Python frames hidden): the path is still found on them.
    assert!(s.set_python_frames(false).unwrap());
    assert!(path_boxes(&s) > 0);
    s.show_critical_path(false).unwrap();
    assert_eq!(path_boxes(&s), 0);

    let what_if = |s: &mut sightline::web::Session, e: &str| -> Value {
        serde_json::from_str(&s.what_if(e).unwrap()).unwrap()
    };
    // sightline path --what-if 'aten::*=0': 4426.114 -> 2331.092 us, 479 slices (the
    // operators' kernels go with them).
    let a = what_if(&mut s, "aten::*=0");
    assert!(a.get("error").is_none(), "{a}");
    assert_eq!(a["edits"][0]["matched"], 479);
    assert!((a["mean_predicted_us"].as_f64().unwrap() - 2331.092).abs() < 1e-3);
    assert!((a["mean_saving_us"].as_f64().unwrap() - 2095.022).abs() < 1e-3);
    // The device waits for the CPU: faster kernels buy nothing.
    let k = what_if(&mut s, "kernels*0.5");
    assert_eq!(k["mean_saving_us"].as_f64().unwrap(), 0.0);
    // Two edits, one a line.
    let two = what_if(&mut s, "aten::*=0\nkernels*0.5");
    assert_eq!(two["edits"].as_array().unwrap().len(), 2);
    for (bad, says) in [
        ("no_such_op=0", "matches no slice or device op"),
        ("copy", "write NAME=0"),
        ("x*-1", "0 or more"),
        ("  ", "write an edit"),
    ] {
        let e = what_if(&mut s, bad);
        assert!(e["error"].as_str().unwrap().contains(says), "{bad}: {e}");
    }
}

/// The memory views' Session calls on the sample (CPU and one GPU with `[memory]` events): the
/// devices and peaks, the columns of the current window equal to the analysis' buckets for that
/// window, the holders at the peak adding up to it, and one table row per allocation.
#[wasm_bindgen_test]
fn memory_calls_answer_the_chart_panel_and_table() {
    use sightline::analysis::links::Links;
    use sightline::analysis::memory::Memory;
    use sightline::web::Session;
    let mut s = Session::new();
    s.feed(SAMPLE_GZ).unwrap();
    s.finish(1000.0, 600.0).unwrap();
    let trace = sightline::parse::parse_bytes(SAMPLE_GZ).unwrap();
    let memory = Memory::build(&trace, &Links::build(&trace));

    let devices: serde_json::Value = serde_json::from_str(&s.memory_devices().unwrap()).unwrap();
    let names: Vec<&str> = devices
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cpu", "cuda:0"]);
    let gpu = memory.device("cuda:0").unwrap();
    let peak = gpu.allocated[gpu.peak().unwrap()];
    assert_eq!(devices[1]["peak_allocated_bytes"], peak);

    // Zoomed in on the middle of the trace, so that the window cuts the curve.
    let [t0, t1] = s.window_ns().unwrap()[..] else {
        panic!("a window has two ends")
    };
    s.set_window(t0 + (t1 - t0) * 0.3, t0 + (t1 - t0) * 0.6)
        .unwrap();
    let [a, b] = s.window_ns().unwrap()[..] else {
        panic!("a window has two ends")
    };
    let columns = s.memory_columns().unwrap();
    assert_eq!(columns.len(), 2 * 1000 * 3);
    for (d, series) in memory.devices.iter().enumerate() {
        let want = series.columns(&trace, a.floor() as i64, b.ceil() as i64, 1000);
        let got = &columns[d * 3000..(d + 1) * 3000];
        assert!(!want.is_empty());
        for p in &want {
            let o = p.column as usize * 3;
            assert_eq!(got[o], p.allocated_min_bytes as f64);
            assert_eq!(got[o + 1], p.allocated_max_bytes as f64);
            assert_eq!(got[o + 2], p.reserved_max_bytes as f64);
        }
        let drawn = got.chunks(3).filter(|c| !c[0].is_nan()).count();
        assert_eq!(drawn, want.len(), "columns without a value are NaN");
    }

    let live: serde_json::Value =
        serde_json::from_str(&s.memory_live("cuda:0", f64::NAN, 10).unwrap()).unwrap();
    assert_eq!(live["at_peak"], true);
    assert_eq!(live["allocated_bytes"], peak);
    let held: i64 = live["holders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["bytes"].as_i64().unwrap())
        .sum();
    assert_eq!(held, peak);
    assert!(live["live"].as_array().unwrap().len() <= 10);
    assert!(s.memory_live("cuda:7", f64::NAN, 10).is_err());

    let table: serde_json::Value =
        serde_json::from_str(&s.memory_allocations("cuda:0").unwrap()).unwrap();
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), gpu.allocations.len());
    let want = gpu.table(&trace);
    assert_eq!(rows[0][0], format!("{:#x}", want[0].addr));
    assert_eq!(rows[0][1], want[0].bytes);
    let by = rows[0][3].as_u64().unwrap() as usize;
    assert_eq!(table["names"][by], want[0].allocated_by);
}

/// The roofline's Session calls on the sample (BERT-small on an H100): `flops_report` is
/// `sightline flops --json` with the roofs, the page's kernel table carries the FLOPs columns
/// that `sightline kernels --json` has, and `flops_calls` lists a row's calls; before the
/// analyses they are a readable error.
#[wasm_bindgen_test]
fn flops_calls_answer_the_roofline_and_the_tables() {
    use sightline::analysis::flops::{kernels::annotate, Flops};
    use sightline::analysis::links::Links;
    use sightline::analysis::tables::{kernel_table, Forest};
    let mut s = sightline::web::Session::new();
    s.feed(SAMPLE_GZ).unwrap();
    s.finish(1000.0, 500.0).unwrap();
    assert!(s.flops_report().is_err(), "needs the analyses");
    analyse(&mut s);
    let trace = sightline::parse::parse_bytes(SAMPLE_GZ).unwrap();
    let flops = Flops::build(&trace, &Links::build(&trace));
    let report = flops.report(&trace);

    let page: serde_json::Value = serde_json::from_str(&s.flops_report().unwrap()).unwrap();
    // Both read back from text: serde_json parses floats to within a bit, the same way each time.
    let rows: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&report.rows).unwrap()).unwrap();
    assert_eq!(page["rows"], rows);
    assert_eq!(page["peaks"]["device"], "H100 SXM");
    let roofs: Vec<&str> = page["roofs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert!(
        roofs.contains(&"BF16 matrix") && roofs.contains(&"FP32 vector"),
        "{roofs:?}"
    );

    let mut kernels = kernel_table(&trace, &Forest::build(&trace));
    annotate(&mut kernels, &trace, &flops);
    // The table as the page gets it: the kernel table, with its declared columns and sort beside.
    let mut page: serde_json::Value = serde_json::from_str(&s.kernels().unwrap()).unwrap();
    let page = page.as_object_mut().unwrap();
    assert!(page.remove("columns").unwrap().is_array());
    assert!(page.remove("sort").unwrap().is_object());
    // Both read back from text, as above.
    let kernels: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&kernels).unwrap()).unwrap();
    assert_eq!(serde_json::Value::Object(page.clone()), kernels);

    let calls: Vec<serde_json::Value> = serde_json::from_str(&s.flops_calls(0).unwrap()).unwrap();
    assert_eq!(calls.len(), report.rows[0].slices.len());
    assert_eq!(calls[0]["lane"], report.rows[0].slices[0].lane);
    assert!(s.flops_calls(10_000).is_err());
}
