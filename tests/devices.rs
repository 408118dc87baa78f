//! Accelerators other than CUDA (MTIA, XPU, PrivateUse1), CUDA-only traces, Inductor's Triton
//! launches, and the one launch rule, on the fixtures in `tests/fixtures/devices` (see its README).

use crate::common;

use serde_json::Value;
use sightline::analysis::idle::{self, IdleOptions, IdleReport, Mode};
use sightline::analysis::links::Links;
use sightline::analysis::tables::{kernel_table, Forest};
use sightline::analysis::{findings, steps, summary};
use sightline::model::{LaneKind, SliceRef, Trace};
use sightline::parse::parse_bytes;

fn load(name: &str) -> Trace {
    let bytes = std::fs::read(common::local_fixture(&format!("devices/{name}"))).unwrap();
    parse_bytes(&bytes).expect("a trace")
}

fn idle_report(t: &Trace, mode: Mode) -> IdleReport {
    idle::analyze(
        t,
        &IdleOptions {
            mode,
            max_gaps: usize::MAX,
        },
    )
}

/// (lane name, is a device lane, device) of every lane.
fn lanes(t: &Trace) -> Vec<(String, bool, i64)> {
    (0..t.lanes.len())
        .map(|l| {
            let (gpu, device) = match t.lanes[l].kind {
                LaneKind::GpuStream { device, .. } => (true, device),
                LaneKind::Cpu => (false, -1),
            };
            (summary::lane_name(t, l), gpu, device)
        })
        .collect()
}

/// "name <- launcher" of every kernel row, as the kernel table charges them.
fn launchers(t: &Trace) -> Vec<String> {
    let mut v: Vec<String> = kernel_table(t, &Forest::build(t))
        .rows
        .iter()
        .map(|r| {
            let by: Vec<String> = r
                .launched_by
                .iter()
                .map(|l| l.name.clone().unwrap_or_else(|| "-".into()))
                .collect();
            format!("{} <- {}", r.name, by.join(","))
        })
        .collect();
    v.sort();
    v
}

const MODEL_LAUNCHERS: [&str; 3] = ["aten::linear", "aten::relu", "aten::copy_"];

/// The shape every accelerator fixture shares: one CPU thread (the host process is labelled
/// CPU, also the thread that calls the runtime), two device queues on one device, every device
/// op charged to the operator that launched it, runtime time in the steps, idle found.
fn check_accelerator(name: &str, device_word: &str, device: i64, kernels: [&str; 3]) -> Trace {
    let t = load(name);
    let l = lanes(&t);
    assert_eq!(l.len(), 3, "{name}: {l:?}");
    assert!(!l[0].1, "{name}: the host thread must be a CPU lane: {l:?}");
    assert!(l[1].1 && l[2].1, "{name}: {l:?}");
    assert!(l[1..].iter().all(|x| x.2 == device), "{name}: {l:?}");
    if !device_word.is_empty() {
        assert!(l[1].0.starts_with(device_word), "{name}: {l:?}");
    }

    let devices = summary::summarize(&t).devices;
    assert_eq!(devices.len(), 1, "{name}");
    assert_eq!(devices[0].id, device, "{name}");

    let links = Links::build(&t);
    assert_eq!(links.stats.gpu_ops, 6, "{name}");
    assert_eq!(
        links.stats.unlinked + links.stats.by_external_id,
        0,
        "{name}"
    );

    let mut expected: Vec<String> = kernels
        .iter()
        .zip(MODEL_LAUNCHERS)
        .map(|(k, op)| format!("{k} <- {op}"))
        .collect();
    expected.sort();
    assert_eq!(launchers(&t), expected, "{name}");

    let s = steps::analyze(&t);
    assert_eq!(s.steps.len(), 2, "{name}");
    // Each step calls the runtime for 80 us (40 + 20 + 20) outside device work.
    assert!(s.total.runtime_ns > 0, "{name}: {:?}", s.total);
    assert_eq!(s.total.kernel_ns + s.total.memcpy_ns, 600_000, "{name}");

    let exact = idle_report(&t, Mode::Exact);
    assert_eq!(exact.devices.len(), 1, "{name}");
    assert_eq!(exact.devices[0].device, device);
    assert_eq!(exact.devices[0].busy_ops, 6, "{name}");
    assert_eq!(exact.devices[0].busy_ns, 600_000, "{name}");
    assert!(exact.gap_count > 0, "{name}");
    // Every gap was waited for by the host thread, through a launch the rule found.
    assert!(
        exact.gaps.iter().all(|g| g.ended_by.launch.is_some()),
        "{name}"
    );
    t
}

