"""Arrow tables from the columns the native module hands over (see ``python/src/columns.rs``).

Flat columns arrive as Arrow buffers already laid out in Python ``bytes`` objects (int64, float64,
bool bits, utf8 offsets and data, validity bitmaps), written there once by Rust;
``pyarrow.py_buffer`` wraps those bytes without copying, so these columns are zero-copy from the
native side. Nested columns (lists, objects: a kernel's launchers, a gap's attribution) arrive as
JSON text and are converted by ``pyarrow.array``, which copies, with their declared type
(``"typed"``: every table declares its columns), so a table's schema does not depend on its rows.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

import pyarrow as pa

META_KEY = b"sightline"

_FLAT = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "utf8": pa.string()}


def _buffer(b: Any) -> Any:
    return None if b is None else pa.py_buffer(b)


def arrow_type(t: Any) -> pa.DataType:
    """A declared column type (``sightline::analysis::columns::Type`` as serde writes it) in
    Arrow's terms."""
    if isinstance(t, str):
        return _FLAT[{"string": "utf8", "json": "utf8"}.get(t, t)]
    if "list" in t:
        return pa.list_(arrow_type(t["list"]))
    return pa.struct([(k, arrow_type(v)) for k, v in t["struct"]])


def _column(n: int, col: Tuple[Any, ...]) -> Tuple[str, pa.Array]:
    name, kind = col[0], col[1]
    if kind == "typed":
        return name, pa.array(json.loads(col[3]), type=arrow_type(json.loads(col[2])))
    nulls, validity, *buffers = col[2:]
    arr = pa.Array.from_buffers(
        _FLAT[kind], n, [_buffer(validity)] + [_buffer(b) for b in buffers], null_count=nulls
    )
    return name, arr


def table(parts: Tuple[int, List[Tuple[Any, ...]], str]) -> pa.Table:
    """``(rows, columns, meta_json)`` from the native module as a ``pyarrow.Table``."""
    n, cols, meta = parts
    names: List[str] = []
    arrays: List[pa.Array] = []
    for col in cols:
        name, arr = _column(n, col)
        names.append(name)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=names, metadata={META_KEY: meta.encode()})


def meta(t: pa.Table) -> Dict[str, Any]:
    """The non-row members of the CLI's JSON object a table came from."""
    raw = (t.schema.metadata or {}).get(META_KEY)
    return json.loads(raw) if raw else {}


def from_rows(rows: List[Dict[str, Any]], rest: Dict[str, Any]) -> pa.Table:
    """Rows already in Python (a report's list) as a table, with ``rest`` as its metadata."""
    t = pa.Table.from_pylist(rows) if rows else pa.table({})
    return t.replace_schema_metadata({META_KEY: json.dumps(rest).encode()})
