//! One rank of a distributed job: the [`Distributed`] section of a trace's
//! [`Digest`](crate::analysis::digest::Digest), what the cross-rank analyses need beyond the rest of
//! the digest (its steps, span and idle breakdown). Built from one [`Trace`] and small enough to keep
//! for hundreds of ranks once the trace is dropped; serde both ways, so a digest can be stored, sent
//! from a worker, or read back by `diff` and the Python package.
//!
//! Definitions (times are ns from the trace's own start; `clock_origin_ns` turns them into the
//! rank's clock):
//! - Rank and world size: `distributedInfo`, else the file name (`rank3`, `rank_3`, `rank-3`,
//!   `worker3`, and `of8` for the world size). Host: the envelope's `host_name`, else the
//!   `{host}_{pid}.{time}.pt.trace.json` name `tensorboard_trace_handler` writes.
//! - Basis: `gpu` when the trace holds kernels, memcpys or memsets, else `cpu`.
//! - GPU basis, HTA's kernel classes over every stream of the rank (exact ns): computation, communication
//!   (`^nccl|^rccl|^hccl|^hip`, `ncclKernel`) and memory ops ([`super::super::idle::op_class`]);
//!   compute, communication and memcpy are the lengths of each class's union; overlap is
//!   |comm ∩ compute| (HTA's `get_comm_comp_overlap` numerator); exposed communication is
//!   communication minus overlap; idle is the busy window minus the union of all busy ops. Host-wait
//!   idle is the digest's own (`idle.devices[].host_wait_ns`: idle time in gaps whose launch came
//!   after the gap began, [`super::super::idle`]), 0 on the CPU basis.
//!   Against HTA's `get_comm_comp_overlap` (equal on the DLRM ranks, to its two decimals): HTA takes
//!   as communication only names containing `ncclKernel`, so the `ncclDevKernel_*` of NCCL 2.19+ count
//!   as computation there and as communication here; HTA also counts `cuda_sync` events with a stream
//!   as computation, which are not GPU work here.
//! - CPU basis (a gloo job on CPU): communication spans are `gloo:*` spans (gloo's own threads run them);
//!   compute is the union of every other operator, label and Python frame (not `ProfilerStep#N`);
//!   the window is the steps' span (the trace's when it has no steps); idle is the window minus
//!   compute and communication.
//! - Collective instances: GPU basis, every communication kernel (start and end on the GPU; NCCL kernels
//!   start when the stream reaches them and spin until every peer has arrived); CPU basis, every
//!   `gloo:*` span. Name, sizes, dtype, group size and process group from the kernel's args (`Collective
//!   name`, `In msg nelems`, `Out msg nelems`, `dtype`, `Group size`, `Process Group Name`), else from
//!   the launching operator's (`record_param_comms`), else from the enclosing `nccl:*` label (its
//!   `Input Dims` and `Input type`), else from the kernel name (`ncclKernel_AllReduce_...`).
//!   `nccl:*` spans on the CPU are only the enqueue of the work and are not instances.
//! - Each instance has the step whose CPU span (tiling the time from its start to the next step's)
//!   holds its start, and a sequence number among the instances of the same process group, name, step
//!   and (for fixed-size collectives) message size, in start order: the key that matches it across ranks.
//! - `before`: what the step's thread did from the step start (else the previous instance's end) to
//!   the instance's start, by the outermost slice under the step: each `record_function` label by
//!   name, `DataLoader`, `CPU operators`, `Python`, and `nothing recorded`; the six largest.

use super::collective::{self, Collective};
use super::intervals;
use crate::analysis::idle::{hta, op_class, OpClass};
use crate::analysis::links::{Kind, Links};
use crate::analysis::steps::{Step, StepsReport};
use crate::model::{ArgsId, SliceRef, Trace};
use serde::{Deserialize, Serialize};

/// At most this many activities are kept per instance in `before`.
const MAX_BEFORE: usize = 6;

