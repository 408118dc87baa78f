//! The parser against real traces, one hand-made file per pathology, chunking, and non-traces.

use crate::common;

use common::{all_shared_traces, dump, gunzip, local_fixture};
use sightline::model::DiagKind;
use sightline::parse::{parse_bytes, ErrorKind, Parser};

fn parse_file(name: &str) -> sightline::model::Trace {
    let bytes = std::fs::read(local_fixture(&format!("parse/{name}"))).unwrap();
    parse_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check(name: &str, expected: &str) {
    let got = dump(&parse_file(name));
    assert_eq!(got.trim(), expected.trim(), "\n--- {name} got:\n{got}");
}

#[test]
fn every_shared_fixture_counts_its_events_exactly() {
    let traces = all_shared_traces();
    assert!(traces.len() >= 17, "fixtures missing: {traces:?}");
    for path in traces {
        let bytes = std::fs::read(&path).unwrap();
        let trace = parse_bytes(&bytes).unwrap();
        // An independent count: serde_json reads the whole document at once.
        let doc: serde_json::Value = serde_json::from_slice(&gunzip(&bytes)).unwrap();
        let expected = doc["traceEvents"].as_array().unwrap().len() as u64;
        assert_eq!(trace.stats.events_total, expected, "{}", path.display());
        assert!(
            trace.stats.gzipped && !trace.stats.truncated,
            "{}",
            path.display()
        );
        assert_eq!(trace.diagnostics.count(DiagKind::UnreadableEvent), 0);
        for (li, lane) in trace.lanes.iter().enumerate() {
            let s = trace.slices_of(lane);
            for i in 1..s.len() {
                assert!(
                    (s.start_ns[i - 1], s.depth[i - 1]) <= (s.start_ns[i], u16::MAX),
                    "lane {li} not sorted at {i} in {}",
                    path.display()
                );
            }
            assert!(
                s.start_ns.iter().all(|&t| t >= 0),
                "time is rebased to the trace start"
            );
        }
    }
}

#[test]
fn real_gpu_traces_have_gpu_lanes_and_flows() {
    let t = common::shared_trace("real/hta_v100_train_1rank_ns_resolution.pt.trace.json.gz");
    assert!(t.gpu_lanes().count() >= 1);
    assert!(!t.lanes[0].is_gpu(), "CPU lanes come first");
    let ac2g = t.strings.find("ac2g").unwrap();
    let kernel = t.strings.find("kernel").unwrap();
    let bound = t.flows.iter().filter(|f| f.cat == ac2g).count();
    assert!(bound > 1000, "ac2g flows bound: {bound}");
    // Every ac2g flow ends on a GPU op with the same correlation as the runtime call it starts from.
    for f in t.flows.iter().filter(|f| f.cat == ac2g) {
        let from = t.slices(f.from.lane as usize);
        let to = t.slices(f.to.lane as usize);
        assert_eq!(
            from.correlation[f.from.index as usize],
            to.correlation[f.to.index as usize]
        );
        assert!(t.lanes[f.to.lane as usize].is_gpu());
        let _ = kernel;
    }
}

#[test]
fn trailing_comma_is_accepted() {
    check(
        "trailing_comma.json",
        r#"
lane 0 Cpu pid=1 tid=1 "thread 1" rows=2
  0 +5000 d0 "a" cat="cpu_op" ext=-1 corr=-1 dims="" args=-
  1000 +1000 d1 "b" cat="cpu_op" ext=-1 corr=-1 dims="" args=-
events 2 truncated=false
"#,
    );
}

#[test]
fn a_cut_off_last_event_is_skipped_and_reported() {
    let t = parse_file("truncated_mid_event.json");
    assert!(t.stats.truncated);
    assert_eq!(t.stats.events_total, 2);
    let d = &t.diagnostics.items[0];
    assert_eq!(d.kind, DiagKind::Truncated);
    assert!(d.detail.contains("ends inside an event"), "{}", d.detail);
    assert_eq!(t.slices(0).len(), 2);
}

#[test]
fn an_array_without_its_closing_bracket_keeps_every_event() {
    check(
        "truncated_array.json",
        r#"
lane 0 Cpu pid=1 tid=1 "thread 1" rows=1
  0 +2000 d0 "a" cat="" ext=-1 corr=-1 dims="" args=-
  3000 +2000 d0 "b" cat="" ext=-1 corr=-1 dims="" args=-
diag Truncated x1 @131
events 2 truncated=true
"#,
    );
}

#[test]
fn control_characters_and_bare_na_are_repaired() {
    check(
        "control_chars_and_na.json",
        r#"
lane 0 Cpu pid=1 tid=1 "thread 1" rows=1
  0 +2000 d0 "tab\there" cat="cpu_op" ext=-1 corr=-1 dims="" args={"Input type":null,"note":"line\u000abreak"}
  4000 +1000 d0 "ok" cat="cpu_op" ext=-1 corr=-1 dims="" args=-
diag RepairedEvent x1 @17
events 2 truncated=false
"#,
    );
}

#[test]
fn integers_wider_than_64_bits_do_not_lose_the_event() {
    check(
        "wide_ints.json",
        r#"
lane 0 Cpu pid=10 tid=10 "thread 10" rows=1
  0 +5000 d0 "cudaLaunchKernel" cat="cuda_runtime" ext=9 corr=5 dims="" args={"correlation":5,"External id":9}
lane 1 GpuStream { device: 0, stream: 7 } pid=0 tid=7 "GPU 0 stream 7" rows=1
  10500 +20250 d0 "ncclKernel_AllReduce" cat="kernel" ext=9 corr=5 dims="" args={"Comms Id":123456789012345678901234567890,"correlation":5,"External id":9,"device":0,"stream":7}
events 2 truncated=false
"#,
    );
}

#[test]
fn begin_end_pairs_instants_counters_and_ignored_phases() {
    check(
        "begin_end.json",
        r#"
lane 0 Cpu pid=1 tid=2 "thread 2" rows=2
  0 +10000 d0 "outer" cat="" ext=-1 corr=-1 dims="" args=-
  1000 +2000 d1 "inner" cat="" ext=-1 corr=-1 dims="" args=-
  12000 +8000 d0 "never closed" cat="" ext=-1 corr=-1 dims="" args=-
instant 20000 lane 0 "mark"
counter 1 mem.free [5000] [3.0]
counter 1 mem.used [5000] [10.0]
diag UnmatchedEnd x1 @210
diag IgnoredPhase x1 @392
diag UnclosedBegin x1 @0
events 9 truncated=false
"#,
    );
}

#[test]
fn overlapping_kernels_get_rows_of_their_own() {
    check(
        "overlap_gpu.json",
        r#"
lane 0 GpuStream { device: 0, stream: 7 } pid=0 tid=7 "GPU 0 stream 7" rows=3
  0 +10000 d0 "k1" cat="kernel" ext=-1 corr=-1 dims="" args=-
  5000 +10000 d1 "k2" cat="kernel" ext=-1 corr=-1 dims="" args=-
  12000 +1000 d2 "k3" cat="kernel" ext=-1 corr=-1 dims="" args=-
  20000 +1000 d0 "k4" cat="kernel" ext=-1 corr=-1 dims="" args=-
diag OverlappingSlice x1 @0
events 5 truncated=false
"#,
    );
}

#[test]
fn legacy_schema_with_string_ids_and_epoch_microseconds() {
    let t = parse_file("legacy_strings.json");
    assert_eq!(t.meta.schema, "pytorch-1.8-1.9");
    assert_eq!(t.meta.origin_ns, 1_623_143_089_861_000_000);
    check(
        "legacy_strings.json",
        r#"
lane 0 Cpu pid=42 tid=42 "42" rows=2
  0 +30000 d0 "aten::mm" cat="Operator" ext=3 corr=-1 dims="[[2, 3], [3, 4]]" args={"external id":3,"Input Dims":[[2,3],[3,4]]}
  5000 +4000 d1 "cudaLaunchKernel" cat="Runtime" ext=3 corr=77 dims="" args={"correlation":77,"external id":3}
lane 1 GpuStream { device: 0, stream: 7 } pid=0 tid=7 "GPU 0 stream 7" rows=1
  40000 +12000 d0 "gemm" cat="Kernel" ext=3 corr=77 dims="" args={"correlation":77,"external id":3,"device":0,"stream":7}
lane 2 Cpu pid=-1 tid=-2 "PyTorch Profiler" rows=1
  0 +60000 d0 "PyTorch Profiler (0)" cat="Trace" ext=-1 corr=-1 dims="" args=-
flow async 77 SliceRef { lane: 0, index: 1 } -> SliceRef { lane: 1, index: 0 }
events 6 truncated=false
"#,
    );
}

#[test]
fn envelope_keys_may_follow_the_events() {
    let t = parse_file("keys_after_events.json");
    assert_eq!(t.stats.events_total, 1);
    assert_eq!(t.rank(), 3);
    assert_eq!(t.meta.device_properties[0].name, "NVIDIA H100");
    assert_eq!(
        t.meta.device_properties[0].total_global_mem,
        Some(85_000_000_000)
    );
    assert_eq!(t.meta.base_time_ns, Some(1_700_000_000_000_000_000));
    assert!(t.diagnostics.is_empty());
}

fn error_of(bytes: &[u8]) -> (ErrorKind, String) {
    let e = parse_bytes(bytes).expect_err("must be refused");
    (e.kind, e.message)
}

#[test]
fn non_traces_get_one_clear_error() {
    let cases: Vec<(Vec<u8>, ErrorKind, &str)> = vec![
        (vec![], ErrorKind::Empty, "empty"),
        (b"   \n".to_vec(), ErrorKind::Empty, "whitespace"),
        (
            std::fs::read(local_fixture("parse/page.html")).unwrap(),
            ErrorKind::NotJson,
            "HTML",
        ),
        (
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(),
            ErrorKind::NotJson,
            "PNG image",
        ),
        (
            (0..2000u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80)
                .collect(),
            ErrorKind::NotJson,
            "binary",
        ),
        (
            std::fs::read(local_fixture("parse/other.json")).unwrap(),
            ErrorKind::NotATrace,
            "a JSON object without a traceEvents array",
        ),
        (
            b"[1, 2, 3]".to_vec(),
            ErrorKind::NotATrace,
            "not trace events",
        ),
        (
            b"\x1f\x8b\x08\x00garbage-not-deflate".to_vec(),
            ErrorKind::CorruptGzip,
            "gzip",
        ),
    ];
    for (bytes, kind, needle) in cases {
        let (k, msg) = error_of(&bytes);
        assert_eq!(k, kind, "{msg}");
        assert!(msg.contains(needle), "{msg:?} should mention {needle:?}");
    }
}

#[test]
fn deep_nesting_is_not_a_crash() {
    let mut s = String::from("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": ");
    s.push_str(&"[".repeat(100_000));
    s.push_str(&"]".repeat(100_000));
    s.push_str(
        "}, {\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1}]}",
    );
    // The splitter counts depth instead of recursing; serde_json skips the raw args iteratively.
    let t = parse_bytes(s.as_bytes()).unwrap();
    assert_eq!(t.stats.events_total, 2);
    assert_eq!(t.slices(0).len(), 2);
}

#[test]
fn a_gzip_stream_cut_anywhere_keeps_what_came_before() {
    let path = common::shared_fixtures().join("real/tracelens_h100_bert_small_stack_mem.json.gz");
    let bytes = std::fs::read(path).unwrap();
    let full = parse_bytes(&bytes).unwrap().stats.events_total;
    let mut last = 0;
    for frac in [0.2, 0.5, 0.9, 0.999] {
        let cut = (bytes.len() as f64 * frac) as usize;
        let t = parse_bytes(&bytes[..cut]).unwrap();
        assert!(t.stats.truncated, "cut at {cut}");
        assert!(t.diagnostics.count(DiagKind::Truncated) >= 1);
        // A cut in the last block or the trailer may leave every event readable.
        assert!(
            t.stats.events_total > last && t.stats.events_total <= full,
            "cut at {cut}"
        );
        last = t.stats.events_total;
    }
}

/// Feeds `bytes` in chunks whose sizes come from a small deterministic generator.
fn parse_chunked(bytes: &[u8], seed: u64, max: usize) -> sightline::model::Trace {
    let mut p = Parser::new();
    let mut rng = common::Rng(seed);
    let mut i = 0;
    while i < bytes.len() {
        let n = 1 + rng.below(max as i64) as usize;
        let end = (i + n).min(bytes.len());
        p.feed(&bytes[i..end]);
        i = end;
    }
    p.finish().unwrap()
}

#[test]
fn the_model_does_not_depend_on_chunking() {
    let shared = common::shared_fixtures();
    let files = [
        shared.join("real/tracelens_h100_bert_small_stack_mem.json.gz"),
        shared.join("real/hta_a100_alexnet_cuda_sync.json.gz"),
        local_fixture("parse/legacy_strings.json"),
        local_fixture("parse/control_chars_and_na.json"),
        local_fixture("parse/truncated_mid_event.json"),
        local_fixture("parse/begin_end.json"),
        // Braces and quotes where a scanner might count them differently from another.
        local_fixture("parse/odd_structures.json"),
    ];
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let whole = dump(&parse_bytes(&bytes).unwrap());
        for (seed, max) in [(1, 1), (2, 7), (3, 4096), (4, 65536)] {
            // One-byte chunks on the big inputs would only repeat what small files prove.
            if max == 1 && bytes.len() > 100_000 {
                continue;
            }
            let got = dump(&parse_chunked(&bytes, seed, max));
            assert!(
                got == whole,
                "{} differs with chunks up to {max}",
                f.display()
            );
        }
        // The decompressed text, chunked, gives the same model as the gzip.
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let plain = dump(&parse_chunked(&gunzip(&bytes), 9, 3000));
            assert!(plain == whole, "{}: plain and gzip differ", f.display());
        }
    }
}

