"""Jupyter display: a trace's summary and findings as HTML, and the interactive viewer inline.

``show()`` renders the ``<sightline-trace>`` web component. Its module, the wasm-bindgen glue, the
``.wasm`` and the style sheet are the files ``trunk build --release`` writes to ``dist/``, shipped in
this package under ``sightline/web/``. The element loads them, and the trace, by URL (relative
imports, a ``fetch`` of the trace), so they are served from this Python process: a small HTTP
server bound to 127.0.0.1 on a free port, started on the first ``show()``, serving only that
directory and the traces handed to ``show()`` (each under an unguessable token). A run folder
(``tensorboard_trace_handler``'s) is shown as the full page in an iframe, its workers in the ranks
view. Nothing is fetched
from the network. The notebook's browser must reach the kernel's 127.0.0.1: true for a local
Jupyter, not for a kernel on another host.
"""

from __future__ import annotations

import html
import mimetypes
import os
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union
from urllib.parse import quote, unquote, urlencode

from ._serve import run_files
from ._web import WEB

if TYPE_CHECKING:
    from . import Source, Trace

_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm"}


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.3f} ms"


def trace_html(trace: "Trace") -> str:
    """Summary and findings; every text that comes from the trace is escaped."""
    s = trace.summary()
    findings = trace.findings().to_pylist()
    recording = trace.recording().to_pylist()
    e = html.escape
    devices = ", ".join(f"GPU {d['id']}: {d['name']}" for d in s.get("devices", [])) or "none"
    rows = [
        ("source", trace.source),
        ("schema", s.get("schema", "")),
        ("rank", f"{s.get('rank')}" + (f" of {s['world_size']}" if s.get("world_size") else "")),
        ("span", _ms(s.get("span_ns", 0))),
        ("events", f"{s['events']['total']:,}"),
        ("lanes", f"{len(s.get('lanes', []))}"),
        ("devices", devices),
        ("parsed in", f"{s.get('parse_seconds', 0):.3f} s"),
    ]
    if s.get("truncated"):
        rows.append(("truncated", "the file ends early; everything before the cut is read"))
    for d in s.get("diagnostics", []):
        rows.append(("damage", f"{d['kind']} x{d['count']}: {d['detail']}"))
    out = ['<div class="sightline-trace-summary">', "<table>"]
    for k, v in rows:
        out.append(f'<tr><th style="text-align:left">{e(k)}</th><td style="text-align:left">{e(str(v))}</td></tr>')
    out.append("</table>")
    out.append(f"<p><b>Findings</b> ({len(findings)})</p>")
    if not findings:
        out.append("<p>nothing to report</p>")
    else:
        out.extend(_finding_list(findings))
    # Notes on the recording come apart, after every cost.
    if recording:
        out.append(f"<p><b>How this trace was recorded</b> ({len(recording)})</p>")
        out.extend(_finding_list(recording))
    out.append("</div>")
    return "\n".join(out)


def _finding_list(findings: List[Dict[str, Any]]) -> List[str]:
    e = html.escape
    out = ["<ul>"]
    for f in findings:
        out.append(
            f"<li><b>[{e(str(f['severity']))}] {e(f['title'])}</b> <code>{e(f['id'])}</code>"
            f"<br>{e(f['detail'])}<br><i>advice:</i> {e(f['advice'])}</li>"
        )
    out.append("</ul>")
    return out


class _Server:
    """The one local server of this process: the viewer's files and the traces given to show()."""

    def __init__(self) -> None:
        self.traces: Dict[str, Union[str, bytes]] = {}
        server = self
        web = WEB.resolve()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet in a notebook
                pass

            def do_GET(self) -> None:
                path = unquote(self.path.split("?", 1)[0])
                if path.startswith("/trace/"):
                    token = path[len("/trace/") :].split("/", 1)[0]
                    origin = server.traces.get(token)
                    if origin is None:
                        return self.send_error(404)
                    return self._send_trace(origin)
                if path.startswith("/web/"):
                    file = (web / path[len("/web/") :]).resolve()
                    if web in file.parents and file.is_file():
                        return self._send_file(file)
                self.send_error(404)

            def _head(self, ctype: str, length: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(length))
                # The notebook page is another origin (its own port): modules, wasm and the trace
                # are fetched with CORS.
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            def _send_file(self, file: Path) -> None:
                ctype = _TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0]
                data = file.read_bytes()
                self._head(ctype or "application/octet-stream", len(data))
                self.wfile.write(data)

            def _send_trace(self, origin: Union[str, bytes]) -> None:
                if isinstance(origin, bytes):
                    self._head("application/octet-stream", len(origin))
                    self.wfile.write(origin)
                    return
                self._head("application/octet-stream", os.path.getsize(origin))
                with open(origin, "rb") as f:
                    while chunk := f.read(1 << 20):
                        self.wfile.write(chunk)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="sightline-show").start()

    def add(self, origin: Union[str, bytes]) -> str:
        token = secrets.token_urlsafe(16)
        self.traces[token] = origin
        return token


