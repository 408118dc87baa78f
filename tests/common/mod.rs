//! Shared test helpers: where the fixtures are, and a compact dump of a model for snapshots.
#![allow(dead_code)] // Each test binary uses a different subset of these helpers.

use sightline::model::Trace;
use std::path::{Path, PathBuf};

/// The shared fixtures folder: `$SIGHTLINE_FIXTURES`, else the nearest `shared/fixtures` above the crate.
pub fn shared_fixtures() -> PathBuf {
    if let Ok(p) = std::env::var("SIGHTLINE_FIXTURES") {
        return PathBuf::from(p);
    }
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let candidate = dir.join("shared/fixtures");
        if candidate.is_dir() {
            return candidate;
        }
        if !dir.pop() {
            panic!(
                "no shared/fixtures above {}; set SIGHTLINE_FIXTURES",
                env!("CARGO_MANIFEST_DIR")
            );
        }
    }
}

/// The trace at `name` under the shared fixtures (`real/...`), parsed.
pub fn shared_trace(name: &str) -> Trace {
    let path = shared_fixtures().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    sightline::parse::parse_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn local_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every trace file under the shared fixtures (the GPU training traces of `gpu-training/`
/// included).
pub fn all_shared_traces() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["real", "pytorch-cpu", "gpu-training"] {
        let dir = shared_fixtures().join(sub);
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.ends_with(".json.gz")
                || (n.ends_with(".json") && !n.contains("truth") && !n.contains("reference"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A compact, stable text rendering of a model: lanes with their slices, flows, diagnostics.
pub fn dump(t: &Trace) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for (li, l) in t.lanes.iter().enumerate() {
        let name = sightline::analysis::summary::lane_name(t, li);
        writeln!(
            s,
            "lane {li} {:?} pid={} tid={} {name:?} rows={}",
            l.kind, l.pid, l.tid, l.rows
        )
        .unwrap();
        let sl = t.slices_of(l);
        for i in 0..sl.len() {
            writeln!(
                s,
                "  {} +{} d{} {:?} cat={:?} ext={} corr={} dims={:?} args={}",
                sl.start_ns[i],
                sl.dur_ns[i],
                sl.depth[i],
                t.str(sl.name[i]),
                t.str(sl.cat[i]),
                sl.external_id[i],
                sl.correlation[i],
                t.str(sl.input_dims[i]),
                args_text(t, sl.args[i]),
            )
            .unwrap();
        }
    }
    for f in &t.flows {
        writeln!(
            s,
            "flow {} {} {:?} -> {:?}",
            t.str(f.cat),
            f.id,
            f.from,
            f.to
        )
        .unwrap();
    }
    for i in &t.instants {
        writeln!(s, "instant {} lane {} {:?}", i.ts_ns, i.lane, t.str(i.name)).unwrap();
    }
    for c in &t.counters {
        writeln!(
            s,
            "counter {} {}.{} {:?} {:?}",
            c.pid, c.name, c.series, c.ts_ns, c.values
        )
        .unwrap();
    }
    for d in &t.diagnostics.items {
        writeln!(s, "diag {:?} x{} @{}", d.kind, d.count, d.first_offset).unwrap();
    }
    writeln!(
        s,
        "events {} truncated={}",
        t.stats.events_total, t.stats.truncated
    )
    .unwrap();
    s
}

/// The args of a slice as stored, without the whitespace outside strings, or `-`.
pub fn args_text(t: &Trace, id: sightline::model::ArgsId) -> String {
    let Some(text) = t.args.json(id) else {
        return "-".into();
    };
    let (mut out, mut in_str, mut esc) = (String::new(), false, false);
    for c in text.chars() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (true, false, '"') | (false, _, '"') => in_str = !in_str,
            (false, _, c) if c.is_whitespace() => continue,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// xorshift64*: a deterministic generator for property tests, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is not positive).
    pub fn below(&mut self, n: i64) -> i64 {
        (self.next() % n.max(1) as u64) as i64
    }
}

/// Everything a model holds, as text, for comparing two parses.
pub fn full_dump(t: &sightline::model::Trace) -> String {
    let strings: Vec<&str> = (0..t.strings.len())
        .map(|i| t.str(sightline::model::StrId(i as u32)))
        .collect();
    format!(
        "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        dump(t),
        strings,
        t.processes,
        t.meta,
        t.stats,
        t.memory,
        t.diagnostics
    )
}

/// `bytes` gunzipped (one or more gzip members).
pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// Real traces of several kinds (CUDA training, NCCL, H100 with Python frames and memory, a CPU
/// job), decompressed: what a parse cut into ranges (threads, parts) is checked on.
pub fn real_plain_traces() -> Vec<(String, Vec<u8>)> {
    let shared = shared_fixtures();
    [
        "real/hta_v100_train_1rank_ns_resolution.pt.trace.json.gz",
        "real/hta_a100_nccl_rank0of2.json.gz",
        "real/tracelens_h100_bert_small_stack_mem.json.gz",
        "pytorch-cpu/encoder_stack_memory.pt.trace.json.gz",
    ]
    .iter()
    .map(|f| {
        (
            f.to_string(),
            gunzip(&std::fs::read(shared.join(f)).unwrap()),
        )
    })
    .collect()
}

/// Runs the `sightline` binary of this build: exit code (-1 for a signal), stdout, stderr.
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

/// `bytes` parsed by `reader` in chunks of `chunk` bytes, as [`full_dump`] text (or the error).
pub fn parse_dump(bytes: &[u8], reader: sightline::parse::Reader, chunk: usize) -> String {
    let mut p = sightline::parse::Parser::with_reader(reader);
    for c in bytes.chunks(chunk.max(1)) {
        p.feed(c);
    }
    match p.finish() {
        Ok(t) => full_dump(&t),
        Err(e) => format!("error: {e}"),
    }
}

/// The findings of a trace as the rules give them (exact idle time), from its derived store.
pub fn findings(t: &Trace) -> Vec<sightline::analysis::findings::Finding> {
    let d = sightline::analysis::derived::Derived::new(t);
    d.found(&Default::default()).findings.to_vec()
}

/// The worst input shapes for lookups by device, process, lane and depth (`tests/shapes.rs`,
/// and seeds of `tests/fuzz.rs`).
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// One kernel on each device, each device a process of its own.
    DeviceProcesses,
    /// Kernels spread over half as many device processes, two each (the shape has ten
    /// each; two keep the processes many at a size a test can parse).
    KernelsOnPids,
    /// Each slice inside the one before.
    Nested,
    /// The same inside one `ProfilerStep`, which the steps' rules and the critical path read
    /// (their climbs to a slice's root had been quadratic in the nesting).
    NestedInStep,
    /// One slice on each thread of one process.
    Lanes,
    /// CPU operators spread over a tenth as many processes, one thread each (the threads'
    /// callers were found by a scan of the processes for each thread).
    CpuPids,
}

/// A trace of `n` events in `kind`'s shape.
pub fn shape(kind: Shape, n: usize) -> Vec<u8> {
    let pids = (n / 2).max(1);
    let event = |i: usize| {
        match kind {
        Shape::DeviceProcesses => format!(
            "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": {i}, \"tid\": 7, \"ts\": {i}, \"dur\": 1, \"args\": {{\"device\": {i}, \"stream\": 7, \"correlation\": {i}}}}}"
        ),
        Shape::KernelsOnPids => format!(
            "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": {p}, \"tid\": 7, \"ts\": {t}, \"dur\": 5, \"args\": {{\"device\": {p}, \"stream\": 7, \"correlation\": {i}}}}}",
            p = i % pids,
            t = i / pids * 10
        ),
        Shape::Nested => format!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": {i}, \"dur\": {}}}",
            2 * (n - i)
        ),
        Shape::NestedInStep if i == 0 => format!(
            "{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": {}}}",
            2 * n + 2
        ),
        Shape::NestedInStep => format!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": {i}, \"dur\": {}}}",
            2 * (n - i)
        ),
        Shape::CpuPids => format!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": {p}, \"tid\": 1, \"ts\": {t}, \"dur\": 5}}",
            p = i % (n / 10).max(1),
            t = i / (n / 10).max(1) * 10
        ),
        Shape::Lanes => format!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": {i}, \"ts\": {i}, \"dur\": 5}}"
        ),
    }
    };
    let mut out = b"{\"traceEvents\": [\n".to_vec();
    for i in 0..n {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        out.extend_from_slice(event(i).as_bytes());
    }
    out.extend_from_slice(b"\n]}\n");
    out
}

