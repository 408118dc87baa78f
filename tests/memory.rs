//! Memory over time: the curve is the trace's own totals, the holders at the peak add up to it,
//! allocations pair with their frees, and `memory_growth` fires on a leak and not on a steady loop.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use sightline::analysis::links::Links;
use sightline::analysis::memory::{self, Memory, MemoryOptions, NO_EVENT};
use sightline::analysis::steps;
use sightline::model::Trace;
use sightline::parse::parse_bytes;
use std::process::Command;

const WITH_MEMORY: &[&str] = &[
    "real/tracelens_h100_bert_small_stack_mem.json.gz",
    "real/tracelens_h100_owlv2_stack_mem.json.gz",
    "real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz",
    "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz",
];

/// Per column, min/max allocated and max reserved by looking at every event: the oracle for
/// `DeviceSeries::columns`.
fn naive_columns(
    ts: &[i64],
    alloc: &[i64],
    res: &[i64],
    t0: i64,
    t1: i64,
    n: u32,
) -> Vec<(u32, i64, i64, i64)> {
    let width = (t1 - t0) as f64 / f64::from(n);
    let mut out = Vec::new();
    for c in 0..n {
        let c0 = t0 + (f64::from(c) * width) as i64;
        let c1 = if c + 1 == n {
            t1
        } else {
            t0 + (f64::from(c + 1) * width) as i64
        };
        let mut vals: Vec<usize> = (0..ts.len())
            .filter(|&p| ts[p] >= c0 && ts[p] < c1)
            .collect();
        if let Some(before) = (0..ts.len()).rev().find(|&p| ts[p] < c0) {
            vals.push(before);
        }
        if vals.is_empty() {
            continue;
        }
        out.push((
            c,
            vals.iter().map(|&p| alloc[p]).min().unwrap(),
            vals.iter().map(|&p| alloc[p]).max().unwrap(),
            vals.iter().map(|&p| res[p]).max().unwrap(),
        ));
    }
    out
}

#[test]
fn the_curve_is_the_traces_own_totals_and_loses_no_spike() {
    for name in WITH_MEMORY {
        let trace = common::shared_trace(name);
        let links = Links::build(&trace);
        let mem = Memory::build(&trace, &links);
        let m = &trace.memory;
        assert!(!mem.devices.is_empty(), "{name}");
        for d in &mem.devices {
            let ts: Vec<i64> = d.events.iter().map(|&e| m.ts_ns[e as usize]).collect();
            if d.totals_recorded {
                for (p, &e) in d.events.iter().enumerate() {
                    assert_eq!(d.allocated[p], m.total_allocated[e as usize], "{name}");
                    assert_eq!(d.reserved[p], m.total_reserved[e as usize], "{name}");
                }
            } else {
                // Before 1.10: a running sum of the events' own Bytes.
                let sum: i64 = d.events.iter().map(|&e| m.bytes[e as usize]).sum();
                assert_eq!(*d.allocated.last().unwrap(), sum, "{name}");
            }
            // One column per event time: every event's value is inside its column.
            let (t0, t1) = (ts[0], ts[ts.len() - 1] + 1);
            let peak = *d.allocated.iter().max().unwrap();
            for n in [1u32, 7, 64, 1000] {
                let cols = d.columns(&trace, t0, t1, n);
                let oracle = naive_columns(&ts, &d.allocated, &d.reserved, t0, t1, n);
                let got: Vec<_> = cols
                    .iter()
                    .map(|c| {
                        (
                            c.column,
                            c.allocated_min_bytes,
                            c.allocated_max_bytes,
                            c.reserved_max_bytes,
                        )
                    })
                    .collect();
                assert_eq!(got, oracle, "{name} {} columns", n);
                assert_eq!(
                    cols.iter().map(|c| c.allocated_max_bytes).max(),
                    Some(peak),
                    "{name}: the peak survives {n} columns"
                );
            }
            // A zoomed-in window in the middle, which starts between events.
            let mid = (t0 + t1) / 2;
            let cols = d.columns(&trace, mid, mid + (t1 - t0) / 10 + 1, 33);
            let oracle = naive_columns(
                &ts,
                &d.allocated,
                &d.reserved,
                mid,
                mid + (t1 - t0) / 10 + 1,
                33,
            );
            assert_eq!(cols.len(), oracle.len(), "{name}");
        }
    }
}

