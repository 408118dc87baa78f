//! The tables against PyTorch's own numbers (the `*.truth.json` beside the CPU fixtures), the GPU
//! accounting invariants on the real traces, hand-made traces whose answers are known, and a naive
//! oracle for the tree and folding.
// Native only: these read the shared fixtures from disk and run the binary.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use serde_json::Value;
use sightline::analysis::tables::{
    call_tree, kernel_table, label_table, module_table, op_table, EventKind, Forest, OpTable,
};
use sightline::model::Trace;
use std::collections::HashMap;
use std::path::Path;

fn parse_file(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    sightline::parse::parse_bytes(&bytes).unwrap()
}

fn parse_text(json: &str) -> Trace {
    sightline::parse::parse_bytes(json.as_bytes()).unwrap()
}

fn local(name: &str) -> Trace {
    parse_file(&common::local_fixture(&format!("tables/{name}")))
}

/// One line per row: name, kind, shapes, calls, then self/total CPU, self/total device (us),
/// then CPU, self CPU, device and self device memory (bytes).
fn op_rows(table: &OpTable) -> String {
    let mut rows: Vec<String> = table
        .rows
        .iter()
        .map(|r| {
            format!(
                "{} {:?} {} x{} cpu {}/{} dev {}/{} mem {}/{} {}/{}",
                r.name,
                r.kind,
                r.input_shapes.as_deref().unwrap_or("-"),
                r.calls,
                r.self_cpu_us,
                r.cpu_total_us,
                r.self_device_us,
                r.device_total_us,
                r.cpu_mem_bytes,
                r.self_cpu_mem_bytes,
                r.device_mem_bytes,
                r.self_device_mem_bytes
            )
        })
        .collect();
    rows.sort();
    rows.join("\n")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// Compares one table with one list of PyTorch's rows; returns the memory mismatches.
fn check_against_truth(file: &str, table: &OpTable, truth: &[Value]) -> Vec<String> {
    let mut ours: HashMap<(String, Option<String>), &sightline::analysis::tables::ops::OpRow> =
        HashMap::new();
    for r in &table.rows {
        let key = (r.name.clone(), r.input_shapes.clone());
        assert!(
            ours.insert(key.clone(), r).is_none(),
            "{file}: two rows for {key:?}"
        );
    }
    assert_eq!(ours.len(), truth.len(), "{file}: row count");
    let mut memory_mismatches = Vec::new();
    for t in truth {
        let name = t["key"].as_str().unwrap().to_string();
        let shapes = table
            .by_input_shape
            .then(|| t["input_shapes"].as_str().unwrap().to_string());
        let key = (name, shapes);
        let r = ours
            .get(&key)
            .unwrap_or_else(|| panic!("{file}: no row {key:?}"));
        assert_eq!(
            r.calls,
            t["count"].as_u64().unwrap(),
            "{file} {key:?} calls"
        );
        let (self_cpu, cpu_total) = (
            t["self_cpu_us"].as_f64().unwrap(),
            t["cpu_total_us"].as_f64().unwrap(),
        );
        assert!(
            close(r.self_cpu_us, self_cpu, 1e-9),
            "{file} {key:?} self CPU {} vs PyTorch {self_cpu}",
            r.self_cpu_us
        );
        assert!(
            close(r.cpu_total_us, cpu_total, 1e-9),
            "{file} {key:?} CPU total {} vs PyTorch {cpu_total}",
            r.cpu_total_us
        );
        let (mem, self_mem) = (
            t["cpu_memory_usage"].as_i64().unwrap(),
            t["self_cpu_memory_usage"].as_i64().unwrap(),
        );
        if r.cpu_mem_bytes != mem || r.self_cpu_mem_bytes != self_mem {
            memory_mismatches.push(format!(
                "{key:?}: ours {}/{} PyTorch {mem}/{self_mem}",
                r.cpu_mem_bytes, r.self_cpu_mem_bytes
            ));
        }
    }
    memory_mismatches
}

#[test]
fn operator_table_equals_pytorch_key_averages() {
    let dir = common::shared_fixtures().join("pytorch-cpu");
    let mut truths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".truth.json"))
        .collect();
    truths.sort();
    assert!(truths.len() >= 3, "truth files in {}", dir.display());
    for truth_path in truths {
        let file = truth_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let stem = file.trim_end_matches(".truth.json");
        let trace_path = ["pt.trace.json.gz", "pt.trace.json"]
            .iter()
            .map(|ext| dir.join(format!("{stem}.{ext}")))
            .find(|p| p.exists())
            .unwrap();
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
        let trace = parse_file(&trace_path);
        let forest = Forest::build(&trace);
        for (key, by_shape) in [
            ("key_averages", false),
            ("key_averages_by_input_shape", true),
        ] {
            let Some(rows) = truth[key].as_array() else {
                continue;
            };
            let table = op_table(&trace, &forest, by_shape);
            let mismatches = check_against_truth(&file, &table, rows);
            println!(
                "{stem} {key}: {} rows match calls and CPU times; memory differs on {}",
                rows.len(),
                mismatches.len()
            );
            for m in &mismatches {
                println!("  memory {m}");
            }
            assert!(
                mismatches.len() * 100 <= rows.len(),
                "{stem} {key}: memory differs on {} of {} rows",
                mismatches.len(),
                rows.len()
            );
        }
    }
}