#[test]
fn mtia_is_a_device_and_its_host_thread_a_cpu_lane() {
    let t = check_accelerator(
        "mtia_two_steps.json",
        "MTIA 0",
        0,
        ["linear_fwd_kernel", "relu_fwd_kernel", "dma_request"],
    );
    // MTIA's CCP events carry no `stream` arg here: HTA 0.5.0 sees no device event at all.
    assert!(idle_report(&t, Mode::Hta).temporal.is_empty());
    // Findings name the device as its users do.
    let titles: Vec<String> = crate::common::findings(&t)
        .into_iter()
        .map(|f| f.title)
        .collect();
    // Busy only part of the time, told under the finding that says it waits for the host.
    assert!(
        titles.iter().any(|x| x.starts_with("MTIA 0 is busy only"))
            || titles
                .iter()
                .any(|x| x.starts_with("MTIA 0 waits for the CPU")),
        "{titles:?}"
    );
}

#[test]
fn xpu_is_a_device() {
    let t = check_accelerator(
        "xpu_two_steps.json",
        "Stream 5",
        0,
        ["gemm_kernel", "relu_kernel", "Memcpy M2D (Device -> Host)"],
    );
    // XPU kernels carry `sycl queue`, not `stream`: HTA 0.5.0 counts none of them, and says so.
    let hta = idle_report(&t, Mode::Hta);
    assert!(hta.temporal.is_empty());
    assert!(
        hta.notes.iter().any(|n| n.contains("6 device ops")),
        "{:?}",
        hta.notes
    );
}

#[test]
fn privateuse1_links_through_flows_alone() {
    let t = check_accelerator(
        "privateuse1_flows_only.json",
        "GPU 1",
        1,
        [
            "matmul_kernel",
            "relu_kernel",
            "Memcpy DtoH (Device -> Pageable)",
        ],
    );
    let links = Links::build(&t);
    assert_eq!(links.stats.by_flow, 6);
    // These device ops do carry `stream`: HTA counts them, per stream.
    let hta = idle_report(&t, Mode::Hta);
    assert_eq!(hta.temporal.len(), 1);
    let streams: Vec<(i64, i64)> = hta.idle.iter().map(|s| (s.device, s.stream)).collect();
    assert_eq!(streams, vec![(1, 3), (1, 4)]);
}

#[test]
fn triton_launch_ops_are_device_events_for_hta_only() {
    let t = load("triton_inductor.json");
    // Exact: only the kernels are device time; each is launched by the op named like it.
    let exact = idle_report(&t, Mode::Exact);
    assert_eq!(exact.devices.len(), 1);
    assert_eq!(exact.devices[0].busy_ops, 4);
    assert_eq!(
        launchers(&t),
        vec![
            "triton_poi_fused_add_mul_0 <- triton_poi_fused_add_mul_0",
            "triton_red_fused_sum_1 <- triton_red_fused_sum_1",
        ]
    );
    // HTA: the `cpu_op`s with a `stream` arg are device events too, on their own stream 0
    // (the raw handle of the default stream), which no device lane has.
    let hta = idle_report(&t, Mode::Hta);
    let streams: Vec<(i64, i64)> = hta.idle.iter().map(|s| (s.device, s.stream)).collect();
    assert_eq!(streams, vec![(0, 7), (-1, 0)]);
    // The window runs from the first Triton op (30 us into step 1, kept: it has no correlation)
    // to the end of the last event launched before the last step's start.
    let w = &hta.temporal[0];
    assert!(w.window_us > 700.0, "{w:?}");
    let kernels_only = exact.devices[0].window_ns as f64 / 1000.0;
    assert!(w.window_us != kernels_only);
}