/// A trace's links and its critical-path graph with the steps' windows (the default options).
pub fn analyse(
    trace: &Trace,
) -> (
    sightline::analysis::links::Links,
    sightline::analysis::critical::Analysis,
) {
    use sightline::analysis::{critical, links::Links, steps};
    let links = Links::build(trace);
    let steps = steps::analyze_with(trace, &links);
    let a = critical::Analysis::build(trace, &links, &steps, &Default::default()).unwrap();
    (links, a)
}

/// Checks the part of a document that is written from the code: in `path` (from the repository's
/// root), the lines between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` must be
/// `text`. `SIGHTLINE_BLESS=1` writes `text` there; the rest of the document is written by hand
/// and kept.
pub fn generated_section(path: &str, name: &str, text: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let doc = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (open, close) = (
        format!("<!-- generated:{name} -->\n"),
        format!("<!-- /generated:{name} -->"),
    );
    let start = doc
        .find(&open)
        .unwrap_or_else(|| panic!("{path}: no `{}` line", open.trim()))
        + open.len();
    let end = start
        + doc[start..]
            .find(&close)
            .unwrap_or_else(|| panic!("{path}: no `{close}` line"));
    if std::env::var_os("SIGHTLINE_BLESS").is_some() {
        let blessed = format!("{}{text}{}", &doc[..start], &doc[end..]);
        std::fs::write(&file, blessed).unwrap();
        return;
    }
    assert!(
        doc[start..end] == *text,
        "{path}: the section `{name}` differs from what the code writes; review the difference \
         and rewrite it with SIGHTLINE_BLESS=1"
    );
}
