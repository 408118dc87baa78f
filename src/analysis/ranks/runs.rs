//! A log folder as the TensorBoard profiler plugin showed it, by file name only (no I/O): which
//! files are traces, each file's worker and span, a run folder's workers with their spans in
//! order, and the traces a run stands for (each worker's latest span, by rank). The one rule of
//! `sightline serve`'s listing (and so of the page's start screen, which reads the listing) and of
//! the Python package's run folders (`sightline.show(folder)`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Whether a file in a folder is taken as a trace: `*.json` or `*.json.gz` (a file named
/// explicitly is taken whatever its name).
pub fn is_trace_file_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// A trace file's name split as the TensorBoard plugin splits it: (worker, span).
/// `torch.profiler.tensorboard_trace_handler` writes `{worker}.{ms}.pt.trace.json[.gz]`, so the
/// digits before `.pt.trace.json` are the span and the rest the worker; another `*.json[.gz]`
/// file is a worker of its own (its name without the extension) with no span.
pub fn worker_and_span(file: &str) -> (String, Option<String>) {
    let base = file.strip_suffix(".gz").unwrap_or(file);
    let Some(stem) = base.strip_suffix(".pt.trace.json") else {
        return (base.strip_suffix(".json").unwrap_or(base).to_string(), None);
    };
    if let Some((worker, span)) = stem.rsplit_once('.') {
        if !worker.is_empty() && !span.is_empty() && span.bytes().all(|b| b.is_ascii_digit()) {
            return (worker.to_string(), Some(span.to_string()));
        }
    }
    (stem.to_string(), None)
}

/// The order of two spans (as [`worker_and_span`] gives them): by number, however many digits
/// and ignoring leading zeros; no span comes before any span.
pub fn cmp_span(a: Option<&str>, b: Option<&str>) -> Ordering {
    let key = |s: Option<&str>| {
        s.map(|d| {
            let d = d.trim_start_matches('0');
            (d.len(), d.to_string())
        })
    };
    key(a).cmp(&key(b))
}

/// A trace file of one run folder: its name, and its rank where the caller knows one
/// (`sightline serve` reads `distributedInfo` in the header, else `rank3` / `worker3` in the name).
#[derive(Clone, Copy, Debug)]
pub struct RunFile<'a> {
    pub file: &'a str,
    pub rank: Option<i64>,
}

/// A run folder's files grouped as the plugin groups them; each file is its index in the list
/// given to [`run_order`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOrder {
    /// The workers by name, each with its spans oldest first: by span ([`cmp_span`]), then by
    /// file name.
    pub workers: Vec<(String, Vec<usize>)>,
    /// Each worker's latest span (its last), by rank: lowest first, files without a rank last,
    /// equal ranks in worker order. These are the traces the run stands for as one job (the ranks
    /// view); the first is its lead, the one it stands for in a comparison (rank 0, else the
    /// lowest, else its first worker). Empty only for no files.
    pub latest: Vec<usize>,
}

