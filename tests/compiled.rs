//! `torch.compile` traces read as what they are (`analysis::compiled`, `sightline compiled` and the
//! findings `recompilation`, `graph_break`, `compile_in_steps`), checked against what the
//! recording program knew (`tests/fixtures/compiled/NAME.truth.json`, written by its `make.py`).

use crate::common::{all_shared_traces, local_fixture, run_cli};
use serde_json::Value;
use sightline::analysis::compiled::{inductor_kernel, Compiled, KernelKind};
use sightline::analysis::derived::Derived;
use sightline::model::Trace;
use std::collections::BTreeSet;

const FIXTURES: [&str; 4] = [
    "compiled_once",
    "recompiles",
    "graph_break",
    "shapes_alternate",
];
const IDS: [&str; 3] = ["recompilation", "graph_break", "compile_in_steps"];

fn path(name: &str) -> String {
    local_fixture(&format!("compiled/{name}.json.gz"))
        .to_string_lossy()
        .into_owned()
}

fn trace(name: &str) -> Trace {
    sightline::parse::parse_bytes(&std::fs::read(path(name)).unwrap()).unwrap()
}

fn truth(name: &str) -> Value {
    let p = local_fixture(&format!("compiled/{name}.truth.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The compile ids `step` runs under: per frame, the one Dynamo compiled for the step's batch
/// (its own compile, not the lazy backward's, which shares the id).
fn expected_ids(t: &Value, step: &str) -> BTreeSet<String> {
    let batch = &t["batch_per_step"][step];
    ["compiles_before_window", "compiles_in_window"]
        .iter()
        .flat_map(|k| t[*k].as_array().unwrap())
        .filter(|c| c["trigger"] == "dynamo" && c["batch"] == *batch)
        .map(|c| c["compile_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn each_step_runs_the_compile_ids_the_program_compiled() {
    for name in FIXTURES {
        let t = truth(name);
        let trace = trace(name);
        let d = Derived::new(&trace);
        let c: &Compiled = d.compiled();
        let frames: Vec<String> = c.frames.iter().map(|f| f.frame.to_string()).collect();
        assert_eq!(frames, strings(&t["frames"]), "{name}");
        let steps: Vec<&str> = c.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(steps, strings(&t["active_steps"]), "{name}");
        for s in &c.steps {
            let seen: BTreeSet<String> = s.compile_ids.iter().cloned().collect();
            assert_eq!(seen, expected_ids(&t, &s.name), "{name} {}", s.name);
            // One region per frame and step: no frame ran twice in a step.
            assert_eq!(s.regions, seen.len(), "{name} {}", s.name);
        }
        // A forward and a backward graph per compile id (training), and one compiled graph per
        // graph Dynamo's explain counts, per shape.
        let mut ids: BTreeSet<String> = BTreeSet::new();
        for s in &c.steps {
            ids.extend(s.compile_ids.iter().cloned());
        }
        let forward = c.graphs.iter().filter(|g| !g.backward).count();
        let backward = c.graphs.iter().filter(|g| g.backward).count();
        assert_eq!(forward, ids.len(), "{name}");
        assert_eq!(backward, ids.len(), "{name}");
        let shapes: BTreeSet<u64> = t["batch_per_step"]
            .as_object()
            .unwrap()
            .values()
            .map(|b| b.as_u64().unwrap())
            .collect();
        assert_eq!(
            forward as u64,
            t["explain"]["graph_count"].as_u64().unwrap() * shapes.len() as u64,
            "{name}"
        );
        for g in &c.graphs {
            assert!(g.hash.is_some(), "{name}: {}", g.name);
            assert_eq!(g.calls, 4 / shapes.len(), "{name}: {}", g.name);
            assert_eq!(g.backward, g.compile_ids.is_empty(), "{name}: {}", g.name);
            assert!(!g.kernels.is_empty() && !g.replaces.is_empty(), "{name}");
            assert!(g.device_ns == 0 && g.cpu_ns > 0, "{name}");
        }
    }
}

#[test]
fn compile_work_lies_in_the_step_that_recompiled() {
    for name in FIXTURES {
        let t = truth(name);
        let trace = trace(name);
        let d = Derived::new(&trace);
        let c = d.compiled();
        // Dynamo's compile and the lazy backward's each leave one outermost range.
        let found: Vec<(String, String)> = c
            .compiles
            .iter()
            .map(|k| (k.step.clone().unwrap(), k.compile_id.clone().unwrap()))
            .collect();
        let want: Vec<(String, String)> = t["compiles_in_window"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                (
                    k["step"].as_str().unwrap().to_string(),
                    k["compile_id"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(found, want, "{name}");
        for s in &c.steps {
            let inside: i64 = c
                .compiles
                .iter()
                .filter(|k| k.step.as_deref() == Some(s.name.as_str()))
                .map(|k| k.dur_ns)
                .sum();
            assert_eq!(s.compile_ns, inside, "{name} {}", s.name);
        }
    }
    let trace = trace("recompiles");
    let d = Derived::new(&trace);
    let names: Vec<&str> = d
        .compiled()
        .compiles
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(names, ["dynamo", "entire_backward_compile"]);
}

#[test]
fn a_graph_break_shows_as_a_resume_region_with_the_eager_ops_between() {
    for name in FIXTURES {
        let t = truth(name);
        let trace = trace(name);
        let d = Derived::new(&trace);
        let c = d.compiled();
        let resumes: usize = c.frames.iter().map(|f| f.resumes.len()).sum();
        assert_eq!(
            resumes as u64,
            t["explain"]["graph_break_count"].as_u64().unwrap(),
            "{name}"
        );
        // The eager operators between regions, in the order they first ran.
        let mut first: Vec<(i64, String)> = Vec::new();
        for f in c.frames.iter().filter(|f| !f.resumes.is_empty()) {
            for e in &f.eager_ops {
                let r = e.slices[0];
                let start = trace.slices(r.lane as usize).start_ns[r.index as usize];
                first.push((start, e.name.clone()));
            }
        }
        first.sort();
        let names: Vec<String> = first.into_iter().map(|(_, n)| n).collect();
        let want = t
            .get("eager_between_regions")
            .map(strings)
            .unwrap_or_default();
        assert_eq!(names, want, "{name}");
        for e in c.frames.iter().flat_map(|f| &f.eager_ops) {
            assert_eq!(e.calls, 4, "{name}: {} once a step", e.name);
        }
        let between: i64 = c.steps.iter().map(|s| s.eager_between_ns).sum();
        assert_eq!(between > 0, !want.is_empty(), "{name}");
    }
    let trace = trace("graph_break");
    let d = Derived::new(&trace);
    let resumes: Vec<(u32, Vec<u32>)> = d
        .compiled()
        .frames
        .iter()
        .map(|f| (f.frame, f.resumes.clone()))
        .collect();
    assert_eq!(resumes, [(0, vec![1]), (1, vec![2]), (2, vec![])]);
}

#[test]
fn fused_ops_are_read_from_the_recorded_kernel_names() {
    for name in FIXTURES {
        let trace = trace(name);
        let d = Derived::new(&trace);
        let c = d.compiled();
        assert!(c.loose_kernels.is_empty(), "{name}");
        for g in &c.graphs {
            for k in &g.kernels {
                assert_eq!(k.kind, KernelKind::Cpp, "{}", k.name);
                assert!(!k.fused_ops.is_empty(), "{}", k.name);
                // The operators, joined again, are the name's middle: nothing lost or added.
                let joined = format!("_cpp_fused_{}_", k.fused_ops.join("_"));
                assert!(
                    k.name.contains(&joined),
                    "{} from {:?}",
                    k.name,
                    k.fused_ops
                );
                for op in &k.fused_ops {
                    assert!(g.replaces.contains(op), "{}: {op}", g.name);
                }
            }
        }
    }
    let real = [
        (
            "graph_0_cpp_fused__softmax_abs_all_amax_div_eq_mul_ne_sub_1",
            &[
                "_softmax", "abs", "all", "amax", "div", "eq", "mul", "ne", "sub",
            ][..],
        ),
        (
            "graph_0_cpp_fused__unsafe_view_gelu_gelu_backward_sum_view_0",
            &["_unsafe_view", "gelu", "gelu_backward", "sum", "view"][..],
        ),
        (
            "graph_2_cpp_fused__softmax_backward_data_div_2",
            &["_softmax_backward_data", "div"][..],
        ),
        ("graph_1_cpp_fused_tanh_backward_0", &["tanh_backward"][..]),
    ];
    let trace = trace("graph_break");
    for (name, ops) in real {
        assert!(trace.strings.find(name).is_some(), "{name} is in the trace");
        assert_eq!(inductor_kernel(name).unwrap().fused_ops, ops, "{name}");
    }
}

#[test]
fn a_cuda_compiled_function_charges_its_triton_kernels_and_their_device_time() {
    // Inductor on CUDA (hand-made in the shape of `_RecordFunctionFast` records): two launches of
    // two Triton kernels inside `CompiledFunction`, no label, no region.
    let bytes = std::fs::read(local_fixture("devices/triton_inductor.json")).unwrap();
    let trace = sightline::parse::parse_bytes(&bytes).unwrap();
    let d = Derived::new(&trace);
    let c = d.compiled();
    assert!(c.frames.is_empty() && c.compiles.is_empty());
    assert_eq!(c.graphs.len(), 1);
    let g = &c.graphs[0];
    assert_eq!(
        (g.name.as_str(), g.hash.as_deref()),
        ("CompiledFunction", None)
    );
    assert_eq!(g.calls, 2);
    assert_eq!(g.device_ns, 2 * (40_000 + 60_000));
    let kernels: Vec<(&str, KernelKind, usize, i64, i64)> = g
        .kernels
        .iter()
        .map(|k| (k.name.as_str(), k.kind, k.calls, k.cpu_ns, k.device_ns))
        .collect();
    assert_eq!(
        kernels,
        [
            (
                "triton_poi_fused_add_mul_0",
                KernelKind::Pointwise,
                2,
                100_000,
                80_000
            ),
            (
                "triton_red_fused_sum_1",
                KernelKind::Reduction,
                2,
                100_000,
                120_000
            ),
        ]
    );
    assert_eq!(g.replaces, ["add", "mul", "sum"]);
    // The provenance PyTorch records on a Triton kernel's launch (kernel_backend, kernel_file,
    // kernel_hash): each kernel's generated source.
    let provenance: Vec<(Option<&str>, Option<&str>, Option<&str>)> = g
        .kernels
        .iter()
        .map(|k| {
            (
                k.kernel_backend.as_deref(),
                k.kernel_file.as_deref(),
                k.kernel_hash.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        provenance,
        [
            (
                Some("triton"),
                Some("/tmp/torchinductor_user/ab/c0.py"),
                Some("c04be5f1d9e0a7b3")
            ),
            (
                Some("triton"),
                Some("/tmp/torchinductor_user/ab/c1.py"),
                Some("c14be5f1d9e0a7b3")
            ),
        ]
    );
    // A CPU trace's C++ kernels carry none, and say none.
    let cpu =
        sightline::parse::parse_bytes(&std::fs::read(path("compiled_once")).unwrap()).unwrap();
    let cpu = Derived::new(&cpu);
    assert!(cpu
        .compiled()
        .graphs
        .iter()
        .flat_map(|g| &g.kernels)
        .all(|k| k.kernel_file.is_none()));
    let ids: Vec<&str> = d
        .found(&Default::default())
        .findings
        .iter()
        .map(|f| f.id)
        .collect();
    assert!(!IDS.iter().any(|i| ids.contains(i)), "{ids:?}");
}

fn fired(trace: &Trace) -> Vec<&'static str> {
    crate::common::findings(trace)
        .iter()
        .map(|f| f.id)
        .filter(|id| IDS.contains(id))
        .collect()
}

#[test]
fn the_findings_fire_as_the_program_did() {
    for name in FIXTURES {
        let t = truth(name);
        let trace = trace(name);
        let found = crate::common::findings(&trace);
        let ids: Vec<&str> = found
            .iter()
            .map(|f| f.id)
            .filter(|i| IDS.contains(i))
            .collect();
        let recompiled = !t["compiles_in_window"].as_array().unwrap().is_empty();
        let broken = t["explain"]["graph_break_count"].as_u64().unwrap() > 0;
        let mut want = Vec::new();
        if recompiled {
            want.extend(["recompilation", "compile_in_steps"]);
        }
        if broken {
            want.push("graph_break");
        }
        let mut got = ids.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}");
        for f in &found {
            match f.id {
                "recompilation" => {
                    assert!(f.title.contains("frame 0"), "{}", f.title);
                    assert!(f.detail.contains("0/1 in ProfilerStep#3"), "{}", f.detail);
                    assert_eq!(f.whatif, ["dynamo|entire_backward_compile=0"]);
                    assert_eq!(f.evidence.ranges.len(), 2);
                }
                "compile_in_steps" => {
                    assert!(f.detail.contains("ProfilerStep#3"), "{}", f.detail);
                    assert_eq!(f.whatif, ["dynamo|entire_backward_compile=0"]);
                }
                "graph_break" => {
                    assert!(f.detail.contains("3 compiled regions"), "{}", f.detail);
                    for op in strings(&t["eager_between_regions"]) {
                        assert!(f.detail.contains(&op), "{op}: {}", f.detail);
                    }
                    assert!(f.whatif.is_empty());
                    assert!(!f.evidence.slices.is_empty() && !f.evidence.ranges.is_empty());
                }
                _ => {}
            }
        }
    }
}

#[test]
fn the_findings_do_not_fire_on_traces_that_compile_nothing() {
    for p in all_shared_traces() {
        let bytes = std::fs::read(&p).unwrap();
        let trace = sightline::parse::parse_bytes(&bytes).unwrap();
        assert_eq!(fired(&trace), Vec::<&str>::new(), "{}", p.display());
        let d = Derived::new(&trace);
        let c = d.compiled();
        assert!(
            c.frames.is_empty() && c.graphs.is_empty() && c.compiles.is_empty(),
            "{}",
            p.display()
        );
    }
}

#[test]
fn the_cli_prints_the_analysis_as_json() {
    let (code, out, err) = run_cli(&["compiled", &path("recompiles"), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let compiles = &v["frames"][0]["compiles"];
    assert_eq!(compiles[0]["compile_id"], "0/0");
    assert_eq!(compiles[1]["compile_id"], "0/1");
    assert_eq!(compiles[1]["compile"], 1);
    assert_eq!(
        compiles[1]["steps"],
        serde_json::json!(["ProfilerStep#3", "ProfilerStep#4"])
    );
    for k in v["compiles"].as_array().unwrap() {
        let ns = k["dur_ns"].as_i64().unwrap();
        assert_eq!(k["dur_us"].as_f64().unwrap(), ns as f64 / 1000.0);
        assert_eq!(k["step"], "ProfilerStep#3");
        assert_eq!(k["autotune"], false);
    }
    let g = &v["graphs"][0];
    assert_eq!(g["backward"], false);
    assert_eq!(g["compile_ids"], serde_json::json!(["0/0"]));
    assert!(g["hash"].as_str().unwrap().starts_with('f'));
    let k = &g["kernels"][0];
    assert_eq!(k["kind"], "cpp");
    assert_eq!(
        k["fused_ops"],
        serde_json::json!(["add", "mean", "mul", "pow", "rsqrt"])
    );
    assert!(k["cpu_ns"].as_i64().unwrap() > 0 && k["device_ns"] == 0);
    assert!(g["extern_ops"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "aten::addmm"));
    let step3 = &v["steps"][2];
    assert_eq!(step3["name"], "ProfilerStep#3");
    assert!(step3["compile_ns"].as_i64().unwrap() > 0);

    let (code, out, _) = run_cli(&["compiled", &path("graph_break")]);
    assert_eq!(code, 0);
    assert!(out.contains("Eager operators between regions"), "{out}");
    assert!(out.contains("aten::is_nonzero"), "{out}");
    let shared = all_shared_traces();
    let (code, out, _) = run_cli(&["compiled", shared[0].to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.starts_with("nothing compiled"), "{out}");
}

/// A CUDA trace of five steps of 250 tiny kernels each (launch-bound), written as Kineto would;
/// with `compiled`, each step's launches lie in a compiled region's graph call and the kernels
/// carry Inductor's names.
fn tiny_kernels(compiled: bool) -> Trace {
    use serde_json::json;
    let (host, dev) = (100, 0);
    let mut ev = vec![
        json!({"name": "process_labels", "ph": "M", "pid": host, "tid": 0, "args": {"labels": "CPU"}}),
        json!({"name": "process_labels", "ph": "M", "pid": dev, "tid": 0, "args": {"labels": "GPU 0"}}),
    ];
    let kernel = if compiled {
        "triton_poi_fused_add_mul_0"
    } else {
        "elementwise_kernel"
    };
    let mut start = 1000.0;
    for step in 1..=5 {
        let x = |name: &str, cat: &str, ts: f64, dur: f64| {
            json!({"ph": "X", "cat": cat, "name": name, "pid": host, "tid": host, "ts": ts,
                   "dur": dur})
        };
        ev.push(x(
            &format!("ProfilerStep#{step}"),
            "user_annotation",
            start,
            1000.0,
        ));
        if compiled {
            ev.push(x(
                "Torch-Compiled Region: 0/0",
                "cpu_op",
                start + 1.0,
                998.0,
            ));
            ev.push(x("CompiledFunction", "cpu_op", start + 1.5, 997.0));
            ev.push(x(
                "## Call CompiledFxGraph fabc ##",
                "user_annotation",
                start + 1.8,
                996.0,
            ));
        } else {
            ev.push(x("aten::add", "cpu_op", start + 1.0, 998.0));
        }
        for j in 0..250 {
            let ts = start + 2.0 + 3.9 * j as f64;
            let correlation = step * 1000 + j;
            let mut launch = x("cudaLaunchKernel", "cuda_runtime", ts, 1.0);
            launch["args"] = json!({"correlation": correlation});
            ev.push(launch);
            ev.push(
                json!({"ph": "X", "cat": "kernel", "name": kernel, "pid": dev, "tid": 7,
                "ts": ts + 1.5, "dur": 1.0,
                "args": {"correlation": correlation, "device": 0, "stream": 7}}),
            );
        }
        start += 1000.0;
    }
    let trace = json!({"schemaVersion": 1, "traceEvents": ev});
    sightline::parse::parse_bytes(trace.to_string().as_bytes()).unwrap()
}

/// The launch-bound advice names torch.compile where the kernels come from eager operators, and
/// leaves it out where compiled graphs launched them (CUDA graphs stay in both).
#[test]
fn launch_bound_advice_does_not_advise_compiling_compiled_work() {
    let advice = |compiled: bool| {
        let t = tiny_kernels(compiled);
        let found = crate::common::findings(&t);
        let f = found
            .iter()
            .find(|f| f.id == "small_kernels")
            .unwrap_or_else(|| panic!("{:?}", found.iter().map(|f| f.id).collect::<Vec<_>>()));
        f.advice.clone()
    };
    let eager = advice(false);
    assert!(
        eager.contains("torch.compile") && eager.contains("CUDA graphs"),
        "{eager}"
    );
    let compiled = advice(true);
    assert!(!compiled.contains("torch.compile"), "{compiled}");
    assert!(compiled.contains("CUDA graphs"), "{compiled}");
    let t = tiny_kernels(true);
    let d = Derived::new(&t);
    let c = d.compiled();
    assert_eq!(c.graphs.len(), 1);
    assert_eq!(c.graphs[0].calls, 5);
    assert_eq!(c.graphs[0].device_ns, 5 * 250 * 1000);
    assert_eq!(c.graphs[0].kernels[0].calls, 1250);
    assert!(fired(&t).is_empty());
}

/// Every finding's advice leaves out compiling where compiled graphs launched the device work,
/// and keeps the graphs that would take its launches off the CPU.
#[test]
fn no_advice_to_compile_compiled_work() {
    for compiled in [false, true] {
        let t = tiny_kernels(compiled);
        for f in crate::common::findings(&t) {
            let advises_compile = f.advice.contains("(torch.compile)")
                || f.advice.contains("e.g. torch.compile")
                || f.advice.contains("fused or compiled kernels");
            assert_eq!(
                advises_compile,
                !compiled && f.advice.contains("compile"),
                "{}: {}",
                f.id,
                f.advice
            );
            if compiled && f.id != "small_kernels" && f.advice.contains("graphs") {
                assert!(
                    f.advice.contains("around the compiled code"),
                    "{}: {}",
                    f.id,
                    f.advice
                );
            }
        }
    }
}
