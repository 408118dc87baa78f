"""sightline.ray on a local Ray cluster (ray.init(num_cpus=2), no network): the digests equal the
package's on one machine, a worker killed mid-run is retried without losing or duplicating a file,
a bad file is a row of its own, and the aggregations read the digests."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray")

import sightline
import sightline.ray as sray
from conftest import SHARED

RANKS = SHARED / "pytorch-cpu-ranks" / "gloo4_straggler"
DLRM = sorted((SHARED / "real").glob("param_dlrm_v100_rank*of8.pt.trace.json.gz"))
COPIES = 240


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: Any) -> Path:
    """The eight DLRM ranks, the four gloo ranks, copies of small traces, and files that are not."""
    root = tmp_path_factory.mktemp("corpus")
    for p in DLRM:
        shutil.copy(p, root / p.name)
    (root / "gloo").mkdir()
    for p in sorted(RANKS.glob("*.pt.trace.json.gz")):
        shutil.copy(p, root / "gloo" / p.name)
    (root / "copies").mkdir()
    small = [SHARED / "real" / "hta_a100_alexnet_cuda_sync.json.gz", DLRM[0], DLRM[1]]
    for i in range(COPIES):
        shutil.copy(small[i % len(small)], root / "copies" / f"c{i:03}.pt.trace.json.gz")
    (root / "bad").mkdir()
    (root / "bad" / "page.pt.trace.json").write_text("<html>not a trace</html>")
    (root / "bad" / "empty.json").write_bytes(b"")
    return root


def by_path(rows: Any) -> dict:
    out = {}
    for r in rows:
        assert r["path"] not in out, f"{r['path']} twice"
        out[r["path"]] = r
    return out


def test_digests_equal_the_package_on_one_machine(cluster: None, corpus: Path, tmp_path: Path) -> None:
    ds = sray.digests(str(corpus))
    rows = by_path(ds.take_all())
    files = sray.list_traces(str(corpus))
    assert len(files) == len(DLRM) + 4 + COPIES + 2
    assert sorted(rows) == files
    for path in files:
        assert rows[path] == sray.digest(path), path
    bad = {p: r for p, r in rows.items() if not r["ok"]}
    assert sorted(Path(p).name for p in bad) == ["empty.json", "page.pt.trace.json"]
    assert all(r["error"].startswith("NotATrace: ") for r in bad.values())
    good = rows[str(corpus / DLRM[3].name)]
    t = sightline.open(DLRM[3])
    assert good["events"] == t.summary()["events"]["total"]
    assert good["rank"] == 3 and good["finding_ids"] == [f["id"] for f in t.findings().to_pylist()]
    assert good["idle_us"] == sightline.table_meta(t.idle())["temporal"][0]["idle_us"]
    # The digest is the core's, and the communication time is its.
    digest = json.loads(good["digest"])
    assert digest == json.loads(t._native.digest_json(DLRM[3].name))
    assert good["communication_us"] == digest["distributed"]["communication_ns"] / 1e3
    assert json.loads(good["collectives"]) == sightline.ranks(str(DLRM[3]))["collectives"]

    # Parquet keeps every row and column.
    out = tmp_path / "digests"
    ds.write_parquet(str(out))
    table = pq.read_table(str(out))
    assert table.num_rows == len(files)
    assert set(table.column_names) == set(sray.SCHEMA.names)


def test_a_killed_worker_is_retried_without_loss_or_duplicates(cluster: None, corpus: Path, tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    victim = sray.list_traces(str(corpus / "copies"))[37]

    def dies_once(batch: Any) -> Any:
        if victim in batch["path"].to_pylist() and not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies mid-task
        return sray._digest_batch(batch)

    ds = ray.data.from_items([{"path": p} for p in sray.list_traces(str(corpus / "copies"))])
    rows = by_path(ds.map_batches(dies_once, batch_size=8, batch_format="pyarrow").take_all())
    assert marker.exists(), "the worker was not killed"
    assert sorted(rows) == sray.list_traces(str(corpus / "copies"))
    assert all(r["ok"] for r in rows.values())


def test_across_ranks_finds_the_straggler(cluster: None, corpus: Path) -> None:
    ds = sray.digests(str(corpus / "gloo"))
    t = sray.across_ranks(ds).to_pylist()
    assert [r["rank"] for r in t] == [0, 1, 2, 3]
    # Rank 2 sleeps in two steps; the others wait for it in the all-reduce, so their collectives
    # take longer and rank 2's the least.
    comm = {r["rank"]: r["communication_us"] for r in t}
    assert min(comm, key=comm.get) == 2
    local = sray.across_ranks([sray.digest(str(p)) for p in sray.list_traces(str(corpus / "gloo"))])
    assert local.to_pylist() == t
    # The figures are the core's comparison of the ranks, as `sightline ranks` makes it.
    core = sightline.ranks(str(corpus / "gloo"))["ranks"]
    fields = ("rank", "step_time_us", "idle_us", "communication_us")
    assert [tuple(r[k] for k in fields) for r in t] == [tuple(r[k] for k in fields) for r in core]
    assert [Path(r["path"]).name for r in t] == [r["file"] for r in core]
    # Against the median rank's: one rank's own figure, so it has a ratio of exactly 1.
    assert 1.0 in [r["step_time_vs_median"] for r in t]
    assert sum(r["slowest"] for r in t) >= 1


def test_run_over_run(cluster: None) -> None:
    pairs = SHARED / "pytorch-cpu-pairs"
    base = [sray.digest(str(pairs / "workers.base.pt.trace.json.gz"))]
    new = [sray.digest(str(pairs / "workers.new.pt.trace.json.gz"))]
    t = sray.run_over_run(base, new).to_pylist()
    assert len(t) == 1
    r = t[0]
    assert r["step_time_delta_us"] == pytest.approx(r["new_step_time_us"] - r["base_step_time_us"])
    # CPU traces: no device, so no idle time to compare.
    assert r["base_idle_us"] is None and r["idle_delta_us"] is None
    hist = sray.history([base, new, base]).to_pylist()
    assert [h["run"] for h in hist] == [0, 1, 2]
    assert hist[0]["step_time_us"] == hist[2]["step_time_us"] == r["base_step_time_us"]


def test_run_over_run_is_the_diff_of_each_ranks_digests(cluster: None) -> None:
    # The V100 DataLoader pair as rank 0 of two runs: the figures `sightline diff --total` gives.
    gpu = SHARED / "gpu-training"
    base = [sray.digest(str(SHARED / "real" / "kineto_v100_resnet50_legacy_pt19.pt.trace.json.gz"))]
    new = [sray.digest(str(gpu / "kineto_v100_resnet50_num_workers4_pt19.pt.trace.json.gz"))]
    [r] = sray.run_over_run(base, new).to_pylist()
    d = sightline.diff(base[0]["path"], new[0]["path"], per_step=False)
    assert r["base_step_time_us"] == d["summary"]["step_time_base_us"] == pytest.approx(176273.0)
    assert r["new_step_time_us"] == d["summary"]["step_time_new_us"] == pytest.approx(125087.0)
    assert r["idle_delta_us"] == d["idle"]["delta"]["idle_us"] < 0
    assert r["findings_gone"] == sorted(f["id"] for f in d["findings"]["removed"])
    assert "dataloader_bound" in r["findings_gone"]
