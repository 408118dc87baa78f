//! Browser unit tests: run in headless chromium by wasm-bindgen-test-runner
//! (`CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown`).
#![cfg(target_arch = "wasm32")]

use std::io::Read;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The sample bundled with the viewer (www/samples, see README).
const SAMPLE_GZ: &[u8] =
    include_bytes!("../www/samples/tracelens_h100_bert_small_stack_mem.json.gz");

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(sightline::web::version(), env!("CARGO_PKG_VERSION"));
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