#[test]
fn no_cpu_activity_fires_on_a_cuda_only_trace() {
    let t = load("cuda_only_alexnet.json.gz");
    let f = crate::common::findings(&t);
    let hit = f
        .iter()
        .find(|f| f.id == "no_cpu_activity")
        .unwrap_or_else(|| panic!("{:?}", f.iter().map(|f| f.id).collect::<Vec<_>>()));
    assert!(
        hit.detail.contains("runtime/driver calls"),
        "{}",
        hit.detail
    );
    assert!(
        hit.detail.contains("which operator launched"),
        "{}",
        hit.detail
    );
    assert!(hit.detail.contains("input shapes"), "{}", hit.detail);
    assert!(
        hit.advice
            .contains("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"),
        "{}",
        hit.advice
    );
    // The trace it was cut from has operators: the finding stays silent there.
    let whole =
        std::fs::read(common::shared_fixtures().join("real/hta_a100_alexnet_cuda_sync.json.gz"))
            .unwrap();
    let whole = parse_bytes(&whole).unwrap();
    assert!(!crate::common::findings(&whole)
        .iter()
        .any(|f| f.id == "no_cpu_activity"));
}

/// The links on slices and the operator tree charge every device op to an event of the same
/// name (the tree folds same-name chains, so the slices may differ but never the name), and
/// find a launcher for the same ops: one rule.
#[test]
fn links_and_tables_agree_on_every_launcher() {
    let mut traces: Vec<(String, Trace)> = [
        "mtia_two_steps.json",
        "xpu_two_steps.json",
        "privateuse1_flows_only.json",
        "triton_inductor.json",
    ]
    .iter()
    .map(|n| (n.to_string(), load(n)))
    .collect();
    for n in [
        "hta_a100_alexnet_cuda_sync.json.gz",
        "hta_a100_nccl_rank0of2.json.gz",
        "param_dlrm_v100_rank0of8.pt.trace.json.gz",
        "tracelens_h100_bert_small_stack_mem.json.gz",
        "tracelens_mi300_bert_small.json.gz",
    ] {
        let bytes = std::fs::read(common::shared_fixtures().join("real").join(n)).unwrap();
        traces.push((n.to_string(), parse_bytes(&bytes).unwrap()));
    }
    for (name, t) in &traces {
        let links = Links::build(t);
        let forest = Forest::build(t);
        let mut compared = 0;
        for op in &forest.gpu_ops {
            let from_tree = op.launch.map(|l| {
                let tree = forest.tree(l.op.tree as usize);
                let slice = SliceRef {
                    lane: tree.lane,
                    index: tree.slice[l.op.node as usize],
                };
                t.str(t.slices(slice.lane as usize).name[slice.index as usize])
            });
            let from_links = links
                .op(op.slice)
                .map(|r| t.str(t.slices(r.lane as usize).name[r.index as usize]));
            assert_eq!(from_tree, from_links, "{name}: {:?}", op.slice);
            compared += 1;
        }
        assert!(compared > 0, "{name}");
    }
}

