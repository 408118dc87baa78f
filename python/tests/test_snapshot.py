"""sightline.Snapshot: the CLI's JSON for every snapshot fixture, from a path, bytes and a file
object; the diff; refusals."""

from __future__ import annotations

import gzip
import os

import pytest

import sightline
from conftest import LOCAL, cli_json

SNAPSHOTS = sorted(
    p for p in (LOCAL / "snapshot").iterdir() if ".pickle" in p.name and p.name != "malicious.pickle"
)


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name)
def test_report_equals_the_cli(path):
    want = cli_json("snapshot", path, "--top", "3")
    s = sightline.Snapshot.open(path)
    assert s.report(top=3) == want
    with open(path, "rb") as f:
        assert sightline.Snapshot.open(f).report(top=3)["devices"] == want["devices"]
    data = path.read_bytes()
    assert sightline.Snapshot.open(data).report(top=3)["segments"] == want["segments"]


def test_diff_folded_and_timeline():
    a = sightline.Snapshot.open(LOCAL / "snapshot" / "training.pickle.gz")
    b = sightline.Snapshot.open(LOCAL / "snapshot" / "every_key.pickle")
    dir = LOCAL / "snapshot"
    want = cli_json("snapshot", dir / "training.pickle.gz", dir / "every_key.pickle")
    assert a.diff(b) == want
    assert a.folded("segments") == (LOCAL / "snapshot" / "training.segments.folded").read_text()
    assert a.folded("memory") == (LOCAL / "snapshot" / "training.memory.folded").read_text()
    live = a.live_bytes(0)
    assert max(live) == a.report()["devices"][0]["peak_bytes"]
    with pytest.raises(ValueError):
        a.folded("nope")


def test_refusals():
    marker = "/tmp/sightline-snapshot-pickle-ran"
    if os.path.exists(marker):
        os.remove(marker)
    with pytest.raises(sightline.NotASnapshot, match="refused"):
        sightline.Snapshot.open(LOCAL / "snapshot" / "malicious.pickle")
    assert not os.path.exists(marker)
    with pytest.raises(sightline.NotASnapshot, match="not a memory snapshot"):
        sightline.Snapshot.open(LOCAL / "parse" / "trailing_comma.json")
    with pytest.raises(sightline.NotASnapshot):
        sightline.Snapshot.open(gzip.compress(b"{}"))
    with pytest.raises(TypeError):
        sightline.Snapshot(object())
