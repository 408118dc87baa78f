//! The tables' columns are declared once (`analysis::columns`, beside each row type): here, on
//! every shared fixture and the graph replay, every table's rows serialize to exactly the declared
//! keys, in the declared order, with values of the declared types; and the column reference in
//! `docs/columns.md` is the declarations written out (`SIGHTLINE_BLESS=1` rewrites it).
#![cfg(not(target_arch = "wasm32"))]

use crate::common;
use serde_json::Value;
use sightline::analysis::columns::{reference, Sort, Table, Type};
use sightline::analysis::derived::Derived;
use sightline::analysis::ranks::{self, Align, OverlapScope};
use sightline::analysis::tables::calltree::call_tree;
use sightline::analysis::tables::OpColumn;
use sightline::query::tables::{declared, declared_at, tables_of, DECLARED};
use sightline::query::{
    Compiled, Diff, Flops, Graphs, Idle, Kernels, Labels, Memory, Modules, Opened, Ops, Question,
    Steps,
};
use std::path::Path;

#[test]
fn docs_columns_md_is_written_from_the_declarations() {
    common::generated_section("docs/columns.md", "columns", &reference(DECLARED));
}

#[test]
fn declarations_are_whole() {
    for (i, t) in DECLARED.iter().enumerate() {
        assert!(
            !DECLARED[..i]
                .iter()
                .any(|u| (u.name, u.rows) == (t.name, t.rows)),
            "{} {} twice",
            t.name,
            t.rows
        );
        let keys: Vec<&str> = t.columns.iter().map(|c| c.key).collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[..i].contains(k), "{}: {k} twice", t.name);
        }
        for device in [true, false] {
            if let Some(k) = t.sort.key(device) {
                assert!(keys.contains(&k), "{}: sorted by {k}, not a column", t.name);
            }
        }
        if let Sort::Change(by) = t.sort {
            for k in by {
                assert!(keys.contains(k), "{}: sorted by {k}, not a column", t.name);
            }
        }
        for c in t.columns {
            assert!(
                !c.label.is_empty() && !c.about.is_empty(),
                "{}.{}",
                t.name,
                c.key
            );
            // An object's declared members are its type's, in order.
            if !c.parts.is_empty() {
                let Type::Struct(members) = c.ty else {
                    panic!("{}.{} has parts and is not an object", t.name, c.key);
                };
                let parts: Vec<(&str, Type)> = c.parts.iter().map(|p| (p.key, p.ty)).collect();
                assert_eq!(parts, members.to_vec(), "{}.{}", t.name, c.key);
                assert!(c
                    .parts
                    .iter()
                    .all(|p| !p.label.is_empty() && !p.about.is_empty()));
            }
        }
    }
    // Every column the operator table sorts by is one of its columns, and each of its names
    // (key and PyTorch's) names one column only.
    let ops = declared("ops").unwrap();
    let names: Vec<&str> = OpColumn::names().collect();
    for o in OpColumn::ALL {
        assert!(ops.columns.contains(o.column()));
    }
    for n in &names {
        assert_eq!(names.iter().filter(|m| *m == n).count(), 1, "{n}");
    }
}

/// The rows under `t.rows` of `answer` have `t`'s columns (those `flags` ask for), in order, with
/// values of their types; a column left out when it has no value may be missing.
fn check(name: &str, t: &Table, flags: &[&str], answer: Ordered) {
    check_rows(name, t, flags, &rows_of(name, t, &answer));
}

/// The rows `t.rows` names in `answer`: a member, a member of a member (`steps.pairs`), or
/// (`graphs[].kernels`) a member of each row of a member.
fn rows_of<'a>(name: &str, t: &Table, answer: &'a Ordered) -> Vec<&'a Ordered> {
    let list = |v: Option<&'a Ordered>, key: &str| -> &'a [Ordered] {
        match v {
            Some(Ordered::List(rows)) => rows,
            _ => panic!("{name}: {} has no `{key}`", t.name),
        }
    };
    // `steps.pairs`: a member of a member.
    let (answer, rows) = match t.rows.split_once('.') {
        Some((outer, inner)) if !outer.ends_with("[]") => (
            answer
                .get(outer)
                .unwrap_or_else(|| panic!("{name}: {} has no `{outer}`", t.name)),
            inner,
        ),
        _ => (answer, t.rows),
    };
    match rows.split_once("[].") {
        None => list(answer.get(rows), rows).iter().collect(),
        Some((outer, inner)) => list(answer.get(outer), outer)
            .iter()
            .flat_map(|o| list(o.get(inner), inner))
            .collect(),
    }
}