/// The size told up front only sizes the columns: one far too small (they grow as they fill), a
/// third of the file (the projection falls short and grows again), or fifty times too large
/// (spare room), each gives the model read without one.
#[test]
fn a_wrong_size_told_up_front_changes_nothing_but_memory() {
    let shared = common::shared_fixtures();
    let inputs = [
        gunzip(
            &std::fs::read(shared.join("real/tracelens_h100_bert_small_stack_mem.json.gz"))
                .unwrap(),
        ),
        std::fs::read(local_fixture("parse/begin_end.json")).unwrap(),
        std::fs::read(local_fixture("parse/truncated_mid_event.json")).unwrap(),
    ];
    for bytes in &inputs {
        let told = |size: u64| {
            let mut p = Parser::new();
            p.expect_size(size);
            for chunk in bytes.chunks(64 << 10) {
                p.feed(chunk);
            }
            dump(&p.finish().unwrap())
        };
        let untold = dump(&parse_chunked(bytes, 5, 65536));
        let len = bytes.len() as u64;
        for size in [0, 1, len / 3, len, len * 50] {
            assert!(told(size) == untold, "told {size} of {len} bytes");
        }
    }
}

#[test]
fn a_parse_on_several_threads_equals_the_one_thread_parse() {
    let mut files = common::real_plain_traces();
    for f in [
        "keys_after_events.json",
        "legacy_strings.json",
        "truncated_array.json",
        "begin_end.json",
    ] {
        files.push((
            f.to_string(),
            std::fs::read(local_fixture(&format!("parse/{f}"))).unwrap(),
        ));
    }
    for (name, bytes) in &files {
        let one = common::full_dump(&parse_bytes(bytes).unwrap());
        for parts in [2, 5] {
            let open = |offset: u64| -> std::io::Result<std::io::Cursor<&[u8]>> {
                Ok(std::io::Cursor::new(&bytes[offset as usize..]))
            };
            let many = sightline::parse::parse_parallel_with(&open, bytes.len() as u64, parts, 0)
                .unwrap()
                .unwrap();
            // Real traces are cut as asked; B/E pairs and tiny files fall back to one thread.
            let expect = if name.ends_with(".gz") {
                parts as u32
            } else {
                1
            };
            let tiny_but_cut = !name.ends_with(".gz") && many.stats.threads > 1;
            assert!(
                many.stats.threads == expect || tiny_but_cut,
                "{name}: {} threads",
                many.stats.threads
            );
            if name == "begin_end.json" {
                assert_eq!(many.stats.threads, 1, "B/E pairs must not be split");
            }
            let mut many_stats = many.stats.clone();
            many_stats.threads = 1;
            let many = sightline::model::Trace {
                stats: many_stats,
                ..many
            };
            assert!(
                common::full_dump(&many) == one,
                "{name} differs when parsed in {parts} parts"
            );
        }
    }
}