/// `--json` is data: shapes are lists of numbers, and no string anywhere in any command's JSON
/// is a printed list or a printed number.
#[test]
fn json_output_holds_lists_and_numbers() {
    let files = [
        common::local_fixture("devices/triton_inductor.json"),
        common::local_fixture("devices/mtia_two_steps.json"),
        common::shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz"),
    ];
    let commands: [&[&str]; 12] = [
        &["summary"],
        &["digest"],
        &["memory"],
        &["flops"],
        &["ops"],
        &["ops", "--by-shape"],
        &["kernels"],
        &["labels"],
        &["idle"],
        &["idle", "--compat", "hta"],
        &["steps"],
        &["report"],
    ];
    for file in &files {
        for cmd in commands {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
                .args(cmd)
                .arg("--json")
                .arg(file)
                .output()
                .unwrap();
            assert!(out.status.success(), "{cmd:?} {}", file.display());
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut bad = Vec::new();
            printed_data(&v, &mut String::new(), &mut bad);
            assert!(bad.is_empty(), "{cmd:?} {}: {bad:?}", file.display());
            let rows = match cmd {
                ["ops", "--by-shape"] => v["rows"].as_array(),
                ["digest"] => v["ops_by_shape"].as_array(),
                _ => None,
            };
            if let Some(rows) = rows {
                assert!(rows.iter().any(|r| r["input_shapes"].is_array()));
                for r in rows {
                    let shapes = &r["input_shapes"];
                    assert!(shapes.is_null() || is_shape_list(shapes), "{shapes}");
                }
            }
        }
    }
}

/// A list of shapes: each a list of numbers, or (tensor lists) of such lists.
fn is_shape_list(v: &Value) -> bool {
    v.as_array()
        .is_some_and(|a| a.iter().all(|x| x.is_number() || is_shape_list(x)))
}

/// Strings that are printed data: a list (`[...]`, `(...)`) or a number.
fn printed_data(v: &Value, path: &mut String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let n = path.len();
                path.push('.');
                path.push_str(k);
                printed_data(x, path, out);
                path.truncate(n);
            }
        }
        Value::Array(a) => {
            for x in a {
                printed_data(x, path, out);
            }
        }
        Value::String(s) => {
            let t = s.trim();
            let list = (t.starts_with('[') && t.ends_with(']'))
                || (t.starts_with('(')
                    && t.ends_with(')')
                    && t[1..].starts_with(|c: char| c.is_ascii_digit()));
            if list || (!t.is_empty() && t.parse::<f64>().is_ok()) {
                out.push(format!("{path} = {s:?}"));
            }
        }
        _ => {}
    }
}

/// Idle, steps and findings name the device as the trace does: `MTIA`/`XPU` where its process is
/// labelled so, `GPU` where nothing names it (the PrivateUse1 fixture) and on CUDA. Checked on the
/// analyses' sentences and on what `sightline idle`, `steps`, `report`, `kernels`, `labels` and
/// `ops` print: on MTIA and XPU neither `GPU` nor `CUDA` (the operator table heads its device
/// columns `Self MTIA`, `Self XPU`, as PyTorch does).
#[test]
fn idle_steps_and_findings_say_the_devices_name() {
    for (name, word) in [
        ("mtia_two_steps.json", "MTIA"),
        ("xpu_two_steps.json", "XPU"),
        ("privateuse1_flows_only.json", "GPU"),
        ("cuda_only_alexnet.json.gz", "GPU"),
    ] {
        let t = load(name);
        let idle = idle_report(&t, Mode::Exact);
        assert_eq!(idle.device_word, word, "{name}");
        let device = format!("{word} {}", idle.devices[0].device);
        assert_eq!(idle.devices[0].name.to_string(), device, "{name}");
        assert!(
            idle.gaps
                .iter()
                .all(|g| g.device_name.to_string() == device),
            "{name}"
        );
        if let Some(s) = idle.waits_sentence() {
            assert!(s.starts_with(&format!("the {word} waited")), "{name}: {s}");
        }
        let steps = steps::analyze(&t);
        assert_eq!(steps.device_word, word, "{name}");
        assert!(
            steps.gpu.iter().all(|g| g.name.to_string() == device),
            "{name}"
        );
        let mut text = String::new();
        for f in crate::common::findings(&t) {
            text += &format!("{} {} {}\n", f.title, f.detail, f.advice);
        }
        for cmd in ["idle", "steps", "report", "kernels", "labels", "ops"] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
                .arg(cmd)
                .arg(common::local_fixture(&format!("devices/{name}")))
                .output()
                .unwrap();
            assert!(out.status.success(), "{name} {cmd}");
            text += &String::from_utf8(out.stdout).unwrap();
        }
        if word != "GPU" {
            assert!(!text.contains("GPU"), "{name}: {text}");
            assert!(!text.contains("CUDA"), "{name}: {text}");
            assert!(text.contains(&device), "{name}: {text}");
            assert!(text.contains(&format!("Self {word} time total")), "{name}");
            assert!(text.contains(&format!("{word} time total")), "{name}");
            assert!(text.contains(&format!("{word} inside")), "{name}");
        }
    }
}