/// Real GPU traces: every kernel, memcpy and memset is charged to one operator or reported as
/// unattributed, and the columns add up, in integer nanoseconds and in the table's microseconds.
#[test]
fn gpu_time_is_charged_once_or_reported() {
    const GPU_OPS: [&str; 6] = [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "Kernel",
        "Memcpy",
        "Memset",
    ];
    let dir = common::shared_fixtures().join("real");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "GPU fixtures in {}", dir.display());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let trace = parse_file(&path);
        let forest = Forest::build(&trace);

        let (mut count, mut time_ns) = (0, 0);
        for l in &trace.lanes {
            for i in 0..l.slice_count() {
                if GPU_OPS.contains(&trace.str(trace.slices_of(l).cat[i])) {
                    count += 1;
                    time_ns += trace.slices_of(l).dur_ns[i];
                }
            }
        }
        assert!(count > 0, "{name}: no GPU ops");
        assert_eq!(
            forest.gpu_ops.len(),
            count,
            "{name}: GPU ops seen once each"
        );
        assert_eq!(forest.gpu_time_ns, time_ns, "{name}: GPU time");

        let all: i64 = forest.trees().flat_map(|t| t.device_self_ns.iter()).sum();
        let kept: i64 = forest.kept_nodes().map(|(t, x)| t.device_self_ns[x]).sum();
        assert_eq!(all, kept, "{name}: GPU time on folded nodes");
        assert_eq!(
            kept + forest.unattributed_ns,
            forest.gpu_time_ns,
            "{name}: charged + unattributed = all GPU time"
        );
        let launched = forest.gpu_ops.iter().filter(|g| g.launch.is_some()).count();
        assert_eq!(launched as u64 + forest.unattributed_ops, count as u64);
        let roots: i64 = forest
            .trees()
            .flat_map(|t| {
                (0..t.len())
                    .filter(|&x| t.parent[x] == u32::MAX)
                    .map(move |x| (t, x))
            })
            .map(|(t, x)| t.device_total_ns[x])
            .sum();
        assert_eq!(roots, kept, "{name}: roots' CUDA total = all charged time");

        let ops = op_table(&trace, &forest, false);
        let self_device: f64 = ops.rows.iter().map(|r| r.self_device_us).sum();
        assert!(
            close(self_device + ops.unattributed_gpu_us, ops.gpu_time_us, 1e-9),
            "{name}: Self CUDA {self_device} + unattributed {} vs {}",
            ops.unattributed_gpu_us,
            ops.gpu_time_us
        );
        let kernels = kernel_table(&trace, &forest);
        let calls: u64 = kernels.rows.iter().map(|r| r.calls).sum();
        assert_eq!(calls, count as u64, "{name}: kernel table calls");
        let launched_by: u64 = kernels
            .rows
            .iter()
            .flat_map(|r| r.launched_by.iter())
            .map(|l| l.calls)
            .sum();
        assert_eq!(launched_by, count as u64, "{name}: kernel table launchers");
        println!(
            "{name}: {count} GPU ops, {:.3} ms; attributed {:.2}% of time ({} ops unattributed)",
            time_ns as f64 / 1e6,
            100.0 * kept as f64 / time_ns as f64,
            forest.unattributed_ops
        );
    }
}

/// Nesting, folding, dropped names, partial overlap, Python frames, `ProfilerStep*`, and memory at
/// the edges of spans, across threads and outside every span: numbers worked out by hand.
#[test]
fn cpu_tree_by_hand() {
    let trace = local("cpu_tree.json");
    let forest = Forest::build(&trace);
    let table = op_table(&trace, &forest, false);
    // forward: 58 minus div_ (20) and add (10); mul overlaps forward's end, so it is a child of
    // the Python frame instead. div_: the inner div_ folds away, is_leaf is dropped, so 20 - 3 - 7.
    // Memory: [start, end] inclusive, every thread (aten::empty's 5 B count in ProfilerStep#2),
    // the event at 100 in both steps, the one at 200 in no span.
    let expected = "\
ProfilerStep* Annotation - x2 cpu 51/150 dev 0/0 mem 2065/2005 64/0
[memory] Memory - x1 cpu 0/0 dev 0/0 mem 7/7 0/0
aten::add Op - x2 cpu 20/20 dev 0/0 mem 0/0 64/64
aten::copy_ Op - x2 cpu 10/10 dev 0/0 mem 10/10 0/0
aten::div_ Op - x1 cpu 10/20 dev 0/0 mem 110/100 0/0
aten::empty Op - x1 cpu 5/5 dev 0/0 mem 5/5 0/0
aten::mul Op - x1 cpu 20/20 dev 0/0 mem -50/-50 0/0
forward Annotation - x1 cpu 28/58 dev 0/0 mem 60/-50 0/0";
    assert_eq!(op_rows(&table), expected);
    assert_eq!(table.self_cpu_total_us, 144.0);
    let forward = table.rows.iter().find(|r| r.name == "forward").unwrap();
    assert!(close(forward.self_cpu_pct, 28.0 * 100.0 / 144.0, 1e-12));
    assert!(close(forward.cpu_total_pct, 58.0 * 100.0 / 144.0, 1e-12));

    let by_shape = op_table(&trace, &forest, true);
    let adds: Vec<_> = by_shape
        .rows
        .iter()
        .filter(|r| r.name.starts_with("aten::add") || r.name == "forward")
        .map(|r| (r.name.as_str(), r.input_shapes.as_deref(), r.calls))
        .collect();
    assert_eq!(
        adds,
        [
            ("forward", Some("[]"), 1),
            ("aten::add", Some("[[2, 3], [2, 3]]"), 1),
            ("aten::add", Some("[[4]]"), 1)
        ]
    );
}

