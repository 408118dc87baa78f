//! A mutation fuzzer over real traces for the parser: cuts, byte flips, inserted and deleted
//! quotes, brackets, backslashes and commas, huge numbers and deep nesting. Every input is parsed
//! on every SIMD path and in random chunks, and must give the model the oracle reader
//! (`Reader::Objects`) gives, without a panic.
//!
//! `scripts/test` runs a few thousand inputs; the long run is
//! `SIGHTLINE_FUZZ_INPUTS=1000000 cargo test --release --test it -- --ignored --nocapture fuzz::`.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use common::{full_dump, Rng, Shape};
use sightline::parse::{Parser, Reader, SimdPath};
use std::time::{Duration, Instant};

/// Pieces of real traces, a few KB each: small inputs make many of them per second.
fn seeds() -> Vec<Vec<u8>> {
    let mut texts = Vec::new();
    for f in [
        "real/tracelens_h100_bert_small_stack_mem.json.gz",
        "real/hta_a100_alexnet_cuda_sync.json.gz",
        "real/param_dlrm_v100_rank1of8.pt.trace.json.gz",
        "real/kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz",
        "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz",
    ] {
        texts.push(common::gunzip(
            &std::fs::read(common::shared_fixtures().join(f)).unwrap(),
        ));
    }
    for name in [
        "control_chars_and_na.json",
        "begin_end.json",
        "legacy_strings.json",
    ] {
        texts.push(std::fs::read(common::local_fixture(&format!("parse/{name}"))).unwrap());
    }
    let mut seeds = Vec::new();
    let mut rng = Rng(0xfeed_5eed);
    for text in &texts {
        for _ in 0..40 {
            // A run of events cut at `{`s, put back into a document.
            let from = text.len().saturating_sub(1) as i64;
            let at = rng.below(from) as usize;
            let Some(start) = text[at..].iter().position(|&b| b == b'{').map(|p| at + p) else {
                continue;
            };
            let end = (start + 500 + rng.below(6000) as usize).min(text.len());
            let mut doc = b"{\"traceEvents\": [".to_vec();
            doc.extend_from_slice(&text[start..end]);
            doc.extend_from_slice(b"]}");
            seeds.push(doc);
        }
        if text.len() < 20_000 {
            seeds.push(text.clone());
        }
    }
    // The shapes that made lookups quadratic, small: many device processes, many pids, deep
    // nesting, many lanes.
    for kind in [
        Shape::DeviceProcesses,
        Shape::KernelsOnPids,
        Shape::Nested,
        Shape::NestedInStep,
        Shape::Lanes,
        Shape::CpuPids,
    ] {
        seeds.push(common::shape(kind, 40));
    }
    seeds
}

fn mutate(bytes: &mut Vec<u8>, rng: &mut Rng) {
    const STRUCTURE: &[u8] = b"\"\"\\\\{}[],,::  \n\x01\xc3\xa9e-.0N";
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(bytes.len() as i64 + 1) as usize;
        let at = at.min(bytes.len());
        let pick = STRUCTURE[rng.below(STRUCTURE.len() as i64) as usize];
        match rng.below(9) {
            0 if at < bytes.len() => bytes[at] = rng.next() as u8,
            1 => bytes.insert(at, pick),
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            3 if at < bytes.len() => bytes[at] = pick,
            4 => bytes.truncate(at.max(1)),
            5 => {
                let odd: &[u8] = [
                    &b"1e400"[..],
                    b"-0",
                    b"99999999999999999999999999",
                    b"1.7976931348623157e309",
                    b"NaN",
                    b"\"7\"",
                    b"-",
                ][rng.below(7) as usize];
                bytes.splice(at..at, odd.iter().copied());
            }
            6 => {
                // Deep nesting, closed or not.
                let depth = 1 + rng.below(5000) as usize;
                let open = if rng.below(2) == 0 { b'[' } else { b'{' };
                let mut deep = vec![open; depth];
                if rng.below(2) == 0 {
                    deep.extend(std::iter::repeat_n(open + 2, depth));
                }
                bytes.splice(at..at, deep);
            }
            7 => {
                // A stretch repeated or moved.
                let end = (at + rng.below(300) as usize).min(bytes.len());
                let piece = bytes[at..end].to_vec();
                let to = rng.below(bytes.len() as i64 + 1) as usize;
                bytes.splice(to.min(bytes.len())..to.min(bytes.len()), piece);
            }
            _ => {
                // A run of backslashes or quotes.
                let run = vec![pick; 1 + rng.below(70) as usize];
                bytes.splice(at..at, run);
            }
        }
    }
}