/// MTIA writes its DMA transfers (`dma_request`) among its CCP events, with its kernels: the steps
/// breakdown counts them as memcpy, as it counts the XPU fixture's `gpu_memcpy` copies made at the
/// same times (the two fixtures share their timeline), and device utilization counts kernels only.
#[test]
fn mtia_dma_transfers_are_copies_in_the_steps() {
    let mtia = steps::analyze(&load("mtia_two_steps.json"));
    let xpu = steps::analyze(&load("xpu_two_steps.json"));
    assert!(mtia.total.memcpy_ns > 0, "{:?}", mtia.total);
    assert_eq!(mtia.total.memcpy_ns, xpu.total.memcpy_ns);
    assert_eq!(mtia.total.kernel_ns, xpu.total.kernel_ns);
    assert_eq!(mtia.gpu[0].kernel_ns, xpu.gpu[0].kernel_ns);
    for (a, b) in mtia.steps.iter().zip(&xpu.steps) {
        assert_eq!(a.breakdown.memcpy_ns, b.breakdown.memcpy_ns, "{}", a.name);
    }
}

/// A device kind as a synthetic trace writes it: the device process's label, the runtime's
/// category and launch call, the category of its kernels, the kernels' queue arg.
struct DeviceKind {
    label: &'static str,
    runtime: &'static str,
    launch: &'static str,
    kernel_cat: &'static str,
    queue_arg: Option<&'static str>,
}

const MTIA: DeviceKind = DeviceKind {
    label: "MTIA 0",
    runtime: "mtia_runtime",
    launch: "runFunction - add_kernel",
    kernel_cat: "mtia_ccp_events",
    queue_arg: None,
};
const XPU: DeviceKind = DeviceKind {
    label: "XPU 0",
    runtime: "xpu_runtime",
    launch: "urEnqueueKernelLaunch",
    kernel_cat: "kernel",
    queue_arg: Some("sycl queue"),
};
const ROCM: DeviceKind = DeviceKind {
    label: "GPU 0",
    runtime: "cuda_runtime",
    launch: "hipLaunchKernel",
    kernel_cat: "kernel",
    queue_arg: Some("stream"),
};
const CUDA: DeviceKind = DeviceKind {
    label: "GPU 0",
    runtime: "cuda_runtime",
    launch: "cudaLaunchKernel",
    kernel_cat: "kernel",
    queue_arg: Some("stream"),
};

