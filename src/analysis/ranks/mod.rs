//! A distributed job as one picture: many ranks' traces, each reduced to a [`Digest`], compared.
//!
//! Everything across ranks is computed from digests only, so a job of hundreds of ranks needs one
//! trace in memory at a time (per parsing thread) plus the digests.
//! - [`digest`]: the `distributed` section of a trace's digest: one rank's numbers (rank, host,
//!   clock origin, compute, communication, overlap, idle) and its collective instances with what
//!   the step thread did before each (definitions there); the only file here that reads a trace.
//! - [`collective`]: names, message size and bus bandwidth as NCCL defines them.
//! - [`matching`]: instances matched across ranks; arrival, wait (skew), transfer.
//! - [`align`]: clock offsets from matched collectives.
//! - `stragglers`: per step, the rank the others waited for, and why.
//! - `findings`: `straggler_rank`, `collective_wait_heavy`, `low_comm_overlap`, `unbalanced_ranks`.
//! - [`versus`]: each rank's step and idle time against the median rank's, and the slowest (the
//!   Python package's `sightline.ray.across_ranks`).
//! - `intervals`: unions and overlaps of spans, checked against a pointwise oracle.
//! - [`runs`]: a log folder by file name: each file's worker and span, a run's workers and the
//!   traces it stands for (each worker's latest span, by rank); `sightline serve`'s listing and
//!   the Python package's run folders use it. No I/O.
//! - this module: the job (below), [`digest_all`] (files digested a core's worth at a time, up to
//!   8, through a function the caller gives, so the I/O stays at the edge) and the report.
//!
//! The job: the main job is the (world size, backend) most traces declare; its world size (else the
//! highest rank + 1) says which ranks are missing; two traces of one rank are duplicates (the main
//! job's is kept, then the one that starts first, ties broken by content, never by file name); traces
//! of other jobs are reported as mixed jobs and still compared when their rank is not taken. Output is ordered by rank, so file order and names do
//! not change any number.

pub mod align;
pub mod collective;
pub mod digest;
pub(crate) mod findings;
pub(crate) mod intervals;
pub mod matching;
pub mod runs;
mod stragglers;
pub mod versus;

pub use crate::analysis::digest::Digest;
pub use align::Align;
use digest::Distributed;
pub use runs::{is_trace_file_name, worker_and_span};
pub use versus::{versus_median, RankVersus};

use crate::analysis::columns::{Column, Row, Sort, Type, Unit};
use crate::analysis::findings::Severity;
use matching::{match_all, total, Matched};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RanksReport {
    pub world_size: i64,
    pub missing_ranks: Vec<i64>,
    pub duplicate_ranks: Vec<Duplicate>,
    /// Traces with no rank in `distributedInfo` or their name: not compared.
    pub unknown_rank_files: Vec<String>,
    /// Why the traces look like more than one job (empty when they agree).
    pub mixed_jobs: Vec<String>,
    pub align: Align,
    pub clock_offsets: Vec<ClockOffset>,
    pub ranks: Vec<RankRow>,
    pub collectives: Vec<CollectiveRow>,
    pub overlap: Vec<Overlap>,
    pub stragglers: Vec<Straggler>,
    pub findings: Vec<RankFinding>,
    /// The instances with the most waiting, most first (at most [`MAX_INSTANCES`]).
    pub worst_instances: Vec<InstanceRow>,
    /// Files that could not be read as traces (filled by the reader; the analysis never sees them).
    pub unreadable_files: Vec<Unreadable>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Unreadable {
    pub file: String,
    pub error: String,
}

/// Digests every file with `digest_file` (which reads and parses it: the I/O stays with the
/// caller), one file per core at a time (up to 8), so memory holds a core's worth of traces plus
/// the digests. Results are in file order; a file `digest_file` fails on is [`Unreadable`].
pub fn digest_all<F>(files: &[PathBuf], digest_file: F) -> (Vec<Digest>, Vec<Unreadable>)
where
    F: Fn(&Path) -> Result<Digest, String> + Sync,
{
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<Digest, String>)>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .clamp(1, 8);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(k) else { break };
                let r = digest_file(path);
                results.lock().expect("no panic while held").push((k, r));
            });
        }
    });
    let mut results = results.into_inner().expect("no panic while held");
    results.sort_by_key(|r| r.0);
    let mut digests = Vec::new();
    let mut unreadable = Vec::new();
    for (k, r) in results {
        match r {
            Ok(d) => digests.push(d),
            Err(error) => unreadable.push(Unreadable {
                file: files[k].display().to_string(),
                error,
            }),
        }
    }
    (digests, unreadable)
}

