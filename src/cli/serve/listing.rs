//! LOGDIR as the TensorBoard profiler plugin showed it: runs, their workers, each worker's spans.
//!
//! `torch.profiler.tensorboard_trace_handler(dir)` writes `dir/{worker}.{timestamp}.pt.trace.json[.gz]`,
//! the worker being `{hostname}_{pid}` unless named, one file per worker per profiling span. As in
//! the plugin, a run is a folder (at any depth) that holds trace files, named by its path from
//! LOGDIR (`.` for LOGDIR itself); a file's worker is its name up to an optional `.{digits}` before
//! `.pt.trace.json`, and those digits are its span. Other `*.json[.gz]` files (the ones
//! `sightline ranks` reads) are listed too, as a worker named by the file's stem with no span.
//! Each run also names the traces it stands for: `latest`, each worker's latest span by rank, and
//! `lead`, the first of them (what the start screen opens as one job and compares). The grouping,
//! the span order and that choice are the core's rule (`sightline::analysis::ranks::runs`), which
//! the Python package's run folders use too; the page reads them from here.
//!
//! The rank is the one `sightline ranks` would find: `distributedInfo` in the trace's header (read
//! from its first bytes, without parsing the trace), else the file name (`rank3`, `worker3`).

use serde::Serialize;
use sightline::analysis::ranks::runs::{run_order, worker_and_span, RunFile};
use std::collections::BTreeMap;

/// A trace file somewhere under LOGDIR, as a store lists it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Relative to LOGDIR, `/`-separated.
    pub path: String,
    pub size: u64,
    /// Last modified, ms since the Unix epoch.
    pub mtime_ms: Option<i64>,
}

/// What a cheap read of the file's header says about its rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderRank {
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
}

#[derive(Serialize)]
pub struct Listing {
    /// LOGDIR as given on the command line.
    pub logdir: String,
    pub runs: Vec<Run>,
}

#[derive(Serialize)]
pub struct Run {
    /// The folder's path from LOGDIR (`.` for LOGDIR itself).
    pub run: String,
    pub files: usize,
    pub size: u64,
    /// The newest file's mtime.
    pub mtime_ms: Option<i64>,
    /// The `path` of each worker's latest span, by rank (lowest first, spans without a rank last,
    /// equal ranks in worker order): the traces the run stands for as one job.
    pub latest: Vec<String>,
    /// The `path` of the trace the run stands for in a comparison: the first of `latest` (rank 0,
    /// else the lowest rank, else its first worker's latest span).
    pub lead: String,
    pub workers: Vec<Worker>,
    /// The traces in its `capture_traces/` folder (TraceLens' layout: recorded while the CUDA/HIP
    /// graphs its traces replay were captured), listed with the run and not as a run of their own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<Span>,
}

/// The folder, beside a run's traces, that holds the captures of the graphs they replay.
pub const CAPTURES: &str = "capture_traces";

#[derive(Serialize)]
pub struct Worker {
    pub worker: String,
    pub spans: Vec<Span>,
}

#[derive(Serialize)]
pub struct Span {
    /// Relative to LOGDIR; the file is served at `logdir/` + this path (each segment percent-encoded).
    pub path: String,
    pub file: String,
    /// The handler's timestamp (ms since the epoch as `time.time() * 1000` writes it), if any.
    pub span: Option<String>,
    pub size: u64,
    pub mtime_ms: Option<i64>,
    pub rank: Option<i64>,
    /// `distributedInfo` or `file_name`.
    pub rank_source: Option<&'static str>,
    pub world_size: Option<i64>,
}

/// True for the files listed: `*.json` and `*.json.gz`, as `sightline ranks` reads.
pub fn is_trace_file(name: &str) -> bool {
    sightline::analysis::ranks::is_trace_file_name(name)
}