/// The smallest trace on which the device findings fire: 5 steps of 250 launches of a 1 us kernel
/// each, 4 us apart (under 50% busy, all kernels tiny), the first step 3x as long as the others;
/// on a GPU, memory allocated to 95% of the device's. Without `host_ops`, only the runtime calls
/// and the kernels (a trace recorded with the device activity alone).
fn device_findings(k: &DeviceKind, host_ops: bool) -> Vec<findings::Finding> {
    use serde_json::json;
    let (host, dev) = (100, 0);
    let mut ev = vec![
        json!({"name": "process_name", "ph": "M", "pid": host, "tid": 0, "args": {"name": "python3"}}),
        json!({"name": "process_labels", "ph": "M", "pid": host, "tid": 0, "args": {"labels": "CPU"}}),
        json!({"name": "process_name", "ph": "M", "pid": dev, "tid": 0, "args": {"name": k.label}}),
        json!({"name": "process_labels", "ph": "M", "pid": dev, "tid": 0, "args": {"labels": k.label}}),
    ];
    let gpu = k.label.starts_with("GPU");
    let mut start = 1000.0;
    let mut correlation = 1;
    for step in 1..=5 {
        let dur = if step == 1 { 3000.0 } else { 1000.0 };
        if host_ops {
            ev.push(
                json!({"ph": "X", "cat": "user_annotation", "name": format!("ProfilerStep#{step}"),
                "pid": host, "tid": host, "ts": start, "dur": dur}),
            );
            ev.push(
                json!({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": host, "tid": host,
                "ts": start + 1.0, "dur": dur - 2.0, "args": {"External id": step}}),
            );
        }
        for j in 0..250 {
            let ts = start + 2.0 + 3.9 * j as f64;
            ev.push(
                json!({"ph": "X", "cat": k.runtime, "name": k.launch, "pid": host, "tid": host,
                "ts": ts, "dur": 1.0, "args": {"correlation": correlation}}),
            );
            let mut args = json!({"correlation": correlation, "device": 0});
            if let Some(q) = k.queue_arg {
                args[q] = json!(7);
            }
            ev.push(
                json!({"ph": "X", "cat": k.kernel_cat, "name": "add_kernel", "pid": dev,
                "tid": 7, "ts": ts + 1.5, "dur": 1.0, "args": args}),
            );
            correlation += 1;
        }
        if gpu && host_ops {
            ev.push(
                json!({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                "pid": host, "tid": host, "ts": start + 500.0, "args": {"Addr": step, "Bytes": 1000,
                "Total Allocated": 950_000_000, "Total Reserved": 950_000_000,
                "Device Type": 1, "Device Id": 0}}),
            );
        }
        start += dur;
    }
    let properties = if gpu {
        json!([{"id": 0, "name": "Test GPU", "totalGlobalMem": 1_000_000_000u64}])
    } else {
        json!([])
    };
    let trace = json!({"schemaVersion": 1, "deviceProperties": properties, "traceEvents": ev});
    let t = parse_bytes(trace.to_string().as_bytes()).expect("a trace");
    crate::common::findings(&t)
}

fn finding<'a>(f: &'a [findings::Finding], id: &str, kind: &str) -> &'a findings::Finding {
    f.iter().find(|x| x.id == id).unwrap_or_else(|| {
        panic!(
            "{kind}: no {id} in {:?}",
            f.iter().map(|x| x.id).collect::<Vec<_>>()
        )
    })
}

