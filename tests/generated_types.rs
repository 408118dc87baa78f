//! The TypeScript types of the JSON the page's worker returns (`www/generated/answers.ts`),
//! generated from the serde structures by ts-rs (the `ts` feature): this test writes them again
//! and fails when the committed file differs; `SIGHTLINE_BLESS=1` rewrites it.
//!
//! The roots are the types each `#[wasm_bindgen]` method of `src/web/` serializes; everything
//! they hold is reached from them. Nanoseconds are `i64` and serialize as JSON numbers, so large
//! integers are `number` here (ts-rs's default is `bigint`, which `JSON.parse` never gives).

use sightline::analysis::columns::{Column, Sort};
use sightline::analysis::compiled::Compiled;
use sightline::analysis::critical::savings::Assessed;
use sightline::analysis::diff::Diff;
use sightline::analysis::digest::Digest;
use sightline::analysis::graphs::{Capture, CaptureMatch, GraphsOutput};
use sightline::analysis::idle::IdleReport;
use sightline::analysis::memory::recorded::Recorded;
use sightline::analysis::ranks::RanksReport;
use sightline::analysis::steps::StepsReport;
use sightline::analysis::summary::Summary;
use sightline::analysis::tables::calltree::CallTree;
use sightline::analysis::tables::kernels::KernelTable;
use sightline::analysis::tables::labels::LabelTable;
use sightline::analysis::tables::modules::ModuleTable;
use sightline::analysis::tables::ops::OpTable;
use sightline::snapshot;
use sightline::view::aggregate::RangeTable;
use sightline::view::critical::{Answer, PathSummary};
use sightline::view::details::SliceDetails;
use sightline::view::frame::FrameMeta;
use sightline::view::overview::Overview;
use sightline::view::panels::{
    AllocationTable, Clicked, DeviceInfo, FlopsCall, FrameConstants, LiveRows, Roofline, Selection,
    Tooltip,
};
use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use ts_rs::{Config, TypeVisitor, TS};

/// Declarations by TypeScript name, each with the Rust type it came from: two Rust types of one
/// name would otherwise overwrite each other's declaration without a word. (One declaration may
/// come from two Rust types: `serde_json::Value` is declared as ts-rs's own `JsonValue`.)
struct Collect<'a> {
    cfg: &'a Config,
    decls: BTreeMap<String, (&'static str, String)>,
    seen: HashSet<TypeId>,
    clashes: Vec<String>,
}

impl TypeVisitor for Collect<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Primitives and containers have no declaration of their own; what they hold is visited
        // through their dependencies.
        if T::output_path().is_none() {
            return;
        }
        if !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        let name = T::ident(self.cfg);
        let rust = std::any::type_name::<T>();
        let mut text = T::docs().unwrap_or_default();
        text.push_str("export ");
        text.push_str(&T::decl(self.cfg));
        match self.decls.get(&name) {
            Some((other, decl)) if *decl != text => {
                self.clashes
                    .push(format!("{rust} and {other} are both `{name}`"));
            }
            Some(_) => {}
            None => {
                self.decls.insert(name, (rust, text));
            }
        }
        T::visit_dependencies(self);
    }
}

fn generate() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut c = Collect {
        cfg: &cfg,
        decls: BTreeMap::new(),
        seen: HashSet::new(),
        clashes: Vec::new(),
    };
    // Session: finish, names_table and select_range, report(kind), table(kind), capture_of and
    // use_capture, digest, critical_path, what_if, memory_recorded, a frame's meta, details,
    // overview; the module's diff_digests and ranks_report.
    c.visit::<Summary>();
    c.visit::<RangeTable>();
    c.visit::<StepsReport>();
    c.visit::<IdleReport>();
    c.visit::<Assessed>();
    c.visit::<OpTable>();
    c.visit::<KernelTable>();
    c.visit::<LabelTable>();
    c.visit::<ModuleTable>();
    c.visit::<CallTree>();
    c.visit::<GraphsOutput>();
    c.visit::<Compiled>();
    c.visit::<Column>();
    c.visit::<Sort>();
    c.visit::<Capture>();
    c.visit::<CaptureMatch>();
    c.visit::<Digest>();
    c.visit::<Diff>();
    c.visit::<RanksReport>();
    c.visit::<PathSummary>();
    c.visit::<Answer>();
    c.visit::<Recorded>();
    c.visit::<FrameMeta>();
    c.visit::<SliceDetails>();
    c.visit::<Overview>();
    // What only the page's panels ask: flops_report and flops_calls, memory_devices,
    // memory_live and memory_allocations, tooltip, click, selection; the module's constants.
    c.visit::<Roofline>();
    c.visit::<FlopsCall>();
    c.visit::<DeviceInfo>();
    c.visit::<LiveRows>();
    c.visit::<AllocationTable>();
    c.visit::<Tooltip>();
    c.visit::<Clicked>();
    c.visit::<Selection>();
    c.visit::<FrameConstants>();
    // SnapshotSession: finish and report, peaks, a band's hit; diff_snapshots.
    c.visit::<snapshot::analysis::Report>();
    c.visit::<snapshot::analysis::Peaks>();
    c.visit::<snapshot::analysis::Diff>();
    c.visit::<snapshot::bands::Hit>();

    assert!(
        c.clashes.is_empty(),
        "rename one of each pair with #[ts(rename)]: {:#?}",
        c.clashes
    );
    let mut out = String::from(
        "// Generated by tests/generated_types.rs from the Rust types (ts-rs); do not edit.\n\
         // `SIGHTLINE_BLESS=1 cargo test --features ts generated_types` rewrites it.\n\n",
    );
    // A declared table's answer with its columns and sort beside its members
    // (`analysis::columns::WithColumns`, which borrows the answer and so has no ts-rs derive).
    out.push_str(
        "/** An answer with its table's declaration beside its rows: `columns` and `sort`, then the \
         answer's own members. */\n\
         export type WithColumns<T> = { columns: Array<Column>, sort: Sort } & T;\n\n",
    );
    // The same for a command with several tables (`analysis::columns::WithTables`), by the
    // member that holds each table's rows.
    out.push_str(
        "/** An answer with its tables' declarations beside it: `tables`, by the member that holds \
         each table's rows, then the answer's own members. */\n\
         export type WithTables<T> = { tables: Record<string, { columns: Array<Column>, sort: Sort }> } & T;\n\n",
    );
    for (_, text) in c.decls.values() {
        out.push_str(text);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[test]
fn generated_types_match_the_rust_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("www/generated/answers.ts");
    let text = generate();
    if std::env::var_os("SIGHTLINE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} differs from the Rust types it is generated from: rewrite it with \
         SIGHTLINE_BLESS=1 cargo test --features ts generated_types, and check the page's \
         JavaScript against it (npm run typecheck)",
        path.display()
    );
}
