//! A warm-up read for a worker that waits for its first trace.
//!
//! A browser compiles the module quickly and without optimizing first, and optimizes a function
//! only once it has run for a while; the optimized code then serves every worker the module is
//! shared with. Without a warm-up the first trace a page opens pays for that: the 56 MB owlv2
//! trace read in 294-348 ms and analysed in 266-302 ms in a fresh page, against 217-225 and
//! 149-161 ms once a small trace had been read a second earlier (headless Chromium, 2 cores).
//! [`warm_up`] reads a small synthetic trace, in the shapes a PyTorch profiler writes, through
//! the calls a load makes (feed, finish, the analyses, the tables, a frame), while the page
//! waits for a file.

use super::json;
use super::session::Session;
use std::fmt::Write;
use wasm_bindgen::prelude::*;

/// Training steps in the warm-up trace: 4,805 events, about 1.8 MB of JSON.
const STEPS: usize = 150;
/// Bytes fed at a time, so that events cut between two feeds are read too.
const FEED: usize = 64 << 10;

/// Reads a synthetic trace through a whole load and drops it; returns what it read as JSON
/// (`events`, `slices`, `flows`, `diagnostics`, `findings`, `ops`), so a test can tell that every
/// stage ran.
#[wasm_bindgen]
pub fn warm_up() -> Result<String, JsValue> {
    let text = trace(STEPS);
    let mut s = Session::new();
    for chunk in text.as_bytes().chunks(FEED) {
        s.feed(chunk)?;
    }
    let summary: serde_json::Value =
        serde_json::from_str(&s.finish(1000.0, 500.0)?).map_err(super::err)?;
    while s.analyse_step(0)? != "tables" {}
    let findings: Vec<serde_json::Value> =
        serde_json::from_str(&s.findings()?).map_err(super::err)?;
    let ops: serde_json::Value = serde_json::from_str(&s.ops(false)?).map_err(super::err)?;
    s.kernels()?;
    s.frame()?;
    Ok(json(&serde_json::json!({
        "events": summary["events"]["total"],
        "slices": summary["model"]["slices"],
        "flows": summary["flows"],
        "diagnostics": summary["diagnostics"].as_array().map_or(0, Vec::len),
        "findings": findings.len(),
        "ops": ops["rows"].as_array().map_or(0, Vec::len),
    })))
}

/// A CUDA training trace of `steps` steps in Kineto's layout: per step a `ProfilerStep#N`,
/// Python frames, operators with their input shapes, kernel launches and their kernels joined by
/// flows, a host-to-device copy and memory events.
fn trace(steps: usize) -> String {
    let mut out = String::with_capacity(steps * 8 * 1024);
    out.push_str(
        r#"{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100","totalGlobalMem":85000000000,"computeMajor":9,"computeMinor":0,"maxThreadsPerBlock":1024,"numSms":132}],"traceEvents":["#,
    );
    out.push_str(concat!(
        r#"{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"python"}},"#,
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"thread 1 (python)"}},"#,
        r#"{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"python"}},"#,
        r#"{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}},"#,
        r#"{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7"}}"#,
    ));
    let base = 1_700_000_000_000u64; // µs since the epoch, as Kineto writes them
    let mut id = 0u64;
    for step in 0..steps {
        let t0 = base + step as u64 * 2_000;
        let ev = |out: &mut String, cat: &str, name: &str, ts: f64, dur: f64, args: &str| {
            let _ = write!(
                out,
                r#",{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":1,"ts":{ts:.3},"dur":{dur:.3},"args":{{{args}}}}}"#
            );
        };
        let t = t0 as f64;
        id += 1;
        ev(
            &mut out,
            "user_annotation",
            &format!("ProfilerStep#{step}"),
            t,
            1_900.0,
            &format!(r#""External id":{id}"#),
        );
        ev(
            &mut out,
            "python_function",
            "train.py(42): train_step",
            t + 1.0,
            1_850.0,
            r#""Python parent id":1,"Python id":2,"Python thread":0"#,
        );
        for (k, (op, dims)) in [
            ("aten::linear", "[[64, 512], [512, 512], [512]]"),
            ("aten::relu", "[[64, 512]]"),
            ("aten::linear", "[[64, 512], [128, 512], [128]]"),
            ("aten::add_", "[[128], [128], []]"),
        ]
        .into_iter()
        .enumerate()
        {
            let at = t + 10.0 + k as f64 * 400.0;
            id += 1;
            let args = format!(
                r#""External id":{id},"Record function id":0,"Ev Idx":{id},"Input Dims":{dims},"Input type":["float", "float", "float"],"Input Strides":[[512, 1], [512, 1], [1]],"Concrete Inputs":["", "", ""],"Sequence number":{id},"Fwd thread id":0"#
            );
            ev(&mut out, "cpu_op", op, at, 300.0, &args);
            ev(
                &mut out,
                "python_function",
                "torch/nn/modules/module.py(1750): _call_impl",
                at + 1.0,
                298.0,
                r#""Python parent id":2,"Python id":3,"Python thread":0"#,
            );
            let corr = id;
            let _ = write!(
                out,
                r#",{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3},"dur":6.500,"args":{{"External id":{id},"cbid":211,"correlation":{corr}}}}}"#,
                at + 250.0
            );
            let _ = write!(
                out,
                r#",{{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_tn","pid":0,"tid":7,"ts":{:.3},"dur":{:.3},"args":{{"External id":{id},"queued":0,"device":0,"context":1,"stream":7,"correlation":{corr},"registers per thread":128,"shared memory":16384,"blocks per SM":0.5,"warps per SM":4.0,"grid":[64, 1, 1],"block":[256, 1, 1],"est. achieved occupancy %":12}}}}"#,
                at + 262.0,
                40.0 + k as f64 * 5.0
            );
            let _ = write!(
                out,
                r#",{{"ph":"s","id":{corr},"pid":1,"tid":1,"ts":{:.3},"cat":"ac2g","name":"ac2g"}},{{"ph":"f","id":{corr},"pid":0,"tid":7,"ts":{:.3},"cat":"ac2g","name":"ac2g","bp":"e"}}"#,
                at + 250.0,
                at + 262.0
            );
            let _ = write!(
                out,
                r#",{{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":{:.3},"args":{{"Device Type":1,"Device Id":0,"Addr":{},"Bytes":131072,"Total Allocated":{},"Total Reserved":2097152}}}}"#,
                at + 5.0,
                94_000_000_000u64 + k as u64 * 131_072,
                1_048_576 + k as u64 * 131_072
            );
        }
        id += 1;
        let corr = id;
        let at = t + 1_700.0;
        let _ = write!(
            out,
            r#",{{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":{at:.3},"dur":30.000,"args":{{"External id":{id},"cbid":41,"correlation":{corr}}}}},{{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":{:.3},"dur":25.000,"args":{{"External id":{id},"device":0,"context":1,"stream":7,"correlation":{corr},"bytes":262144,"memory bandwidth (GB/s)":10.5}}}}"#,
            at + 3.0
        );
    }
    out.push_str("]}");
    out
}