fn check_rows(name: &str, t: &Table, flags: &[&str], rows: &[&Ordered]) {
    let want: Vec<_> = t.shown(flags).collect();
    for row in rows {
        let Ordered::Object(members) = row else {
            panic!("{name}: a row of {} is not an object", t.name);
        };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        let declared: Vec<&str> = want
            .iter()
            .filter(|c| !c.sometimes || keys.contains(&c.key))
            .map(|c| c.key)
            .collect();
        assert_eq!(keys, declared, "{name}: {} {flags:?}", t.name);
        for (key, v) in members {
            let c = want.iter().find(|c| c.key == key).unwrap();
            let v = v.value();
            assert!(
                c.ty.holds(&v),
                "{name}: {}.{} = {v} is not {:?}",
                t.name,
                c.key,
                c.ty
            );
        }
    }
}

fn check_trace(path: &Path, path_columns: bool) {
    let bytes = std::fs::read(path).unwrap();
    let trace = sightline::parse::parse_bytes(&bytes).unwrap();
    let d = Derived::new(trace);
    let o = Opened::of(&d);
    let name = path.display().to_string();
    for by_shape in [false, true] {
        let q = Ops {
            by_shape,
            ..Ops::default()
        };
        check(
            &name,
            declared("ops").unwrap(),
            &[],
            json(&q.answer(&o).unwrap()),
        );
    }
    check(
        &name,
        declared("kernels").unwrap(),
        &[],
        json(&Kernels::default().answer(&o).unwrap()),
    );
    check(
        &name,
        declared("labels").unwrap(),
        &[],
        json(&Labels {}.answer(&o).unwrap()),
    );
    check(
        &name,
        declared("modules").unwrap(),
        &[],
        json(&Modules {}.answer(&o).unwrap()),
    );
    check(
        &name,
        declared("flops").unwrap(),
        &[],
        json(&Flops {}.answer(&o).unwrap()),
    );
    check(
        &name,
        declared("graphs").unwrap(),
        &[],
        json(&Graphs::default().answer(&o).unwrap()),
    );
    check(
        &name,
        declared("steps").unwrap(),
        &[],
        json(Steps {}.answer(&o).unwrap()),
    );
    // All of idle's tables (per stream, per device, the gaps), exact and as HTA counts.
    for hta in [false, true] {
        let answer = json(&*Idle { hta, top: None }.answer(&o).unwrap());
        for t in tables_of("idle") {
            check(&name, t, &[], answer.clone());
        }
    }
    check(
        &name,
        declared("calltree").unwrap(),
        &[],
        json(&call_tree(d.trace(), d.forest())),
    );
    // The findings and the notes on the recording, as `report --json` lists them.
    let judged = json(&*d.findings(&Idle::default().options()));
    for t in tables_of("report") {
        check(&name, t, &[], judged.clone());
    }
    // Memory's tables, the allocations asked for, on a trace that recorded memory.
    let answer = json(
        &Memory {
            allocations: true,
            ..Memory::default()
        }
        .answer(&o)
        .unwrap(),
    );
    if !matches!(answer.get("devices"), Some(Ordered::List(d)) if d.is_empty()) {
        for t in tables_of("memory") {
            check(&name, t, &[], answer.clone());
        }
    }
    // All of compiled's tables; the kernels outside any graph are rows of the graphs' kernels.
    let answer = json(Compiled {}.answer(&o).unwrap());
    for t in tables_of("compiled") {
        check(&name, t, &[], answer.clone());
    }
    let kernels = declared_at("compiled", "graphs[].kernels").unwrap();
    let Some(Ordered::List(loose)) = answer.get("loose_kernels") else {
        panic!("{name}: no loose_kernels");
    };
    check_rows(&name, kernels, &[], &loose.iter().collect::<Vec<_>>());
    if path_columns {
        let q = Ops {
            path: true,
            ..Ops::default()
        };
        check(
            &name,
            declared("ops").unwrap(),
            &["path"],
            json(&q.answer(&o).unwrap()),
        );
        let q = Kernels { path: true };
        check(
            &name,
            declared("kernels").unwrap(),
            &["path"],
            json(&q.answer(&o).unwrap()),
        );
    }
}

/// An answer as JSON whose objects keep their members' order (the crate's `serde_json` sorts
/// them in a `Value`).
fn json<T: serde::Serialize>(v: &T) -> Ordered {
    serde_json::from_str(&serde_json::to_string(v).unwrap()).unwrap()
}