/// At most this many instances are listed one by one.
pub const MAX_INSTANCES: usize = 20;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Duplicate {
    pub rank: i64,
    pub kept: String,
    pub dropped: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClockOffset {
    pub rank: i64,
    pub offset_us: f64,
    pub rule: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RankRow {
    pub rank: i64,
    pub file: String,
    pub host: Option<String>,
    pub basis: digest::Basis,
    pub steps: usize,
    /// The median step's length (`ProfilerStep` spans, as the steps' statistics), µs.
    pub step_time_us: f64,
    /// Each step's length, µs.
    pub step_times_us: Vec<f64>,
    pub compute_us: f64,
    pub communication_us: f64,
    pub exposed_communication_us: f64,
    pub memcpy_us: f64,
    pub idle_us: f64,
    pub host_wait_idle_us: f64,
    pub kernels: u64,
    pub peak_memory_bytes: Option<i64>,
    /// Time this rank spent in collectives waiting for the last arrival.
    pub collective_wait_us: f64,
    pub collectives: usize,
}

/// Times in µs, as every rank's row of `sightline ranks` gives them.
impl Row for RankRow {
    const COLUMNS: &'static [Column] = &[
        Column::new("rank", "Rank", Unit::Count, "The rank in the job (`distributedInfo`, else the file name)."),
        Column::new("file", "File", Unit::Text, "The trace's file name."),
        Column::new("host", "Host", Unit::Text, "The host it ran on (the trace's `host_name`, else its file name), when known."),
        Column::new("basis", "Basis", Unit::Text, "`gpu` when the trace holds kernels, memcpys or memsets, else `cpu` (a gloo job): which activity its times below are taken over."),
        Column::new("steps", "Steps", Unit::Count, "`ProfilerStep`s in the trace."),
        Column::new("step_time_us", "Median step", Unit::Us, "The median step's length (`ProfilerStep` spans; of an even count, the mean of the two middle ones); 0 without steps."),
        Column::new("step_times_us", "Step times", Unit::Us, "Each step's length, in order.")
            .typed(Type::List(&Type::Float)),
        Column::new("compute_us", "Compute", Unit::Us, "Computation: the union of the device's compute kernels (GPU basis), or of every operator, label and Python frame but the steps and gloo's spans (CPU basis)."),
        Column::new("communication_us", "Communication", Unit::Us, "Communication: the union of the collective kernels (GPU basis) or `gloo:*` spans (CPU basis)."),
        Column::new("exposed_communication_us", "Exposed comm.", Unit::Us, "Communication that no computation overlaps: communication minus |communication ∩ compute|."),
        Column::new("memcpy_us", "Memcpy", Unit::Us, "The union of memory copies and sets on the device."),
        Column::new("idle_us", "Idle", Unit::Us, "The busy window minus the union of all busy ops (GPU basis), or the steps' span minus compute and communication (CPU basis)."),
        Column::new("host_wait_idle_us", "Host wait", Unit::Us, "Device idle time in gaps whose next op was launched after the gap began (the device waited for the host); 0 on the CPU basis."),
        Column::new("kernels", "Kernels", Unit::Count, "Device kernels in the trace."),
        Column::new("peak_memory_bytes", "Peak memory", Unit::Bytes, "The largest `Total Allocated` of the device's `[memory]` events (the CPU's when there are none), when recorded."),
        Column::new("collective_wait_us", "Collective wait", Unit::Us, "Time this rank spent in collectives waiting for the last rank to arrive, over the instances matched across ranks."),
        Column::new("collectives", "Collectives", Unit::Count, "Collective instances in the trace."),
    ];
    const SORT: Sort = Sort::Smallest("rank");
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CollectiveRow {
    pub name: String,
    pub process_group: String,
    pub dtype: Option<String>,
    /// S of one instance (NCCL's definition), when the trace gives the size.
    pub bytes: Option<i64>,
    pub count: usize,
    pub partial: usize,
    /// Rank-time in these collectives: wait + transfer over every participant.
    pub total_us: f64,
    pub wait_us: f64,
    pub transfer_us: f64,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
}

/// One row per process group, collective and size, summed over the ranks.
impl Row for CollectiveRow {
    const COLUMNS: &'static [Column] = &[
        Column::new("name", "Name", Unit::Text, "The collective (`allreduce`, `allgather`, ...)"),
        Column::new("process_group", "Group", Unit::Text, "The process group's name"),
        Column::new("dtype", "Dtype", Unit::Text, "The element type, when the trace gives it"),
        Column::new(
            "bytes",
            "Bytes",
            Unit::Bytes,
            "S of one instance, as NCCL's performance notes define it, when the trace gives the size",
        ),
        Column::new("count", "Count", Unit::Count, "Instances matched across the ranks"),
        Column::new(
            "partial",
            "Partial",
            Unit::Count,
            "Instances some rank's trace does not hold (left out of the times)",
        ),
        Column::new(
            "total_us",
            "Total",
            Unit::Us,
            "Rank-time in these collectives: wait plus transfer, over every participant",
        ),
        Column::new(
            "wait_us",
            "Wait",
            Unit::Us,
            "Time ranks spent waiting for the last one to arrive, summed over the ranks",
        ),
        Column::new(
            "transfer_us",
            "Transfer",
            Unit::Us,
            "Time from the last arrival to each rank's end, summed over the ranks",
        ),
        Column::new(
            "algbw_gbps",
            "Algorithm GB/s",
            Unit::Number,
            "Algorithm bandwidth: S over the median transfer time (NCCL's definition)",
        ),
        Column::new(
            "busbw_gbps",
            "Bus GB/s",
            Unit::Number,
            "Bus bandwidth: algbw times NCCL's factor for the collective and group size",
        ),
    ];
    const SORT: Sort = Sort::Largest("total_us");
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Overlap {
    pub rank: i64,
    /// HTA's `comp_comm_overlap_pctg`: 100 x |comm ∩ compute| / |comm|, two decimals; null without
    /// communication.
    pub comm_comp_overlap_pct: Option<f64>,
    pub basis: digest::Basis,
    /// What the figure covers: `hta_steps` (HTA's default, every `ProfilerStep` but the last) or
    /// `whole_trace` (asked for, or HTA keeps the whole trace: fewer than two steps, CPU basis).
    pub covers: OverlapScope,
    /// The `ProfilerStep` numbers covered when `covers` is `hta_steps`.
    pub steps: Option<Vec<i64>>,
}

/// Which device ops the communication/computation overlap is taken over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum OverlapScope {
    /// HTA's `TraceAnalysis` default (`include_last_profiler_step=False`): the ops launched before
    /// the last `ProfilerStep` starts, when the trace has two or more.
    #[default]
    HtaSteps,
    /// Every device op of the trace.
    WholeTrace,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Straggler {
    pub step: String,
    pub rank: i64,
    /// Its arrival after the median of the others', in the collective where it made them wait most.
    pub late_us: f64,
    /// The others' waits for it, over the step's collectives where it arrived last.
    pub wait_caused_us: f64,
    pub cause: String,
    pub collective: String,
    /// The collective on the straggler's own timeline (ns from its trace start).
    pub start_ns: i64,
    pub end_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstanceRow {
    pub name: String,
    pub process_group: String,
    pub step: Option<i64>,
    pub seq: u32,
    pub bytes: Option<i64>,
    pub last_rank: i64,
    pub wait_us: f64,
    pub transfer_us: f64,
    pub partial: bool,
    pub ranks: Vec<InstanceRank>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstanceRank {
    pub rank: i64,
    /// Arrival after the first participant's.
    pub arrival_us: f64,
    pub wait_us: f64,
    pub transfer_us: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RankFinding {
    pub id: &'static str,
    pub severity: Severity,
    pub title: String,
    pub detail: String,
    pub advice: String,
    /// The steps it is about (`straggler_rank`: the steps the rank was late in), so a viewer can
    /// mark them; left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub steps: Vec<String>,
    pub evidence: Vec<RankRange>,
}

/// A time range on one rank's own timeline (ns from that trace's start), for a viewer to jump to.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RankRange {
    pub rank: i64,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// One rank's overlap over `scope`; HTA's steps fall back to the whole trace where HTA keeps it.
fn overlap_of(d: &Digest, rank: i64, scope: OverlapScope) -> Overlap {
    let x = &d.distributed;
    let steps = x
        .hta_steps
        .as_ref()
        .filter(|_| scope == OverlapScope::HtaSteps);
    let (comm, both) = steps.map_or((x.communication_ns, x.overlap_ns), |h| {
        (h.communication_ns, h.overlap_ns)
    });
    Overlap {
        rank,
        comm_comp_overlap_pct: (comm > 0)
            .then(|| (10_000.0 * both as f64 / comm as f64).round() / 100.0),
        basis: x.basis,
        covers: if steps.is_some() {
            OverlapScope::HtaSteps
        } else {
            OverlapScope::WholeTrace
        },
        steps: steps.map(|h| h.steps.clone()),
    }
}

pub(crate) fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// Compares the ranks' digests, with the overlap over HTA's steps.
pub fn analyze(all: &[Digest], mode: Align) -> RanksReport {
    analyze_with(all, mode, OverlapScope::HtaSteps)
}

/// Compares the ranks' digests, with the overlap over `scope`.
pub fn analyze_with(all: &[Digest], mode: Align, scope: OverlapScope) -> RanksReport {
    // The job most traces belong to: (world size, backend) by count, ties to the smaller.
    let mut jobs: BTreeMap<(Option<i64>, Option<&str>), usize> = BTreeMap::new();
    for d in all.iter().filter(|d| d.distributed.rank.is_some()) {
        *jobs
            .entry((d.distributed.world_size, d.distributed.backend.as_deref()))
            .or_default() += 1;
    }
    let main_job = jobs
        .iter()
        .max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))
        .map(|(k, _)| *k);
    let foreign =
        |d: &Digest| Some((d.distributed.world_size, d.distributed.backend.as_deref())) != main_job;
    let mut mixed_jobs = Vec::new();
    if jobs.len() > 1 {
        let list: Vec<String> = jobs
            .iter()
            .map(|((w, b), n)| {
                format!(
                    "{n} trace(s) of world size {} ({})",
                    w.map_or("?".to_string(), |w| w.to_string()),
                    b.unwrap_or("no backend")
                )
            })
            .collect();
        mixed_jobs.push(format!(
            "world sizes or backends differ: {}",
            list.join(", ")
        ));
    }

    // Order by rank, then the main job's traces first, then by content (never by file name): the
    // first of a rank is kept.
    let mut order: Vec<&Digest> = all.iter().collect();
    order.sort_by(|a, b| {
        (
            a.distributed.rank,
            foreign(a),
            a.distributed.clock_origin_ns,
            a.summary.span_ns,
            a.distributed.collectives.len(),
        )
            .cmp(&(
                b.distributed.rank,
                foreign(b),
                b.distributed.clock_origin_ns,
                b.summary.span_ns,
                b.distributed.collectives.len(),
            ))
            .then_with(|| a.distributed.file.cmp(&b.distributed.file))
    });
    let mut digests: Vec<&Digest> = Vec::new();
    let mut duplicate_ranks = Vec::new();
    let mut unknown_rank_files = Vec::new();
    for d in order {
        let Some(rank) = d.distributed.rank else {
            unknown_rank_files.push(d.distributed.file.clone());
            continue;
        };
        match digests.last() {
            Some(prev) if prev.distributed.rank == Some(rank) => duplicate_ranks.push(Duplicate {
                rank,
                kept: prev.distributed.file.clone(),
                dropped: d.distributed.file.clone(),
            }),
            _ => digests.push(d),
        }
    }
    unknown_rank_files.sort();
    let rank = |d: &Digest| d.distributed.rank.unwrap_or(-1);

    let world_size = main_job
        .and_then(|j| j.0)
        .unwrap_or_else(|| digests.last().map_or(0, |d| rank(d) + 1));
    let present: Vec<i64> = digests.iter().map(|d| rank(d)).collect();
    let missing_ranks = (0..world_size).filter(|r| !present.contains(r)).collect();
    for d in &digests {
        if rank(d) >= world_size || rank(d) < 0 {
            mixed_jobs.push(format!(
                "rank {} ({}) is outside the world size {world_size}",
                rank(d),
                d.distributed.file
            ));
        }
    }

    let dists: Vec<&Distributed> = digests.iter().map(|d| &d.distributed).collect();
    let (offset_ns, rules) = align::offsets(&dists, mode);
    let clock_offsets = digests
        .iter()
        .zip(offset_ns.iter().zip(&rules))
        .map(|(d, (&o, &rule))| ClockOffset {
            rank: rank(d),
            offset_us: us(o),
            rule,
        })
        .collect();
    let matched = match_all(&dists, &offset_ns);

    let mut wait_by = vec![0i64; digests.len()];
    for m in &matched {
        for (k, &(d, _)) in m.parts.iter().enumerate() {
            wait_by[d] = wait_by[d].saturating_add(m.wait_ns[k]);
        }
    }
    let ranks = digests
        .iter()
        .enumerate()
        .map(|(k, d)| rank_row(d, wait_by[k]))
        .collect();
    let overlap = digests
        .iter()
        .map(|d| overlap_of(d, rank(d), scope))
        .collect();
    let collectives = collective_rows(&digests, &matched);
    let stragglers = stragglers::find(&digests, &matched);
    let worst_instances = worst(&digests, &matched);
    let mut report = RanksReport {
        world_size,
        missing_ranks,
        duplicate_ranks,
        unknown_rank_files,
        mixed_jobs,
        align: mode,
        clock_offsets,
        ranks,
        collectives,
        overlap,
        stragglers,
        findings: Vec::new(),
        worst_instances,
        unreadable_files: Vec::new(),
    };
    report.findings = findings::analyze(&report, &digests, &matched);
    report
}

fn rank_row(d: &Digest, wait_ns: i64) -> RankRow {
    // The steps' lengths (their `ProfilerStep` spans), as the steps' statistics and the diff take
    // them: the median of an even count is the mean of the two middle ones.
    let mut lengths: Vec<i64> = d.real_steps().iter().map(|s| s.length()).collect();
    let step_times_us = lengths.iter().map(|&n| us(n)).collect();
    lengths.sort_unstable();
    let n = lengths.len();
    let step_time_us = match n {
        0 => 0.0,
        _ if n % 2 == 1 => us(lengths[n / 2]),
        _ => (us(lengths[n / 2 - 1]) + us(lengths[n / 2])) / 2.0,
    };
    RankRow {
        rank: d.distributed.rank.unwrap_or(-1),
        file: d.distributed.file.clone(),
        host: d.distributed.host.clone(),
        basis: d.distributed.basis,
        steps: d.real_steps().len(),
        step_time_us,
        step_times_us,
        compute_us: us(d.distributed.compute_ns),
        communication_us: us(d.distributed.communication_ns),
        exposed_communication_us: us(d.distributed.exposed_communication_ns),
        memcpy_us: us(d.distributed.memcpy_ns),
        idle_us: us(d.distributed.idle_ns),
        host_wait_idle_us: us(d.host_wait_idle_ns()),
        kernels: d.distributed.kernels,
        peak_memory_bytes: d.distributed.peak_memory_bytes,
        collective_wait_us: us(wait_ns),
        collectives: d.distributed.collectives.len(),
    }
}

/// Per process group, name, dtype and size.
fn collective_rows(digests: &[&Digest], matched: &[Matched]) -> Vec<CollectiveRow> {
    type Key = (String, String, Option<String>, Option<i64>);
    #[derive(Default)]
    struct Acc {
        count: usize,
        partial: usize,
        wait: i64,
        transfer: i64,
        bus_bytes: f64,
        alg_bytes: f64,
        instance_transfer: i64,
    }
    let mut by: BTreeMap<Key, Acc> = BTreeMap::new();
    for m in matched {
        let (d, i) = m.parts[0];
        let c = &digests[d].distributed.collectives[i].what;
        let a = by
            .entry((
                c.process_group.clone(),
                c.name.clone(),
                c.dtype.clone(),
                c.bytes,
            ))
            .or_default();
        a.count += 1;
        a.partial += m.partial as usize;
        a.wait = a.wait.saturating_add(total(&m.wait_ns));
        a.transfer = a.transfer.saturating_add(total(&m.transfer_ns));
        if let Some(b) = c.bytes {
            let n = c.group_size.unwrap_or(m.parts.len() as i64);
            a.alg_bytes += b as f64;
            a.bus_bytes += b as f64 * c.bus_factor(n);
            a.instance_transfer = a.instance_transfer.saturating_add(m.instance_transfer_ns);
        }
    }
    let mut rows: Vec<CollectiveRow> = by
        .into_iter()
        .map(|((pg, name, dtype, bytes), a)| {
            // bytes per ns = GB/s.
            let bw = |b: f64| (a.instance_transfer > 0).then(|| b / a.instance_transfer as f64);
            CollectiveRow {
                name,
                process_group: pg,
                dtype,
                bytes,
                count: a.count,
                partial: a.partial,
                total_us: us(a.wait.saturating_add(a.transfer)),
                wait_us: us(a.wait),
                transfer_us: us(a.transfer),
                algbw_gbps: bytes.and(bw(a.alg_bytes)),
                busbw_gbps: bytes.and(bw(a.bus_bytes)),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.total_us.total_cmp(&a.total_us));
    rows
}

fn worst(digests: &[&Digest], matched: &[Matched]) -> Vec<InstanceRow> {
    let mut order: Vec<&Matched> = matched.iter().filter(|m| m.parts.len() > 1).collect();
    order.sort_by_key(|m| std::cmp::Reverse(total(&m.wait_ns)));
    order
        .into_iter()
        .take(MAX_INSTANCES)
        .map(|m| {
            let (d, i) = m.parts[0];
            let inst = &digests[d].distributed.collectives[i];
            let first = m.arrival_ns.iter().copied().min().unwrap_or(0);
            InstanceRow {
                name: inst.what.name.clone(),
                process_group: inst.what.process_group.clone(),
                step: inst.step,
                seq: inst.seq,
                bytes: inst.what.bytes,
                last_rank: digests[m.parts[m.last].0].distributed.rank.unwrap_or(-1),
                wait_us: us(total(&m.wait_ns)),
                transfer_us: us(m.instance_transfer_ns),
                partial: m.partial,
                ranks: m
                    .parts
                    .iter()
                    .enumerate()
                    .map(|(k, &(d, _))| InstanceRank {
                        rank: digests[d].distributed.rank.unwrap_or(-1),
                        arrival_us: us(m.arrival_ns[k].saturating_sub(first)),
                        wait_us: us(m.wait_ns[k]),
                        transfer_us: us(m.transfer_ns[k]),
                    })
                    .collect(),
            }
        })
        .collect()
}
