"""``sightline.serve(logdir)``: the ``sightline serve`` command (the CLI's HTTP server, which the
Python package does not contain: the HTTP lives in the CLI, not in the core the package binds) run
as a child process, with this package's viewer files as its page.

The command is found as ``cli=``, else ``$SIGHTLINE_CLI``, else ``sightline`` on ``PATH`` (``cargo
install --path .`` or ``cargo build --release`` in a checkout puts it there or in
``target/release/``). Its page is this package's ``sightline/web/`` (``$SIGHTLINE_DIST`` overrides),
so the page and the package are the same version.
"""

from __future__ import annotations

import atexit
import html
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, List, Optional, Union

from ._web import WEB
from ._sightline import run_latest as _run_latest

PathArg = Union[str, "os.PathLike[str]"]

_running: "List[Server]" = []


def find_cli(cli: Optional[PathArg] = None) -> str:
    """The ``sightline`` executable: ``cli``, ``$SIGHTLINE_CLI``, or ``sightline`` on ``PATH``."""
    from . import SightlineError

    if cli is not None:
        if os.path.isfile(cli) and os.access(cli, os.X_OK):
            return os.fspath(cli)
        raise SightlineError(f"cli={os.fspath(cli)!r} is not an executable `sightline`")
    for candidate in (os.environ.get("SIGHTLINE_CLI"), shutil.which("sightline")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.fspath(candidate)
    raise SightlineError(
        "sightline.serve() runs the `sightline` command, which was not found: pass cli=, set "
        "SIGHTLINE_CLI, or put it on PATH (`cargo install --path .` in a checkout)"
    )


class Server:
    """A running ``sightline serve``: ``url``, ``port``, ``stop()``; a context manager. In Jupyter it
    displays as a link to the page."""

    def __init__(self, process: "subprocess.Popen[str]", url: str, said: str) -> None:
        self.process = process
        self.url = url
        self.port = int(re.search(r":(\d+)/$", url).group(1))  # type: ignore[union-attr]
        #: What the command printed on starting (the URL, the binding).
        self.said = said

    def stop(self) -> None:
        """Stops the server (also at interpreter exit)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self in _running:
            _running.remove(self)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<sightline.Server {self.url} ({state})>"

    def _repr_html_(self) -> str:
        u = html.escape(self.url)
        return f'<a href="{u}" target="_blank" rel="noopener">Sightline at {u}</a>'


def _forward(stream: IO[str], to: IO[str]) -> None:
    """Passes what the server prints later (warnings, errors) on, so the pipe never fills."""
    for line in stream:
        to.write(line)


def serve(
    logdir: Optional[PathArg] = None,
    port: int = 0,
    host: str = "127.0.0.1",
    cli: Optional[PathArg] = None,
) -> Server:
    from . import SightlineError

    exe = find_cli(cli)
    args = [exe, "serve"]
    if logdir is not None:
        text = os.fspath(logdir)
        # s3:// and gs:// go to the command as they are; a folder as an absolute path.
        args.append(text if re.match(r"^(s3|gs)://", text) else os.path.abspath(text))
    args += ["--port", str(int(port)), "--host", host]
    env = dict(os.environ)
    if not env.get("SIGHTLINE_DIST") and (WEB / "index.html").is_file():
        env["SIGHTLINE_DIST"] = str(WEB)
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1
    )
    assert proc.stdout is not None and proc.stderr is not None
    said = ""
    url = None
    for line in proc.stdout:
        said += line
        m = re.search(r"http://[^\s/]+/", line)
        if m and url is None:
            url = m.group(0)
        if "Ctrl-C" in line:
            break
    if url is None or proc.poll() is not None:
        err = proc.stderr.read()
        proc.wait()
        raise SightlineError(f"sightline serve did not start: {(err or said).strip()}")
    for stream, to in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
        threading.Thread(target=_forward, args=(stream, to), daemon=True, name="sightline-serve").start()
    server = Server(proc, url, said)
    _running.append(server)
    return server


@atexit.register
def _stop_all() -> None:
    for s in list(_running):
        s.stop()


def run_files(folder: Path) -> List[Path]:
    """The traces of a run folder as the ranks view opens them: each worker's latest span, the
    worker and span named as ``tensorboard_trace_handler`` names them (``{worker}.{ms}.pt.trace.json``;
    other ``*.json[.gz]`` files are a worker each), by rank (``rank3`` / ``worker3`` in the name),
    the others after them. The rule is the core's, the one ``sightline serve`` lists runs by."""
    files = [p for p in sorted(folder.iterdir()) if p.is_file()]
    return [files[k] for k in _run_latest([p.name for p in files])]