#[test]
fn allocations_pair_with_frees_of_the_same_block() {
    for name in WITH_MEMORY {
        let trace = common::shared_trace(name);
        let links = Links::build(&trace);
        let mem = Memory::build(&trace, &links);
        let m = &trace.memory;
        for d in &mem.devices {
            if !d.addresses_recorded {
                assert!(d.allocations.is_empty());
                continue;
            }
            let allocs = d
                .events
                .iter()
                .filter(|&&e| m.bytes[e as usize] > 0)
                .count();
            let frees = d
                .events
                .iter()
                .filter(|&&e| m.bytes[e as usize] < 0)
                .count();
            let seen = d
                .allocations
                .iter()
                .filter(|a| a.alloc_event != NO_EVENT)
                .count();
            let freed = d
                .allocations
                .iter()
                .filter(|a| a.free_event != NO_EVENT)
                .count();
            assert_eq!(seen, allocs, "{name}");
            assert_eq!(freed, frees, "{name}");
            for a in &d.allocations {
                if a.alloc_event != NO_EVENT && a.free_event != NO_EVENT {
                    let (x, y) = (a.alloc_event as usize, a.free_event as usize);
                    assert_eq!(m.addr[x], m.addr[y]);
                    assert_eq!(
                        m.bytes[x], -m.bytes[y],
                        "{name}: a block frees what it took"
                    );
                    assert!(m.ts_ns[x] <= m.ts_ns[y]);
                }
            }
        }
    }
}

#[test]
fn holders_at_the_peak_add_up_to_the_peak() {
    let trace = common::shared_trace("real/tracelens_h100_owlv2_stack_mem.json.gz");
    let links = Links::build(&trace);
    let st = steps::analyze_with(&trace, &links);
    let mem = Memory::build(&trace, &links);
    let r = memory::report(&trace, &mem, &st.steps, &MemoryOptions::default());
    let gpu = r.devices.iter().find(|d| d.device == "cuda:0").unwrap();
    assert_eq!(gpu.peak_allocated_bytes, 2_707_847_680);
    let sum: i64 = gpu.holders.iter().map(|h| h.bytes).sum();
    assert_eq!(sum, gpu.peak_allocated_bytes);
    assert!(gpu.holders.iter().all(|h| h.bytes > 0));
    let frames: i64 = gpu.frames.iter().map(|h| h.bytes).sum();
    assert_eq!(frames, gpu.peak_allocated_bytes);
    // The two 820 MB blocks of attention scores (bmm, then softmax) hold the peak.
    assert!(gpu.holders.iter().any(|h| h.op == "aten::bmm"));
    assert!(gpu.holders.iter().any(|h| h.op == "aten::_softmax"));
    assert_eq!(gpu.capacity_bytes, Some(85_018_279_936));
    assert_eq!(r.devices[0].device, "cpu");
    // Largest first, each with its age at the peak.
    let live = &gpu.live_at_peak;
    assert!(live.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    assert!(live.iter().all(|l| l.age_us.unwrap() >= 0.0));
}

#[test]
fn the_allocation_table_flags_blocks_never_freed() {
    let trace = common::shared_trace("pytorch-cpu/encoder_stack_memory.pt.trace.json.gz");
    let links = Links::build(&trace);
    let st = steps::analyze_with(&trace, &links);
    let mem = Memory::build(&trace, &links);
    let opts = MemoryOptions {
        table: true,
        top: 1000,
        ..MemoryOptions::default()
    };
    let r = memory::report(&trace, &mem, &st.steps, &opts);
    let cpu = &r.devices[0];
    assert_eq!(cpu.device, "cpu");
    let table = cpu.allocation_table.as_ref().unwrap();
    let never = table.iter().filter(|r| r.never_freed).count();
    assert_eq!(never, cpu.never_freed);
    assert!(never > 0);
    assert!(table
        .iter()
        .filter(|r| !r.never_freed && r.allocated_at_us.is_some())
        .all(|r| r.lifetime_us.unwrap() >= 0.0 && r.freed_by.is_some()));
}

/// A hand-written trace: three steps, each allocating 4 MiB that it keeps and 1 MiB that it frees.
fn leaking_trace(leak: bool) -> Trace {
    let mut ev = Vec::new();
    let mut total = 0i64;
    for step in 0..4i64 {
        let t = 1000 + step * 1000;
        ev.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{step}","pid":1,"tid":1,"ts":{t},"dur":900}}"#
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":{},"dur":100}}"#,
            t + 100
        ));
        for (k, bytes) in [(0, 4 << 20), (1, 1 << 20), (2, -(1 << 20))] {
            let keep = leak || k != 0;
            if !keep {
                continue;
            }
            total += bytes;
            let addr = if k == 0 { 1000 + step } else { 5000 + step };
            ev.push(format!(
                r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{addr},"Bytes":{bytes},"Total Allocated":{},"Total Reserved":{}}}}}"#,
                t + 110 + k * 10,
                total + (64 << 20),
                128 << 20
            ));
        }
    }
    let json = format!("{{\"traceEvents\":[{}]}}", ev.join(","));
    parse_bytes(json.as_bytes()).unwrap()
}

