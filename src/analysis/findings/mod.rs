//! Findings: what is worth telling about a trace, each with its numbers, advice, and the evidence
//! (slices and time ranges) a viewer can jump to.
//!
//! Each rule is declared once ([`Rule`], beside its function: id, theme, severity, thresholds,
//! whether it is a note on the recording, and what it means and when it fires); the findings
//! reference, `docs/findings.md`, is written from every declaration ([`reference`](mod@reference)), and a test
//! fails when the file and the declarations differ.
//!
//! Advice names only APIs the trace's device has ([`super::backend`]): CUDA graphs on CUDA, HIP
//! graphs through `torch.cuda` on ROCm, none on MTIA or XPU.
//!
//! Files: this module (builds the `context::Context`, runs the rules, `rules::RULES` then the
//! roofline's `flops::rules`, and ranks what they find by severity; its one entry point is
//! [`analyze_sliced`], whose one-go form is `Derived::found`), [`types`] (what a finding and a
//! rule's declaration are: the leaf that the rules elsewhere, `flops::rules`, `memory::growth`,
//! `critical::hotspot` and `ranks::findings`, and every reader import, so none imports the rules
//! back), `context` (what the rules read: the analyses, one census pass over the slices, the
//! copies' self time only where their rule can fire, and each step thread's chain of operators,
//! annotations and runtime calls with their own times, for the CPU-side rules), `rules/` (one
//! theme a file: `cpu`, `copies` with the float64 detour, `device`, `input`, `memory`,
//! `recording`, `steps`, `damage`, `graphs`, `compiled`; each rule a declaration and a
//! `fn(&Context) -> Vec<Finding>`, paired in `RULES`) and [`reference`](mod@reference) (every rule's declaration,
//! those written elsewhere included, and the reference written from them). Adding a rule is its
//! declaration, its function and one line in `RULES`.
//!
//! Each rule also writes the what-if edits that price its fix ([`Finding::whatif`]), which
//! `critical::savings` replays (`Derived::findings`: the findings with their savings).

mod context;
pub mod reference;
mod rules;
pub mod types;

pub use context::Inputs;
/// The rules `critical::savings` treats apart: the damage that ranks first, and the device's
/// symptoms told as context under the cause.
pub(crate) use rules::{DEVICE_EVENTS_LOST, GPU_STARVED_BY_CPU, LOW_GPU_UTILIZATION};
pub use types::{Evidence, Finding, Measure, Pricing, Rule, Severity, TimeRange};

use super::slicing::Slicer;
use crate::model::Trace;
use std::cmp::Reverse;

impl Finding {
    /// Whether this is a note on how the trace was recorded ([`Rule::recording`]); every such
    /// rule is one of the findings' own rules, `rules::RULES` (`reference`'s tests check it).
    pub fn is_recording(&self) -> bool {
        rules::RULES
            .iter()
            .any(|(rule, _)| rule.recording && rule.id == self.id)
    }
}

/// What the rules found, and what they measured against their thresholds whether they fired or
/// not ([`Measure`]: what a digest keeps so that a comparison can tell a finding that crossed its
/// threshold from one that appeared).
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The most severe first.
    pub findings: Vec<Finding>,
    /// One a rule at most, in the order the rules ran.
    pub measured: Vec<Measure>,
}

/// The findings of every rule, the most severe first, pausing as `y` says (see
/// [`super::slicing`]). One entry point: the one-go form is `Derived::found`, which runs this
/// without pauses on the analyses it keeps.
pub async fn analyze_sliced(trace: &Trace, inputs: Inputs<'_>, y: &mut Slicer) -> Found {
    let copies_from = rules::copies::CPU_EXEC_SHARE;
    let cx = context::Context::new(trace, inputs, copies_from, y).await;
    // A pause after each rule: most read every slice of the step threads once.
    let slices = trace.slice_count() as u64;
    let mut out: Vec<Finding> = Vec::new();
    for (_, check) in rules::RULES {
        out.extend(check(&cx));
        y.tick(slices).await;
    }
    let mut measured = cx.into_measured();
    let Inputs {
        links,
        flops,
        graphs,
        compiled,
        ..
    } = inputs;
    let replays = graphs.uses_graphs();
    out.extend(
        super::flops::rules::findings(trace, links, flops, compiled, replays, &mut measured, y)
            .await,
    );
    out.sort_by_key(|f| Reverse(f.severity));
    Found {
        findings: out,
        measured,
    }
}