_server: Optional[_Server] = None
_lock = threading.Lock()


def server() -> _Server:
    global _server
    with _lock:
        if _server is None:
            _server = _Server()
        return _server


class _Html:
    """What show() returns without IPython: anything with ``_repr_html_`` displays in Jupyter."""

    def __init__(self, data: str) -> None:
        self.data = data

    def _repr_html_(self) -> str:
        return self.data


def show_html(trace_or_path: "Union[Trace, Source]", height: int = 480) -> str:
    from . import SightlineError, Trace

    if not (WEB / "js" / "sightline-trace.js").is_file():
        raise SightlineError(
            f"this installation has no viewer files in {WEB}: build the page with "
            "`trunk build --release` before building the package (see python/README.md)"
        )
    if isinstance(trace_or_path, (str, os.PathLike)) and os.path.isdir(trace_or_path):
        return run_html(Path(trace_or_path), height)
    if isinstance(trace_or_path, Trace):
        origin = trace_or_path._origin
        if origin is None:
            raise ValueError("this trace was read from a file object; pass show() its path or bytes")
        name = "trace" if isinstance(origin, bytes) else os.path.basename(origin)
    elif isinstance(trace_or_path, (str, os.PathLike)):
        origin = os.path.abspath(os.fspath(trace_or_path))
        if not os.path.isfile(origin):
            raise FileNotFoundError(2, "No such file", origin)
        name = os.path.basename(origin)
    elif isinstance(trace_or_path, (bytes, bytearray, memoryview)):
        origin, name = bytes(trace_or_path), "trace"
    else:
        raise TypeError(f"show() takes a Trace, a path or bytes, not {type(trace_or_path).__name__}")
    srv = server()
    base = f"http://127.0.0.1:{srv.port}"
    src = f"{base}/trace/{srv.add(origin)}/{quote(name)}"
    return (
        f'<script type="module" src="{base}/web/js/sightline-trace.js"></script>\n'
        f'<sightline-trace src="{html.escape(src)}" height="{int(height)}"></sightline-trace>'
    )


def run_html(folder: Path, height: int) -> str:
    """A run folder (what ``tensorboard_trace_handler`` writes): the full viewer in an iframe, its
    workers' latest spans in the ranks view (one worker: that trace alone), each trace served by
    this process's server under its own token."""
    from . import SightlineError

    if not (WEB / "index.html").is_file():
        raise SightlineError(
            f"this installation has no viewer files in {WEB}: build the page with "
            "`trunk build --release` before building the package (see python/README.md)"
        )
    files = run_files(folder)
    if not files:
        raise FileNotFoundError(2, "No trace files (*.json, *.json.gz) in the folder", str(folder))
    srv = server()
    base = f"http://127.0.0.1:{srv.port}"
    # Relative to the page (/web/index.html), so same-origin for its Content-Security-Policy.
    query = urlencode([("url", f"../trace/{srv.add(str(p.resolve()))}/{quote(p.name)}") for p in files])
    src = f"{base}/web/index.html?{query}"
    return (
        f'<iframe src="{html.escape(src)}" width="100%" height="{int(height)}" '
        f'title="{html.escape(folder.name)}" style="border: 0"></iframe>'
    )


def show(trace_or_path: "Union[Trace, Source]", height: int = 480) -> Any:
    data = show_html(trace_or_path, height)
    try:
        from IPython.display import HTML
    except ImportError:
        return _Html(data)
    return HTML(data)
