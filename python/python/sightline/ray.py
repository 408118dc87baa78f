"""Many traces on a Ray cluster: one digest row per trace file, as a Ray Dataset.

``pip install sightline[ray]``. ``digests(uri_or_paths)`` lists trace files under a local path or a
``s3://`` / ``gs://`` URI (through pyarrow's filesystems), parses and analyses each on a Ray worker
with this package, and returns a ``ray.data.Dataset`` with one row per file. A file that is not a
trace, or fails to read, is a row with ``ok=False`` and its ``error``; the job goes on. Ray Data
retries a task whose worker died (its tasks' ``max_retries`` is -1, unlimited, for system failures),
and a retried task recomputes its whole batch of files, whose first attempt produced nothing, so a
file is neither lost nor counted twice.

Every figure of a row is the core's: the tables' and reports' JSON, and the trace's digest (the one
``sightline digest`` writes and ``diff`` and ``ranks`` read, in the ``digest`` column). The rows
aggregate: :func:`across_ranks` (per job: the core's comparison of the ranks' digests, as
``sightline ranks`` makes it, with each rank's step time and idle time against the median rank's and
the slowest) and :func:`run_over_run` (two sets of runs matched by rank: step time, idle time and
findings, before and after). ``Dataset.write_parquet(uri)`` stores the digests.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import pyarrow as pa
import pyarrow.fs as pafs

import sightline
from ._sightline import diff_json as _diff_json
from ._sightline import ranks_of_digests_json as _ranks_of_digests_json

#: File names read as traces when a directory or prefix is listed.
TRACE_SUFFIXES = (".json", ".json.gz")
#: Not traces, though they end in .json: the fixtures' reference files.
NOT_TRACES = (".truth.json", "expected.json")
#: Rows of the operator and kernel tables kept in a digest.
TOP = 10

#: One digest row's columns (every row has all of them, so Parquet and Arrow see one schema).
SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("ok", pa.bool_()),
        ("error", pa.string()),
        ("events", pa.int64()),
        ("rank", pa.int64()),
        ("world_size", pa.int64()),
        ("schema", pa.string()),
        ("span_ns", pa.int64()),
        ("truncated", pa.bool_()),
        ("diagnostics", pa.int64()),
        ("steps", pa.int64()),
        ("step_time_us", pa.float64()),
        ("step_time_mean_us", pa.float64()),
        ("step_time_max_us", pa.float64()),
        ("idle_us", pa.float64()),
        ("idle_pct", pa.float64()),
        ("gpu_time_us", pa.float64()),
        ("self_cpu_total_us", pa.float64()),
        ("communication_us", pa.float64()),
        ("finding_ids", pa.list_(pa.string())),
        # The analyses themselves, as the CLI's JSON (a row's size stays small: top rows only).
        ("summary", pa.string()),
        ("steps_report", pa.string()),
        ("idle", pa.string()),
        ("top_ops", pa.string()),
        ("top_kernels", pa.string()),
        ("findings", pa.string()),
        ("collectives", pa.string()),
        # The trace's digest as ``sightline digest`` writes it: what :func:`across_ranks` compares.
        ("digest", pa.string()),
    ]
)


def _empty(path: str) -> Dict[str, Any]:
    row: Dict[str, Any] = {name: None for name in SCHEMA.names}
    row["path"] = path
    row["finding_ids"] = []
    return row


def digest_trace(trace: "sightline.Trace", path: str) -> Dict[str, Any]:
    """One row of :data:`SCHEMA` from an opened trace."""
    row = _empty(path)
    s = trace.summary()
    # A digest is a function of the file: run-to-run timings stay out.
    for timing in ("parse_seconds", "mb_per_s"):
        s.pop(timing, None)
    steps = trace.steps()
    steps_meta = sightline.table_meta(steps)
    idle = trace.idle()
    idle_meta = sightline.table_meta(idle)
    ops = trace.ops()
    ops_meta = sightline.table_meta(ops)
    kernels = trace.kernels()
    findings = trace.findings().to_pylist()
    stats = steps_meta["stats"]
    temporal = idle_meta["temporal"]
    # The digest names the file by its name (its rank when the trace has none), as `ranks` does.
    digest_text = trace._native.digest_json(path.rsplit("/", 1)[-1])
    dist = json.loads(digest_text)["distributed"]
    # The trace's collectives as the core's comparison of ranks groups them, for this rank alone.
    alone = json.loads(_ranks_of_digests_json([digest_text], [path]))["ranks"]
    row.update(
        ok=True,
        events=s["events"]["total"],
        rank=s["rank"],
        world_size=s.get("world_size"),
        schema=s["schema"],
        span_ns=s["span_ns"],
        truncated=s["truncated"],
        diagnostics=len(s["diagnostics"]),
        steps=0 if steps_meta["synthetic"] else steps.num_rows,
        step_time_us=stats["median_ns"] / 1e3 if stats["count"] else None,
        step_time_mean_us=stats["mean_ns"] / 1e3 if stats["count"] else None,
        step_time_max_us=stats["max_ns"] / 1e3 if stats["count"] else None,
        # HTA's temporal breakdown holds one entry per rank, and a trace is one rank.
        idle_us=temporal[0]["idle_us"] if temporal else None,
        idle_pct=temporal[0]["idle_pct"] if temporal else None,
        gpu_time_us=ops_meta["gpu_time_us"],
        self_cpu_total_us=ops_meta["self_cpu_total_us"],
        communication_us=dist["communication_ns"] / 1e3,
        finding_ids=[f["id"] for f in findings],
        summary=json.dumps(s),
        steps_report=json.dumps({**steps_meta, "steps": steps.to_pylist()}),
        idle=json.dumps({**idle_meta, "idle": idle.to_pylist()}),
        top_ops=json.dumps(ops.slice(0, TOP).to_pylist()),
        top_kernels=json.dumps(kernels.slice(0, TOP).to_pylist()),
        findings=json.dumps(findings),
        collectives=json.dumps(alone["collectives"]),
        digest=digest_text,
    )
    return row


def _filesystem(uri: str) -> "tuple[pafs.FileSystem, str]":
    if "://" in uri:
        return pafs.FileSystem.from_uri(uri)
    import os

    return pafs.LocalFileSystem(), os.path.abspath(uri)


def _is_trace_name(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES) and not name.endswith(NOT_TRACES)


def list_traces(uri_or_paths: Union[str, Sequence[str]]) -> List[str]:
    """The trace files named or found under each path or URI (directories recursively), sorted."""
    items = [uri_or_paths] if isinstance(uri_or_paths, str) else list(uri_or_paths)
    out: List[str] = []
    for item in items:
        item = str(item)
        fs, path = _filesystem(item)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.Directory:
            scheme = item.split("://", 1)[0] + "://" if "://" in item else ""
            for f in fs.get_file_info(pafs.FileSelector(path, recursive=True)):
                if f.type == pafs.FileType.File and _is_trace_name(f.base_name):
                    out.append(scheme + f.path)
        else:
            # A file (or a missing one: its row will say so).
            out.append(item if "://" in item else path)
    return sorted(set(out))


def digest(path: str) -> Dict[str, Any]:
    """The digest row of one file or URI; never raises for a bad file (``ok=False``, ``error``)."""
    try:
        if "://" in path:
            fs, p = _filesystem(path)
            with fs.open_input_stream(p, compression=None) as f:
                trace = sightline.open(f)
        else:
            trace = sightline.open(path)
        return digest_trace(trace, path)
    except (sightline.SightlineError, OSError, ValueError) as e:
        row = _empty(path)
        row.update(ok=False, error=f"{type(e).__name__}: {e}")
        return row


def _digest_batch(batch: Dict[str, Any]) -> pa.Table:
    rows = [digest(p) for p in batch["path"].to_pylist()]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def digests(
    uri_or_paths: Union[str, Sequence[str]],
    *,
    files_per_task: int = 8,
    num_cpus: float = 1,
    memory: Optional[float] = None,
) -> Any:
    """A ``ray.data.Dataset`` of :data:`SCHEMA` rows, one per trace file under ``uri_or_paths``
    (a local path, ``s3://bucket/prefix``, ``gs://...``, or a list of them). Each Ray task digests
    ``files_per_task`` files with ``num_cpus`` CPUs and ``memory`` bytes reserved (see the README
    for the memory a trace needs)."""
    import ray

    paths = list_traces(uri_or_paths)
    if not paths:
        raise FileNotFoundError(f"no trace files (*.json, *.json.gz) under {uri_or_paths!r}")
    return ray.data.from_items([{"path": p} for p in paths]).map_batches(
        _digest_batch,
        batch_size=files_per_task,
        batch_format="pyarrow",
        num_cpus=num_cpus,
        memory=memory,
    )


def _rows(digests_: Any) -> List[Dict[str, Any]]:
    """Rows of a Dataset, a pyarrow Table, a pandas DataFrame or a list of dicts."""
    if hasattr(digests_, "take_all"):
        return list(digests_.take_all())
    if isinstance(digests_, pa.Table):
        return digests_.to_pylist()
    if hasattr(digests_, "to_dict"):
        return digests_.to_dict("records")
    return list(digests_)


def _job(path: str) -> str:
    """A job is the directory its rank traces sit in."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def across_ranks(digests_: Any, job: Any = _job) -> pa.Table:
    """Cross-rank view of digests, one row per (job, rank): the core's comparison of the job's
    digests (``sightline ranks``: one trace per rank, by rank; files without a rank and a rank's
    duplicates left out), with each rank's step time and idle time against the median rank's
    (ratio) and whether it is the job's slowest. ``job(path)`` groups files into jobs (default:
    their directory)."""
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for r in _rows(digests_):
        if r["ok"]:
            if not r.get("digest"):
                raise ValueError(f"{r['path']}: a row without its digest (made before it was kept): digest it again")
            groups.setdefault(job(r["path"]), []).append(r)
    out = []
    for name, rows in sorted(groups.items()):
        both = json.loads(_ranks_of_digests_json([r["digest"] for r in rows], [r["path"] for r in rows]))
        ranks = both["ranks"]["ranks"]
        for r, v in zip(ranks, both["versus_median"]):
            out.append(
                {
                    "job": name,
                    "rank": r["rank"],
                    "path": r["file"],
                    "ranks": len(ranks),
                    "step_time_us": r["step_time_us"] if r["steps"] else None,
                    "step_time_vs_median": v["step_time_vs_median"],
                    "idle_us": r["idle_us"],
                    "idle_vs_median": v["idle_vs_median"],
                    "slowest": v["slowest"],
                    "communication_us": r["communication_us"],
                }
            )
    return pa.Table.from_pylist(out)


def run_over_run(base: Any, new: Any) -> pa.Table:
    """Two runs (digests of each) matched by rank, as ``sightline diff --total`` compares each
    rank's two digests: the median step and the devices' idle time before and after, their change,
    and the findings that appeared or went away (one that only crossed its threshold is among
    them, as the diff lists it). One row per rank present in both; idle is None on a trace
    without devices."""
    before = {r["rank"]: r for r in _rows(base) if r["ok"]}
    after = {r["rank"]: r for r in _rows(new) if r["ok"]}
    out = []
    for rank in sorted(before.keys() & after.keys()):
        a, b = before[rank], after[rank]
        for r in (a, b):
            if not r.get("digest"):
                raise ValueError(f"{r['path']}: a row without its digest (made before it was kept): digest it again")
        d = json.loads(_diff_json(a["digest"].encode(), b["digest"].encode(), True, False, None, [], a["path"], b["path"]))
        s, idle = d["summary"], d["idle"]
        with_devices = idle["base"]["devices"] > 0 and idle["new"]["devices"] > 0
        out.append(
            {
                "rank": rank,
                "base_path": a["path"],
                "new_path": b["path"],
                "base_step_time_us": s["step_time_base_us"],
                "new_step_time_us": s["step_time_new_us"],
                "step_time_delta_us": s["step_time_delta_us"],
                "base_idle_us": idle["base"]["idle_us"] if idle["base"]["devices"] else None,
                "new_idle_us": idle["new"]["idle_us"] if idle["new"]["devices"] else None,
                "idle_delta_us": idle["delta"]["idle_us"] if with_devices else None,
                "findings_new": sorted(f["id"] for f in d["findings"]["added"]),
                "findings_gone": sorted(f["id"] for f in d["findings"]["removed"]),
            }
        )
    return pa.Table.from_pylist(out)


def history(runs: Iterable[Any]) -> pa.Table:
    """A regression history: digests of successive runs, one row per (run index, rank) with step
    and idle time, for plotting or a threshold check."""
    out = []
    for i, run in enumerate(runs):
        for r in sorted(_rows(run), key=lambda r: (r["rank"] if r["rank"] is not None else -1, r["path"])):
            if r["ok"]:
                out.append(
                    {
                        "run": i,
                        "rank": r["rank"],
                        "path": r["path"],
                        "step_time_us": r["step_time_us"],
                        "idle_us": r["idle_us"],
                        "finding_ids": r["finding_ids"],
                    }
                )
    return pa.Table.from_pylist(out)