#[test]
fn memory_growth_fires_on_a_rising_floor_only() {
    let ids = |t: &Trace| -> Vec<&'static str> {
        crate::common::findings(t).iter().map(|f| f.id).collect()
    };
    let leaky = leaking_trace(true);
    let found = crate::common::findings(&leaky);
    let f = found
        .iter()
        .find(|f| f.id == "memory_growth")
        .expect("memory_growth");
    assert!(f.detail.contains("4 steps"), "{}", f.detail);
    assert_eq!(f.evidence.slices.len(), 4, "the four allocations of 4 MiB");
    assert!(!ids(&leaking_trace(false)).contains(&"memory_growth"));
    // At the end of the last step the blocks kept by the earlier ones say since when.
    let links = Links::build(&leaky);
    let st = steps::analyze_with(&leaky, &links);
    let mem = Memory::build(&leaky, &links);
    let end = st.steps.iter().map(|s| s.cpu_end_ns).max().unwrap();
    let opts = MemoryOptions {
        at_ns: Some(end - 1),
        ..MemoryOptions::default()
    };
    let r = memory::report(&leaky, &mem, &st.steps, &opts);
    let mut since: Vec<i64> = r.devices[0]
        .at
        .as_ref()
        .unwrap()
        .live
        .iter()
        .filter_map(|l| l.held_since_step)
        .collect();
    since.sort();
    assert_eq!(since, [0, 1, 2]);
    assert_eq!(
        r.devices[0]
            .step_floors
            .iter()
            .map(|f| f.floor_bytes >> 20)
            .collect::<Vec<_>>(),
        [64, 68, 72, 76]
    );
    assert!(!ids(&common::shared_trace(
        "real/tracelens_h100_owlv2_stack_mem.json.gz"
    ))
    .contains(&"memory_growth"));
}

