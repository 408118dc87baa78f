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
    sightline.ranks("job/")      # the ranks of a distributed job, as `sightline ranks --json`
    sightline.diff(a, b)         # two runs compared, as `sightline diff --json`
    s = sightline.Snapshot.open("snap.pickle")   # torch.cuda.memory._dump_snapshot's file
    s.report()                   # peak and what holds it, as `sightline snapshot --json`
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _html, _serve, _tables
from ._sightline import NotASnapshot, NotATrace, SightlineError, __version__
from ._sightline import Parser as _Parser
from ._sightline import Snapshot as _NativeSnapshot
from ._sightline import SnapshotReader as _SnapshotReader
from ._sightline import Trace as _NativeTrace
from ._sightline import diff_json as _diff_json
from ._sightline import job_path_json as _job_path_json
from ._sightline import open_path as _open_path
from ._sightline import open_snapshot_path as _open_snapshot_path
from ._sightline import ranks_json as _ranks_json

__all__ = [
    "NotASnapshot",
    "NotATrace",
    "SightlineError",
    "Snapshot",
    "Trace",
    "__version__",
    "critical_path",
    "diff",
    "open",
    "ranks",
    "rows",
    "serve",
    "show",
    "table_meta",
    "what_if",
]

#: Bytes read from a file object per call into the parser.
CHUNK = 1 << 20

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]
PathArg = Union[str, "os.PathLike[str]"]
#: What :func:`diff` compares: a path (a trace or a digest `sightline digest` wrote), the bytes of
#: one, or a parsed :class:`Trace`.
DiffSource = Union[PathArg, bytes, bytearray, memoryview, "Trace"]


