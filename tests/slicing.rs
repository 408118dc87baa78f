//! The analyses run in slices (`analysis::slicing`, as the page's worker runs them, pausing every
//! few units of work) give exactly what they give in one go, on every shared fixture and the
//! device fixtures: links, steps, idle gaps (exact and HTA), FLOPs, findings (the critical path's
//! graph and the savings' what-ifs with them) and the operator forest with its tables.

use crate::common;

use sightline::analysis::derived::Derived;
use sightline::analysis::flops::Flops;
use sightline::analysis::graphs::GraphReport;
use sightline::analysis::idle::{self, IdleOptions, Mode};
use sightline::analysis::links::Links;
use sightline::analysis::memory::Memory;
use sightline::analysis::slicing::{poll_once, Slicer};
use sightline::analysis::tables::{call_tree, kernel_table, label_table, op_table, Forest};
use sightline::analysis::{compiled, findings, steps};
use sightline::model::{SliceRef, Trace};
use sightline::parse::parse_bytes;
use std::future::Future;
use std::path::PathBuf;

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

/// Every link of every slice, as text.
fn links_text(t: &Trace, l: &Links) -> String {
    let mut out = format!("{:?}\n", l.stats);
    for (li, lane) in t.lanes.iter().enumerate() {
        for i in 0..lane.slice_count() {
            let r = SliceRef {
                lane: li as u32,
                index: i as u32,
            };
            out += &format!("{:?} {:?} {:?}\n", l.parent(r), l.launch(r), l.op(r));
        }
    }
    out
}

/// Polls `f` to its end, counting the polls, as the page's `analyse_step` calls do.
fn polled<F: Future>(f: F) -> (F::Output, u64) {
    let mut f = Box::pin(f);
    let mut polls = 1;
    loop {
        if let Some(v) = poll_once(f.as_mut()) {
            return (v, polls);
        }
        polls += 1;
    }
}

fn traces() -> Vec<PathBuf> {
    let mut all = common::all_shared_traces();
    for dir in ["devices", "compiled"] {
        for e in std::fs::read_dir(common::local_fixture(dir)).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if (n.ends_with(".json") && !n.ends_with(".truth.json")) || n.ends_with(".json.gz") {
                all.push(p);
            }
        }
    }
    all
}

#[test]
fn analyses_in_slices_equal_the_analyses_in_one_go() {
    for path in traces() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let t = parse_bytes(&std::fs::read(&path).unwrap()).expect("a trace");

        let links = Links::build(&t);
        let steps = steps::analyze_with(&t, &links);
        let opts = IdleOptions {
            mode: Mode::Exact,
            max_gaps: 500,
        };
        let idle = idle::analyze_with(&t, &links, &opts);
        let hta = idle::analyze_with(
            &t,
            &links,
            &IdleOptions {
                mode: Mode::Hta,
                ..opts.clone()
            },
        );
        let flops = Flops::build(&t, &links);
        let found = Derived::new(&t).found(&opts);
        let forest = Forest::build(&t);

        // A prime budget, so that pauses fall at odd places of every loop.
        let mut y = Slicer::every(7);
        let (s_links, polls) = polled(Links::build_sliced(&t, &mut y));
        assert_eq!(
            links_text(&t, &s_links),
            links_text(&t, &links),
            "{name}: links"
        );
        let (s_steps, _) = polled(steps::analyze_sliced(&t, &s_links, &mut y));
        assert_eq!(json(&s_steps), json(&steps), "{name}: steps");
        let (s_idle, _) = polled(idle::analyze_sliced(&t, &s_links, &opts, &mut y));
        assert_eq!(json(&s_idle), json(&idle), "{name}: idle");
        let hta_opts = IdleOptions {
            mode: Mode::Hta,
            ..opts.clone()
        };
        let (s_hta, _) = polled(idle::analyze_sliced(&t, &s_links, &hta_opts, &mut y));
        assert_eq!(json(&s_hta), json(&hta), "{name}: idle, HTA");
        let (s_flops, _) = polled(Flops::build_sliced(&t, &s_links, &mut y));
        assert_eq!(
            format!("{:?} {:?}", s_flops.instances, s_flops.launched),
            format!("{:?} {:?}", flops.instances, flops.launched),
            "{name}: flops"
        );
        assert_eq!(
            json(&s_flops.report(&t)),
            json(&flops.report(&t)),
            "{name}: flops report"
        );
        let (s_compiled, _) = polled(compiled::analyze_sliced(&t, &s_links, &s_steps, &mut y));
        let one_go = compiled::analyze(&t, &links, &steps);
        assert_eq!(json(&s_compiled), json(&one_go), "{name}: compiled");
        let inputs = findings::Inputs {
            links: &s_links,
            steps: &s_steps,
            idle: &s_idle,
            flops: &s_flops,
            graphs: &GraphReport::build(&t, &s_links),
            compiled: &s_compiled,
            memory: &Memory::series(&t),
        };
        let (s_found, _) = polled(findings::analyze_sliced(&t, inputs, &mut y));
        assert_eq!(
            json(&s_found.findings),
            json(&found.findings),
            "{name}: findings"
        );
        assert_eq!(s_found.measured, found.measured, "{name}: measured");
        let (s_forest, _) = polled(Forest::build_sliced(&t, &mut y));
        assert_eq!(
            format!("{s_forest:?}"),
            format!("{forest:?}"),
            "{name}: forest"
        );
        for by_shape in [false, true] {
            assert_eq!(
                json(&op_table(&t, &s_forest, by_shape)),
                json(&op_table(&t, &forest, by_shape)),
                "{name}: ops"
            );
        }
        assert_eq!(
            json(&kernel_table(&t, &s_forest)),
            json(&kernel_table(&t, &forest)),
            "{name}"
        );
        assert_eq!(
            json(&label_table(&t, &s_forest)),
            json(&label_table(&t, &forest)),
            "{name}"
        );
        assert_eq!(
            json(&call_tree(&t, &s_forest)),
            json(&call_tree(&t, &forest)),
            "{name}"
        );

        // Every slice is visited, so a trace with slices pauses (the loops do tick).
        let slices: usize = t.lanes.iter().map(|l| l.slice_count()).sum();
        if slices > 7 {
            assert!(polls > 1, "{name}: the links paused {} times", polls - 1);
        }
        assert!(
            y.pauses() as usize >= slices / 7,
            "{name}: {} pauses for {slices} slices",
            y.pauses()
        );
    }
}

