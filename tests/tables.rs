//! The tables against PyTorch's own numbers (the `*.truth.json` beside the CPU fixtures), the GPU
//! accounting invariants on the real traces, hand-made traces whose answers are known, and a naive
//! oracle for the tree and folding.

mod common;

use serde_json::Value;
use sightline::analysis::tables::{
    call_tree, kernel_table, label_table, op_table, EventKind, Forest, OpTable,
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
            for i in 0..l.slices.len() {
                if GPU_OPS.contains(&trace.str(l.slices.cat[i])) {
                    count += 1;
                    time_ns += l.slices.dur_ns[i];
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

        let all: i64 = forest
            .trees
            .iter()
            .flat_map(|t| t.device_self_ns.iter())
            .sum();
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
            .trees
            .iter()
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
