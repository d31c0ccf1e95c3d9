"""The rows of a dataset file, one at a time, and the errors that name file, row and field.

A file is JSONL (one JSON object a line; ``.gz`` too), a JSON array (``.json`` starting with
``[``, read whole: JSON arrays cannot be streamed with the standard library) or Parquet (read in
record batches with pyarrow, so a large file is never held whole). Every error a source raises
about a row goes through :meth:`Row.error` and reads ``FILE:LINE: field 'NAME': what`` (JSONL)
or ``FILE: row N: field 'NAME': what`` (Parquet, a JSON array; N counts from 1).

An error about one row is a :class:`RowError` (a :class:`TaskError`). A loader that takes
``on_bad_row`` (``referee tasks import --skip-bad``) hands each bad row's error to it and goes
on with the next row (:func:`skipping`); without it, the first bad row stops the import.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "p.jsonl")
>>> _ = open(path, "w").write(json.dumps({"a": "[1, 2]"}) + "\\n")
>>> [row.json("a") for row in iter_rows(path)]
[[1, 2]]
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from referee.errors import TaskError
from referee.optional import require_extra

__all__ = ["MISSING", "OnBadRow", "Row", "RowError", "iter_rows", "skipping"]

#: The default of :meth:`Row.get` and :meth:`Row.json` that makes a field required.
MISSING: Any = object()
_PARQUET_BATCH = 256


class RowError(TaskError):
    """A :class:`TaskError` about one row of a dataset file (``where`` names it): the row can
    be skipped (``--skip-bad``) while the rest of the file is imported."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


#: What a loader calls with each bad row's error instead of raising it.
OnBadRow = Callable[[RowError], None]


@contextlib.contextmanager
def skipping(on_bad_row: OnBadRow | None) -> Iterator[None]:
    """Around the work on one row: a :class:`RowError` goes to ``on_bad_row`` (and the row is
    skipped) when one is given, and is raised otherwise.

    >>> bad = []
    >>> for n in (1, 2):
    ...     with skipping(bad.append):
    ...         raise RowError(f"f:{n}: broken", f"f:{n}")
    >>> [e.where for e in bad]
    ['f:1', 'f:2']
    """
    if on_bad_row is None:
        yield
        return
    try:
        yield
    except RowError as e:
        on_bad_row(e)


@dataclass(frozen=True)
class Row:
    """One record of a dataset file and where it is (``line`` for JSONL, else ``row``)."""

    path: str
    number: int
    data: Mapping[str, Any]
    by_line: bool = True

    @property
    def where(self) -> str:
        return f"{self.path}:{self.number}" if self.by_line else f"{self.path}: row {self.number}"

    def error(self, field: str | None, message: str) -> RowError:
        """A :class:`RowError` naming the file, the row and (when given) the field."""
        at = f" field {field!r}:" if field else ""
        return RowError(f"{self.where}:{at} {message}", self.where)

    def get(self, field: str, types: type | tuple[type, ...], default: Any = MISSING) -> Any:
        """The value of ``field``, which must be of ``types``; None counts as absent."""
        value = self.data.get(field)
        if value is None:
            if default is MISSING:
                raise self.error(field, "missing (the source's rows have it)")
            return default
        if not isinstance(value, types):
            want = (
                " or ".join(t.__name__ for t in types)
                if isinstance(types, tuple)
                else types.__name__
            )
            raise self.error(field, f"expected {want}, got {type(value).__name__}")
        return value

    def json(self, field: str, default: Any = MISSING) -> Any:
        """``field`` decoded from its JSON text; a value that is already decoded (a Parquet
        struct or list, a JSONL object) is taken as it is. An empty text counts as absent."""
        value = self.data.get(field)
        if value is None or value == "":
            if default is MISSING:
                raise self.error(field, "missing (the source's rows have it)")
            return default
        if not isinstance(value, str):
            return value
        return self.decode(field, value)

    def decode(self, field: str, text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise self.error(field, f"not valid JSON ({e.msg} at char {e.pos})") from None


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def iter_rows(path: str | Path, on_bad_row: OnBadRow | None = None) -> Iterator[Row]:
    """The rows of ``path`` (JSONL, a JSON array or Parquet), streamed where the format allows.

    A missing file is a :class:`TaskError`; a line that is not a JSON object is a
    :class:`RowError` naming it, handed to ``on_bad_row`` (and skipped) when one is given.
    """
    path = Path(path)
    shown = str(path)
    if not path.is_file():
        raise TaskError(f"cannot read {shown!r}: no such file (give the dataset file to import)")
    if path.suffix == ".parquet":
        yield from _parquet_rows(path)
        return
    try:
        with _open_text(path) as f:
            first = f.read(1)
            while first.isspace():
                first = f.read(1)
            f.seek(0)
            if first == "[":
                yield from _array_rows(shown, f, on_bad_row)
                return
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                with skipping(on_bad_row):
                    try:
                        data = json.loads(line)
                    except json.JSONDecodeError as e:
                        why = f"not valid JSON ({e.msg} at column {e.colno})"
                        raise RowError(f"{shown}:{n}: {why}", f"{shown}:{n}") from None
                    if not isinstance(data, dict):
                        where = f"{shown}:{n}"
                        got = _kind(data)
                        raise RowError(f"{where}: expected a JSON object, got {got}", where)
                    yield Row(shown, n, data)
    except UnicodeDecodeError as e:
        raise TaskError(f"{shown}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except (OSError, EOFError) as e:
        raise TaskError(f"cannot read {shown!r}: {e}") from None


def _kind(value: object) -> str:
    names: dict[type, str] = {list: "an array", str: "a string"}
    return names.get(type(value), type(value).__name__)


def _array_rows(shown: str, f: IO[str], on_bad_row: OnBadRow | None) -> Iterator[Row]:
    try:
        data = json.load(f)
    except json.JSONDecodeError as e:
        why = f"not valid JSON ({e.msg} at column {e.colno})"
        raise TaskError(f"{shown}:{e.lineno}: {why}") from None
    for n, item in enumerate(data, 1):
        with skipping(on_bad_row):
            if not isinstance(item, dict):
                where = f"{shown}: row {n}"
                raise RowError(f"{where}: expected a JSON object, got {_kind(item)}", where)
            yield Row(shown, n, item, by_line=False)


def _parquet_rows(path: Path) -> Iterator[Row]:
    require_extra("parquet", needed_for=f"reading {path} (Parquet)")
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    shown = str(path)
    try:
        pf = pq.ParquetFile(path)
        n = 0
        for batch in pf.iter_batches(batch_size=_PARQUET_BATCH):
            for item in batch.to_pylist():
                n += 1
                yield Row(shown, n, item, by_line=False)
    except (pa.ArrowException, OSError) as e:
        raise TaskError(f"{shown}: not a readable Parquet file ({e})") from None
