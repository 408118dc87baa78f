//! Damaged input never panics: real traces mutated at random (bytes flipped, structure characters
//! inserted, cuts), parsed in random chunks, then run through every analysis and the view's index.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use common::Rng;
use sightline::analysis::idle::{self, IdleOptions, Mode};
use sightline::analysis::tables::{call_tree, kernel_table, label_table, op_table, Forest};
use sightline::analysis::{steps, summary};
use sightline::parse::Parser;

fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(8) as usize {
        let at = rng.below(out.len() as i64) as usize;
        match rng.below(6) as usize {
            0 => out[at] = rng.next() as u8,
            1 => out.insert(at, b"{}[]\",:\\-0eN"[rng.below(12) as usize]),
            2 => {
                out.remove(at);
            }
            3 => {
                // Swap a number for a huge or odd one.
                let odd: &[u8] = [
                    &b"1e400"[..],
                    b"-0",
                    b"99999999999999999999999",
                    b"NaN",
                    b"\"7\"",
                ][rng.below(5) as usize];
                out.splice(at..at, odd.iter().copied());
            }
            4 => out.truncate(at.max(1)),
            _ => {
                // Duplicate a stretch: repeated events, ids and keys.
                let end = (at + rng.below(400) as usize).min(out.len());
                let piece = out[at..end].to_vec();
                out.splice(end..end, piece);
            }
        }
    }
    out
}

/// Returns whether the input was read as a trace (so the analyses ran).
fn analyse_everything(bytes: &[u8], rng: &mut Rng) -> bool {
    let mut p = Parser::new();
    let mut i = 0;
    while i < bytes.len() {
        let n = 1 + rng.below(70_000) as usize;
        let end = (i + n).min(bytes.len());
        p.feed(&bytes[i..end]);
        i = end;
    }
    let Ok(trace) = p.finish() else { return false };
    let _ = summary::summarize(&trace);
    let forest = Forest::build(&trace);
    let _ = op_table(&trace, &forest, true);
    let _ = kernel_table(&trace, &forest);
    let _ = label_table(&trace, &forest);
    let _ = call_tree(&trace, &forest);
    let _ = steps::analyze(&trace);
    for mode in [Mode::Exact, Mode::Hta] {
        let _ = idle::analyze(
            &trace,
            &IdleOptions {
                mode,
                ..IdleOptions::default()
            },
        );
    }
    let _ = crate::common::findings(&trace);
    let digest = sightline::analysis::derived::Derived::new(&trace).digest("rank0.json");
    let _ = sightline::analysis::ranks::analyze(
        &[digest.clone(), digest],
        sightline::analysis::ranks::Align::Collectives,
    );
    let _ = sightline::view::Timeline::new(&trace);
    true
}

#[test]
fn mutated_traces_never_panic_anywhere() {
    let shared = common::shared_fixtures();
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for f in [
        "real/tracelens_h100_bert_small_stack_mem.json.gz",
        "real/hta_a100_alexnet_cuda_sync.json.gz",
        "real/param_dlrm_v100_rank1of8.pt.trace.json.gz",
    ] {
        let gz = std::fs::read(shared.join(f)).unwrap();
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut plain)
            .unwrap();
        inputs.push(gz);
        inputs.push(plain);
    }
    for name in ["legacy_strings.json", "begin_end.json", "overlap_gpu.json"] {
        inputs.push(std::fs::read(common::local_fixture(&format!("parse/{name}"))).unwrap());
    }
    let mut rng = Rng(0x5151_7e11_e000_0001);
    let rounds = 400;
    let mut traces = 0;
    for round in 0..rounds {
        let base = &inputs[round % inputs.len()];
        let bytes = mutate(base, &mut rng);
        let seed = rng.next();
        match std::panic::catch_unwind(|| analyse_everything(&bytes, &mut Rng(seed | 1))) {
            Ok(read) => traces += read as usize,
            Err(_) => panic!(
                "round {round}: a mutated input ({} bytes) panicked",
                bytes.len()
            ),
        }
    }
    // Most damaged inputs are still traces, so the analyses really ran on damaged models.
    assert!(
        traces * 2 > rounds,
        "only {traces} of {rounds} mutated inputs were read as traces"
    );
}

#[test]
fn times_at_the_edge_of_i64_do_not_overflow() {
    let bytes = std::fs::read(common::local_fixture("parse/huge_times.json")).unwrap();
    assert!(analyse_everything(&bytes, &mut Rng(1)));
}
