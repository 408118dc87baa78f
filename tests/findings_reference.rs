//! The findings reference's tables, in `docs/findings.md`, are the rules' declarations written
//! out (`analysis::findings::reference`): it fails here when the two differ, and
//! `SIGHTLINE_BLESS=1` rewrites them. Every finding the fixtures give has a declared rule.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;
use sightline::analysis::derived::Derived;
use sightline::analysis::findings::reference;
use sightline::analysis::findings::{Pricing, Severity};

#[test]
fn docs_findings_md_is_written_from_the_rules() {
    common::generated_section("docs/findings.md", "rules", &reference::markdown());
}

#[test]
fn every_finding_has_a_declared_rule_with_its_severity_and_kind() {
    let fixtures = [
        "pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz",
        "gpu-training/kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz",
        "gpu-training/tracelens_mi300_ddp_resnet18_train_stack_mem.json.gz",
        "real/param_dlrm_v100_rank0of8.pt.trace.json.gz",
        "real/tracelens_h100_bert_small_stack_mem.json.gz",
    ];
    let mut seen = Vec::new();
    for name in fixtures {
        let t = common::shared_trace(name);
        let d = Derived::new(&t);
        let judged = d.findings(&Default::default());
        for (a, recording) in judged
            .findings
            .iter()
            .map(|a| (a, false))
            .chain(judged.recording.iter().map(|a| (a, true)))
        {
            let f = &a.finding;
            let rule = reference::rule(f.id)
                .unwrap_or_else(|| panic!("{name}: {} has no declaration", f.id));
            assert_eq!(rule.recording, recording, "{name}: {}", f.id);
            assert_eq!(f.is_recording(), recording, "{name}: {}", f.id);
            // Savings make a cost `info`, and a rule may raise its findings to critical.
            assert!(
                f.severity == rule.severity
                    || matches!(f.severity, Severity::Info | Severity::Critical),
                "{name}: {} is {:?}, declared {:?}",
                f.id,
                f.severity,
                rule.severity
            );
            // What its saving says is what the rule declares.
            if let Some(s) = &a.saving {
                assert_ne!(rule.pricing, Pricing::None, "{name}: {} is priced", f.id);
                assert_eq!(
                    s.bound,
                    matches!(rule.pricing, Pricing::Bound | Pricing::Estimate),
                    "{name}: {}",
                    f.id
                );
            }
            seen.push(f.id);
        }
    }
    seen.sort_unstable();
    seen.dedup();
    // Both kinds, from several themes: the test reads findings, not an empty list.
    assert!(seen.len() >= 5, "{seen:?}");
    assert!(seen.iter().any(|id| reference::rule(id).unwrap().recording));
}
