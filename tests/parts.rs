//! Parse parts written into buffers and joined (how the page parses one file in several Web
//! Workers): the joined model equals the one-thread parse, and a damaged buffer is an error.

use crate::common;

use common::{full_dump, gunzip, local_fixture, shared_fixtures, Rng};
use sightline::parse::{event_boundary, parse_bytes, splittable, Parser, Part};

/// Real traces (decompressed: parts are for plain JSON) and damaged or unusual local ones.
fn files() -> Vec<(String, Vec<u8>)> {
    let mut files = common::real_plain_traces();
    for f in [
        "keys_after_events.json",
        "legacy_strings.json",
        "truncated_array.json",
        "truncated_mid_event.json",
        "trailing_comma.json",
        "control_chars_and_na.json",
        "huge_times.json",
        "wide_ints.json",
        "odd_structures.json",
        "overlap_gpu.json",
        "begin_end.json",
    ] {
        let bytes = std::fs::read(local_fixture(&format!("parse/{f}"))).unwrap();
        files.push((f.to_string(), bytes));
    }
    files
}

/// The one-thread parse as text, with the thread count the joined parse does not set.
fn one_thread(bytes: &[u8]) -> String {
    full_dump(&parse_bytes(bytes).unwrap())
}

#[test]
fn a_part_written_and_read_back_gives_the_same_model() {
    for (name, bytes) in files() {
        assert!(splittable(&bytes), "{name}");
        let mut part = Part::new(&bytes, 0).unwrap();
        for chunk in bytes.chunks(7919) {
            part.feed(chunk);
        }
        let buffer = part.encode();
        assert_eq!(
            buffer,
            part.encode(),
            "{name}: the same part, the same bytes"
        );
        let mut p = Parser::new();
        assert!(p.absorb_part(buffer.clone()).unwrap(), "{name}");
        let joined = full_dump(&p.finish().unwrap());
        assert!(
            joined == one_thread(&bytes),
            "{name} differs after a round trip"
        );
    }
}

/// Parses `bytes` as the page does with `parts` workers: cuts at guessed event boundaries, the
/// first range fed to the parser, each other range parsed as a part, written out, and joined.
/// `None` when a join was refused (the page then reads the file with one parser).
fn parse_in_parts(bytes: &[u8], parts: usize) -> Option<(String, usize)> {
    let len = bytes.len();
    let mut cuts = vec![0];
    for k in 1..parts {
        let guess = len * k / parts;
        let window = &bytes[guess..len.min(guess + (64 << 10))];
        if let Some(at) = event_boundary(window) {
            if guess + at > *cuts.last().unwrap() {
                cuts.push(guess + at);
            }
        }
    }
    cuts.push(len);
    let mut parser = Parser::new();
    for chunk in bytes[..cuts[1]].chunks(1 << 16) {
        parser.feed(chunk);
    }
    for w in cuts[1..].windows(2) {
        let mut part = Part::new(&bytes[..16.min(len)], w[0] as u64).unwrap();
        for chunk in bytes[w[0]..w[1]].chunks(1 << 16) {
            part.feed(chunk);
        }
        if !parser.absorb_part(part.encode()).unwrap() {
            return None;
        }
    }
    let mut t = parser.finish().unwrap();
    let n = t.stats.threads as usize;
    assert_eq!(n, cuts.len() - 1, "one reader per part");
    t.stats.threads = 1;
    Some((full_dump(&t), n))
}

#[test]
fn parts_joined_in_order_equal_the_one_thread_parse() {
    for (name, bytes) in files() {
        let one = one_thread(&bytes);
        for parts in [2, 7] {
            match parse_in_parts(&bytes, parts) {
                Some((joined, n)) => {
                    assert!(joined == one, "{name} differs when joined from {n} parts");
                }
                None => {
                    // Refused joins are the ones the threads refuse too: B/E pairs, and cuts a
                    // guess put inside a string (never in these files but the legacy one).
                    assert!(
                        [
                            "begin_end.json",
                            "legacy_strings.json",
                            "odd_structures.json"
                        ]
                        .contains(&name.as_str())
                            || bytes.len() < 4096,
                        "{name}: a join was refused in {parts} parts"
                    );
                }
            }
        }
        if name.ends_with(".gz") {
            let (_, n) = parse_in_parts(&bytes, 3).expect("real traces are joined");
            assert_eq!(n, 3, "{name} was cut in 3");
        }
    }
}