/// A trace as one rank of a job. Its steps, span and host-wait idle are the digest's own
/// (`steps.per_step`, `summary.span_ns`, `idle.devices`), not repeated here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Distributed {
    /// The file's name (no folder); empty when the digest was built without one.
    pub file: String,
    pub rank: Option<i64>,
    pub rank_from: RankSource,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
    pub host: Option<String>,
    /// The rank's clock at the trace's time zero, in ns (`baseTimeNanoseconds` + earliest `ts`).
    pub clock_origin_ns: i64,
    pub basis: Basis,
    pub compute_ns: i64,
    pub communication_ns: i64,
    /// |communication ∩ compute|.
    pub overlap_ns: i64,
    pub exposed_communication_ns: i64,
    pub memcpy_ns: i64,
    pub idle_ns: i64,
    pub kernels: u64,
    /// Communication and overlap over HTA's steps (`TraceAnalysis`' default); `None` when HTA
    /// keeps the whole trace (fewer than two `ProfilerStep` names) or on the CPU basis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hta_steps: Option<HtaSteps>,
    /// Largest `Total Allocated` of the GPU's `[memory]` events (the CPU's when there are none).
    pub peak_memory_bytes: Option<i64>,
    pub collectives: Vec<Instance>,
}

/// HTA's `get_comm_comp_overlap` as HTA computes it by default (`include_last_profiler_step=False`,
/// [`hta::comm_comp_overlap`]): over the device ops whose launch starts before the last
/// `ProfilerStep`'s CPU start (every step but the last, whose device work is often cut short by
/// the end of the recording), in HTA's classes and whole microseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HtaSteps {
    /// The `ProfilerStep` numbers covered, in order.
    pub steps: Vec<i64>,
    pub communication_ns: i64,
    /// |communication ∩ compute| over those device ops.
    pub overlap_ns: i64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RankSource {
    DistributedInfo,
    FileName,
    #[default]
    Unknown,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Gpu,
    #[default]
    Cpu,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Instance {
    #[serde(flatten)]
    pub what: Collective,
    pub step: Option<i64>,
    pub seq: u32,
    pub start_ns: i64,
    pub end_ns: i64,
    pub before: Vec<Activity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Activity {
    pub what: String,
    pub ns: i64,
}

/// The distributed section of one trace's digest, from the links and steps the digest already
/// built. `file` is the file's name, used for the rank when the trace does not say it.
pub fn distributed(
    trace: &Trace,
    links: &Links,
    steps_report: &StepsReport,
    file: &str,
) -> Distributed {
    let kinds = &links.kinds;
    let (rank, rank_from, world_size) = rank_of(trace, file);
    let host = host_of(trace, file);
    // A synthetic step (the whole trace) is no step to match collectives in.
    let steps: &[Step] = if steps_report.synthetic {
        &[]
    } else {
        &steps_report.steps
    };

    // Busy spans by class.
    let (mut comp, mut comm, mut mem, mut cpu_other) = (vec![], vec![], vec![], vec![]);
    let mut kernels = 0u64;
    let mut gpu_comm: Vec<SliceRef> = Vec::new();
    let mut gloo: Vec<SliceRef> = Vec::new();
    for (li, l) in trace.lanes.iter().enumerate() {
        let s = trace.slices_of(l);
        for i in 0..s.len() {
            let kind = kinds.of_cat(s.cat[i]);
            let span = (s.start_ns[i], s.end_ns(i));
            let r = SliceRef {
                lane: li as u32,
                index: i as u32,
            };
            let name = trace.str(s.name[i]);
            if l.is_gpu() {
                if !kind.is_gpu_busy() {
                    continue;
                }
                kernels += (kind == Kind::Kernel) as u64;
                match op_class(kind, name) {
                    OpClass::Computation => comp.push(span),
                    OpClass::Communication => {
                        comm.push(span);
                        gpu_comm.push(r);
                    }
                    OpClass::Memory => mem.push(span),
                }
            } else if name.starts_with("gloo:") {
                gloo.push(r);
            } else if matches!(kind, Kind::CpuOp | Kind::Annotation | Kind::Python)
                && !name.starts_with("ProfilerStep#")
            {
                cpu_other.push(span);
            }
        }
    }
    let basis = if comp.is_empty() && comm.is_empty() && mem.is_empty() {
        Basis::Cpu
    } else {
        Basis::Gpu
    };
    let slice_span = |r: &SliceRef| {
        let s = trace.slices(r.lane as usize);
        (s.start_ns[r.index as usize], s.end_ns(r.index as usize))
    };
    let (compute_u, comm_u, mem_u, window) = match basis {
        Basis::Gpu => {
            let all = intervals::union(comp.iter().chain(&comm).chain(&mem).copied().collect());
            let window = (
                all.first().map_or(0, |a| a.0),
                all.last().map_or(0, |a| a.1),
            );
            (
                intervals::union(comp),
                intervals::union(comm),
                intervals::union(mem),
                window,
            )
        }
        Basis::Cpu => {
            let window = match (steps.first(), steps.last()) {
                (Some(a), Some(b)) => (a.start_ns, b.end_ns),
                _ => (0, trace.span_ns()),
            };
            let comm = gloo.iter().map(slice_span).collect();
            (
                intervals::union(cpu_other),
                intervals::union(comm),
                Vec::new(),
                window,
            )
        }
    };
    let compute_ns = intervals::length(&compute_u);
    let communication_ns = intervals::length(&comm_u);
    let overlap_ns = intervals::overlap(&comm_u, &compute_u);
    let busy = intervals::union(
        compute_u
            .iter()
            .chain(&comm_u)
            .chain(&mem_u)
            .copied()
            .collect(),
    );
    let idle_ns = (window.1 - window.0) - intervals::length_within(&busy, window.0, window.1);
    let hta_steps = (basis == Basis::Gpu)
        .then(|| hta::comm_comp_overlap(trace, links))
        .flatten()
        .map(|(steps, comm_us, overlap_us)| HtaSteps {
            steps,
            communication_ns: comm_us * 1000,
            overlap_ns: overlap_us * 1000,
        });

    // Collective instances.
    let mut collectives: Vec<Instance> = Vec::new();
    let sources = if basis == Basis::Gpu {
        &gpu_comm
    } else {
        &gloo
    };
    for r in sources {
        let what = describe(trace, links, *r, world_size);
        let (start_ns, end_ns) = slice_span(r);
        collectives.push(Instance {
            what,
            step: None,
            seq: 0,
            start_ns,
            end_ns,
            before: Vec::new(),
        });
    }
    collectives.sort_by(|a, b| {
        (a.start_ns, a.end_ns, &a.what.name).cmp(&(b.start_ns, b.end_ns, &b.what.name))
    });
    number_instances(&mut collectives, steps);
    let thread = steps_report
        .steps
        .iter()
        .find_map(|s| s.slice)
        .filter(|r| r.lane != u32::MAX)
        .map(|r| r.lane as usize);
    let mut prev_end = 0;
    for c in &mut collectives {
        let step = c
            .step
            .and_then(|n| steps.iter().find(|s| s.number == Some(n)));
        let from = step.map_or(prev_end.min(c.start_ns), |s| s.cpu_start_ns);
        if let Some(lane) = thread {
            c.before = activities(trace, links, lane, from, c.start_ns);
        }
        prev_end = prev_end.max(c.end_ns);
    }

    Distributed {
        file: file.to_string(),
        rank,
        rank_from,
        world_size,
        backend: trace
            .meta
            .distributed
            .as_ref()
            .and_then(|d| d.backend.clone()),
        host,
        // Saturating: a damaged `baseTimeNanoseconds` must not overflow.
        clock_origin_ns: trace
            .meta
            .base_time_ns
            .unwrap_or(0)
            .saturating_add(trace.meta.origin_ns),
        basis,
        compute_ns,
        communication_ns,
        overlap_ns,
        exposed_communication_ns: communication_ns - overlap_ns,
        memcpy_ns: intervals::length(&mem_u),
        idle_ns,
        kernels,
        hta_steps,
        peak_memory_bytes: peak_memory(trace),
        collectives,
    }
}

/// Process group, name, step, size: instances with equal keys are numbered in start order.
type SeqKey = (String, String, Option<i64>, Option<i64>);

/// Steps (tiling the time from each step's CPU start to the next one's) and sequence numbers.
fn number_instances(collectives: &mut [Instance], steps: &[Step]) {
    let last_end = steps.iter().map(|s| s.end_ns).max().unwrap_or(i64::MIN);
    let mut counters: std::collections::HashMap<SeqKey, u32> = Default::default();
    for c in collectives.iter_mut() {
        let k = steps.partition_point(|s| s.cpu_start_ns <= c.start_ns);
        c.step = if k > 0 && c.start_ns < last_end {
            steps[k - 1].number
        } else {
            None
        };
        let key = (
            c.what.process_group.clone(),
            c.what.name.clone(),
            c.step,
            c.what.size_key(),
        );
        let n = counters.entry(key).or_insert(0);
        c.seq = *n;
        *n += 1;
    }
}

/// What a collective is: from its own args, its launching operator's, its `nccl:*`/`gloo:*` label's,
/// its name.
fn describe(trace: &Trace, links: &Links, r: SliceRef, world_size: Option<i64>) -> Collective {
    let s = trace.slices(r.lane as usize);
    let i = r.index as usize;
    let own = s.args[i];
    let op = links.op(r).map(|o| trace.columns.args[trace.row(o)]);
    // The `nccl:*` label around the launch (GPU), or the `gloo:*` span itself (CPU).
    let label = if trace.lanes[r.lane as usize].is_gpu() {
        links
            .launch(r)
            .and_then(|l| links.label(trace, l))
            .filter(|l| {
                let ls = trace.slices(l.lane as usize);
                let n = trace.str(ls.name[l.index as usize]);
                n.starts_with("nccl:") || n.starts_with("gloo:")
            })
    } else {
        Some(r)
    };
    let label_args = label.map(|l| trace.columns.args[trace.row(l)]);
    let label_name = label.map(|l| {
        let ls = trace.slices(l.lane as usize);
        trace.str(ls.name[l.index as usize])
    });
    let field = |key: &str| -> Option<&str> {
        [Some(own), op]
            .into_iter()
            .flatten()
            .find_map(|a| trace.args.field(a, key))
            .map(unquote)
    };
    let int = |key: &str| field(key).and_then(|v| v.trim().parse::<i64>().ok());
    let name = field("Collective name")
        .map(str::to_string)
        .or_else(|| label_name.map(|n| n.split_once(':').map_or(n, |x| x.1).to_string()))
        .unwrap_or_else(|| collective::kernel_collective(trace.str(s.name[i])));
    let (label_nelems, label_dtype) = label_args
        .map(|a| dims_and_type(trace, a))
        .unwrap_or((None, None));
    let dtype = field("dtype").map(str::to_string).or(label_dtype);
    Collective::new(
        &name,
        field("Process Group Name")
            .map(str::to_string)
            .unwrap_or_else(|| "default".to_string()),
        int("In msg nelems").or(label_nelems),
        int("Out msg nelems"),
        dtype,
        int("Group size").or(world_size),
    )
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    v.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(v)
}

/// Elements of the first input (all tensors of a list) and its dtype, from `Input Dims`/`Input type`.
fn dims_and_type(trace: &Trace, args: ArgsId) -> (Option<i64>, Option<String>) {
    let dims = trace
        .args
        .field(args, "Input Dims")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok());
    let nelems = dims.as_ref().and_then(|d| d.get(0)).map(count_elements);
    let dtype = trace
        .args
        .field(args, "Input type")
        .and_then(|t| serde_json::from_str::<Vec<String>>(t).ok())
        .and_then(|v| v.into_iter().next())
        .filter(|t| !t.is_empty());
    (nelems, dtype)
}

/// Elements of a shape (`[2, 3]` = 6) or of a list of shapes (summed); a scalar `[]` counts 1.
fn count_elements(v: &serde_json::Value) -> i64 {
    match v {
        serde_json::Value::Array(items) if items.iter().all(|x| x.is_number()) => items
            .iter()
            .map(|x| x.as_i64().unwrap_or(0))
            .fold(1i64, |a, b| a.saturating_mul(b)),
        serde_json::Value::Array(items) => items.iter().map(count_elements).sum(),
        _ => 0,
    }
}

/// What `lane` did in `[from, to)`: its outermost slices under the step (or roots), by label.
fn activities(trace: &Trace, links: &Links, lane: usize, from: i64, to: i64) -> Vec<Activity> {
    if to <= from {
        return Vec::new();
    }
    let s = trace.slices(lane);
    let parents = links.parents_of_lane(lane);
    let is_step = |i: usize| trace.str(s.name[i]).starts_with("ProfilerStep#");
    let mut by: Vec<Activity> = Vec::new();
    let mut covered = 0i64;
    // Slices are sorted by start; none starting at or after `to` can overlap.
    let end = s.start_ns.partition_point(|&t| t < to);
    for i in 0..end {
        let (a, b) = (s.start_ns[i].max(from), s.end_ns(i).min(to));
        if b <= a || is_step(i) {
            continue;
        }
        let p = parents.get(i).copied().unwrap_or(u32::MAX);
        let outermost = p == u32::MAX || is_step(p as usize);
        if !outermost {
            continue;
        }
        let name = trace.str(s.name[i]);
        let what = match links.kinds.of_cat(s.cat[i]) {
            _ if name.starts_with("enumerate(DataLoader)#")
                || name.starts_with("enumerate(DataPipe)#") =>
            {
                "DataLoader".to_string()
            }
            Kind::Annotation => name.to_string(),
            Kind::Python => "Python".to_string(),
            Kind::CpuOp => "CPU operators".to_string(),
            _ => "other".to_string(),
        };
        covered += b - a;
        match by.iter_mut().find(|x| x.what == what) {
            Some(x) => x.ns += b - a,
            None => by.push(Activity { what, ns: b - a }),
        }
    }
    let nothing = (to - from) - covered;
    if nothing > 0 {
        by.push(Activity {
            what: "nothing recorded".to_string(),
            ns: nothing,
        });
    }
    by.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.what.cmp(&b.what)));
    by.truncate(MAX_BEFORE);
    by
}

