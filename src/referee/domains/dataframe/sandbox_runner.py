"""The grader's side of a dataframe run: preloaded into the sandbox's fork server, never imported
on the host (the host reads this file as text, :mod:`referee.domains.dataframe.execute`).

A run is one program: ``begin(nonce)``, then the candidate's source, then
``finish(globals(), schema)``. ``finish`` loads the input tables from ``/workspace/inputs/`` with
the task's schema (the same dtypes for every instance), calls ``transform(tables)``, and reports
the returned DataFrame as plain data: column names, a kind per column (``int``, ``float``,
``bool``, ``str``, ``datetime``) and rows of JSON values (``None`` for every kind of missing
value, ISO text for timestamps). Only an exact ``pandas.DataFrame`` is accepted: a subclass with
a lying ``__eq__`` or ``equals`` is refused before anything of it is read.

Frames are lines on fd 1: ``\\x1eDF <nonce> <json>``; the candidate's prints go to a capped sink.
The candidate can write such lines too (it runs in this process), but all it can ever report is
an answer of its own: the expected outputs are never in the sandbox, and the host compares.
"""

import datetime
import io
import json
import math
import os
import signal
import sys
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]

_MARK = "\x1eDF "
_MAX_ROWS = 100_000
_MAX_CELLS = 1_000_000
_CHANNEL: "_Channel | None" = None
_type = type
_DataFrame = pd.DataFrame
_Timestamp = pd.Timestamp
_isna = pd.isna


class _Sink(io.TextIOBase):
    """Where the candidate's prints go (counted, dropped)."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        return len(s)


class _Channel:
    def __init__(self, nonce: str) -> None:
        self.prefix = ("\n" + _MARK + nonce + " ").encode()
        self._write = os.write
        self._dumps = json.dumps

    def emit(self, obj: object) -> None:
        data = self.prefix + self._dumps(obj).encode() + b"\n"
        while data:
            data = data[self._write(1, data) :]


def _name(e: BaseException) -> str:
    t = _type(e)
    return f"{t.__module__}.{t.__qualname__}"


def begin(nonce: str, quiet: bool = True) -> None:
    """Before the candidate's code: the channel, quiet stdio, load errors reported."""
    global _CHANNEL
    _CHANNEL = _Channel(nonce)
    if quiet:
        sys.stdout = _Sink()
        sys.stderr = _Sink()

    def hook(kind: Any, value: BaseException, tb: Any, _chan: _Channel = _CHANNEL) -> None:
        _chan.emit({"load_error": _name(value)})

    sys.excepthook = hook


# ---- loading -------------------------------------------------------------------------------
_PANDAS_DTYPES = {"int": "Int64", "float": "float64", "str": "str", "bool": "boolean"}


def load_tables(schema: dict[str, dict[str, str]], folder: str = "/workspace/inputs") -> Any:
    """The input tables, each read from ``<folder>/<name>.csv`` with its declared column types:
    ``int`` as nullable ``Int64``, ``float``, ``str``, ``bool`` (nullable), ``date`` parsed to
    ``datetime64``; an empty cell is a missing value."""
    tables = {}
    for name, columns in schema.items():
        dtypes = {c: _PANDAS_DTYPES[t] for c, t in columns.items() if t in _PANDAS_DTYPES}
        dates = [c for c, t in columns.items() if t == "date"]
        path = os.path.join(folder, name + ".csv")
        frame = pd.read_csv(path, dtype=dtypes, keep_default_na=False, na_values=[""])
        for c in dates:
            frame[c] = pd.to_datetime(frame[c], format="ISO8601")
        tables[name] = frame[list(columns)]
    return tables


# ---- reporting -----------------------------------------------------------------------------
class Unreportable(Exception):
    pass


def _kind(series: Any) -> str:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if isinstance(dtype, pd.CategoricalDtype):
        return "object"  # judged by its values, like text
    if pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype):
        return "object"
    raise Unreportable(f"column dtype {dtype} cannot be reported")


def _value(v: Any) -> list[Any] | None:
    """One cell as a JSON value of an exact builtin type; anything else is unreportable."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    t = _type(v)
    if t is bool or t is np.bool_:
        return ["b", bool(v)]
    if t is int or isinstance(v, np.integer):
        return ["i", int(v)]
    if t is float or isinstance(v, np.floating):
        f = float(v)
        if math.isnan(f):
            return None
        return ["f", f if math.isfinite(f) else repr(f)]
    if t is str:
        return ["s", str.__str__(v)]
    if t is _Timestamp or t is datetime.datetime or t is datetime.date:
        ts = _Timestamp(v)
        if ts.tzinfo is not None:
            raise Unreportable("timezone-aware timestamps are not part of the contract")
        return ["t", ts.isoformat()]
    if t is np.datetime64:
        if np.isnat(v):
            return None
        return ["t", _Timestamp(v).isoformat()]
    raise Unreportable(f"values of type {t.__module__}.{t.__qualname__} cannot be reported")


_TAG_KINDS = {"b": "bool", "i": "int", "f": "float", "s": "str", "t": "datetime"}


def report(frame: Any) -> dict[str, Any]:
    """The plain data of ``frame`` (see the module docstring)."""
    if _type(frame) is not _DataFrame:
        t = _type(frame)
        raise Unreportable(f"transform returned {t.__module__}.{t.__qualname__}, not a DataFrame")
    n_rows, n_cols = _DataFrame.__len__(frame), len(frame.columns)
    if n_rows > _MAX_ROWS or n_rows * max(n_cols, 1) > _MAX_CELLS:
        raise Unreportable(f"the result is too large ({n_rows} rows x {n_cols} columns)")
    columns: list[str] = []
    kinds: list[str] = []
    data: list[list[Any]] = []
    for j in range(n_cols):
        label = frame.columns[j]
        if _type(label) is not str:
            raise Unreportable(f"column label {label!r} is not a string")
        series = frame.iloc[:, j]
        columns.append(str.__str__(label))
        kind = _kind(series)
        values = [_value(v) for v in series.to_numpy(dtype=object, na_value=None)]
        if kind == "object":  # text, or Python objects: the kind is what the values are
            tags = {v[0] for v in values if v is not None}
            if not tags:
                kind = "empty"
            elif len(tags) == 1:
                kind = _TAG_KINDS[next(iter(tags))]
            else:
                kind = "mixed"
        kinds.append(kind)
        data.append(values)
    rows = [list(r) for r in zip(*data, strict=True)] if data else [[] for _ in range(n_rows)]
    return {"columns": columns, "kinds": kinds, "rows": rows}


def finish(
    namespace: dict[str, Any], schema: dict[str, dict[str, str]], entry_point: str = "transform"
) -> None:
    """Load the tables, call the candidate's ``transform``, report its result."""
    chan = _CHANNEL
    assert chan is not None, "begin() was not called"
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    fn = namespace.get(entry_point)
    if not callable(fn):
        chan.emit({"load_error": f"no function named {entry_point}"})
        return
    try:
        tables = load_tables(schema)
    except Exception as e:  # the grader's own input failed to load: not the candidate's fault
        chan.emit({"input_error": f"{_name(e)}: {e}"[:500]})
        return
    try:
        result = fn(tables)
    except Exception as e:
        chan.emit({"raised": _name(e), "message": str(e)[:300]})
        return
    try:
        chan.emit({"result": report(result)})
    except Unreportable as e:
        chan.emit({"unreportable": str(e)[:300]})
    except Exception as e:
        chan.emit({"unreportable": f"{_name(e)} while reading the result"})
