//! Snapshots of the CLI's text outputs (`report`, `ops`, `kernels`, `labels`, `modules`, `flops`,
//! `steps`, `idle`, `path`) on five traces of different kinds: a CPU training loop, CUDA training,
//! ROCm training with stacks, one rank of an 8-rank DLRM job and CUDA inference with stacks and
//! memory; and `compiled` on two torch.compile traces of this repository's (a graph break, a
//! recompile); and `diff` on two pairs of traces (a V100 ResNet-50 before and after
//! `num_workers=4`, the CPU pair of `pytorch-cpu-pairs/`, that one by input shape too). Each
//! output is kept in `tests/text_outputs/`; a change shows as a diff of that file.
//! `SIGHTLINE_BLESS=1` rewrites them. Times it took to parse and analyse are the only text that
//! changes from run to run: they read `N s` here.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;
use std::path::Path;

const TRACES: [(&str, &str); 5] = [
    ("cpu", "pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz"),
    (
        "cuda_training",
        "gpu-training/kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz",
    ),
    (
        "rocm",
        "gpu-training/tracelens_mi300_ddp_resnet18_train_stack_mem.json.gz",
    ),
    (
        "dlrm_rank",
        "real/param_dlrm_v100_rank0of8.pt.trace.json.gz",
    ),
    (
        "with_stack",
        "real/tracelens_h100_bert_small_stack_mem.json.gz",
    ),
];

const COMMANDS: [&str; 9] = [
    "report", "ops", "kernels", "labels", "modules", "flops", "steps", "idle", "path",
];

/// torch.compile traces (tests/fixtures/compiled/) whose `compiled` text is kept too.
const COMPILED: [(&str, &str); 2] = [
    ("graph_break", "graph_break.json.gz"),
    ("recompiles", "recompiles.json.gz"),
];

/// Pairs of traces whose `diff` text is kept: a name, BASE, NEW and the options.
const DIFFS: [(&str, &str, &str, &[&str]); 2] = [
    (
        "v100_workers",
        "real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz",
        "gpu-training/kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz",
        &[],
    ),
    (
        "cpu_workers",
        "pytorch-cpu-pairs/workers.base.pt.trace.json.gz",
        "pytorch-cpu-pairs/workers.new.pt.trace.json.gz",
        &["--by-shape"],
    ),
];

/// `text` with the seconds a run took (`parsed in 0.12 s`, `analysed in 0.03 s`) as `N s`.
fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["parsed in ", "analysed in "]
        .iter()
        .filter_map(|w| rest.find(w).map(|i| i + w.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits > 0 {
            out.push('N');
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// What `sightline ARGS...` prints, run from the files' folder `dir` so the files' names in the
/// output do not depend on where the fixtures are.
fn output(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    without_times(&String::from_utf8(out.stdout).unwrap())
}

#[test]
fn text_outputs_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/text_outputs");
    let bless = std::env::var_os("SIGHTLINE_BLESS").is_some();
    let mut changed = Vec::new();
    let shared = common::shared_fixtures();
    let compiled = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compiled");
    let runs =
        TRACES
            .iter()
            .flat_map(|&(name, file)| {
                COMMANDS.map(|cmd| (name, shared.as_path(), cmd, vec![cmd, file]))
            })
            .chain(COMPILED.iter().map(|&(name, file)| {
                (name, compiled.as_path(), "compiled", vec!["compiled", file])
            }))
            .chain(DIFFS.iter().map(|&(name, base, new, options)| {
                let args = [&["diff", base, new][..], options].concat();
                (name, shared.as_path(), "diff", args)
            }));
    for (name, folder, cmd, args) in runs {
        let actual = output(folder, &args);
        let path = dir.join(format!("{name}.{cmd}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            changed.push(path.display().to_string());
        }
    }
    assert!(
        changed.is_empty(),
        "changed: {changed:?}; review the difference and rewrite them with SIGHTLINE_BLESS=1"
    );
}

#[test]
fn times_read_n() {
    assert_eq!(
        without_times("a.json: rank 0 (parsed in 0.12 s, analysed in 10.5 s)\nparsed in time"),
        "a.json: rank 0 (parsed in N s, analysed in N s)\nparsed in time"
    );
}