/// The page's path: the store's sliced getters, polled with pauses as `analyse_step` does, keep
/// what a one-go store computes, and the one-go getters asked afterwards return what the slices
/// kept (nothing is computed twice: the forest's cell is the one the slices filled).
#[test]
fn the_store_filled_in_slices_holds_what_one_go_computes() {
    let opts = IdleOptions {
        mode: Mode::Exact,
        max_gaps: 500,
    };
    for path in traces() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let t = parse_bytes(&std::fs::read(&path).unwrap()).expect("a trace");
        let whole = Derived::new(&t);
        let sliced = Derived::new(&t);
        let mut y = Slicer::every(11);
        let (found, _) = polled(sliced.found_sliced(&opts, &mut y));
        // The critical path's graph and the savings' what-ifs, which price the fixes after the
        // rules, pause too.
        let (judged, polls) = polled(sliced.findings_sliced(&opts, &mut y));
        let slices: usize = t.lanes.iter().map(|l| l.slice_count()).sum();
        if slices > 11 && found.findings.iter().any(|f| !f.whatif.is_empty()) {
            assert!(polls > 10, "{name}: the savings paused ({polls} polls)");
            let (a, b) = (sliced.critical().unwrap(), whole.critical().unwrap());
            assert_eq!(
                json(&a.paths(&t, sliced.links())),
                json(&b.paths(&t, whole.links())),
                "{name}: the critical paths"
            );
            assert_eq!(a.graph.order, b.graph.order, "{name}: the graph's order");
        }
        assert_eq!(
            json(&*judged),
            json(&*whole.findings(&opts)),
            "{name}: findings"
        );
        assert_eq!(json(sliced.steps()), json(whole.steps()), "{name}: steps");
        assert_eq!(
            json(&*sliced.idle(&opts)),
            json(&*whole.idle(&opts)),
            "{name}"
        );
        let (forest, _) = polled(sliced.forest_sliced(&mut y));
        assert!(
            std::ptr::eq(forest, sliced.forest()),
            "{name}: one forest kept"
        );
        assert_eq!(
            json(&op_table(&t, sliced.forest(), false)),
            json(&op_table(&t, whole.forest(), false)),
            "{name}: ops"
        );
        assert_eq!(
            json(&sliced.digest_with(&name, &opts)),
            json(&whole.digest(&name)),
            "{name}: the page's digest is the CLI's"
        );
    }
}
