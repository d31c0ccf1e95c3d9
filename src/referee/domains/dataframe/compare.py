"""Comparing a reported table with the reference's, and checking the task's rules, on the host.

Both tables are plain data as the sandbox runner reports them: ``{"columns": [...], "kinds":
[...], "rows": [[cell, ...], ...]}``, a cell ``None`` (missing) or ``[tag, value]`` (``b`` bool,
``i`` int, ``f`` float, ``s`` text, ``t`` ISO timestamp). Nothing here trusts the candidate's
report: anything malformed is a mismatch with a reason, never an exception.

What must agree (:func:`compare_tables`): the set of column names (order free), each column's
kind (``int`` and ``float`` count as one where the task allows it; a column with no values
fits any kind), the number of rows, and the rows as a multiset (as a sequence when the task says
the output is sorted), floats within a relative and absolute tolerance, missing equal to missing.

>>> a = {"columns": ["k", "v"], "kinds": ["str", "int"], "rows": [[["s", "x"], ["i", 2]]]}
>>> b = {"columns": ["v", "k"], "kinds": ["float", "str"], "rows": [[["f", 2.0], ["s", "x"]]]}
>>> compare_tables(b, a, ordered=False)
''
>>> check_rules(b, [{"type": "not_null", "columns": ["k"]}], {})
[]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["RULE_TYPES", "check_rules", "compare_tables", "well_formed"]

_KINDS = {"int", "float", "bool", "str", "datetime", "empty", "mixed"}
_TAGS: dict[str, type | tuple[type, ...]] = {
    "b": bool,
    "i": int,
    "f": (float, str),
    "s": str,
    "t": str,
}
_INFS = ("inf", "-inf")
RULE_TYPES = ("unique", "not_null", "total", "row_count", "sorted_by")


def well_formed(table: Any) -> str:
    """Why ``table`` is not a well-formed report ("" when it is)."""
    if not isinstance(table, dict):
        return "the report is not an object"
    cols, kinds, rows = table.get("columns"), table.get("kinds"), table.get("rows")
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        return "malformed column names"
    if len(set(cols)) != len(cols):
        return "duplicate column names"
    if not isinstance(kinds, list) or len(kinds) != len(cols) or not set(kinds) <= _KINDS:
        return "malformed column kinds"
    if not isinstance(rows, list):
        return "malformed rows"
    for row in rows:
        if not isinstance(row, list) or len(row) != len(cols):
            return "a row does not have one cell per column"
        if any(cell is not None and _bad_cell(cell) for cell in row):
            return "a malformed cell"
    return ""


def _bad_cell(cell: Any) -> bool:
    if not isinstance(cell, list) or len(cell) != 2 or cell[0] not in _TAGS:
        return True
    tag, value = cell[0], cell[1]
    return bool(
        not isinstance(value, _TAGS[tag])
        or (tag in ("i", "f") and isinstance(value, bool))
        or (tag == "i" and isinstance(value, int) and not -(2**63) <= value < 2**63)
        or (tag == "f" and isinstance(value, str) and value not in _INFS)
    )


def _number(cell: list[Any]) -> float:
    v = cell[1]
    return float(v)  # "inf", "-inf" arrive as text


def _kinds_fit(got: str, want: str, int_float: bool) -> bool:
    if got == want or "empty" in (got, want):
        return True
    return int_float and {got, want} == {"int", "float"}


def _cells_equal(a: Any, b: Any, tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if a[0] in ("i", "f") and b[0] in ("i", "f"):
        x, y = _number(a), _number(b)
        if math.isinf(x) or math.isinf(y):
            return x == y
        return math.isclose(x, y, rel_tol=tol, abs_tol=tol)
    return bool(a[0] == b[0] and a[1] == b[1])


def _sort_key(row: Sequence[Any]) -> tuple[Any, ...]:
    # Missing first; numbers rounded to 9 significant digits so that values within tolerance
    # of each other sort alike; then by tag and text, so every cell has a total order.
    key: list[tuple[int, float, str]] = []
    for cell in row:
        if cell is None:
            key.append((0, 0.0, ""))
        elif cell[0] in ("i", "f"):
            x = _number(cell)
            key.append((1, float(f"{x:.9g}") if math.isfinite(x) else x, ""))
        else:
            key.append((2, 0.0, f"{cell[0]}:{cell[1]}"))
    return tuple(key)


def compare_tables(
    got: dict[str, Any],
    want: dict[str, Any],
    *,
    ordered: bool,
    tol: float = 1e-6,
    int_float: bool = True,
) -> str:
    """Why ``got`` differs from ``want`` ("" when they agree); see the module docstring.
    ``want`` is the reference's report (well formed); ``got`` is checked first."""
    bad = well_formed(got)
    if bad:
        return bad
    gcols, wcols = got["columns"], want["columns"]
    if set(gcols) != set(wcols):
        missing = [c for c in wcols if c not in gcols]
        extra = [c for c in gcols if c not in wcols]
        return f"columns differ (missing {missing}, unexpected {extra})"
    where = [gcols.index(c) for c in wcols]
    for c, j in zip(wcols, where, strict=True):
        gk, wk = got["kinds"][j], want["kinds"][wcols.index(c)]
        if not _kinds_fit(gk, wk, int_float):
            return f"column {c!r} holds {gk} values, expected {wk}"
    grows = [[row[j] for j in where] for row in got["rows"]]
    wrows = want["rows"]
    if len(grows) != len(wrows):
        return f"{len(grows)} rows, expected {len(wrows)}"
    if not ordered:
        grows, wrows = sorted(grows, key=_sort_key), sorted(wrows, key=_sort_key)
    for i, (g, w) in enumerate(zip(grows, wrows, strict=True)):
        for c, a, b in zip(wcols, g, w, strict=True):
            if not _cells_equal(a, b, tol):
                # The expected value is not shown: a verdict's details may reach the model.
                position = f"row {i}" if ordered else "a row"
                return f"{position} differs in column {c!r} (got {_show(a)})"
    return ""


