"""`sightline.ranks` and `sightline.diff` against `sightline ranks --json` and `sightline diff
--json` of this checkout's CLI, on the shared real traces."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import sightline
from conftest import SHARED, cli_json, cli_path

GLOO = SHARED / "pytorch-cpu-ranks" / "gloo4_straggler"
DLRM = sorted((SHARED / "real").glob("param_dlrm_v100_rank*of8.pt.trace.json.gz"))
PAIRS = SHARED / "pytorch-cpu-pairs"
BASE = PAIRS / "workers.base.pt.trace.json.gz"
NEW = PAIRS / "workers.new.pt.trace.json.gz"


def test_ranks_of_a_folder_equal_the_clis() -> None:
    # The folder holds expected.json too: not a trace, listed in unreadable_files by both.
    got = sightline.ranks(GLOO)
    assert got == cli_json("ranks", GLOO)
    assert got["unreadable_files"] and len(got["ranks"]) == 4
    assert sightline.ranks([str(GLOO)], align="none") == cli_json("ranks", GLOO, "--align", "none")


def test_ranks_of_files_equal_the_clis() -> None:
    assert len(DLRM) == 8
    got = sightline.ranks(DLRM)
    assert got == cli_json("ranks", *DLRM)
    assert [r["rank"] for r in got["ranks"]] == list(range(8))


def test_ranks_overlap_over_htas_steps_or_the_whole_trace() -> None:
    nccl = SHARED / "real" / "hta_a100_nccl_rank0of2.json.gz"
    steps = sightline.ranks(nccl)
    assert steps == cli_json("ranks", nccl)
    assert steps["overlap"][0]["covers"] == "hta_steps" and steps["overlap"][0]["steps"] == [4, 5]
    whole = sightline.ranks(nccl, whole_trace=True)
    assert whole == cli_json("ranks", nccl, "--whole-trace")
    assert whole["overlap"][0]["covers"] == "whole_trace"
    assert whole["overlap"][0]["comm_comp_overlap_pct"] != steps["overlap"][0]["comm_comp_overlap_pct"]


def test_ranks_rows_as_tables() -> None:
    got = sightline.ranks(GLOO)
    t = sightline.rows(got, "ranks")
    assert isinstance(t, pa.Table) and t.num_rows == 4
    assert t.column("rank").to_pylist() == [r["rank"] for r in got["ranks"]]
    assert sightline.table_meta(t)["world_size"] == got["world_size"]
    assert sightline.rows(got, "collectives").num_rows == len(got["collectives"])


@pytest.mark.parametrize(
    "kwargs,flags",
    [
        ({}, []),
        ({"per_step": False}, ["--total"]),
        ({"by_shape": True}, ["--by-shape"]),
        ({"top": 3, "fail_if": ["step_time>+5%"]}, ["--top", "3", "--fail-if", "step_time>+5%"]),
    ],
)
def test_diff_equals_the_clis(kwargs: dict, flags: list) -> None:
    out = subprocess.run(
        [str(cli_path()), "diff", str(BASE), str(NEW), "--json", *flags],
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 1), out.stderr
    want = json.loads(out.stdout)
    got = sightline.diff(str(BASE), str(NEW), **kwargs)
    assert got == want
    assert got["ops"]
    if "fail_if" in kwargs:
        assert len(got["fail_if"]) == 1 and (got["fail_if"][0]["failed"] == (out.returncode == 1))


def test_diff_of_traces_bytes_and_digests(tmp_path: Path) -> None:
    want = cli_json("diff", BASE, NEW)
    base_t, new_t = sightline.open(BASE), sightline.open(NEW)
    from_traces = sightline.diff(base_t, new_t)
    assert from_traces["base_file"] == base_t.source
    strip = lambda d: {k: v for k, v in d.items() if k not in ("base_file", "new_file")}  # noqa: E731
    assert strip(from_traces) == strip(want)
    from_bytes = sightline.diff(gzip.open(BASE).read(), NEW.read_bytes())
    assert from_bytes["base_file"] == "<bytes>" and strip(from_bytes) == strip(want)
    # A digest `sightline digest` wrote stands for its trace, as a file or as bytes.
    digest = subprocess.run(
        [str(cli_path()), "digest", str(BASE)], capture_output=True, check=True
    ).stdout
    kept = tmp_path / "base.digest.json"
    kept.write_bytes(digest)
    assert sightline.diff(kept, NEW) == cli_json("diff", kept, NEW)
    assert strip(sightline.diff(digest, NEW)) == strip(want)


def test_bad_input_raises(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"not": "a trace"}')
    with pytest.raises(sightline.NotATrace, match="junk.json"):
        sightline.diff(junk, NEW)
    with pytest.raises(sightline.NotATrace):
        sightline.diff(BASE, b"\x00 not json")
    with pytest.raises(sightline.NotATrace):
        sightline.ranks(junk)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(sightline.NotATrace, match="no .json"):
        sightline.ranks(empty)
    with pytest.raises(FileNotFoundError):
        sightline.diff(tmp_path / "missing.json", NEW)
    with pytest.raises(FileNotFoundError):
        sightline.ranks(tmp_path / "missing")
    with pytest.raises(ValueError, match="align"):
        sightline.ranks(GLOO, align="sideways")
    with pytest.raises(ValueError):
        sightline.diff(BASE, NEW, fail_if="no such metric > 1")
    with pytest.raises(ValueError):
        sightline.diff(BASE, NEW, top=-1)
    with pytest.raises(TypeError):
        sightline.diff(1, NEW)  # type: ignore[arg-type]


def test_critical_path_and_what_if_equal_the_clis() -> None:
    worker2 = GLOO / "worker2.pt.trace.json.gz"
    t = sightline.open(worker2)
    got = t.critical_path(what_if=["slow_rank_work=0"])
    assert got == cli_json("path", worker2, "--what-if", "slow_rank_work=0")
    saved = {s["step"]: s["saving_us"] for s in got["what_if"]["steps"]}
    assert saved["ProfilerStep#3"] > 39_000 and saved["ProfilerStep#4"] == 0
    assert sightline.what_if(worker2, "slow_rank_work=0") == got["what_if"]
    one = t.critical_path(step="ProfilerStep#3")
    assert [p["step"] for p in one["paths"]] == ["ProfilerStep#3"]
    with pytest.raises(ValueError, match="matches no slice"):
        t.critical_path(what_if=["no_such_op=0"])
    with pytest.raises(ValueError, match="NAME=0"):
        sightline.what_if(t, "aten::mm")


def test_the_ranks_of_a_job_share_one_path_graph_as_the_cli_joins_them() -> None:
    workers = sorted(GLOO.glob("worker*.pt.trace.json.gz"))
    edit = "rank2:slow_rank_work=0"
    got = sightline.critical_path(workers, what_if=[edit])
    assert got == cli_json("path", *workers, "--what-if", edit)
    # Rank 0 only waited, yet its slow steps run through rank 2's sleep and get shorter.
    rank0 = [p for p in got["paths"] if p["rank"] == 0 and p["step"] == "ProfilerStep#3"][0]
    assert any(s["rank"] == 2 and s["name"] == "slow_rank_work" for s in rank0["segments"])
    saved = {(s["rank"], s["step"]): s["saving_us"] for s in got["what_if"]["steps"]}
    assert saved[(0, "ProfilerStep#3")] > 25_000 and abs(saved[(0, "ProfilerStep#4")]) < 2_000
    traces = [sightline.open(w) for w in workers]
    assert sightline.critical_path(traces, what_if=[edit]) == got
    hta = traces[0].critical_path(compat="hta")
    assert set(hta["paths"][0]["bound_by"]) <= {
        "cpu_bound",
        "gpu_compute_bound",
        "gpu_communication_bound",
        "gpu_kernel_kernel_overhead",
        "gpu_kernel_launch_overhead",
    }
    assert hta == cli_json("path", workers[0], "--compat", "hta")
    with pytest.raises(ValueError, match="compat"):
        traces[0].critical_path(compat="tracelens")
    with pytest.raises(ValueError, match="at least one"):
        sightline.critical_path([])
