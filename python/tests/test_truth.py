"""The reference numbers (PyTorch's key_averages, HTA 0.5.0's idle breakdown) through Python, with
the tolerances the Rust tests use (tests/tables.rs, tests/idle.rs)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Dict

import pytest

import sightline
from conftest import SHARED

CPU = SHARED / "pytorch-cpu"
REAL = SHARED / "real"


def close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


TRUTHS = sorted(CPU.glob("*.truth.json")) + sorted((SHARED / "pytorch-cpu-pairs").glob("*.truth.json"))


@pytest.mark.parametrize("truth_path", TRUTHS, ids=lambda p: p.name)
def test_ops_equal_pytorch_key_averages(truth_path) -> None:
    stem = truth_path.name[: -len(".truth.json")]
    trace_path = next(
        p for p in (truth_path.parent / f"{stem}.pt.trace.json.gz", truth_path.parent / f"{stem}.pt.trace.json") if p.exists()
    )
    truth = json.loads(truth_path.read_text())
    trace = sightline.open(trace_path)
    checked = 0
    for key, by_shape in (("key_averages", False), ("key_averages_by_input_shape", True)):
        if key not in truth:
            continue
        # input_shapes is JSON text (its declared type: a list of tensors may nest deeper than one
        # Arrow type holds); PyTorch keys by the list as Python prints it.
        rows = {
            (r["name"], None if r["input_shapes"] is None else str(json.loads(r["input_shapes"]))): r
            for r in trace.ops(by_shape=by_shape).to_pylist()
        }
        assert len(rows) == len(truth[key])
        memory_mismatches = 0
        for t in truth[key]:
            r = rows[(t["key"], t["input_shapes"] if by_shape else None)]
            assert r["calls"] == t["count"]
            assert close(r["self_cpu_us"], t["self_cpu_us"], 1e-9)
            assert close(r["cpu_total_us"], t["cpu_total_us"], 1e-9)
            # The pairs' truth files carry no memory columns.
            if "cpu_memory_usage" in t and (r["cpu_mem_bytes"], r["self_cpu_mem_bytes"]) != (
                t["cpu_memory_usage"],
                t["self_cpu_memory_usage"],
            ):
                memory_mismatches += 1
        assert memory_mismatches * 100 <= len(truth[key])
        checked += 1
    assert checked


def test_idle_compat_hta_equals_hta_reference() -> None:
    reference = json.loads((REAL / "hta_reference.json").read_text())
    assert len(reference) >= 14
    for file, r in reference.items():
        trace = sightline.open(REAL / file)
        idle = trace.idle(compat="hta")
        temporal = sightline.table_meta(idle)["temporal"]
        for rt in r["temporal"]:
            t = next(x for x in temporal if x["rank"] == rt["rank"])
            window = rt["kernel_time(us)"]
            for ours, key in (
                (t["window_us"], "kernel_time(us)"),
                (t["idle_us"], "idle_time(us)"),
                (t["compute_us"], "compute_time(us)"),
                (t["non_compute_us"], "non_compute_time(us)"),
            ):
                assert abs(ours - rt[key]) <= 0.005 * window, (file, key, ours, rt[key])
        streams: Dict[int, Dict[str, float]] = defaultdict(dict)
        for ri in r["idle"]:
            streams[ri["stream"]][ri["idle_category"]] = ri["idle_time"]
        rows = {row["stream"]: row for row in idle.to_pylist()}
        for stream, cats in streams.items():
            row = rows[stream]
            total = sum(cats.values())
            for cat in ("host_wait", "kernel_wait", "other"):
                ours = row[f"{cat}_us"]
                assert abs(ours - cats.get(cat, 0.0)) <= 0.02 * max(total, 1.0), (file, stream, cat)