/// Large enough that the join and the finish use a second core (over 2^16 slices in each part),
/// with the lanes of the second part met in another order, events out of time order, string
/// tids, args and flows: the result is still the one-thread parse's.
#[test]
fn a_large_parse_on_two_threads_equals_the_one_thread_parse() {
    let mut json = String::from("{\"traceEvents\": [\n");
    let n = 200_000;
    for i in 0..n {
        // The second half meets its lanes in another order, and one of them first.
        let tid = if i < n / 2 { i % 3 } else { 3 - i % 4 };
        let tid = if tid == 2 {
            "\"worker 2\"".to_string()
        } else {
            tid.to_string()
        };
        // Out of time order, so the lane across the middle of the sort holds unsorted runs.
        let ts = ((i * 7919) % n) as f64 * 2.5 + (i % 7) as f64 * 0.125;
        json.push_str(&format!(
            "{{\"ph\": \"X\", \"name\": \"op{}\", \"cat\": \"cpu_op\", \"pid\": 1, \"tid\": {tid}, \
             \"ts\": {ts}, \"dur\": {}, \"args\": {{\"External id\": {i}, \"Input Dims\": [[{}, 3]]}}}},\n",
            i % 97,
            1 + i % 5,
            i % 11
        ));
        if i % 1000 == 0 {
            json.push_str(&format!(
                "{{\"ph\": \"s\", \"id\": {i}, \"pid\": 1, \"tid\": {tid}, \"ts\": {ts}, \"cat\": \"ac2g\", \"name\": \"f\"}},\n\
                 {{\"ph\": \"f\", \"id\": {i}, \"pid\": 1, \"tid\": 0, \"ts\": {}, \"cat\": \"ac2g\", \"name\": \"f\", \"bp\": \"e\"}},\n",
                ts + 1.0
            ));
        }
    }
    json.push_str("{\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 0, \"ts\": 1}]}");
    let bytes = json.into_bytes();
    let one = parse_bytes(&bytes).unwrap();
    // The finish sorts halves of each lane on two threads too: every lane is in order whole.
    for lane in &one.lanes {
        let s = one.slices_of(lane);
        assert!((1..s.len())
            .all(|i| (s.start_ns[i - 1], -s.dur_ns[i - 1]) <= (s.start_ns[i], -s.dur_ns[i])));
    }
    let one_args = one.args.heap_bytes();
    let one = common::full_dump(&one);
    let open = |offset: u64| -> std::io::Result<std::io::Cursor<&[u8]>> {
        Ok(std::io::Cursor::new(&bytes[offset as usize..]))
    };
    // Three parts: the middle one is joined to the first and then has one joined after it.
    for parts in [2, 3] {
        let many = sightline::parse::parse_parallel_with(&open, bytes.len() as u64, parts, 0)
            .unwrap()
            .unwrap();
        assert_eq!(many.stats.threads, parts as u32);
        // The args' memory the summary reports too: each part's spare room is given back.
        assert_eq!(many.args.heap_bytes(), one_args, "{parts} parts");
        let many = sightline::model::Trace {
            stats: sightline::model::ParseStats {
                threads: 1,
                ..many.stats.clone()
            },
            ..many
        };
        assert!(
            common::full_dump(&many) == one,
            "{parts} parts differ from one"
        );
    }
}

#[test]
fn a_thread_in_the_gpu_process_stays_a_thread() {
    // Kineto put a Python thread (tid 0) under pid 0, the process labelled "GPU 0".
    let t = common::shared_trace("real/tracelens_h100_bert_small_stack_mem.json.gz");
    let lane = t
        .lanes
        .iter()
        .find(|l| l.pid == 0 && l.tid == 0)
        .expect("the pid 0 tid 0 lane");
    assert_eq!(lane.kind, sightline::model::LaneKind::Cpu);
    let stream = t.lanes.iter().find(|l| l.pid == 0 && l.tid == 7).unwrap();
    assert_eq!(
        stream.kind,
        sightline::model::LaneKind::GpuStream {
            device: 0,
            stream: 7
        }
    );
}
