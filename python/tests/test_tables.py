"""Every table and report of the package equals the CLI's JSON, on every fixture."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Dict

import pyarrow as pa
import pytest

import sightline
from conftest import LOCAL, SHARED, cli_json, cli_path, fixture_id, split_fixtures, strip_nulls

FIXTURES, REFUSED = split_fixtures()
# Run-to-run figures: the time this run took, not a property of the trace.
TIMINGS = {"parse_seconds", "mb_per_s", "analysis_seconds"}


def opened(path: Path) -> sightline.Trace:
    return sightline.open(path)


def assert_table(table: pa.Table, cli: Dict[str, Any], rows: str) -> None:
    assert isinstance(table, pa.Table)
    want = cli[rows]
    assert table.num_rows == len(want)
    if want:
        # Columns named and ordered as the CLI's JSON members.
        assert table.column_names == list(want[0].keys())
    ours = table.to_pylist()
    # A nested column whose values have no single Arrow type arrives as their JSON text
    # (sightline._tables); read it back to compare.
    for name in table.column_names:
        if pa.types.is_string(table.schema.field(name).type) and any(
            r.get(name) is not None and not isinstance(r.get(name), str) for r in want
        ):
            for r in ours:
                if r[name] is not None:
                    r[name] = json.loads(r[name])
    assert strip_nulls(ours) == strip_nulls(want)
    rest = {k: v for k, v in cli.items() if k != rows}
    assert sightline.table_meta(table) == rest


def test_fixtures_found() -> None:
    assert len(FIXTURES) >= 30 and REFUSED


@pytest.mark.parametrize("path", REFUSED, ids=fixture_id)
def test_refused_as_the_cli_refuses(path: Path) -> None:
    """What the package calls not a trace, the CLI does too, with the same message."""
    with pytest.raises(sightline.NotATrace) as e:
        sightline.open(path)
    out = subprocess.run([str(cli_path()), "summary", str(path)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == f"sightline: {e.value}"


@pytest.fixture(scope="module", params=FIXTURES, ids=fixture_id)
def case(request: Any) -> Any:
    path = request.param
    return path, opened(path)


def test_summary(case: Any) -> None:
    path, t = case
    ours = t.summary()
    cli = cli_json("summary", path)
    assert {k: v for k, v in ours.items() if k not in TIMINGS} == {
        k: v for k, v in cli.items() if k not in TIMINGS
    }
    assert set(ours) == set(cli)


@pytest.mark.parametrize("by_shape", [False, True])
def test_ops(case: Any, by_shape: bool) -> None:
    path, t = case
    # No capture: the CLI would read one found beside a replay; Python reads only one given.
    args = ["ops", path, "--capture", "none"] + (["--by-shape"] if by_shape else [])
    assert_table(t.ops(by_shape=by_shape), cli_json(*args), "rows")


def test_kernels(case: Any) -> None:
    path, t = case
    assert_table(t.kernels(), cli_json("kernels", path, "--capture", "none"), "rows")


def test_labels(case: Any) -> None:
    path, t = case
    assert_table(t.labels(), cli_json("labels", path), "rows")


def test_modules(case: Any) -> None:
    path, t = case
    assert_table(t.modules(), cli_json("modules", path, "--capture", "none"), "rows")


def test_graphs(case: Any) -> None:
    path, t = case
    assert_table(t.graphs(), cli_json("graphs", path, "--capture", "none"), "graphs")


def test_a_capture_given_names_the_replayed_ops_as_the_cli_does() -> None:
    replay = LOCAL / "graphs" / "sglang_decode.replay.json.gz"
    capture = LOCAL / "graphs" / "sglang_decode.capture.json.gz"
    t = sightline.open(replay)
    # Nothing is read beside the file: the annotation around the graph launch is charged.
    assert t.ops().column("name")[0].as_py() == "step[DECODE bs=32]"
    with pytest.raises(ValueError, match="no graph capture"):
        t.use_capture(sightline.open(replay))
    paired = t.use_capture(sightline.open(capture))
    assert paired["attributed_ops"] == 544 and paired["unattributed_ops"] == 0
    with pytest.raises(ValueError, match="has a capture already"):
        t.use_capture(sightline.open(capture))
    assert_table(t.ops(), cli_json("ops", replay, "--capture", capture), "rows")
    assert t.ops().column("name")[0].as_py() == "aten::mm"
    assert_table(t.kernels(), cli_json("kernels", replay, "--capture", capture), "rows")
    assert_table(t.modules(), cli_json("modules", replay, "--capture", capture), "rows")
    cli = cli_json("graphs", replay, "--capture", capture)
    del cli["first_replays"]  # op by op: the CLI's alone, as the mcp tool leaves it out too
    assert_table(t.graphs(), cli, "graphs")
    assert sightline.table_meta(t.graphs())["captured_ops"][0]["name"] == "aten::mm"


def test_declared_tables_have_one_schema_whatever_the_data() -> None:
    """A table whose columns are declared (``docs/columns.md``) has the same Arrow schema on a
    CPU trace, where it is empty or its device columns are null, as on a GPU trace."""
    cpu = sightline.open(SHARED / "pytorch-cpu" / "cnn_dataloader_sched.pt.trace.json.gz")
    gpu = sightline.open(SHARED / "real" / "tracelens_h100_bert_small_stack_mem.json.gz")
    tables = ["ops", "kernels", "labels", "modules", "graphs", "steps", "idle", "gaps", "compiled"]
    for name in tables + ["findings", "recording"]:
        a, b = getattr(cpu, name)(), getattr(gpu, name)()
        assert a.schema.remove_metadata() == b.schema.remove_metadata(), name
        assert not any(pa.types.is_null(f.type) for f in a.schema), name
    kernels = cpu.kernels()
    assert kernels.num_rows == 0
    assert kernels.schema.field("total_us").type == pa.float64()
    assert kernels.schema.field("launched_by").type == pa.list_(
        pa.struct([("name", pa.string()), ("calls", pa.int64()), ("total_us", pa.float64())])
    )
    # Input shapes, which have no one Arrow type (a list of tensors nests deeper), are JSON text.
    assert cpu.ops(by_shape=True).schema.field("input_shapes").type == pa.string()
    # The steps' breakdown is its declared object; a CPU trace's empty idle table keeps its columns.
    assert cpu.steps().schema.field("breakdown").type.field("kernel_ns").type == pa.int64()
    idle = cpu.idle()
    assert idle.num_rows == 0 and idle.schema.field("host_wait_us").type == pa.float64()
    # A CPU trace has no gaps and no compiled graphs; their tables keep their declared columns.
    gaps = cpu.gaps()
    assert gaps.num_rows == 0 and gaps.schema.field("host_wait").type == pa.bool_()
    assert gaps.schema.field("cpu").type == pa.list_(pa.struct([("kind", pa.string()), ("ns", pa.int64())]))
    compiled = cpu.compiled()
    assert compiled.num_rows == 0 and compiled.schema.field("device_us").type == pa.float64()
    # A compiled graph's kernels are the rows of their own declared table (`graphs[].kernels`),
    # a member the trace does not name null.
    kernel = compiled.schema.field("kernels").type.value_type
    assert kernel.field("fused_ops").type == pa.list_(pa.string())
    assert kernel.field("kernel_file").type == pa.string()
    # The findings have the same columns whichever fired: a saving is its declared object.
    findings = gpu.findings()
    assert findings.column_names == cpu.findings().column_names
    saving = findings.schema.field("saving").type
    assert saving.field("per_step_us").type == pa.float64() and saving.field("bound").type == pa.bool_()


def test_compiled(case: Any) -> None:
    path, t = case
    assert_table(t.compiled(), cli_json("compiled", path), "graphs")


def test_steps(case: Any) -> None:
    path, t = case
    assert_table(t.steps(), cli_json("steps", path), "steps")


@pytest.mark.parametrize("compat", [None, "hta"])
def test_idle_and_gaps(case: Any, compat: Any) -> None:
    path, t = case
    extra = ["--compat", "hta"] if compat else []
    cli = cli_json("idle", path, *extra)
    assert_table(t.idle(compat=compat), cli, "idle")
    assert_table(t.gaps(compat=compat, top=10), cli, "gaps")
    every = cli_json("idle", path, *extra, "--top", 1 << 40)
    assert_table(t.gaps(compat=compat), every, "gaps")
    assert t.gaps(compat=compat).num_rows == every["gap_count"]


def test_findings_and_report(case: Any) -> None:
    path, t = case
    # No capture: the CLI's report, as its ops, would read one found beside a replay.
    cli = cli_json("report", path, "--capture", "none")
    assert strip_nulls(t.findings().to_pylist()) == strip_nulls(cli["findings"])
    # The notes on how the trace was recorded are apart, as in the CLI's report.
    assert strip_nulls(t.recording().to_pylist()) == strip_nulls(cli["recording"])
    ours = t.report()
    assert {k: v for k, v in ours.items() if k not in TIMINGS} == {
        k: v for k, v in cli.items() if k not in TIMINGS
    }
    hta = cli_json("report", path, "--compat", "hta", "--top", 3, "--capture", "none")
    assert t.report(compat="hta", top=3)["idle"] == hta["idle"]
    assert t.report(compat="hta", top=3)["top_operators"] == hta["top_operators"]


def test_pandas(case: Any) -> None:
    pytest.importorskip("pandas")
    _, t = case
    df = t.ops().to_pandas()
    assert len(df) == t.ops().num_rows