#[test]
fn memory_json_has_the_documented_fields() {
    let path = common::shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz");
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["memory", path.to_str().unwrap(), "--json", "--points", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let devices = v["devices"].as_array().unwrap();
    let names: Vec<&str> = devices
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cpu", "cuda:0"]);
    let gpu = &devices[1];
    assert!(gpu["peak_allocated_bytes"].as_i64().unwrap() > 0);
    assert!(
        gpu["peak_reserved_bytes"].as_i64().unwrap()
            >= gpu["peak_allocated_bytes"].as_i64().unwrap()
    );
    assert!(gpu["peak_at_us"].as_f64().unwrap() > 0.0);
    let holders = gpu["holders"].as_array().unwrap();
    assert!(holders
        .iter()
        .all(|h| h["op"].is_string() && h["bytes"].is_i64()));
    assert!(gpu["curve"].as_array().unwrap().len() <= 10);
}

/// What the page's memory views must show for a trace, from `sightline memory --json`: each
/// device's peak (bytes and time), the holders at the peak, and the allocation table's row count.
fn page_expectations(fixture: &str) -> serde_json::Value {
    let path = common::shared_fixtures().join(fixture);
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["memory", path.to_str().unwrap(), "--json", "--points", "0"])
        .arg("--allocations")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let devices: Vec<serde_json::Value> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            serde_json::json!({
                "device": d["device"],
                "peak_allocated_bytes": d["peak_allocated_bytes"],
                "peak_at_us": d["peak_at_us"],
                "holders": d["holders"].as_array().unwrap().iter()
                    .map(|h| serde_json::json!({ "op": h["op"], "bytes": h["bytes"] }))
                    .collect::<Vec<_>>(),
                "allocation_rows": d["allocation_table"].as_array().unwrap().len(),
                "never_freed": d["never_freed"],
            })
        })
        .collect();
    serde_json::json!({ "devices": devices })
}

/// The end-to-end test of the memory chart (`tests/e2e/memory.test.mjs`) compares the page with
/// `tests/e2e/expected/memory.json`; this keeps that file equal to what the CLI prints. Run with
/// `SIGHTLINE_BLESS=1` to rewrite it.
#[test]
fn the_pages_memory_expectations_are_the_clis() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/expected/memory.json");
    let fixtures = [
        "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz",
        "real/tracelens_h100_bert_small_stack_mem.json.gz",
    ];
    let actual: serde_json::Map<String, serde_json::Value> = fixtures
        .iter()
        .map(|f| (f.to_string(), page_expectations(f)))
        .collect();
    let actual = serde_json::Value::Object(actual);
    if std::env::var_os("SIGHTLINE_BLESS").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, serde_json::to_string_pretty(&actual).unwrap() + "\n").unwrap();
    }
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        expected,
        actual,
        "rewrite {} with SIGHTLINE_BLESS=1",
        file.display()
    );
}

/// Where the devices ran work and recorded no device memory, the words say so (which devices have
/// events, how many, how large, what to record) and a flat strip of a few bytes is not drawn; a
/// CPU trace, a trace without memory events and device memory recorded get no words.
#[test]
fn memory_that_shows_nothing_is_said_in_words() {
    use sightline::analysis::memory::{recorded::recorded, Memory};
    let of = |path: &str| {
        let t = common::shared_trace(path);
        recorded(&t, &Memory::series(&t))
    };
    let mi300 = of("gpu-training/tracelens_mi300_ddp_resnet18_train_stack_mem.json.gz");
    assert!(!mi300.worth_a_chart);
    let note = mi300.note.unwrap();
    assert!(
        note.starts_with(
            "This trace recorded no device memory: cpu has 210 memory events, at most 8 B allocated."
        ),
        "{note}"
    );
    assert!(note.contains("profile_memory=True"), "{note}");
    let owl = of("real/tracelens_h100_owlv2_stack_mem.json.gz");
    assert!(owl.worth_a_chart && owl.note.is_none());
    let cpu = of("pytorch-cpu/encoder_stack_memory.pt.trace.json.gz");
    assert!(cpu.worth_a_chart && cpu.note.is_none());
    let none = of("real/param_dlrm_v100_rank0of8.pt.trace.json.gz");
    assert!(!none.worth_a_chart && none.note.is_none());
}