/// A JSON value with its objects' members in order.
#[derive(Clone)]
enum Ordered {
    Object(Vec<(String, Ordered)>),
    List(Vec<Ordered>),
    Scalar(Value),
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&Ordered> {
        match self {
            Ordered::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// As a `Value` (members sorted).
    fn value(&self) -> Value {
        match self {
            Ordered::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), v.value())).collect())
            }
            Ordered::List(l) => Value::Array(l.iter().map(Ordered::value).collect()),
            Ordered::Scalar(v) => v.clone(),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut m = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Ordered>()? {
                    m.push((k, v));
                }
                Ok(Ordered::Object(m))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut l = Vec::new();
                while let Some(v) = a.next_element::<Ordered>()? {
                    l.push(v);
                }
                Ok(Ordered::List(l))
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::Null))
            }
            fn visit_bool<E>(self, b: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::Bool(b)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(n.into()))
            }
            fn visit_str<E>(self, s: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(s.into()))
            }
        }
        d.deserialize_any(V)
    }
}

#[test]
fn every_table_serializes_its_declared_columns() {
    for path in common::all_shared_traces() {
        check_trace(&path, false);
    }
    check_trace(
        &common::local_fixture("graphs/sglang_decode.replay.json.gz"),
        false,
    );
    // torch.compile's tables: on CPU (C++ kernels, graph breaks, recompiles) and on CUDA (Triton
    // kernels with their generated source).
    for name in [
        "compiled_once",
        "graph_break",
        "recompiles",
        "shapes_alternate",
    ] {
        check_trace(
            &common::local_fixture(&format!("compiled/{name}.json.gz")),
            false,
        );
    }
    check_trace(
        &common::local_fixture("devices/triton_inductor.json"),
        false,
    );
}

/// The per-rank rows of `sightline ranks` on the shared rank fixtures: the gloo job on CPU and
/// the eight DLRM ranks on GPU, over HTA's steps and the whole trace.
#[test]
fn the_ranks_rows_have_their_declared_columns() {
    let digest = |p: &Path| {
        let bytes = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        Derived::new(sightline::parse::parse_bytes(&bytes).unwrap()).digest(&name)
    };
    let gloo = common::shared_fixtures().join("pytorch-cpu-ranks/gloo4_straggler");
    let mut files: Vec<_> = std::fs::read_dir(&gloo)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    let real = common::shared_fixtures().join("real");
    let dlrm: Vec<_> = (0..8)
        .map(|r| real.join(format!("param_dlrm_v100_rank{r}of8.pt.trace.json.gz")))
        .collect();
    for (name, files) in [("gloo4_straggler", files), ("param_dlrm_v100", dlrm)] {
        let digests: Vec<_> = files.iter().map(|p| digest(p)).collect();
        for scope in [OverlapScope::HtaSteps, OverlapScope::WholeTrace] {
            let report = ranks::analyze_with(&digests, Align::Auto, scope);
            assert_eq!(report.ranks.len(), files.len(), "{name}");
            assert!(
                !report.collectives.is_empty(),
                "{name}: collectives matched"
            );
            // The ranks and the collectives.
            for t in tables_of("ranks") {
                check(name, t, &[], json(&report));
            }
        }
    }
}

/// The comparison's rows (`sightline diff --json`) on two real pairs: a V100 ResNet-50 before
/// and after `num_workers=4` (device ops matched by name, launcher and module) and the CPU pair,
/// per step and in total, matched by input shape or not.
#[test]
fn the_diff_rows_have_their_declared_columns() {
    let digest = |p: &str| {
        let path = common::shared_fixtures().join(p);
        let bytes = std::fs::read(&path).unwrap();
        Derived::new(sightline::parse::parse_bytes(&bytes).unwrap()).digest(p)
    };
    for (base, new) in [
        (
            "real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz",
            "gpu-training/kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz",
        ),
        (
            "pytorch-cpu-pairs/workers.base.pt.trace.json.gz",
            "pytorch-cpu-pairs/workers.new.pt.trace.json.gz",
        ),
    ] {
        let (b, n) = (digest(base), digest(new));
        for (total, by_shape) in [(false, false), (true, true)] {
            let answer = Diff {
                total,
                by_shape,
                fail_if: Vec::new(),
            }
            .answer(&b, &n, base, new)
            .unwrap();
            assert!(!answer.diff.ops.is_empty() && !answer.diff.steps.pairs.is_empty());
            let flags: &[&str] = if by_shape { &["by_shape"] } else { &[] };
            let answer = json(&answer);
            for t in tables_of("diff") {
                check(new, t, flags, answer.clone());
            }
        }
    }
}

#[test]
fn the_path_columns_come_when_asked() {
    check_trace(
        &common::shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz"),
        true,
    );
    check_trace(
        &common::shared_fixtures().join("pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz"),
        true,
    );
}
