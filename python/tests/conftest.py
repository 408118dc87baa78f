"""Shared by the package's tests: the fixtures (the shared real traces beside the checkout and the
repository's own tests/fixtures) and the `sightline` CLI, whose JSON the package must equal."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SIGHTLINE_FIXTURES", ROOT.parent / "shared" / "fixtures"))
LOCAL = ROOT / "tests" / "fixtures"


def cli_path() -> Path:
    """The CLI built from this checkout (scripts/test builds it in release mode first)."""
    env = os.environ.get("SIGHTLINE_CLI")
    if env:
        return Path(env)
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "sightline"
        if p.exists():
            return p
    pytest.exit("no sightline CLI: run `cargo build --release --bin sightline` first", returncode=2)


def is_trace_file(p: Path) -> bool:
    return p.name.endswith((".json", ".json.gz")) and not p.name.endswith(
        (".truth.json", "expected.json", "hta_reference.json", "hta_reference_comm_comp_overlap.json")
    )


def trace_fixtures() -> List[Path]:
    """Every trace among the fixtures, damaged ones included."""
    files = [p for root in (SHARED, LOCAL) for p in root.rglob("*") if p.is_file() and is_trace_file(p)]
    if not any(SHARED in p.parents for p in files):
        raise RuntimeError(f"no shared fixtures in {SHARED} (set SIGHTLINE_FIXTURES)")
    return sorted(files)


def split_fixtures() -> "tuple[List[Path], List[Path]]":
    """(traces, not traces) among the fixtures, as the package sees them; test_tables checks that
    the CLI refuses exactly the second list."""
    import sightline

    traces, refused = [], []
    for p in trace_fixtures():
        try:
            sightline.open(p)
            traces.append(p)
        except sightline.NotATrace:
            refused.append(p)
    return traces, refused


def fixture_id(p: Path) -> str:
    for root in (SHARED, LOCAL):
        if root in p.parents:
            return str(p.relative_to(root))
    return p.name


def cli_json(*args: Any) -> Any:
    out = subprocess.run(
        [str(cli_path()), *map(str, args), "--json"], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def strip_nulls(v: Any) -> Any:
    """Arrow gives a struct every field any row has (absent ones as None); JSON leaves absent
    members out. Comparing without null members treats both the same."""
    if isinstance(v, dict):
        return {k: strip_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [strip_nulls(x) for x in v]
    return v
