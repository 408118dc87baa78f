"""Opening traces every way the API allows, errors, and the package's metadata."""

from __future__ import annotations

import gzip
import io
import os
import re
import threading
import time
from pathlib import Path

import pytest

import sightline
from conftest import LOCAL, ROOT, SHARED

SMALL = SHARED / "real" / "hta_a100_alexnet_cuda_sync.json.gz"
BIG = SHARED / "real" / "tracelens_h100_owlv2_stack_mem.json.gz"


def facts(t: sightline.Trace) -> object:
    s = t.summary()
    return (s["events"], s["span_ns"], s["model"]["slices"], t.ops().to_pylist())


def test_version_is_the_crates() -> None:
    core = re.search(r'^version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M)
    assert core and sightline.__version__ == core.group(1)


def test_every_way_of_opening_gives_the_same_trace(tmp_path: Path) -> None:
    want = facts(sightline.open(SMALL))
    packed = SMALL.read_bytes()
    plain = gzip.decompress(packed)
    (tmp_path / "t.json").write_bytes(plain)
    assert facts(sightline.open(str(SMALL))) == want
    assert facts(sightline.open(tmp_path / "t.json")) == want
    assert facts(sightline.open(packed)) == want
    assert facts(sightline.open(plain)) == want
    assert facts(sightline.open(bytearray(plain))) == want
    assert facts(sightline.open(memoryview(packed))) == want
    with open(SMALL, "rb") as f:
        t = sightline.open(f)
        assert t.source == str(SMALL)
        assert facts(t) == want
    assert facts(sightline.open(io.BytesIO(plain))) == want
    assert facts(sightline.open(gzip.open(SMALL))) == want
    assert sightline.open(packed).source == "<bytes>"


def test_a_file_that_is_not_a_trace_is_never_quoted(tmp_path: Path) -> None:
    secret = "Zq8vKx3mPw7yTn2R"
    for name, text in [
        ("shadow", f"{secret}:*:20228:0:99999:7:::\n"),
        ("keys.json", f'{{"{secret}": 1}}'),
        ("cut.json", f'{{"a": 1, "{secret}'),
    ]:
        path = tmp_path / name
        path.write_text(text)
        for source in (path, path.read_bytes()):
            with pytest.raises(sightline.NotATrace) as e:
                sightline.open(source)
            said = str(e.value)
            assert "bytes" in said, said
            for i in range(len(secret) - 5):
                assert secret[i : i + 6] not in said, said


def test_fifos_and_devices_are_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.pt.trace.json"
    os.mkfifo(fifo)
    for path, kind in [(fifo, "FIFO"), ("/dev/zero", "device")]:
        started = time.monotonic()
        with pytest.raises(OSError, match=kind):
            sightline.open(path)
        assert time.monotonic() - started < 10


def test_trace_called_with_a_path_names_open() -> None:
    with pytest.raises(TypeError, match=r"sightline\.open"):
        sightline.Trace(str(SMALL))


def test_not_a_trace_raises_with_the_parsers_message() -> None:
    with pytest.raises(sightline.NotATrace, match="an HTML or XML document"):
        sightline.open(LOCAL / "parse" / "page.html")
    with pytest.raises(sightline.NotATrace, match="a PNG image"):
        sightline.open(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with pytest.raises(sightline.NotATrace) as e:
        sightline.open(b"")
    assert e.value.args[0].startswith("<bytes>: ")
    with pytest.raises(sightline.SightlineError):
        sightline.open(io.BytesIO(b"hello world"))
    assert issubclass(sightline.NotATrace, sightline.SightlineError)
    assert issubclass(sightline.SightlineError, Exception)


def test_other_bad_input() -> None:
    with pytest.raises(FileNotFoundError) as e:
        sightline.open("/nonexistent/x.pt.trace.json")
    assert e.value.filename == "/nonexistent/x.pt.trace.json"
    with pytest.raises(IsADirectoryError):
        sightline.open(LOCAL)
    with pytest.raises(TypeError, match="binary mode"):
        sightline.open(io.StringIO("{}"))
    with pytest.raises(TypeError):
        sightline.open(42)  # type: ignore[arg-type]
    t = sightline.open(SMALL)
    with pytest.raises(ValueError, match="compat"):
        t.idle(compat="tensorboard")
    with pytest.raises(ValueError):
        t.gaps(top=-1)


def test_damaged_trace_opens_with_diagnostics() -> None:
    t = sightline.open(LOCAL / "parse" / "truncated_mid_event.json")
    s = t.summary()
    assert s["truncated"]
    assert t.diagnostics and t.diagnostics == s["diagnostics"]
    assert s["events"]["total"] > 0
    # Truncated gzip: also salvaged, not an error.
    packed = gzip.compress((LOCAL / "parse" / "begin_end.json").read_bytes())
    cut = sightline.open(packed[: len(packed) - 20])
    assert cut.summary()["truncated"]


def test_parsing_releases_the_gil() -> None:
    """Another Python thread keeps running while a 56 MB trace is parsed and analysed."""
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    th = threading.Thread(target=count)
    th.start()
    time.sleep(0.05)
    start = ticks
    t0 = time.perf_counter()
    trace = sightline.open(BIG)
    trace.idle()
    elapsed = time.perf_counter() - t0
    during = ticks - start
    done.set()
    th.join()
    assert elapsed > 0.05, "the trace parsed too fast to tell"
    # Holding the GIL would let the counter run only at the start and the end.
    assert during > 1000, f"{during} ticks in {elapsed:.2f} s"
