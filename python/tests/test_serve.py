"""sightline.serve(): the CLI's `serve` run from Python against tests/fixtures/logdir (real HTTP on
127.0.0.1), and show() of a run folder: the page in an iframe with the run's workers."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Tuple
from unittest import mock
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
from conftest import LOCAL, cli_path

import sightline
from sightline import _html

LOGDIR = LOCAL / "logdir"


def get(url: str) -> Tuple[bytes, Dict[str, str]]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read(), dict(r.headers)


def test_serve_lists_the_runs_and_serves_their_files() -> None:
    with sightline.serve(LOGDIR, cli=cli_path()) as s:
        assert re.match(r"^http://127\.0\.0\.1:\d+/$", s.url)
        assert s.running and s.port > 0
        assert "Bound to 127.0.0.1 only" in s.said
        body, headers = get(s.url + "api/runs")
        assert headers["Content-Type"] == "application/json"
        listing = json.loads(body)
        assert listing["logdir"] == str(LOGDIR.resolve())
        assert [r["run"] for r in listing["runs"]] == ["cnn", "gloo4"]
        gloo4 = listing["runs"][1]
        assert [w["spans"][0]["rank"] for w in gloo4["workers"]] == [0, 1, 2, 3]
        cnn = listing["runs"][0]
        assert [len(w["spans"]) for w in cnn["workers"]] == [2, 1]
        path = cnn["workers"][0]["spans"][1]["path"]
        data, _ = get(s.url + "logdir/" + path)
        assert data == (LOGDIR / path).read_bytes()
        with pytest.raises(urllib.error.HTTPError) as e:
            get(s.url + "logdir/..%2f..%2fconftest.py")
        assert e.value.code == 400
        assert "Sightline" in repr(s) or "sightline" in repr(s)
        assert s.url in s._repr_html_()
    assert not s.running


def test_serve_without_logdir_serves_the_page_alone() -> None:
    s = sightline.serve(cli=cli_path())
    try:
        with pytest.raises(urllib.error.HTTPError) as e:
            get(s.url + "api/runs")
        assert e.value.code == 404
        if (_html.WEB / "index.html").is_file():
            page, headers = get(s.url)
            assert b'<meta name="sightline-serve" content="page">' in page
            assert "wasm-unsafe-eval" in headers["Content-Security-Policy"]
    finally:
        s.stop()
    assert not s.running


def test_serve_says_why_it_did_not_start(tmp_path: Path) -> None:
    with pytest.raises(sightline.SightlineError, match="did not start"):
        sightline.serve(tmp_path / "missing", cli=cli_path())
    with pytest.raises(sightline.SightlineError, match="not an executable"):
        sightline.serve(LOGDIR, cli=tmp_path / "no-such-sightline")
    # Without cli=, $SIGHTLINE_CLI or PATH, it says where it looked.
    env = {"SIGHTLINE_CLI": "", "PATH": str(tmp_path)}
    with mock.patch.dict(os.environ, env):
        with pytest.raises(sightline.SightlineError, match="SIGHTLINE_CLI"):
            sightline.serve(LOGDIR)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: List[Tuple[str, Dict[str, Any]]] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Any]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_run_files_pick_each_workers_latest_span(tmp_path: Path) -> None:
    from sightline._serve import run_files

    for name in [
        "h_1.100.pt.trace.json.gz",
        "h_1.200.pt.trace.json.gz",
        "h_2.150.pt.trace.json",
        "h_2.99.pt.trace.json",
        "rank3.json",
        "notes.txt",
    ]:
        (tmp_path / name).write_bytes(b"{}")
    (tmp_path / "folder.json").mkdir()
    # The core's rule, as `sightline serve` lists the run: spans by number, workers with a rank
    # (here from the name) first.
    assert [p.name for p in run_files(tmp_path)] == ["rank3.json", "h_1.200.pt.trace.json.gz", "h_2.150.pt.trace.json"]
    assert [p.name for p in run_files(LOGDIR / "cnn")] == [
        "vm_14499.1790857160456.pt.trace.json.gz",
        "vm_23924.1790857300789.pt.trace.json.gz",
    ]


@pytest.mark.skipif(not (_html.WEB / "index.html").is_file(), reason="package built without the page")
def test_show_of_a_run_folder_is_the_page_with_its_workers() -> None:
    p = Tags()
    p.feed(_html.show_html(LOGDIR / "gloo4", height=500))
    ((tag, attrs),) = p.tags
    assert tag == "iframe" and attrs["height"] == "500"
    src = attrs["src"]
    assert urlsplit(src).path == "/web/index.html"
    urls = [v for k, v in parse_qsl(urlsplit(src).query) if k == "url"]
    assert len(urls) == 4
    names = sorted(u.rsplit("/", 1)[1] for u in urls)
    assert names == sorted(f.name for f in (LOGDIR / "gloo4").iterdir())
    page, _ = get(src)
    assert b"sightline" in page.lower()
    for u in urls:
        data, _ = get(urljoin(src, u))
        assert data == (LOGDIR / "gloo4" / u.rsplit("/", 1)[1]).read_bytes()