/// Launch links: correlation to the runtime call and its innermost operator (over an External id
/// that names another op, and over an annotation inside the operator), External id where the
/// runtime call is missing, an annotation where no operator holds the call, and a kernel no link
/// leads from.
#[test]
fn gpu_launches_by_hand() {
    let trace = local("gpu_launch.json");
    let forest = Forest::build(&trace);
    let table = op_table(&trace, &forest, false);
    let expected = "\
aten::copy_ Op - x1 cpu 8/10 dev 6/6 mem 0/0 0/0
aten::mm Op - x1 cpu 15/20 dev 30/30 mem 0/0 0/0
cudaLaunchKernel Runtime - x3 cpu 6/6 dev 0/0 mem 0/0 0/0
cudaLaunchKernelExC Runtime - x1 cpu 2/2 dev 0/0 mem 0/0 0/0
cudaMemcpyAsync Runtime - x1 cpu 2/2 dev 0/0 mem 0/0 0/0
forward Annotation - x1 cpu 49/100 dev 2/78 mem 0/0 0/0
nccl:all_reduce Annotation - x1 cpu 14/16 dev 0/0 mem 0/0 0/0
record_param_comms Op - x1 cpu 4/20 dev 40/40 mem 0/0 0/0";
    assert_eq!(op_rows(&table), expected);
    assert_eq!(table.gpu_time_us, 86.0);
    assert_eq!(table.unattributed_gpu_us, 8.0);
    assert_eq!(table.unattributed_gpu_ops, 1);
    let mm = table.rows.iter().find(|r| r.name == "aten::mm").unwrap();
    assert!(close(mm.self_device_pct, 30.0 * 100.0 / 86.0, 1e-12));

    let kernels = kernel_table(&trace, &forest);
    let row = |name: &str| kernels.rows.iter().find(|r| r.name == name).unwrap();
    let names: Vec<&str> = kernels.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names[..2],
        [
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            "sm80_xmma_gemm_f16f16_f16f32"
        ]
    );
    let gemm = row("sm80_xmma_gemm_f16f16_f16f32");
    assert!(gemm.tensor_cores);
    assert_eq!(
        (
            gemm.calls,
            gemm.total_us,
            gemm.min_us,
            gemm.median_us,
            gemm.max_us
        ),
        (2, 30.0, 10.0, 15.0, 20.0)
    );
    assert_eq!(gemm.mean_occupancy_pct, Some(40.0), "duration-weighted");
    let configs: Vec<_> = gemm
        .launch_configs
        .iter()
        .map(|c| (c.grid, c.block, c.calls))
        .collect();
    assert_eq!(
        configs,
        [([10, 1, 1], [128, 1, 1], 1), ([20, 1, 1], [128, 1, 1], 1)]
    );
    let launchers = |name: &str| -> Vec<(Option<String>, u64)> {
        row(name)
            .launched_by
            .iter()
            .map(|l| (l.name.clone(), l.calls))
            .collect()
    };
    assert_eq!(
        launchers("sm80_xmma_gemm_f16f16_f16f32"),
        [(Some("aten::mm".into()), 2)]
    );
    assert_eq!(
        launchers("void copy_kernel"),
        [(Some("aten::copy_".into()), 1)]
    );
    assert_eq!(launchers("void orphan_kernel"), [(None, 1)]);
    let kinds: Vec<_> = kernels
        .by_kind
        .iter()
        .map(|k| (format!("{:?}", k.kind), k.calls, k.total_us))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Computation".to_string(), 5, 41.0),
            ("Memory".to_string(), 1, 5.0),
            ("Communication".to_string(), 1, 40.0)
        ]
    );
    let memcpy = row("Memcpy HtoD (Pageable -> Device)");
    assert!(memcpy.launch_configs.is_empty() && memcpy.mean_occupancy_pct.is_none());

    let labels = label_table(&trace, &forest);
    let label = |name: &str| labels.rows.iter().find(|r| r.name == name).unwrap();
    let forward = label("forward");
    assert_eq!(
        (
            forward.calls,
            forward.cpu_total_us,
            forward.self_cpu_us,
            forward.device_us
        ),
        (1, 100.0, 49.0, 78.0)
    );
    assert_eq!((forward.gpu_calls, forward.gpu_span_total_us), (1, 77.0));
    // The label inside record_param_comms launched its kernel, though the operator is charged.
    assert_eq!(label("nccl:all_reduce").device_us, 40.0);
}

#[test]
fn kernel_kinds_and_tensor_cores_by_name() {
    use sightline::analysis::tables::kernels::{kernel_kind, uses_tensor_cores, KernelKind};
    for (name, kind) in [
        (
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            KernelKind::Communication,
        ),
        (
            "void ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
            KernelKind::Communication,
        ),
        ("rcclGenericKernel", KernelKind::Communication),
        ("Memcpy DtoH (Device -> Pinned)", KernelKind::Memory),
        ("Memset (Device)", KernelKind::Memory),
        (
            "void at::native::vectorized_elementwise_kernel<4>",
            KernelKind::Computation,
        ),
    ] {
        assert_eq!(kernel_kind(name), kind, "{name}");
    }
    assert!(uses_tensor_cores("volta_h884gemm_64x64_ldg8_nn"));
    assert!(uses_tensor_cores(
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128>"
    ));
    assert!(!uses_tensor_cores(
        "void at::native::vectorized_elementwise_kernel<4>"
    ));
}