def _show(cell: Any) -> str:
    return "missing" if cell is None else repr(cell[1])[:40]


def _column(table: dict[str, Any], name: str) -> list[Any] | None:
    if name not in table["columns"]:
        return None
    j = table["columns"].index(name)
    return [row[j] for row in table["rows"]]


def check_rules(
    table: dict[str, Any], rules: list[dict[str, Any]], facts: dict[str, Any]
) -> list[str]:
    """The rules ``table`` breaks, each as a sentence (empty: none). ``facts`` are the numbers
    the grader computed from the hidden input (``totals`` by column, ``row_counts`` by table).

    Rules: ``{"type": "unique", "columns": [...]}`` (no two rows share the key),
    ``{"type": "not_null", "columns": [...]}``, ``{"type": "total", "column": c, "table": t,
    "of": c2}`` (the column's sum equals the input's), ``{"type": "row_count", "table": t}``
    (one output row per input row), ``{"type": "sorted_by", "columns": [...]}`` (ascending)."""
    if well_formed(table):
        return ["the result is malformed"]
    broken = []
    for rule in rules:
        kind = rule.get("type")
        cols = list(rule.get("columns", []))
        values = {c: _column(table, c) for c in cols}
        absent = [c for c, v in values.items() if v is None]
        if absent:
            broken.append(f"{kind}: no column {absent[0]!r}")
            continue
        if kind == "unique":
            keys = [
                tuple(_sort_key([row[table["columns"].index(c)] for c in cols]))
                for row in table["rows"]
            ]
            if len(set(keys)) != len(keys):
                broken.append(f"unique: duplicate keys in {cols}")
        elif kind == "not_null":
            for c in cols:
                if any(v is None for v in values[c] or []):
                    broken.append(f"not_null: missing values in {c!r}")
        elif kind == "total":
            broken += _check_total(table, rule, facts)
        elif kind == "row_count":
            want = facts.get("row_counts", {}).get(rule.get("table"))
            if want is not None and len(table["rows"]) != want:
                broken.append(f"row_count: {len(table['rows'])} rows, the input has {want}")
        elif kind == "sorted_by":
            keys = [
                _sort_key([row[table["columns"].index(c)] for c in cols]) for row in table["rows"]
            ]
            if keys != sorted(keys):
                broken.append(f"sorted_by: rows are not sorted by {cols}")
    return broken


def _check_total(table: dict[str, Any], rule: dict[str, Any], facts: dict[str, Any]) -> list[str]:
    name = str(rule.get("column"))
    values = _column(table, name)
    want = facts.get("totals", {}).get(name)
    if values is None:
        return [f"total: no column {name!r}"]
    if want is None:
        return []
    try:
        got = math.fsum(_number(v) for v in values if v is not None and v[0] in ("i", "f"))
    except (ValueError, OverflowError):
        return [f"total: column {name!r} does not sum"]
    if not math.isclose(got, float(want), rel_tol=1e-6, abs_tol=1e-6):
        return [f"total: {name!r} sums to {got:g}, the input's total is {float(want):g}"]
    return []