/// Groups a run folder's trace files into workers and picks the traces the run stands for
/// (see [`RunOrder`]).
pub fn run_order(files: &[RunFile<'_>]) -> RunOrder {
    let named: Vec<(String, Option<String>)> =
        files.iter().map(|f| worker_and_span(f.file)).collect();
    let mut by_worker: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, (worker, _)) in named.iter().enumerate() {
        by_worker.entry(worker.as_str()).or_default().push(k);
    }
    let workers: Vec<(String, Vec<usize>)> = by_worker
        .into_iter()
        .map(|(worker, mut spans)| {
            spans.sort_by(|&a, &b| {
                cmp_span(named[a].1.as_deref(), named[b].1.as_deref())
                    .then_with(|| files[a].file.cmp(files[b].file))
            });
            (worker.to_string(), spans)
        })
        .collect();
    let mut latest: Vec<usize> = workers
        .iter()
        .filter_map(|(_, spans)| spans.last().copied())
        .collect();
    // Stable: equal ranks (and no rank) stay in worker order.
    latest.sort_by_key(|&k| (files[k].rank.is_none(), files[k].rank));
    RunOrder { workers, latest }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Order<'a> = (Vec<(String, Vec<&'a str>)>, Vec<&'a str>);

    fn order<'a>(files: &[(&'a str, Option<i64>)]) -> Order<'a> {
        let given: Vec<RunFile> = files
            .iter()
            .map(|&(file, rank)| RunFile { file, rank })
            .collect();
        let o = run_order(&given);
        let name = |k: usize| files[k].0;
        let workers = o
            .workers
            .iter()
            .map(|(w, spans)| (w.clone(), spans.iter().map(|&k| name(k)).collect()))
            .collect();
        (workers, o.latest.iter().map(|&k| name(k)).collect())
    }

    #[test]
    fn names_split_as_the_plugin_splits_them() {
        let s = |f: &str| worker_and_span(f);
        assert_eq!(
            s("node-7_1234.1690000000000.pt.trace.json.gz"),
            ("node-7_1234".into(), Some("1690000000000".into()))
        );
        assert_eq!(
            s("host_1.2.3.pt.trace.json"),
            ("host_1.2".into(), Some("3".into()))
        );
        assert_eq!(s("worker0.pt.trace.json.gz"), ("worker0".into(), None));
        assert_eq!(s("rank3.json"), ("rank3".into(), None));
        assert_eq!(s("a.b.json.gz"), ("a.b".into(), None));
        assert!(is_trace_file_name("a.json.gz") && !is_trace_file_name("a.txt"));
    }

    #[test]
    fn spans_are_ordered_by_number_not_by_text() {
        let (workers, latest) = order(&[
            ("h.9.pt.trace.json", None),
            ("h.10.pt.trace.json", None),
            ("h.100.pt.trace.json.gz", None),
            ("h.pt.trace.json", None),
        ]);
        assert_eq!(
            workers,
            [(
                "h".to_string(),
                vec![
                    "h.pt.trace.json",
                    "h.9.pt.trace.json",
                    "h.10.pt.trace.json",
                    "h.100.pt.trace.json.gz"
                ]
            )]
        );
        assert_eq!(latest, ["h.100.pt.trace.json.gz"]);
        // More digits than any integer type holds, and leading zeros.
        let long = "9".repeat(40);
        assert_eq!(cmp_span(Some("10"), Some(&long)), Ordering::Less);
        assert_eq!(cmp_span(Some("010"), Some("10")), Ordering::Equal);
        assert_eq!(cmp_span(None, Some("0")), Ordering::Less);
    }

    #[test]
    fn a_worker_without_spans_is_its_own_latest() {
        let (workers, latest) = order(&[("notes.json", None), ("h_1.5.pt.trace.json", None)]);
        let names: Vec<&str> = workers.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(names, ["h_1", "notes"]);
        assert_eq!(latest, ["h_1.5.pt.trace.json", "notes.json"]);
    }

    #[test]
    fn ties_go_to_the_later_file_name_and_to_worker_order() {
        // One span written twice (and the same worker without a span, twice): the later name.
        let (_, latest) = order(&[
            ("h.10.pt.trace.json.gz", None),
            ("h.010.pt.trace.json", None),
            ("w.json", None),
            ("w.json.gz", None),
        ]);
        assert_eq!(latest, ["h.10.pt.trace.json.gz", "w.json.gz"]);
        // Equal ranks, and no ranks, keep worker order; ranked files come first.
        let (_, latest) = order(&[
            ("b.1.pt.trace.json", Some(1)),
            ("a.1.pt.trace.json", Some(1)),
            ("z.1.pt.trace.json", None),
            ("c.1.pt.trace.json", None),
            ("d.1.pt.trace.json", Some(0)),
        ]);
        assert_eq!(
            latest,
            [
                "d.1.pt.trace.json",
                "a.1.pt.trace.json",
                "b.1.pt.trace.json",
                "c.1.pt.trace.json",
                "z.1.pt.trace.json"
            ]
        );
        assert!(run_order(&[]).latest.is_empty());
    }

    #[test]
    fn the_rank_of_the_latest_span_orders_its_worker() {
        // An older span's rank does not count: the worker is ordered by its latest span's.
        let (_, latest) = order(&[
            ("a.1.pt.trace.json", Some(0)),
            ("a.2.pt.trace.json", Some(5)),
            ("b.1.pt.trace.json", Some(2)),
        ]);
        assert_eq!(latest, ["b.1.pt.trace.json", "a.2.pt.trace.json"]);
    }
}