#[test]
fn a_part_that_does_not_start_where_the_parser_stopped_is_refused() {
    let bytes = gunzip(
        &std::fs::read(shared_fixtures().join("real/hta_a100_nccl_rank0of2.json.gz")).unwrap(),
    );
    let at = bytes.len() / 2 + event_boundary(&bytes[bytes.len() / 2..]).unwrap();
    let mut part = Part::new(&bytes, at as u64).unwrap();
    part.feed(&bytes[at..]);
    let buffer = part.encode();
    // Fed one byte too few: the part does not follow.
    let mut p = Parser::new();
    p.feed(&bytes[..at - 1]);
    assert!(!p.absorb_part(buffer.clone()).unwrap());
    // Fed exactly up to it: it does.
    let mut p = Parser::new();
    p.feed(&bytes[..at]);
    assert!(p.absorb_part(buffer.clone()).unwrap());
    let mut t = p.finish().unwrap();
    assert_eq!(t.stats.threads, 2, "read by two");
    t.stats.threads = 1;
    assert!(full_dump(&t) == one_thread(&bytes));
    // A gzip stream is never joined.
    let gz = std::fs::read(shared_fixtures().join("real/hta_a100_nccl_rank0of2.json.gz")).unwrap();
    assert!(!splittable(&gz));
    let mut p = Parser::new();
    p.feed(&gz[..100]);
    assert!(!p.absorb_part(buffer.clone()).unwrap());
}

/// The first 400 KB of a real trace's JSON: big enough for every kind of record in a part.
fn real_head() -> Vec<u8> {
    let mut real = gunzip(
        &std::fs::read(shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz"))
            .unwrap(),
    );
    real.truncate(400 << 10);
    real
}

/// `buffer` with one to three bits flipped at random places.
fn flipped(buffer: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = buffer.to_vec();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(b.len() as i64) as usize;
        b[i] ^= 1 << rng.below(8);
    }
    b
}

#[test]
fn a_damaged_buffer_is_an_error_never_a_panic() {
    let bytes = std::fs::read(local_fixture("parse/keys_after_events.json")).unwrap();
    let real = real_head();
    for input in [&bytes[..], &real[..]] {
        let mut part = Part::new(input, 0).unwrap();
        part.feed(input);
        let buffer = part.encode();
        // Cut anywhere: always an error (the reader knows where a part ends).
        let step = (buffer.len() / 3000).max(1);
        for n in (0..buffer.len()).step_by(step) {
            let err = Parser::new().absorb_part(buffer[..n].to_vec());
            assert!(
                err.is_err(),
                "a part cut at {n} of {} was read",
                buffer.len()
            );
        }
        let mut longer = buffer.clone();
        longer.push(0);
        assert!(Parser::new().absorb_part(longer).is_err());
        let mut other = buffer.clone();
        other[6] = 99;
        let e = Parser::new().absorb_part(other).unwrap_err().to_string();
        assert!(e.contains("format version 99"), "{e}");
        // Bytes changed anywhere: an error, or a model (a changed name or time is still a
        // part), never a panic here or in the model build.
        let mut rng = Rng(7);
        for _ in 0..3000 {
            let b = flipped(&buffer, &mut rng);
            let mut p = Parser::new();
            if let Ok(true) = p.absorb_part(b.clone()) {
                let _ = p.finish();
            }
        }
    }
}

/// A damaged part joined after what a parser read (the page's loading worker) is refused before
/// anything of it is copied, or read as a part: never a panic, and a refused part leaves the
/// parser as it was. Its slices and args are copied straight from the buffer at the join, so
/// they are checked where they lie.
#[test]
fn a_damaged_part_joined_after_a_read_is_refused_whole_or_read() {
    let real = real_head();
    let cut = real.len() / 2;
    let cut = cut + event_boundary(&real[cut..]).unwrap();
    let mut part = Part::new(&real[..16], cut as u64).unwrap();
    part.feed(&real[cut..]);
    let buffer = part.encode();
    let first = || {
        let mut p = Parser::new();
        p.feed(&real[..cut]);
        p
    };
    let alone = full_dump(&first().finish().unwrap());
    let mut rng = Rng(11);
    for k in 0..400 {
        let b = flipped(&buffer, &mut rng);
        let mut p = first();
        match p.absorb_part(b.clone()) {
            Ok(true) => {
                let _ = p.finish();
            }
            _ => {
                // Refused: what the parser read before is what it holds.
                if k % 20 == 0 {
                    assert!(
                        full_dump(&p.finish().unwrap()) == alone,
                        "a refused part changed the parse"
                    );
                }
            }
        }
    }
}