fn parse(bytes: &[u8], reader: Reader, rng: &mut Rng) -> String {
    let mut p = Parser::with_reader(reader);
    let mut i = 0;
    while i < bytes.len() {
        let most = if rng.below(4) == 0 { 64 } else { 9000 };
        let n = 1 + rng.below(most) as usize;
        let end = (i + n).min(bytes.len());
        p.feed(&bytes[i..end]);
        i = end;
    }
    match p.finish() {
        Ok(t) => full_dump(&t),
        Err(e) => format!("error: {e}"),
    }
}

/// Runs `count` inputs; returns how many were traces and the slowest input's time.
fn fuzz(count: usize, seed: u64) -> (usize, Duration) {
    let seeds = seeds();
    let paths = SimdPath::available();
    let mut rng = Rng(seed | 1);
    let (mut traces, mut slowest) = (0, Duration::ZERO);
    for n in 0..count {
        let mut bytes = seeds[rng.below(seeds.len() as i64) as usize].clone();
        mutate(&mut bytes, &mut rng);
        let chunking = rng.next() | 1;
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            let want = parse(&bytes, Reader::Objects, &mut Rng(chunking));
            for &path in &paths {
                let got = parse(&bytes, Reader::Direct(path), &mut Rng(chunking ^ 0x55));
                assert!(got == want, "{path:?} differs from the oracle");
            }
            want
        });
        let took = started.elapsed();
        slowest = slowest.max(took);
        match outcome {
            Ok(model) => traces += !model.starts_with("error") as usize,
            Err(_) => {
                let path = std::env::temp_dir().join(format!("sightline-fuzz-{seed}-{n}.json"));
                std::fs::write(&path, &bytes).unwrap();
                panic!("input {n} failed; kept in {}", path.display());
            }
        }
    }
    (traces, slowest)
}

#[test]
fn mutated_pieces_of_real_traces_read_alike_on_every_path() {
    let count = 3000;
    let (traces, slowest) = fuzz(count, 0x0dd_ba11);
    assert!(
        traces * 2 > count,
        "only {traces} of {count} inputs were traces"
    );
    assert!(
        slowest < Duration::from_secs(20),
        "an input took {slowest:?}"
    );
}

#[test]
#[ignore]
fn fuzz_long() {
    let count = std::env::var("SIGHTLINE_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let started = Instant::now();
    let (traces, slowest) = fuzz(count, 0x5eed_0000_0001);
    println!(
        "{count} inputs ({traces} read as traces) in {:.0?}; slowest input {slowest:?}",
        started.elapsed()
    );
}

/// Replays a kept input: `SIGHTLINE_FUZZ_REPLAY=file cargo test --test it -- --ignored fuzz::replay`.
#[test]
#[ignore]
fn replay() {
    let Ok(path) = std::env::var("SIGHTLINE_FUZZ_REPLAY") else {
        return;
    };
    let bytes = std::fs::read(path).unwrap();
    let whole = |reader| common::parse_dump(&bytes, reader, bytes.len());
    let want = whole(Reader::Objects);
    for path in SimdPath::available() {
        let got = whole(Reader::Direct(path));
        if got != want {
            for (a, b) in want
                .lines()
                .zip(got.lines())
                .filter(|(a, b)| a != b)
                .take(5)
            {
                println!("{path:?}\n  oracle: {a}\n  got:    {b}");
            }
        }
    }
    for seed in 1..200u64 {
        for reader in std::iter::once(Reader::Objects)
            .chain(SimdPath::available().into_iter().map(Reader::Direct))
        {
            let got = parse(&bytes, reader, &mut Rng(seed * 2 + 1));
            if got != want {
                println!("{reader:?} in chunks (seed {seed}) differs");
                for (a, b) in want
                    .lines()
                    .zip(got.lines())
                    .filter(|(a, b)| a != b)
                    .take(3)
                {
                    println!("  whole:   {a}\n  chunked: {b}");
                }
                return;
            }
        }
    }
}