/// Findings recommend what exists on the trace's device: CUDA graphs on CUDA, CUDA/HIP graphs
/// through torch.cuda on ROCm, no graph API at all on MTIA and XPU (fewer, larger kernels
/// through fusion instead), each backend's warm-up work, profiler activity and allocator setting.
#[test]
fn findings_advise_what_the_device_has() {
    for (name, k) in [
        ("MTIA", &MTIA),
        ("XPU", &XPU),
        ("ROCm", &ROCM),
        ("CUDA", &CUDA),
    ] {
        let with_ops = device_findings(k, true);
        let bare = device_findings(k, false);
        // Low utilization is said by `gpu_starved_by_cpu` where the device waits for the host.
        let util_id = if with_ops.iter().any(|f| f.id == "low_gpu_utilization") {
            "low_gpu_utilization"
        } else {
            "gpu_starved_by_cpu"
        };
        let mut ids = vec![util_id, "small_kernels", "warmup_outlier"];
        if k.label.starts_with("GPU") {
            ids.push("memory_near_capacity");
        }
        let mut text = String::new();
        for id in ids {
            let f = finding(&with_ops, id, name);
            text += &format!("{}\n{}\n{}\n", f.title, f.detail, f.advice);
        }
        let bare_f = finding(&bare, "no_cpu_activity", name);
        text += &format!("{}\n{}\n{}\n", bare_f.title, bare_f.detail, bare_f.advice);
        for f in with_ops.iter().chain(&bare) {
            text += &format!("{}\n{}\n{}\n", f.title, f.detail, f.advice);
        }
        let util = &finding(&with_ops, util_id, name).advice;
        let small = &finding(&with_ops, "small_kernels", name).advice;
        let warmup = &finding(&with_ops, "warmup_outlier", name).detail;
        match name {
            "MTIA" | "XPU" => {
                for word in ["CUDA", "cuDNN", "HIP", "GPU", "graph"] {
                    assert!(!text.contains(word), "{name}: {word} in\n{text}");
                }
                assert!(
                    util.contains("fusion") && util.contains("e.g. torch.compile"),
                    "{name}: {util}"
                );
                assert!(small.contains("torch.compile"), "{name}: {small}");
                assert!(
                    bare_f.advice.contains(&format!("ProfilerActivity.{name}]")),
                    "{name}: {}",
                    bare_f.advice
                );
            }
            "ROCm" => {
                for f in [util, small] {
                    assert!(f.contains("CUDA/HIP graphs (torch.cuda.CUDAGraph)"), "{f}");
                }
                assert!(warmup.contains("HIP context, MIOpen"), "{warmup}");
                assert!(!text.contains("cuDNN"), "{text}");
                assert!(!text.contains("PYTORCH_CUDA_ALLOC_CONF"), "{text}");
                assert!(text.contains("PYTORCH_HIP_ALLOC_CONF"), "{text}");
                assert!(bare_f.advice.contains("ProfilerActivity.CUDA]"));
            }
            _ => {
                for f in [util, small] {
                    assert!(f.contains("CUDA graphs"), "{f}");
                }
                assert!(!text.contains("HIP"), "{text}");
                assert!(warmup.contains("CUDA context, cuDNN"), "{warmup}");
                assert!(text.contains("PYTORCH_CUDA_ALLOC_CONF"), "{text}");
                assert!(bare_f.advice.contains("ProfilerActivity.CUDA]"));
            }
        }
    }
}

/// On a real ROCm trace (MI300X), the starved finding (which says the low utilization too) names
/// HIP graphs.
#[test]
fn rocm_trace_advice_names_hip_graphs() {
    let t = common::shared_trace("real/tracelens_mi300_bert_small.json.gz");
    assert!(t.meta.rocm);
    let f = crate::common::findings(&t);
    // Low utilization is said by the starved finding here (the device waits for the host).
    assert!(!f.iter().any(|x| x.id == "low_gpu_utilization"));
    let a = &finding(&f, "gpu_starved_by_cpu", "ROCm").advice;
    assert!(a.contains("CUDA/HIP graphs (torch.cuda.CUDAGraph)"), "{a}");
}

/// What `sightline COMMAND FILE` prints.
fn cli_text(cmd: &str, file: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg(cmd)
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{cmd} {}", file.display());
    String::from_utf8(out.stdout).unwrap()
}

/// The operator table heads its device columns as PyTorch's does on that device: `Self CUDA` on
/// CUDA and on ROCm (PyTorch's ROCm build records through torch.cuda), `Self device` where the
/// trace does not name its backend (PrivateUse1). The kernel table shows its Tensor Cores column
/// (an NVIDIA kernel-name list) on CUDA only.
#[test]
fn tables_name_the_device_as_pytorch_does() {
    let real = common::shared_fixtures().join("real");
    let cuda = real.join("hta_a100_alexnet_cuda_sync.json.gz");
    let rocm = real.join("tracelens_mi300_bert_small.json.gz");
    let other = common::local_fixture("devices/privateuse1_flows_only.json");
    for (file, table, tensor_cores) in [
        (&cuda, "Self CUDA", true),
        (&rocm, "Self CUDA", false),
        (&other, "Self device", false),
    ] {
        let ops = cli_text("ops", file);
        assert!(ops.contains(table), "{}: {ops}", file.display());
        let kernels = cli_text("kernels", file);
        assert_eq!(
            kernels.contains("Tensor Cores"),
            tensor_cores,
            "{}",
            file.display()
        );
        assert!(kernels.contains("GPU time total"), "{}", file.display());
        let labels = cli_text("labels", file);
        assert!(
            labels.contains("GPU inside"),
            "{}: {labels}",
            file.display()
        );
    }
    for cmd in ["ops", "kernels", "labels"] {
        assert!(!cli_text(cmd, &other).contains("CUDA"), "{cmd}");
    }
}

