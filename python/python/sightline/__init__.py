"""Sightline: PyTorch profiler traces in Python.

``sightline.open(path_or_bytes_or_fileobj)`` parses a ``*.pt.trace.json[.gz]`` with Sightline's Rust
core (the GIL is released while it parses and analyses) and returns a :class:`Trace`, whose tables
are ``pyarrow.Table`` objects with the column names of the CLI's ``--json`` output::

    import sightline
    t = sightline.open("rank0.pt.trace.json.gz")
    t.ops().to_pandas()          # prof.key_averages(), as `sightline ops --json`
    t.idle(compat="hta")         # HTA's idle time breakdown per stream
    t                            # in Jupyter: summary and findings
    sightline.show(t)            # the interactive timeline, inline
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO, Dict, List, Optional, Union

import pyarrow as pa

from . import _html, _tables
from ._sightline import NotATrace, SightlineError, __version__
from ._sightline import Parser as _Parser
from ._sightline import open_path as _open_path

__all__ = [
    "NotATrace",
    "SightlineError",
    "Trace",
    "__version__",
    "open",
    "show",
]

#: Bytes read from a file object per call into the parser.
CHUNK = 1 << 20

#: Gaps `report()` and `idle()` list one by one, as the CLI without `--top`.
REPORT_GAPS = 10
#: Operators `report()` lists, as `sightline report` without `--top`.
REPORT_OPS = 15

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


class Trace:
    """A parsed trace. Every method computes one analysis of the core (the operator forest and the
    launch links are built once and kept); tables are ``pyarrow.Table`` (``.to_pandas()`` away).
    Besides its rows, a table carries the rest of the CLI's JSON object (totals, notes) as JSON in
    its schema metadata under ``b"sightline"``: see :func:`sightline.table_meta`."""

    def __init__(self, native: Any, origin: Union[str, bytes, None] = None) -> None:
        self._native = native
        # What show() serves to the viewer: the path, the bytes, or None (a file object).
        self._origin = origin

    @property
    def source(self) -> str:
        """The path the trace was read from, or ``<bytes>`` / the file object's name."""
        return self._native.source

    @property
    def parse_seconds(self) -> float:
        """Seconds spent reading and parsing."""
        return self._native.parse_seconds

    def summary(self) -> Dict[str, Any]:
        """What the trace holds (``sightline summary --json``): events by phase and category, lanes,
        devices, model size, ``diagnostics`` (damage the parser repaired), parse speed."""
        return json.loads(self._native.summary_json())

    @property
    def diagnostics(self) -> List[Dict[str, Any]]:
        """Damage found and salvaged while parsing (kind, count, first byte offset, detail)."""
        return self.summary()["diagnostics"]

    def ops(self, by_shape: bool = False) -> pa.Table:
        """The operator table as ``prof.key_averages()`` (``sightline ops --json``), sorted by self
        device time when GPU time was charged, else self CPU time. ``by_shape=True`` groups by
        input shapes too (``key_averages(group_by_input_shape=True)``)."""
        return _tables.table(self._native.ops(by_shape))

    def kernels(self) -> pa.Table:
        """GPU kernels, memcpys and memsets by name (``sightline kernels --json``)."""
        return _tables.table(self._native.kernels())

    def labels(self) -> pa.Table:
        """``record_function`` labels on the CPU and the GPU (``sightline labels --json``)."""
        return _tables.table(self._native.labels())

    def steps(self) -> pa.Table:
        """``ProfilerStep#N`` spans with the TensorBoard plugin's time breakdown
        (``sightline steps --json``'s ``steps``; totals, GPU utilization and step statistics in
        the metadata)."""
        return _tables.table(self._native.steps())

    def idle(self, compat: Optional[str] = None) -> pa.Table:
        """HTA's idle time breakdown, one row per GPU stream (``sightline idle --json``'s
        ``idle``): host wait, kernel wait, other. ``compat="hta"`` computes it as HTA 0.5.0 does,
        to the microsecond; the default is exact in nanoseconds. The temporal breakdown, device
        figures and "who waits for whom" are in the metadata."""
        return _tables.table(self._native.idle(compat, REPORT_GAPS, "idle"))

    def gaps(self, compat: Optional[str] = None, top: Optional[int] = None) -> pa.Table:
        """Every GPU idle gap (or the ``top`` longest), longest first, each with what ended it, the
        launch behind that and what the CPU thread was doing meanwhile (``sightline idle --json
        --top N``'s ``gaps``)."""
        n = (1 << 63) - 1 if top is None else top
        if n < 0:
            raise ValueError(f"top must be at least 0, not {top}")
        return _tables.table(self._native.idle(compat, n, "gaps"))

    def findings(self) -> pa.Table:
        """Findings with numbers, advice and evidence (``sightline report --json``'s
        ``findings``)."""
        return _tables.table(self._native.findings())

    def report(self, compat: Optional[str] = None, top: Optional[int] = None) -> Dict[str, Any]:
        """Everything at once, as ``sightline report --json [--compat hta] [--top N]``: ``top``
        limits the operators (default 15) and the gaps listed one by one (default 10)."""
        if top is not None and top < 0:
            raise ValueError(f"top must be at least 0, not {top}")
        ops = REPORT_OPS if top is None else top
        gaps = REPORT_GAPS if top is None else top
        return json.loads(self._native.report_json(compat, ops, gaps))

    def __repr__(self) -> str:
        return f"<sightline.Trace {self.source!r}>"

    def _repr_html_(self) -> str:
        return _html.trace_html(self)


def open(source: Source) -> Trace:  # noqa: A001 - the package's verb, as in gzip.open
    """Parses a trace: a path (``.json`` or ``.json.gz``), ``bytes``-like data, or a binary file
    object (read in 1 MiB chunks, never whole). Raises :class:`NotATrace` with the parser's message
    when the input is not a trace; a damaged trace opens, with its damage in ``diagnostics``."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return Trace(_open_path(path), os.path.abspath(path))
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = source if isinstance(source, bytes) else bytes(source)
        parser = _Parser()
        parser.feed(data)
        return Trace(parser.finish("<bytes>"), data)
    if hasattr(source, "read"):
        parser = _Parser()
        while True:
            chunk = source.read(CHUNK)
            if not chunk:
                break
            if isinstance(chunk, str):
                raise TypeError("open a trace file in binary mode ('rb')")
            parser.feed(bytes(chunk))
        name = getattr(source, "name", None)
        return Trace(parser.finish(str(name) if isinstance(name, (str, bytes)) else "<file>"))
    raise TypeError(
        f"sightline.open takes a path, bytes or a binary file object, not {type(source).__name__}"
    )


def table_meta(table: pa.Table) -> Dict[str, Any]:
    """The rest of a table's CLI JSON object (totals, notes): the schema metadata ``b"sightline"``."""
    return _tables.meta(table)


def show(trace_or_path: Union[Trace, Source], height: int = 480) -> Any:
    """The interactive timeline inline in Jupyter: the ``<sightline-trace>`` element with the wasm
    viewer shipped in this package, served from this Python process on 127.0.0.1 (nothing is
    fetched from the network). Returns an ``IPython.display.HTML`` (a plain object with
    ``_repr_html_`` when IPython is absent)."""
    return _html.show(trace_or_path, height)

