"""Result sets compared on the host: as multisets or in order, numbers within a tolerance.

A result is its rows (lists of JSON values); column names play no part, the number and order of
columns do (the question says which columns, in which order). Integers and floats compare as
numbers (``3 == 3.0``, SQLite's ``AVG`` against DuckDB's), within ``rel_tol``/``abs_tol``;
strings compare exactly; NULL equals only NULL. Rows are a multiset (duplicates count) unless
the question asks for an order, when they compare position by position.

>>> same_result([[1, "a"], [2, None]], [[2.0, None], [1, "a"]], ordered=False)
(True, '')
>>> same_result([[1], [2]], [[2], [1]], ordered=True)[0]
False
>>> same_result([[1], [1]], [[1]], ordered=False)[1]
'2 rows, expected 1'

The columns are judged apart from the rows (:func:`same_columns`), so an empty result is judged
too: the number of columns always; their types where both sides report them. DuckDB reports a
type per column, SQLite none (its result columns have no declared type), so on SQLite an empty
result with the right number of columns passes an empty gold whatever it holds. Types compare
by the class the rows would compare by: a number (integers, decimals, floats, booleans) or text
(strings, and dates and times, which reach the grader as ISO text); a ``NULL`` column matches
either.

>>> same_columns(["a", "b", "c"], ["n"])
(False, '3 columns, expected 1')
>>> same_columns(["x"], ["n"], ["VARCHAR"], ["BIGINT"])
(False, 'column 1 is text, expected a number')
>>> same_columns(["x"], ["n"], ["DOUBLE"], ["HUGEINT"])
(True, '')
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["describe_rows", "same_columns", "same_result", "type_class"]

_REL_TOL = 1e-6
_ABS_TOL = 1e-6
_GREEDY_MAX = 2000


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _same_value(a: Any, b: Any, rel_tol: float, abs_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _number(a) and _number(b):
        return a == b or math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=abs_tol)
    return type(a) is type(b) and a == b


def _same_row(a: list[Any], b: list[Any], rel_tol: float, abs_tol: float) -> bool:
    return len(a) == len(b) and all(
        _same_value(x, y, rel_tol, abs_tol) for x, y in zip(a, b, strict=True)
    )


def _sort_key(row: list[Any]) -> tuple[tuple[int, Any], ...]:
    # NULL first, then numbers (rounded, so values within the tolerance sort together), then
    # text; the rounding only orders the rows, the comparison itself uses the tolerance.
    out: list[tuple[int, Any]] = []
    for v in row:
        if v is None:
            out.append((0, 0.0))
        elif _number(v):
            out.append((1, round(float(v), 4)))
        else:
            out.append((2, str(v)))
    return tuple(out)


_NUMBER_TYPES = (
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
    "UBIGINT", "UHUGEINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL", "BOOLEAN", "VARINT",
)  # fmt: skip


def type_class(name: str) -> str | None:
    """``"number"`` or ``"text"`` for an engine's column type, None for ``NULL`` (matches both).

    >>> type_class("DECIMAL(10,2)"), type_class("VARCHAR"), type_class("DATE"), type_class('"NULL"')
    ('number', 'text', 'text', None)
    """
    base = name.strip().strip('"').split("(")[0].strip().upper()
    if base == "NULL":
        return None
    return "number" if base in _NUMBER_TYPES else "text"


def same_columns(
    got: list[str],
    expected: list[str],
    got_types: list[str] | None = None,
    expected_types: list[str] | None = None,
) -> tuple[bool, str]:
    """Whether a result's columns match the gold's: their number, and their types' classes
    where both sides give types (see the module docstring). Names are :class:`SqlVerifier`'s
    business (only when the question asks for them)."""
    if len(got) != len(expected):
        return False, f"{len(got)} columns, expected {len(expected)}"
    if got_types is None or expected_types is None or len(got_types) != len(got):
        return True, ""
    if len(expected_types) != len(expected):
        return True, ""
    for i, (a, b) in enumerate(zip(got_types, expected_types, strict=True)):
        ca, cb = type_class(str(a)), type_class(str(b))
        if ca is not None and cb is not None and ca != cb:
            want = "a number" if cb == "number" else "text"
            return False, f"column {i + 1} is {ca}, expected {want}"
    return True, ""


def same_result(
    got: list[list[Any]],
    expected: list[list[Any]],
    *,
    ordered: bool,
    rel_tol: float = _REL_TOL,
    abs_tol: float = _ABS_TOL,
) -> tuple[bool, str]:
    """Whether ``got`` has the rows of ``expected`` (in order if ``ordered``), and if not, a
    short reason (which never shows expected values: the reason reaches the model)."""
    if len(got) != len(expected):
        return False, f"{len(got)} rows, expected {len(expected)}"
    widths = {len(r) for r in got}
    want = {len(r) for r in expected}
    if expected and widths != want:
        return False, f"{'/'.join(map(str, sorted(widths)))} columns, expected {want.pop()}"
    if not ordered:
        try:
            got, expected = sorted(got, key=_sort_key), sorted(expected, key=_sort_key)
        except TypeError:  # mixed types in a column: fall back to the greedy match below
            return _greedy(got, expected, rel_tol, abs_tol)
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        if not _same_row(a, b, rel_tol, abs_tol):
            if not ordered:
                return _greedy(got, expected, rel_tol, abs_tol)
            return False, f"row {i + 1} differs"
    return True, ""


def _greedy(
    got: list[list[Any]], expected: list[list[Any]], rel_tol: float, abs_tol: float
) -> tuple[bool, str]:
    """A multiset match row by row (rows whose rounding sorted them apart still pair up)."""
    if len(got) > _GREEDY_MAX:  # quadratic: a large result that sorted apart is a mismatch
        return False, "the rows differ"
    left = list(expected)
    for row in got:
        for j, exp in enumerate(left):
            if _same_row(row, exp, rel_tol, abs_tol):
                del left[j]
                break
        else:
            return False, "a row that is not in the expected result"
    return True, ""


def describe_rows(columns: list[str], rows: list[list[Any]], limit: int = 20) -> str:
    """A small text table (what a tool shows the model), at most ``limit`` rows."""
    lines = [" | ".join(columns)]
    for row in rows[:limit]:
        lines.append(" | ".join("NULL" if v is None else str(v) for v in row))
    if len(rows) > limit:
        lines.append(f"... ({len(rows)} rows, {limit} shown)")
    else:
        lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)