fn peak_memory(trace: &Trace) -> Option<i64> {
    let m = &trace.memory;
    let peak = |dev: i8| {
        (0..m.len())
            .filter(|&i| m.device_type[i] == dev)
            .map(|i| m.total_allocated[i])
            .max()
    };
    peak(1).or_else(|| peak(0))
}

/// Rank and world size: `distributedInfo`, else the file name.
fn rank_of(trace: &Trace, file: &str) -> (Option<i64>, RankSource, Option<i64>) {
    let named_world = number_after(file, &["of"]);
    if let Some(d) = &trace.meta.distributed {
        return (
            Some(d.rank),
            RankSource::DistributedInfo,
            d.world_size.or(named_world),
        );
    }
    match rank_in_file_name(file) {
        Some(r) => (Some(r), RankSource::FileName, named_world),
        None => (None, RankSource::Unknown, named_world),
    }
}

/// The rank a trace's file name gives (`rank3`, `rank_3`, `worker3`, ...), as `rank_of` reads it
/// when the trace has no `distributedInfo`.
pub fn rank_in_file_name(file: &str) -> Option<i64> {
    number_after(
        file,
        &["rank_", "rank-", "rank", "worker_", "worker-", "worker"],
    )
}

/// The number right after the first of `prefixes` found in `name` (case-insensitive).
fn number_after(name: &str, prefixes: &[&str]) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    for p in prefixes {
        let mut from = 0;
        while let Some(at) = lower[from..].find(p) {
            let rest = &lower[from + at + p.len()..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if !digits.is_empty() {
                return digits.parse().ok();
            }
            from += at + p.len();
        }
    }
    None
}

