//! The direct reader against the reader before it (`Reader::Objects`, the oracle): on every
//! fixture, the shared traces and the damaged corpus, every SIMD path and several chunkings give
//! the model the oracle gives, diagnostics included.

use crate::common;

use common::{local_fixture, parse_dump as parse};
use sightline::parse::{Reader, SimdPath};

fn files() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = common::all_shared_traces()
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    for dir in ["parse", "devices", "rows"] {
        for e in std::fs::read_dir(local_fixture(dir)).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.ends_with(".json") || n.ends_with(".json.gz") {
                files.push((n, std::fs::read(&p).unwrap()));
            }
        }
    }
    files
}

#[test]
fn every_path_and_chunking_gives_the_oracles_model() {
    let paths = SimdPath::available();
    assert!(
        paths.len() >= 2 || !cfg!(target_arch = "x86_64"),
        "{paths:?}"
    );
    for (name, bytes) in files() {
        let want = parse(&bytes, Reader::Objects, 1 << 20);
        // The largest traces on the fastest path only, and small chunks on small files: the
        // unoptimized test build reads a few MB/s.
        let large = bytes.len() > 2 << 20;
        for &path in &paths {
            if large && path != SimdPath::best() {
                continue;
            }
            for chunk in [1 << 20, 4093] {
                if large && chunk < 1 << 20 {
                    continue;
                }
                let got = parse(&bytes, Reader::Direct(path), chunk);
                assert!(got == want, "{name}: {path:?} in chunks of {chunk} differs");
            }
        }
    }
}

#[test]
fn damaged_copies_give_the_oracles_model() {
    // Cuts, flips and inserted structure in a real trace: whatever damage does to the model, the
    // direct reader does the same as the oracle.
    let bytes = std::fs::read(local_fixture("parse/control_chars_and_na.json")).unwrap();
    let sample = common::gunzip(
        &std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("www/samples/tracelens_h100_bert_small_stack_mem.json.gz"),
        )
        .unwrap(),
    );
    let mut rng = common::Rng(0x5eed);
    let special = b"\"\\{}[],: \n\x01x0\xc3";
    for base in [&bytes, &sample[..sample.len().min(200_000)].to_vec()] {
        for _ in 0..40 {
            let mut b = base.clone();
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(b.len() as i64) as usize;
                let c = special[rng.below(special.len() as i64) as usize];
                match rng.below(3) {
                    0 => b[at] = c,
                    1 => b.insert(at, c),
                    _ => {
                        b.remove(at);
                    }
                }
            }
            let want = parse(&b, Reader::Objects, 1 << 20);
            for path in SimdPath::available() {
                assert!(parse(&b, Reader::Direct(path), 1 << 20) == want, "{path:?}");
            }
        }
    }
}

#[test]
fn gzip_inflated_outside_gives_the_files_model() {
    // The page inflates `.gz` in a worker of its own and feeds the JSON with the compressed bytes
    // read so far (`feed_inflated`): statistics and diagnostics included, the model is the one
    // the file itself gives. Compressed slices of two sizes, so the inflated pieces are cut
    // anywhere.
    use std::io::Write;
    let mut seen = 0;
    for (name, bytes) in files() {
        if !bytes.starts_with(&[0x1f, 0x8b]) {
            continue;
        }
        seen += 1;
        let want = parse(&bytes, Reader::default(), 1 << 20);
        for slice in [1 << 16, 7919] {
            let mut p = sightline::parse::Parser::new();
            let mut inflater = flate2::write::MultiGzDecoder::new(Vec::new());
            let mut read = 0;
            for c in bytes.chunks(slice) {
                inflater.write_all(c).unwrap();
                read += c.len() as u64;
                let json = std::mem::take(inflater.get_mut());
                p.feed_inflated(&json, read).unwrap();
            }
            let rest = inflater.finish().unwrap();
            p.feed_inflated(&rest, read).unwrap();
            let got = match p.finish() {
                Ok(t) => common::full_dump(&t),
                Err(e) => format!("error: {e}"),
            };
            assert!(got == want, "{name}: inflated in slices of {slice} differs");
        }
    }
    assert!(seen >= 5, "only {seen} gzip files");
}

#[test]
fn inflated_json_does_not_follow_a_files_bytes() {
    let mut p = sightline::parse::Parser::new();
    p.feed(b"[{");
    assert!(p.feed_inflated(b"\"ph\":\"X\"}]", 10).is_err());
    // An empty gzip stream is the error the file itself gives.
    let mut p = sightline::parse::Parser::new();
    p.feed_inflated(&[], 20).unwrap();
    let e = p.finish().unwrap_err();
    assert_eq!(e.kind, sightline::parse::ErrorKind::CorruptGzip, "{e}");
}
