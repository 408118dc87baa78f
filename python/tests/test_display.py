"""Jupyter display: the HTML of a Trace (escaped, well formed) and show()'s inline viewer, whose
files and trace the local server hands out as the <sightline-trace> element fetches them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import List, Tuple

import pytest

import sightline
from sightline import _html
from conftest import SHARED

SMALL = SHARED / "real" / "hta_a100_alexnet_cuda_sync.json.gz"
EVIL = '<img src=x onerror="alert(1)">&<script>alert(2)</script>'


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: List[Tuple[str, list]] = []
        self.text: List[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def hostile_trace() -> bytes:
    """A GPU trace whose names are markup: a device, a thread, an operator and a kernel."""
    events = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": EVIL}},
        {"ph": "X", "cat": "cpu_op", "name": EVIL, "pid": 1, "tid": 1, "ts": 0, "dur": 50, "args": {"External id": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 7, "External id": 1}},
        {"ph": "X", "cat": "kernel", "name": EVIL, "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"correlation": 7, "External id": 1, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": EVIL, "pid": 0, "tid": 7, "ts": 900, "dur": 5, "args": {"correlation": 8, "device": 0, "stream": 7}},
    ]
    doc = {"deviceProperties": [{"id": 0, "name": EVIL}], "traceEvents": events}
    return json.dumps(doc).encode()


def test_repr_html_escapes_trace_text() -> None:
    t = sightline.open(hostile_trace())
    assert t.summary()["devices"][0]["name"] == EVIL
    page = t._repr_html_()
    p = Tags()
    p.feed(page)
    p.close()
    tags = {tag for tag, _ in p.tags}
    assert "script" not in tags and "img" not in tags, tags
    assert EVIL in "".join(p.text)
    assert "Findings" in page


def test_repr_html_of_a_real_trace_lists_its_findings() -> None:
    t = sightline.open(SMALL)
    page = t._repr_html_()
    findings = t.findings().to_pylist()
    assert findings
    for f in findings:
        assert f["id"] in page
    assert "43,458.523 ms" in page  # the span


def get(url: str) -> Tuple[bytes, dict]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read(), dict(r.headers)


needs_viewer = pytest.mark.skipif(
    not (_html.WEB / "js" / "sightline-trace.js").is_file() and not os.environ.get("SIGHTLINE_REQUIRE_VIEWER"),
    reason="package built without the page (trunk build --release, then copy dist/ as scripts/test does)",
)


@needs_viewer
@pytest.mark.parametrize("how", ["trace", "path", "bytes"])
def test_show_serves_the_viewer_and_the_trace(how: str) -> None:
    packed = SMALL.read_bytes()
    arg = {"trace": sightline.open(SMALL), "path": SMALL, "bytes": packed}[how]
    page = _html.show_html(arg, height=300)
    p = Tags()
    p.feed(page)
    (script, sattrs), (element, eattrs) = p.tags
    assert script == "script" and dict(sattrs)["type"] == "module"
    assert element == "sightline-trace" and dict(eattrs)["height"] == "300"
    module_url = dict(sattrs)["src"]
    assert re.match(r"^http://127\.0\.0\.1:\d+/web/js/sightline-trace\.js$", module_url)
    js, headers = get(module_url)
    assert b"customElements.define" in js
    assert headers["Content-Type"] == "text/javascript"
    assert headers["Access-Control-Allow-Origin"] == "*"
    # What the module imports beside itself: the wasm-bindgen glue, the wasm, the styles.
    base = module_url.rsplit("/js/", 1)[0]
    glue, _ = get(base + "/sightline.js")
    assert b"sightline_bg.wasm" in glue
    wasm, headers = get(base + "/sightline_bg.wasm")
    assert wasm[:4] == b"\0asm" and headers["Content-Type"] == "application/wasm"
    get(base + "/style.css")
    trace, _ = get(dict(eattrs)["src"])
    assert trace == packed
    # Nothing outside the viewer's directory.
    with pytest.raises(urllib.error.HTTPError):
        get(base + "/../__init__.py")
    with pytest.raises(urllib.error.HTTPError):
        get(dict(eattrs)["src"].replace("/trace/", "/trace/x"))


def test_show_refuses_what_it_cannot_serve(tmp_path: Path) -> None:
    if not (_html.WEB / "js" / "sightline-trace.js").is_file():
        with pytest.raises(sightline.SightlineError, match="trunk build"):
            sightline.show(SMALL)
        return
    with open(SMALL, "rb") as f:
        t = sightline.open(f)
    with pytest.raises(ValueError, match="file object"):
        sightline.show(t)
    with pytest.raises(FileNotFoundError):
        sightline.show(tmp_path / "missing.json")
    html = sightline.show(SMALL)._repr_html_()
    assert "<sightline-trace" in html


def browser_missing() -> str:
    from conftest import ROOT

    if not shutil.which("node"):
        return "node"
    if not (ROOT / "node_modules" / "playwright-core").is_dir():
        return "node_modules/playwright-core (npm ci)"
    if not Path(os.environ.get("CHROMIUM", "/usr/bin/chromium")).exists():
        return "chromium"
    return ""


@needs_viewer
def test_show_renders_in_chromium(tmp_path: Path) -> None:
    """The element reaches state=ready in headless Chromium, inside a page of another origin (as a
    notebook's output), with nothing fetched from outside 127.0.0.1 and no console error."""
    missing = browser_missing()
    if missing and not os.environ.get("SIGHTLINE_REQUIRE_VIEWER"):
        pytest.skip(f"no {missing}")
    assert not missing, f"no {missing}"
    snippet = tmp_path / "show.html"
    snippet.write_text(_html.show_html(sightline.open(SMALL)))
    out = subprocess.run(
        ["node", str(Path(__file__).with_name("show_render.mjs")), str(snippet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ready")