/// The host: the envelope's `host_name`, else `{host}_{pid}.{time}.pt.trace.json`'s host.
fn host_of(trace: &Trace, file: &str) -> Option<String> {
    if let Some((_, v)) = trace.meta.other.iter().find(|(k, _)| k == "host_name") {
        if let Some(h) = v.as_str().filter(|h| !h.is_empty()) {
            return Some(h.to_string());
        }
    }
    let stem = file.split(".pt.trace").next()?;
    let (head, time) = stem.rsplit_once('.')?;
    let (host, pid) = head.rsplit_once('_')?;
    let numeric = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    (numeric(time) && numeric(pid) && !host.is_empty()).then(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_hosts_from_file_names() {
        assert_eq!(number_after("rank_3.json", &["rank_"]), Some(3));
        assert_eq!(number_after("param_rank5of8.json.gz", &["rank"]), Some(5));
        assert_eq!(number_after("param_rank5of8.json.gz", &["of"]), Some(8));
        assert_eq!(number_after("profile.json", &["rank"]), None);
        let t = Trace::default();
        assert_eq!(
            host_of(&t, "node-7_1234.1690000000000.pt.trace.json.gz"),
            Some("node-7".to_string())
        );
        assert_eq!(host_of(&t, "worker0.pt.trace.json.gz"), None);
        assert_eq!(
            rank_of(&t, "worker12.pt.trace.json"),
            (Some(12), RankSource::FileName, None)
        );
    }

    #[test]
    fn elements_of_shapes_and_lists() {
        let v = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        assert_eq!(count_elements(&v("[2, 3]")), 6);
        assert_eq!(count_elements(&v("[[2, 3], [4]]")), 10);
        assert_eq!(count_elements(&v("[]")), 1);
    }
}