/// `--help` names no one backend's device: "device", with CUDA only where it says what PyTorch
/// heads its columns with, that the Tensor Cores column is CUDA's, and the graph launch calls
/// `graphs` reads (each backend's name).
#[test]
fn help_is_device_neutral() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("--help")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("kernels FILE"), "{text}");
    assert!(!text.contains("GPU"), "{text}");
    assert_eq!(text.matches("CUDA").count(), 2, "{text}");
    assert!(text.contains("cudaGraphLaunch, hipGraphLaunch"), "{text}");
}

/// On a real CUDA trace (the PyTorch 1.9 schema, whose runtime calls are `Runtime`), the
/// launch-bound finding names CUDA graphs and nothing of ROCm.
#[test]
fn cuda_trace_advice_names_cuda_graphs() {
    let t = common::shared_trace("real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz");
    let f = crate::common::findings(&t);
    let a = &finding(&f, "small_kernels", "CUDA").advice;
    assert!(a.contains("CUDA graphs") && !a.contains("HIP"), "{a}");
}

/// A CUDA trace cut in half keeps its `deviceProperties` and loses every kernel (Kineto writes the
/// device's events after the host's). It is told as cut, with how far the file got and which listed
/// GPU has no events left, and is not judged as a CPU-only trace: before, `report` said nothing of
/// the cut in its first lines, the steps named no lost device, and no finding said so.
#[test]
fn a_cuda_trace_cut_in_half_says_its_gpu_lost_its_events() {
    let path = common::local_fixture("devices/h100_cut_in_half.json.gz");
    let t = load("h100_cut_in_half.json.gz");
    assert!(t.stats.truncated);
    assert!(t.gpu_lanes().all(|(_, l)| l.slice_count() == 0));
    let cut = summary::summarize(&t)
        .cut
        .expect("a cut file says how far it got");
    assert_eq!(cut.devices_without_events, ["GPU 0"]);
    assert_eq!(cut.json_bytes, 444_298);
    assert!(
        cut.sentence
            .starts_with("The file is truncated: it ends after 0.4 MB of JSON, ")
            && cut
                .sentence
                .contains("Its 1 listed device (GPU 0) has no events left"),
        "{}",
        cut.sentence
    );
    let st = steps::analyze(&t);
    assert_eq!(st.devices_without_events, ["GPU 0"]);
    assert!(st.gpu.is_empty());
    let f = crate::common::findings(&t);
    assert_eq!(f[0].id, "device_events_lost", "{f:?}");
    assert_eq!(
        f[0].title,
        "The trace is cut short: its 1 listed device has no events left"
    );
    // Host-against-device shares are not judged from the host's half alone.
    for id in [
        "cpu_copy_overhead",
        "communication_heavy",
        "low_gpu_utilization",
    ] {
        assert!(f.iter().all(|x| x.id != id), "{id}");
    }
    // The report says it before anything computed from the file.
    let report = cli_text("report", &path);
    let second = report.lines().nth(1).unwrap_or_default();
    assert!(
        second.starts_with("TRUNCATED: The file is truncated"),
        "{report}"
    );
    let steps_text = cli_text("steps", &path);
    assert!(
        steps_text.contains("GPU 0 has no events left"),
        "{steps_text}"
    );
    // The whole trace lists the same GPU and has its events: no cut, no loss, no such finding.
    let whole = common::shared_trace("real/tracelens_h100_bert_small_stack_mem.json.gz");
    assert!(summary::summarize(&whole).cut.is_none());
    assert!(steps::analyze(&whole).devices_without_events.is_empty());
    assert!(crate::common::findings(&whole)
        .iter()
        .all(|x| x.id != "device_events_lost"));
}