/// The call tree of the GPU fixture: paths, self + children = total, callers bottom-up.
#[test]
fn call_tree_by_hand() {
    let trace = local("gpu_launch.json");
    let tree = call_tree(&trace, &Forest::build(&trace));
    assert_eq!(tree.roots.len(), 1);
    let root = &tree.nodes[tree.roots[0] as usize];
    assert_eq!(
        (root.name.as_str(), root.kind),
        ("forward", EventKind::Annotation)
    );
    let children: Vec<&str> = root
        .children
        .iter()
        .map(|&c| tree.nodes[c as usize].name.as_str())
        .collect();
    assert_eq!(
        children,
        [
            "aten::mm",
            "record_param_comms",
            "aten::copy_",
            "cudaLaunchKernel"
        ]
    );
    for n in &tree.nodes {
        let below: f64 = n
            .children
            .iter()
            .map(|&c| tree.nodes[c as usize].total_us)
            .sum();
        assert!(close(n.self_us + below, n.total_us, 1e-12), "{}", n.name);
    }
    assert_eq!((root.device_total_us, root.device_self_us), (78.0, 2.0));

    let roots = tree.bottom_up_roots();
    let self_total: f64 = roots.iter().map(|r| r.self_us).sum();
    assert_eq!(self_total, 100.0, "bottom-up roots hold all self time");
    let launch = roots.iter().find(|n| n.name == "cudaLaunchKernel").unwrap();
    assert_eq!(
        (launch.calls, launch.self_us, launch.total_us),
        (3, 6.0, 6.0)
    );
    let callers = tree.callers(launch);
    let seen: Vec<(&str, u64, f64, bool)> = callers
        .iter()
        .map(|n| (n.name.as_str(), n.calls, n.self_us, n.has_callers))
        .collect();
    assert_eq!(
        seen,
        [("aten::mm", 2, 5.0, true), ("forward", 1, 1.0, false)]
    );
    let next: Vec<String> = tree
        .callers(&callers[0])
        .iter()
        .map(|n| n.name.clone())
        .collect();
    assert_eq!(next, ["forward"]);
    assert!(tree.callers(&callers[1]).is_empty());
}

/// Bottom-up totals count a recursive call once, at its outermost frame.
#[test]
fn bottom_up_recursion() {
    let trace = parse_text(
        r#"[{"ph":"X","cat":"cpu_op","name":"f","pid":1,"tid":1,"ts":0,"dur":100},
            {"ph":"X","cat":"cpu_op","name":"g","pid":1,"tid":1,"ts":10,"dur":80},
            {"ph":"X","cat":"cpu_op","name":"f","pid":1,"tid":1,"ts":20,"dur":30}]"#,
    );
    let tree = call_tree(&trace, &Forest::build(&trace));
    let roots: Vec<(String, u64, f64, f64)> = tree
        .bottom_up_roots()
        .into_iter()
        .map(|n| (n.name, n.calls, n.self_us, n.total_us))
        .collect();
    assert_eq!(
        roots,
        [
            ("f".to_string(), 2, 50.0, 100.0),
            ("g".to_string(), 1, 50.0, 80.0)
        ]
    );
}

/// A small deterministic generator (xorshift64*), so that the oracle needs no crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Properly nested spans in `[start, end)`, names from a set of two so that folds happen.
fn nest(rng: &mut Rng, start: u64, end: u64, depth: u32, out: &mut Vec<(u64, u64, &'static str)>) {
    let mut t = start;
    while depth < 6 && t + 2 < end && rng.below(4) != 0 {
        let s = t + rng.below((end - t) / 2);
        let e = s + 1 + rng.below(end - s - 1);
        // Never the parent's exact span: equal spans nest by file order, which is not this test's point.
        if (s, e) != (start, end) || depth == 0 {
            out.push((s, e, ["a", "b"][rng.below(2) as usize]));
            nest(rng, s, e, depth + 1, out);
        }
        t = e;
    }
}

/// The tree, folding and self times against a naive oracle: parent = the smallest span that holds
/// a span, then PyTorch's `_remove_dup_nodes` loop as written, on generated nests.
#[test]
fn tree_and_folding_match_a_naive_oracle() {
    for seed in 1..200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut spans = Vec::new();
        nest(&mut rng, 0, 100_000, 0, &mut spans);
        let events: Vec<String> = spans
            .iter()
            .map(|(s, e, name)| {
                format!(
                    r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":1,"ts":{s},"dur":{}}}"#,
                    e - s
                )
            })
            .collect();
        let trace = parse_text(&format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")));
        let ours = op_table(&trace, &Forest::build(&trace), false);

        let n = spans.len();
        let holds = |j: usize, i: usize| {
            let ((si, ei, _), (sj, ej, _)) = (spans[i], spans[j]);
            j != i && sj <= si && ei <= ej && (sj, ej) != (si, ei)
        };
        let mut parent: Vec<Option<usize>> = (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| holds(j, i))
                    .min_by_key(|&j| spans[j].1 - spans[j].0)
            })
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(i);
            }
        }
        let mut alive: Vec<usize> = (0..n).collect();
        loop {
            let mut deleted = Vec::new();
            for &i in &alive {
                if let Some(p) = parent[i] {
                    if spans[p].2 == spans[i].2 && children[p].len() == 1 {
                        children[p] = children[i].clone();
                        for &c in &children[i] {
                            parent[c] = Some(p);
                        }
                        deleted.push(i);
                    }
                }
            }
            if deleted.is_empty() {
                break;
            }
            alive.retain(|i| !deleted.contains(i));
        }
        let mut expected: HashMap<&str, (u64, u64, u64)> = HashMap::new();
        for &i in &alive {
            let dur = spans[i].1 - spans[i].0;
            let below: u64 = children[i].iter().map(|&c| spans[c].1 - spans[c].0).sum();
            let r = expected.entry(spans[i].2).or_default();
            r.0 += 1;
            r.1 += dur - below;
            r.2 += dur;
        }
        let got: HashMap<&str, (u64, u64, u64)> = ours
            .rows
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    (r.calls, r.self_cpu_us as u64, r.cpu_total_us as u64),
                )
            })
            .collect();
        assert_eq!(got, expected, "seed {seed}, {n} spans");
    }
}