/// How many decompressed bytes of a file's start are searched for `distributedInfo` (Kineto writes
/// it in the header, before `traceEvents`).
pub const HEADER_BYTES: usize = 64 * 1024;

/// `distributedInfo`'s rank and world size from the first bytes of a trace (decompressed), if the
/// header holds it before `traceEvents`.
pub fn rank_in_header(head: &[u8]) -> HeaderRank {
    let text = String::from_utf8_lossy(head);
    let events_at = text.find("\"traceEvents\"").unwrap_or(text.len());
    let Some(at) = text[..events_at].find("\"distributedInfo\"") else {
        return HeaderRank::default();
    };
    let rest = &text[at + "\"distributedInfo\"".len()..];
    let Some(rest) = rest.trim_start().strip_prefix(':') else {
        return HeaderRank::default();
    };
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
    match values.next() {
        Some(Ok(v)) => HeaderRank {
            rank: v.get("rank").and_then(|r| r.as_i64()),
            world_size: v.get("world_size").and_then(|r| r.as_i64()),
        },
        _ => HeaderRank::default(),
    }
}

/// Groups `entries` into runs, workers and spans, sorted by name (spans by time), and names each
/// run's latest spans and lead, all by the core's rule (`analysis::ranks::runs::run_order`).
/// `header` gives the header rank of an entry (cached by the caller).
pub fn build(logdir: &str, entries: &[Entry], header: &dyn Fn(&Entry) -> HeaderRank) -> Listing {
    let mut runs: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for e in entries {
        let (dir, file) = match e.path.rsplit_once('/') {
            Some((d, f)) => (d.to_string(), f.to_string()),
            None => (".".to_string(), e.path.clone()),
        };
        let (_, span) = worker_and_span(&file);
        let head = header(e);
        let named = sightline::analysis::ranks::digest::rank_in_file_name(&file);
        let (rank, rank_source) = match (head.rank, named) {
            (Some(r), _) => (Some(r), Some("distributedInfo")),
            (None, Some(r)) => (Some(r), Some("file_name")),
            (None, None) => (None, None),
        };
        runs.entry(dir).or_default().push(Span {
            path: e.path.clone(),
            file,
            span,
            size: e.size,
            mtime_ms: e.mtime_ms,
            rank,
            rank_source,
            world_size: head.world_size,
        });
    }
    // A run's `capture_traces/` belongs to the run, when the run has traces of its own.
    let mut captures: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    let folders: Vec<String> = runs.keys().cloned().collect();
    for dir in folders {
        let parent = match dir.rsplit_once('/') {
            Some((p, CAPTURES)) => p.to_string(),
            None if dir == CAPTURES => ".".to_string(),
            _ => continue,
        };
        if !runs.contains_key(&parent) {
            continue;
        }
        let mut spans = runs.remove(&dir).unwrap_or_default();
        spans.sort_by(|a, b| a.file.cmp(&b.file));
        captures.insert(parent, spans);
    }
    let runs = runs
        .into_iter()
        .map(|(run, spans)| {
            let files: Vec<RunFile> = spans
                .iter()
                .map(|s| RunFile {
                    file: &s.file,
                    rank: s.rank,
                })
                .collect();
            let order = run_order(&files);
            let latest: Vec<String> = order
                .latest
                .iter()
                .map(|&k| spans[k].path.clone())
                .collect();
            let lead = latest.first().cloned().unwrap_or_default();
            let mut spans: Vec<Option<Span>> = spans.into_iter().map(Some).collect();
            let workers: Vec<Worker> = order
                .workers
                .into_iter()
                .map(|(worker, ks)| Worker {
                    worker,
                    spans: ks.iter().filter_map(|&k| spans[k].take()).collect(),
                })
                .collect();
            let spans = || workers.iter().flat_map(|w| &w.spans);
            let captures = captures.remove(&run).unwrap_or_default();
            Run {
                run,
                files: spans().count(),
                size: spans().map(|s| s.size).sum(),
                mtime_ms: spans().filter_map(|s| s.mtime_ms).max(),
                latest,
                lead,
                workers,
                captures,
            }
        })
        .collect();
    Listing {
        logdir: logdir.to_string(),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_capture_traces_are_its_captures_not_a_run() {
        let entry = |path: &str| Entry {
            path: path.to_string(),
            size: 1,
            mtime_ms: None,
        };
        let entries = [
            entry("sglang/decode.json.gz"),
            entry("sglang/capture_traces/bs_32_rank0.json.gz"),
            entry("sglang/capture_traces/bs_1_rank0.json.gz"),
            // No traces of its own in `orphan`: its capture_traces stays a run.
            entry("orphan/capture_traces/bs_1_rank0.json.gz"),
        ];
        let listing = build("L", &entries, &|_| HeaderRank::default());
        let runs: Vec<&str> = listing.runs.iter().map(|r| r.run.as_str()).collect();
        assert_eq!(runs, ["orphan/capture_traces", "sglang"]);
        let sglang = &listing.runs[1];
        assert_eq!(sglang.files, 1);
        let captures: Vec<&str> = sglang.captures.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(
            captures,
            [
                "sglang/capture_traces/bs_1_rank0.json.gz",
                "sglang/capture_traces/bs_32_rank0.json.gz"
            ]
        );
        assert!(listing.runs[0].captures.is_empty());
        let json = serde_json::to_value(&listing).unwrap();
        assert!(json["runs"][0].get("captures").is_none());
    }

    #[test]
    fn rank_from_the_header_only() {
        let head = br#"{"schemaVersion": 1, "distributedInfo": {"backend": "gloo", "rank": 2, "world_size": 4}, "traceEvents": ["#;
        assert_eq!(
            rank_in_header(head),
            HeaderRank {
                rank: Some(2),
                world_size: Some(4)
            }
        );
        // A distributedInfo after traceEvents is not the header's (and not read).
        let late = br#"{"traceEvents": [], "distributedInfo": {"rank": 2}}"#;
        assert_eq!(rank_in_header(late), HeaderRank::default());
        // Cut inside the object: nothing.
        assert_eq!(
            rank_in_header(br#"{"distributedInfo": {"rank": 2, "wor"#),
            HeaderRank::default()
        );
    }

    #[test]
    fn runs_workers_and_spans() {
        let e = |p: &str, size| Entry {
            path: p.into(),
            size,
            mtime_ms: Some(size as i64),
        };
        let entries = [
            e("b/h_2.20.pt.trace.json.gz", 5),
            e("b/h_2.10.pt.trace.json.gz", 7),
            e("b/h_1.10.pt.trace.json.gz", 1),
            e("a/x/rank1.json", 3),
            e("top.json", 2),
        ];
        let l = build("log", &entries, &|_| HeaderRank::default());
        let names: Vec<&str> = l.runs.iter().map(|r| r.run.as_str()).collect();
        assert_eq!(names, [".", "a/x", "b"]);
        let b = &l.runs[2];
        assert_eq!((b.files, b.size, b.mtime_ms), (3, 13, Some(7)));
        assert_eq!(b.workers[1].worker, "h_2");
        let spans: Vec<_> = b.workers[1]
            .spans
            .iter()
            .map(|s| s.span.clone().unwrap())
            .collect();
        assert_eq!(spans, ["10", "20"]);
        assert_eq!(
            b.latest,
            ["b/h_1.10.pt.trace.json.gz", "b/h_2.20.pt.trace.json.gz"]
        );
        assert_eq!(b.lead, "b/h_1.10.pt.trace.json.gz");
        assert_eq!(l.runs[1].lead, "a/x/rank1.json");
        assert_eq!(l.runs[1].workers[0].spans[0].rank, Some(1));
        assert_eq!(l.runs[1].workers[0].spans[0].rank_source, Some("file_name"));
    }
}