class Trace:
    """A parsed trace. Every method computes one analysis of the core (the operator forest and the
    launch links are built once and kept); tables are ``pyarrow.Table`` (``.to_pandas()`` away).
    Besides its rows, a table carries the rest of the CLI's JSON object (totals, notes) as JSON in
    its schema metadata under ``b"sightline"``: see :func:`sightline.table_meta`."""

    def __init__(self, native: Any, origin: Union[str, bytes, None] = None) -> None:
        # Made by sightline.open: called with a path, it would build an object whose first
        # method fails far from the mistake.
        if not isinstance(native, _NativeTrace):
            raise TypeError(
                "sightline.Trace is not built from a path or data: "
                "use sightline.open(source) to read a trace"
            )
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

    def modules(self) -> pa.Table:
        """The ``nn.Module`` hierarchy of a trace recorded with ``with_modules=True``
        (``sightline modules --json``): per module path its parent, calls, host self/total and
        device self/total; ``unattributed_device_us`` in the metadata."""
        return _tables.table(self._native.modules())

    def graphs(self) -> pa.Table:
        """The CUDA/HIP graphs the trace replays, one row per graph: launches, ops a replay,
        device and launch time, its ops by time (``sightline graphs --json``'s ``graphs``;
        launches, replayed ops, instantiations in the metadata)."""
        return _tables.table(self._native.graphs())

    def use_capture(self, capture: "Trace") -> Dict[str, Any]:
        """Applies ``capture``, the trace recorded while this trace's CUDA/HIP graphs were
        captured (``--capture FILE``): from then on :meth:`ops`, :meth:`kernels` and :meth:`graphs`
        name the operator that issued each replayed op, and :meth:`modules` its modules. Returns how it paired (``captures``,
        ``dispatches``, ``attributed_ops``, ``unattributed_ops``: ``graphs --json``'s
        ``capture``). Unlike the CLI, nothing is looked for beside the file: a capture is given.
        Raises ``ValueError`` when ``capture`` recorded none, names none of the replayed ops, or
        this trace has a capture already."""
        return json.loads(self._native.use_capture(capture._native))

    def compiled(self) -> pa.Table:
        """What ``torch.compile`` ran, one row per compiled graph: calls, CPU and device time,
        Inductor kernels with the operators they fused (``sightline compiled --json``'s
        ``graphs``; frames with their compile ids, compile work and steps in the metadata)."""
        return _tables.table(self._native.compiled())

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
        return _tables.table(self._native.idle(compat, None, "idle"))

    def gaps(self, compat: Optional[str] = None, top: Optional[int] = None) -> pa.Table:
        """Every GPU idle gap (or the ``top`` longest), longest first, each with what ended it, the
        launch behind that and what the CPU thread was doing meanwhile (``sightline idle --json
        --top N``'s ``gaps``)."""
        n = (1 << 63) - 1 if top is None else top
        if n < 0:
            raise ValueError(f"top must be at least 0, not {top}")
        return _tables.table(self._native.idle(compat, n, "gaps"))

    def findings(self) -> pa.Table:
        """Findings with numbers, advice, evidence and, where the fix is a change of durations,
        what it saves per step (``saving``), largest saving first (``sightline report --json``'s
        ``findings``). The notes on how the trace was recorded are :meth:`recording`'s."""
        return _tables.table(self._native.findings(False))

    def recording(self) -> pa.Table:
        """Notes on how the trace was recorded: device activities only, no input shapes, no
        Python stacks, memory profiling on, few active steps (``sightline report --json``'s
        ``recording``): facts of the recording, listed apart from what costs time."""
        return _tables.table(self._native.findings(True))

    def critical_path(
        self,
        step: Optional[str] = None,
        annotation: Optional[str] = None,
        instance: int = 0,
        what_if: Sequence[str] = (),
        compat: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The critical path of each step, as ``sightline path FILE --json``: ``paths`` with
        ``bound_by`` shares and ``segments``; ``step`` picks one step by name, ``annotation`` and
        ``instance`` HTA's annotation window instead. ``what_if`` edits (``"NAME=0"``,
        ``"NAME*F"``, ``"DataLoader=0"``, ...) add ``what_if`` with each step's predicted time;
        an edit that matches nothing raises ``ValueError``. ``compat="hta"`` follows HTA 0.5.0's
        graph (no ``what_if`` then). For the ranks of one job, see :func:`critical_path`."""
        if instance < 0:
            raise ValueError(f"instance counts from 0, not {instance}")
        return json.loads(
            self._native.path_json(step, annotation, instance, list(what_if), compat)
        )

    def report(self, compat: Optional[str] = None, top: Optional[int] = None) -> Dict[str, Any]:
        """Everything at once, as ``sightline report --json [--compat hta] [--top N]``: ``top``
        limits the operators (default 15) and the gaps listed one by one (default 10)."""
        if top is not None and top < 0:
            raise ValueError(f"top must be at least 0, not {top}")
        return json.loads(self._native.report_json(compat, top))

    def __repr__(self) -> str:
        return f"<sightline.Trace {self.source!r}>"

    def _repr_html_(self) -> str:
        return _html.trace_html(self)


class Snapshot:
    """A memory snapshot, as ``torch.cuda.memory._dump_snapshot`` writes it (a pickle, plain or
    gzip), read by Sightline's core without ``pickle.load``: a pickle that names or calls code is
    refused (:class:`NotASnapshot`) and nothing of it runs. Each method returns what
    ``sightline snapshot --json`` prints."""

    def __init__(self, native: Any) -> None:
        if not isinstance(native, _NativeSnapshot):
            raise TypeError(
                "sightline.Snapshot is not built from a path or data: "
                "use sightline.Snapshot.open(source) to read a snapshot"
            )
        self._native = native

    @staticmethod
    def open(source: Source) -> "Snapshot":  # noqa: A003 - the package's verb
        """Reads a snapshot: a path, ``bytes``-like data, or a binary file object (read in 1 MiB
        chunks, never whole). Raises :class:`NotASnapshot` when the input is not a snapshot or is
        refused; a damaged one opens, its damage in ``report()["diagnostics"]``."""
        if isinstance(source, (str, os.PathLike)):
            return Snapshot(_open_snapshot_path(os.fspath(source)))
        reader = _SnapshotReader()
        if isinstance(source, (bytes, bytearray, memoryview)):
            reader.feed(bytes(source))
            return Snapshot(reader.finish("<bytes>"))
        if hasattr(source, "read"):
            while True:
                chunk = source.read(CHUNK)
                if not chunk:
                    break
                if isinstance(chunk, str):
                    raise TypeError("open a snapshot file in binary mode ('rb')")
                reader.feed(bytes(chunk))
            name = getattr(source, "name", None)
            return Snapshot(reader.finish(str(name) if isinstance(name, (str, bytes)) else "<file>"))
        raise TypeError(
            "sightline.Snapshot.open takes a path, bytes or a binary file object, "
            f"not {type(source).__name__}"
        )

    @property
    def source(self) -> str:
        """The path the snapshot was read from, or ``<bytes>`` / the file object's name."""
        return self._native.source

    @property
    def read_seconds(self) -> float:
        """Seconds spent reading."""
        return self._native.read_seconds

    def report(self, top: int = 10) -> Dict[str, Any]:
        """Per device the peak of live bytes and what is live at it by first user frame, file and
        line, file, annotation, category and compile context (``top`` largest of each), each
        ``oom`` explained, the segments as ``_memory_viz.segsum`` counts them
        (``sightline snapshot FILE --json --top N``)."""
        if top < 0:
            raise ValueError(f"top must be at least 0, not {top}")
        return json.loads(self._native.report_json(top))

    def diff(self, new: "Snapshot", top: int = 10) -> Dict[str, Any]:
        """What changed from this snapshot to ``new`` by the same groupings
        (``sightline snapshot FILE NEW --json --top N``)."""
        if not isinstance(new, Snapshot):
            raise TypeError(f"diff takes a Snapshot, not {type(new).__name__}")
        if top < 0:
            raise ValueError(f"top must be at least 0, not {top}")
        return json.loads(self._native.diff_json(new._native, top))

    def folded(self, by: str = "segments") -> str:
        """The folded stacks ``_memory_viz.segments`` (``by="segments"``) or ``memory``
        (``by="memory"``) hand to ``format_flamegraph``."""
        return self._native.folded(by)

    def live_bytes(self, device: int = 0) -> List[int]:
        """A device's live bytes before its first trace entry and after each."""
        return self._native.live_bytes(device)

    def __repr__(self) -> str:
        return f"<sightline.Snapshot {self.source!r}>"


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
    fetched from the network). A run folder (``tensorboard_trace_handler("log/run1")``'s) shows
    the whole page in an iframe with each worker's latest span in the ranks view. Returns an
    ``IPython.display.HTML`` (a plain object with ``_repr_html_`` when IPython is absent)."""
    return _html.show(trace_or_path, height)


def serve(
    logdir: Optional[PathArg] = None, port: int = 0, host: str = "127.0.0.1", cli: Optional[PathArg] = None
) -> _serve.Server:
    """``sightline serve LOGDIR --port PORT --host HOST`` in the background: the page and LOGDIR's
    runs (a folder, ``s3://bucket/prefix`` or ``gs://...``), as TensorBoard's profiler plugin
    listed them. Returns a ``Server`` (``url``, ``port``, ``stop()``; a context manager; a link in
    Jupyter). ``port=0`` picks a free port. Bound to 127.0.0.1 unless ``host`` says otherwise. It
    runs the ``sightline`` command (``cli``, else ``$SIGHTLINE_CLI``, else on ``PATH``): the
    package itself holds no HTTP server; the page is the one shipped in this package."""
    return _serve.serve(logdir, port=port, host=host, cli=cli)



def critical_path(
    traces: Sequence[Union[Trace, PathArg]],
    step: Optional[str] = None,
    what_if: Sequence[str] = (),
) -> Dict[str, Any]:
    """The ranks of one job, as ``sightline path FILE... --json``: their graphs joined at the
    collectives :func:`ranks` matches, so a step's path can run through another rank's work
    (``segments[].rank``) and a ``what_if`` edit on one rank (``"rank2:NAME=0"``) predicts the
    steps of the ranks that waited for it. ``traces`` are :class:`Trace` objects or paths."""
    opened = [t if isinstance(t, Trace) else open(t) for t in traces]
    if not opened:
        raise ValueError("critical_path needs at least one trace")
    return json.loads(_job_path_json([t._native for t in opened], step, list(what_if)))


def what_if(
    trace_or_path: Union[Trace, PathArg], *edits: str, step: Optional[str] = None
) -> Dict[str, Any]:
    """What an edit of durations would buy: ``sightline path FILE --what-if EDIT... --json``'s
    ``what_if`` (``edits``, and per step ``measured_us``, ``predicted_us``, ``saving_us``). Edits
    are ``"NAME=0"`` (remove), ``"NAME*F"`` (scale), optionally ``"rankR:"`` first; NAME is a slice
    name with ``*`` globs, or ``DataLoader``, ``kernels``, ``memcpy``, ``communication``."""
    if not edits:
        raise ValueError("what_if needs at least one edit, e.g. 'aten::copy_=0'")
    trace = trace_or_path if isinstance(trace_or_path, Trace) else open(trace_or_path)
    return trace.critical_path(step=step, what_if=edits)["what_if"]


def ranks(
    paths: Union[PathArg, Sequence[PathArg]], align: str = "auto", whole_trace: bool = False
) -> Dict[str, Any]:
    """The traces of one distributed job side by side, as ``sightline ranks PATH... --json
    [--align ALIGN] [--whole-trace]``: per rank step, compute, communication and idle time,
    collectives with wait and bandwidth, stragglers, clock offsets and findings. ``paths`` is a
    trace file or a folder (searched recursively for ``*.json`` and ``*.json.gz``), or a list of
    them. ``align`` is ``"auto"``, ``"none"`` or ``"collectives"``. ``overlap`` covers HTA's steps
    (every ``ProfilerStep`` but the last, HTA's default) unless ``whole_trace`` is true; each row
    says which in ``covers`` and ``steps``. Files that are not traces are listed under
    ``unreadable_files``; :class:`NotATrace` when none is. Row lists (``ranks``, ``collectives``,
    ...) become tables with :func:`rows`."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return json.loads(_ranks_json([os.fspath(p) for p in paths], align, whole_trace))


def _diff_source(source: DiffSource) -> Tuple[Any, str]:
    """(what the native module takes, the name the CLI would show)."""
    if isinstance(source, Trace):
        return source._native, source.source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return path, path
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<bytes>"
    raise TypeError(
        f"sightline.diff takes paths, bytes or Trace objects, not {type(source).__name__}"
    )


def diff(
    base: DiffSource,
    new: DiffSource,
    per_step: bool = True,
    by_shape: bool = False,
    top: Optional[int] = None,
    fail_if: Union[str, Iterable[str]] = (),
) -> Dict[str, Any]:
    """Two runs compared, as ``sightline diff BASE NEW --json [--total] [--by-shape] [--top N]
    [--fail-if EXPR]...``: steps and their breakdown, operators, GPU ops, labels, idle time and
    findings, each base against new. ``base`` and ``new`` are paths (traces, or digests that
    ``sightline digest`` wrote), their bytes, or :class:`Trace` objects (their parsed model is
    used). ``per_step=False`` compares totals (``--total``); ``by_shape`` matches operators by
    input shapes too; ``top`` keeps the first N operator, GPU op and label rows. ``fail_if``
    conditions (``"step_time>+5%"``, as ``--fail-if``) are checked and reported under
    ``fail_if``, each with ``failed``; nothing is raised for a failed one. Raises
    :class:`NotATrace` for an input that is neither a trace nor a digest, ``ValueError`` for a bad
    condition."""
    if top is not None and top < 0:
        raise ValueError(f"top must be at least 0, not {top}")
    conditions = [fail_if] if isinstance(fail_if, str) else list(fail_if)
    b, base_name = _diff_source(base)
    n, new_name = _diff_source(new)
    return json.loads(
        _diff_json(b, n, not per_step, by_shape, top, conditions, base_name, new_name)
    )


def rows(report: Dict[str, Any], key: str) -> pa.Table:
    """The row list ``report[key]`` of :func:`ranks` or :func:`diff` (``"ranks"``,
    ``"collectives"``, ``"stragglers"``, ``"ops"``, ``"kernels"``, ...) as a ``pyarrow.Table``
    (nested members as Arrow structs and lists); the rest of the report is its metadata, read
    with :func:`table_meta`. An empty list is an empty table."""
    return _tables.from_rows(report[key], {k: v for k, v in report.items() if k != key})