/// `sightline ops` prints PyTorch's own table for the CPU fixtures byte for byte.
#[test]
fn ops_command_prints_pytorch_table() {
    let dir = common::shared_fixtures().join("pytorch-cpu");
    for stem in [
        "cnn_dataloader_sched",
        "cnn_noshapes_gz",
        "encoder_stack_memory",
    ] {
        let expected = std::fs::read_to_string(dir.join(format!("{stem}.table.txt"))).unwrap();
        // Rows between the second and the last rule.
        let rows = expected.lines().count() - 5;
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args([
                "ops",
                "--sort",
                "self_cpu_time_total",
                "--top",
                &rows.to_string(),
            ])
            .arg(dir.join(format!("{stem}.pt.trace.json.gz")))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{stem}");
    }
}

/// Each name `--sort` takes (a column's key or PyTorch's name for it) orders the rows by that
/// column, largest first (names A to Z): the sort's columns are the declared ones.
#[test]
fn ops_sort_names_order_by_their_declared_column() {
    use sightline::analysis::tables::OpColumn;
    let file = common::local_fixture("tables/gpu_launch.json");
    for o in OpColumn::ALL {
        let c = o.column();
        for name in std::iter::once(c.key).chain(c.aliases.iter().copied()) {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
                .args(["ops", "--json", "--sort", name])
                .arg(&file)
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}");
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let rows = v["rows"].as_array().unwrap();
            for pair in rows.windows(2) {
                let (a, b) = (&pair[0][c.key], &pair[1][c.key]);
                let ordered = match (a.as_f64(), b.as_f64()) {
                    (Some(x), Some(y)) => x >= y,
                    _ => a.as_str().unwrap() <= b.as_str().unwrap(),
                };
                assert!(ordered, "--sort {name}: {a} before {b}");
            }
        }
    }
}

/// `--json` carries the fields the issue names, all rows unless `--top` says otherwise.
#[test]
fn ops_command_json_fields() {
    let file = common::local_fixture("tables/gpu_launch.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["ops", "--json", "--sort", "name"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["name"], "aten::copy_");
    for field in [
        "name",
        "input_shapes",
        "calls",
        "self_cpu_us",
        "cpu_total_us",
        "self_device_us",
        "device_total_us",
        "cpu_mem_bytes",
        "self_cpu_mem_bytes",
        "device_mem_bytes",
        "self_device_mem_bytes",
    ] {
        assert!(rows.iter().all(|r| r.get(field).is_some()), "{field}");
    }
    assert!(rows[0]["input_shapes"].is_null());
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["ops", "--sort", "nonsense"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Figures for the closing note: time of all tables as a share of parse time, natively.
/// `cargo test --release --test it -- --ignored --nocapture tables::`; `SIGHTLINE_BENCH_TRACE=FILE`
/// times another trace than `tracelens_h100_owlv2_stack_mem`.
#[test]
#[ignore]
fn tables_timing() {
    use std::time::Instant;
    let path = std::env::var("SIGHTLINE_BENCH_TRACE").map_or_else(
        |_| common::shared_fixtures().join("real/tracelens_h100_owlv2_stack_mem.json.gz"),
        Into::into,
    );
    let bytes = std::fs::read(&path).unwrap();
    let t = Instant::now();
    let trace = sightline::parse::parse_bytes(&bytes).unwrap();
    let parse = t.elapsed().as_secs_f64();
    let mut best = [f64::MAX; 5];
    for _ in 0..3 {
        let mut lap = Instant::now();
        let mut take = |k: usize| {
            best[k] = best[k].min(lap.elapsed().as_secs_f64());
            lap = Instant::now();
        };
        let forest = Forest::build(&trace);
        take(0);
        std::hint::black_box(op_table(&trace, &forest, false));
        std::hint::black_box(op_table(&trace, &forest, true));
        take(1);
        std::hint::black_box(kernel_table(&trace, &forest));
        take(2);
        std::hint::black_box(label_table(&trace, &forest));
        take(3);
        let tree = call_tree(&trace, &forest);
        std::hint::black_box(tree.bottom_up_roots());
        take(4);
    }
    let all: f64 = best[..5].iter().sum();
    println!(
        "{}: {} slices, parse {:.3} s; forest {:.1} ms, ops (both groupings) {:.1} ms, kernels {:.1} ms, labels {:.1} ms, call tree (top-down, bottom-up roots) {:.1} ms; all tables {:.1} ms = {:.1}% of parse",
        path.display(),
        trace.slice_count(),
        parse,
        best[0] * 1e3,
        best[1] * 1e3,
        best[2] * 1e3,
        best[3] * 1e3,
        best[4] * 1e3,
        all * 1e3,
        100.0 * all / parse
    );
}

/// Real CUDA traces whose kernels carry `blocks per SM` and `est. achieved occupancy %`.
const BLOCKS_PER_SM_TRACES: [&str; 2] = [
    "tracelens_h100_bert_small_stack_mem.json.gz",
    "hta_a100_nccl_rank0of2.json.gz",
];

/// A shared real trace's path and its raw JSON, for oracles that read the file themselves.
fn raw_shared(name: &str) -> (std::path::PathBuf, Value) {
    let path = common::shared_fixtures().join("real").join(name);
    let raw = serde_json::from_slice(&common::gunzip(&std::fs::read(&path).unwrap())).unwrap();
    (path, raw)
}

/// The TensorBoard plugin's estimated SM efficiency per kernel name, recomputed from the raw JSON of
/// real CUDA traces: min(`blocks per SM`, 1) weighted by duration over the calls whose `blocks per
/// SM` is positive (`docs/gpu_utilization.md`), and the mean `blocks per SM` weighted the same way.
#[test]
fn sm_efficiency_follows_the_tensorboard_plugins_formula() {
    let mut checked = 0;
    for name in BLOCKS_PER_SM_TRACES {
        let (path, raw) = raw_shared(name);
        // name -> (sum of min(bps, 1) x dur, sum of bps x dur, sum of dur)
        let mut want: HashMap<String, (f64, f64, f64)> = HashMap::new();
        for e in raw["traceEvents"].as_array().unwrap() {
            if e["cat"] != "kernel" {
                continue;
            }
            let Some(bps) = e["args"]["blocks per SM"].as_f64().filter(|b| *b > 0.0) else {
                continue;
            };
            let dur = e["dur"].as_f64().unwrap();
            let w = want
                .entry(e["name"].as_str().unwrap().to_string())
                .or_default();
            w.0 += bps.min(1.0) * dur;
            w.1 += bps * dur;
            w.2 += dur;
        }
        assert!(!want.is_empty(), "{name}: no kernel reports blocks per SM");
        let trace = parse_file(&path);
        let kernels = kernel_table(&trace, &Forest::build(&trace));
        for row in &kernels.rows {
            match want.get(&row.name) {
                Some(&(eff, blocks, dur)) if dur > 0.0 => {
                    let got = row.est_sm_efficiency_pct.unwrap();
                    assert!(
                        (got - 100.0 * eff / dur).abs() < 1e-6,
                        "{name} {}",
                        row.name
                    );
                    let got = row.mean_blocks_per_sm.unwrap();
                    assert!(
                        (got - blocks / dur).abs() < 1e-6 * (1.0 + got),
                        "{name} {}",
                        row.name
                    );
                    assert!(row.est_sm_efficiency_pct.unwrap() <= 100.0);
                    checked += 1;
                }
                _ => assert!(row.est_sm_efficiency_pct.is_none(), "{name} {}", row.name),
            }
        }
    }
    assert!(checked > 20, "{checked} kernels checked");
}

/// Modules by hand: a model calling an encoder twice (two rows of one path, host self net of the
/// children), a kernel launched by an operator in the encoder's linear, one in the model itself,
/// one launched from the backward thread (outside every module), and one no link leads from.
#[test]
fn modules_by_hand() {
    let py = |name: &str, ts: i64, dur: i64| {
        format!(
            r#"{{"ph":"X","cat":"python_function","name":"nn.Module: {name}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
        )
    };
    let launch = |tid: i64, ts: i64, corr: i64, kts: i64, kdur: i64| {
        format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::op","pid":1,"tid":{tid},"ts":{ts},"dur":3}},
               {{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":{tid},"ts":{ts},"dur":2,"args":{{"correlation":{corr}}}}},
               {{"ph":"X","cat":"kernel","name":"k{corr}","pid":0,"tid":7,"ts":{kts},"dur":{kdur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
        )
    };
    let events = [
        py("Net_0", 0, 100),
        py("Encoder_0", 10, 30),
        py("Linear_0", 12, 10),
        launch(1, 14, 1, 50, 5),
        py("Encoder_0", 50, 20),
        launch(1, 80, 2, 90, 7),
        launch(2, 200, 3, 210, 11),
        r#"{"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":7,"ts":300,"dur":13,"args":{"device":0,"stream":7}}"#.to_string(),
        // The backward node of the linear's operator, on autograd's thread, linked by fwdbwd.
        r#"{"ph":"s","id":9,"pid":1,"tid":1,"ts":14,"cat":"fwdbwd","name":"fwdbwd"}"#.to_string(),
        r#"{"ph":"X","cat":"cpu_op","name":"AddmmBackward0","pid":1,"tid":2,"ts":199,"dur":6}"#.to_string(),
        r#"{"ph":"f","id":9,"pid":1,"tid":2,"ts":199,"cat":"fwdbwd","name":"fwdbwd","bp":"e"}"#.to_string(),
    ];
    let trace = parse_text(&format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")));
    let table = module_table(&trace, &Forest::build(&trace));
    type Row<'a> = (&'a str, Option<&'a str>, u32, u64, f64, f64, f64, f64);
    let rows: Vec<Row> = table
        .rows
        .iter()
        .map(|r| {
            (
                r.module.as_str(),
                r.parent.as_deref(),
                r.depth,
                r.calls,
                r.host_total_us,
                r.host_self_us,
                r.device_total_us,
                r.device_self_us,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("Net_0", None, 0, 1, 100.0, 50.0, 12.0, 7.0),
            ("Net_0/Encoder_0", Some("Net_0"), 1, 2, 50.0, 40.0, 5.0, 0.0),
            (
                "Net_0/Encoder_0/Linear_0",
                Some("Net_0/Encoder_0"),
                2,
                1,
                10.0,
                10.0,
                5.0,
                5.0
            ),
        ]
    );
    assert_eq!(table.unattributed_device_us, 24.0);
    assert_eq!(table.device_time_us, 36.0);
    // The backward node holds the launch at 200 (11 us of device time): charged to the linear and
    // every module above it.
    let backward: Vec<(u64, f64, f64)> = table
        .rows
        .iter()
        .map(|r| {
            (
                r.backward_calls,
                r.backward_host_total_us,
                r.backward_device_total_us,
            )
        })
        .collect();
    assert_eq!(backward, [(1, 6.0, 11.0); 3]);
}

/// On every trace recorded with modules: device self over the rows plus unattributed is the
/// trace's device op time, a parent's totals hold its children's, and self never exceeds total.
#[test]
fn modules_account_for_all_device_time() {
    let mut with_modules = 0;
    for path in common::all_shared_traces() {
        let trace = parse_file(&path);
        let forest = Forest::build(&trace);
        let table = module_table(&trace, &forest);
        let kernels = kernel_table(&trace, &forest);
        let name = path.display();
        let self_sum: f64 = table.rows.iter().map(|r| r.device_self_us).sum();
        assert!(
            (self_sum + table.unattributed_device_us - kernels.gpu_time_us).abs()
                < 1e-6 * (1.0 + kernels.gpu_time_us),
            "{name}: {self_sum} + {} != {}",
            table.unattributed_device_us,
            kernels.gpu_time_us
        );
        if table.rows.is_empty() {
            continue;
        }
        with_modules += 1;
        let by_path: HashMap<&str, _> = table.rows.iter().map(|r| (r.module.as_str(), r)).collect();
        let mut children: HashMap<&str, (f64, f64)> = HashMap::new();
        for r in &table.rows {
            assert!(
                r.host_self_us <= r.host_total_us + 1e-9,
                "{name} {}",
                r.module
            );
            assert!(r.host_self_us >= -1e-9, "{name} {}", r.module);
            assert!(
                r.device_self_us <= r.device_total_us + 1e-9,
                "{name} {}",
                r.module
            );
            if let Some(p) = &r.parent {
                assert!(by_path.contains_key(p.as_str()), "{name}: {p}");
                let c = children.entry(p.as_str()).or_default();
                c.0 += r.host_total_us;
                c.1 += r.device_total_us;
            }
        }
        for (p, (host, device)) in children {
            let r = by_path[p];
            assert!(
                (r.host_total_us - r.host_self_us - host).abs() < 1e-3,
                "{name} {p}"
            );
            assert!(
                (r.device_total_us - r.device_self_us - device).abs() < 1e-3,
                "{name} {p}"
            );
        }
    }
    assert!(with_modules >= 5, "{with_modules} traces with modules");
}

/// The plugin's device figures over the steps' span, recomputed from the raw JSON as its
/// `gpu_metrics_parser.py` does: SM efficiency from the sweep of every kernel's `blocks per SM`
/// (`merge_ranges_with_value`, a start before an end at the same time), clipped to the span and
/// averaged over it; occupancy weighted by kernel time within the span.
#[test]
fn device_sm_efficiency_and_occupancy_follow_the_plugin() {
    for name in BLOCKS_PER_SM_TRACES {
        let (path, raw) = raw_shared(name);
        let trace = parse_file(&path);
        let report = sightline::analysis::steps::analyze(&trace);
        let g = &report.gpu[0];
        let origin = trace.meta.origin_ns as f64 / 1e3;
        let (lo, hi) = (
            origin + report.steps[0].start_ns as f64 / 1e3,
            origin + report.steps.last().unwrap().end_ns as f64 / 1e3,
        );
        let mut endpoints: Vec<(f64, u8, f64)> = Vec::new();
        let (mut occ, mut occ_w) = (0.0, 0.0);
        for e in raw["traceEvents"].as_array().unwrap() {
            if e["cat"] != "kernel" {
                continue;
            }
            let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
            if let Some(b) = e["args"]["blocks per SM"].as_f64().filter(|b| *b > 0.0) {
                endpoints.push((ts, 0, b));
                endpoints.push((ts + dur, 1, b));
            }
            if let Some(o) = e["args"]["est. achieved occupancy %"].as_f64() {
                let (a, b) = (ts.max(lo), (ts + dur).min(hi));
                if a < b && o >= 0.0 {
                    occ += o * (b - a);
                    occ_w += b - a;
                }
            }
        }
        endpoints.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut sum, mut running, mut last) = (0.0, 0.0, endpoints[0].0);
        for &(t, kind, b) in &endpoints {
            if t > last && running > 0.0 {
                let (x, y) = (last.max(lo), t.min(hi));
                if y > x {
                    sum += f64::min(running, 1.0) * (y - x);
                }
            }
            last = t;
            running += if kind == 0 { b } else { -b };
        }
        let want = 100.0 * sum / (hi - lo);
        let got = g.est_sm_efficiency_pct.unwrap();
        assert!(
            (got - want).abs() < 0.01,
            "{name}: SM efficiency {got} vs {want}"
        );
        let got = g.est_achieved_occupancy_pct.unwrap();
        assert!((got - occ / occ_w).abs() < 0.01, "{name}: occupancy {got}");
        assert!(
            g.tensor_core_pct.is_some(),
            "{name}: CUDA has a Tensor Core share"
        );
        // Each step's figures are over its own span.
        for s in &report.steps {
            assert_eq!(s.gpu.len(), report.gpu.len());
            assert!(s.gpu[0].est_sm_efficiency_pct.unwrap() <= 100.0 + 1e-9);
        }
    }
    // On ROCm the share is the Matrix Cores' (Tensile's MFMA GEMMs), so named; without blocks
    // per SM no SM efficiency.
    let trace = common::shared_trace("real/tracelens_mi300_bert_small.json.gz");
    let report = sightline::analysis::steps::analyze(&trace);
    assert!(report
        .gpu
        .iter()
        .all(|g| g.tensor_core_pct.is_some_and(|p| p > 0.0)
            && g.matrix_units == Some("Matrix Cores")
            && g.est_sm_efficiency_pct.is_none()));
    // Devices that are neither CUDA nor ROCm get no share: the name rules are NVIDIA's and AMD's.
    let bytes = std::fs::read(common::local_fixture("devices/mtia_two_steps.json")).unwrap();
    let trace = sightline::parse::parse_bytes(&bytes).unwrap();
    let report = sightline::analysis::steps::analyze(&trace);
    assert!(!report.gpu.is_empty());
    assert!(report
        .gpu
        .iter()
        .all(|g| g.tensor_core_pct.is_none() && g.matrix_units.is_none()));
}

/// Each family of matrix-unit kernels on a real kernel name, with where the name was seen. The
/// TensorBoard plugin's list predates all but the first group: before, each of the others was "no",
/// so a B200 running GEMMs and attention read Tensor Cores 0.0%.
#[test]
fn tensor_cores_are_recognised_in_current_kernel_families() {
    use sightline::analysis::tables::kernels::uses_tensor_cores;
    let yes = [
        // The plugin's list (A100 fixture, HTA).
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        // CUTLASS wmma (H100 fixtures, TraceLens): "no" before.
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
        "void cutlass::Kernel2<cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align1>(cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align1::Params)",
        // Flash attention, PyTorch's copy (H100 fixtures).
        "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",
        // CUTLASS 3 on Hopper (CUTLASS's generated library names).
        "cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_bf16_bf16_128x128x64_2x1x1_0_ntn_align8_warpspecialized_pingpong_epi_tma",
        // cuBLAS's JIT GEMMs on Hopper and Blackwell (published profiles).
        "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT",
        "nvjet_tst_64x32_64x16_2x2_2cta_h_bz_splitK_TNT",
        // Blackwell attention (TensorRT-LLM's, in SGLang's B200 profiles).
        "fmhaSm100fKernel_QkvBfloat16OBfloat16H64PagedKvCausalP64VarSeqQ128Kv128PersistentContext",
        // Block-scaled FP4/FP8 batched GEMMs (TensorRT-LLM).
        "bmm_E2m1_E2m1E2m1_Fp32_t128x64x256_s6_et128x64_m128x64x64_cga1x1x1_16dp256b_TN_transOut_schedS_bN_ldgsts_tmaOpt_clmp_swiGlu_dynBatch_sm100a",
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_Ab32_Bb32_Cb32_t128x128x256u2_s4_et128x32_m256x128x32_c2x1x1_rM_TN_transOut",
        // AMD: Tensile's MFMA GEMM and MIOpen's XDLOPS implicit GEMM (MI300 fixtures), CK's XDL GEMM.
        "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1",
        "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x16_wt16x16x4_ws1x1_wr2x2_ta1x1x4x1_1x16x1x16_tb1x1x4x1_1x16x1x16_me",
        "_ZN2ck48kernel_gemm_xdl_cshuffle_v3_multi_d_b_preshuffle",
    ];
    for name in yes {
        assert!(uses_tensor_cores(name), "{name}");
    }
    let no = [
        // FP32 on the CUDA cores, whatever the architecture tag (A100 fixture; published profiles).
        "ampere_sgemm_32x32_sliced1x4_tn",
        "cutlass3x_sm100_simt_sgemm_f32_f32_f32_f32_f32_128x64x16_1x1x1_3_tnn_align1_bias_f32_relu",
        "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        // Elementwise work in BF16 is not a GEMM (MI300 fixture).
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
        "void at::native::vectorized_elementwise_kernel<4>",
    ];
    for name in no {
        assert!(!uses_tensor_cores(name), "{name}");
    }
}
