"""The state store of a tool world: dumps of a SQLite database as plain data, and their diff.

A world's whole state is one SQLite database. The grader judges an episode by the *change* it
made: :func:`dump_store` reads every table into plain, sorted rows, and :func:`store_diff`
says which rows appeared and which went away. The task records the diff the reference call
sequence makes (``hidden["expected_diff"]``); an episode passes only if its diff is exactly
that one, so a change to any other row (an extra refund, a second order cancelled) fails it.

Rows a tool inserts get new integer keys in the order the calls came; an agent that does the
right things in another order gets other keys. So the key of an inserted row (an ``INTEGER
PRIMARY KEY`` above the table's largest key at the start) is masked to ``None`` in the diff,
and free-text columns a task names (a mail body) are masked to whether they hold text.

>>> import sqlite3
>>> db = sqlite3.connect(":memory:")
>>> _ = db.executescript("CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT); "
...                      "INSERT INTO t VALUES (1, 'a');")
>>> before = dump_store(db)
>>> _ = db.execute("UPDATE t SET x = 'b' WHERE id = 1")
>>> store_diff(before, dump_store(db))
{'t': {'added': [[1, 'b']], 'removed': [[1, 'a']]}}
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["StoreDump", "TableDump", "dump_store", "open_read_only", "store_diff"]

#: JSON-able row values (SQLite gives int, float, str, bytes, None; bytes become hex text).
Row = list[Any]
#: ``{table: {"added": rows, "removed": rows}}``; tables without a change are left out.
StoreDiff = dict[str, dict[str, list[Row]]]


@dataclass(frozen=True)
class TableDump:
    """One table: its columns, the index of its integer key (-1: none), its rows sorted."""

    columns: tuple[str, ...]
    key: int
    rows: tuple[tuple[Any, ...], ...]


#: Every table of a store by name (SQLite's own ``sqlite_*`` tables left out).
StoreDump = dict[str, TableDump]


def _plain(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


def _sort_key(row: tuple[Any, ...] | list[Any]) -> str:
    return json.dumps(row, default=str)


def dump_store(db: sqlite3.Connection) -> StoreDump:
    """Every user table of ``db`` as plain rows, sorted (the same state gives the same dump)."""
    names = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    out: StoreDump = {}
    for name in names:
        quoted = '"' + name.replace('"', '""') + '"'
        info = db.execute(f"PRAGMA table_info({quoted})").fetchall()
        columns = tuple(str(c[1]) for c in info)
        keys = [i for i, c in enumerate(info) if c[5] and str(c[2]).upper() == "INTEGER"]
        key = keys[0] if len(keys) == 1 and sum(1 for c in info if c[5]) == 1 else -1
        rows = [tuple(_plain(v) for v in r) for r in db.execute(f"SELECT * FROM {quoted}")]
        out[name] = TableDump(columns, key, tuple(sorted(rows, key=_sort_key)))
    return out


def _masked(
    rows: Counter[tuple[Any, ...]], key: int, top: Any, free: set[int]
) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for row, n in rows.items():
        values = list(row)
        if key >= 0 and isinstance(values[key], int) and (top is None or values[key] > top):
            values[key] = None  # a new row's key depends on the calls' order, not on what they did
        for i in free:
            values[i] = bool(values[i])  # free text: whether there is some, not its words
        out[tuple(values)] += n
    return out


def store_diff(
    before: StoreDump, after: StoreDump, *, free_text: dict[str, list[str]] | None = None
) -> StoreDiff:
    """The rows ``after`` has that ``before`` has not (``added``) and the other way round
    (``removed``), per table; a table created or dropped counts all its rows. ``free_text``
    names columns compared by whether they hold text (``{"mail": ["body"]}``)."""
    free_text = free_text or {}
    diff: StoreDiff = {}
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        table = a or b
        assert table is not None
        key = table.key if b is None or a is None or b.columns == a.columns else -1
        top = (
            max((r[key] for r in b.rows if isinstance(r[key], int)), default=0)
            if b and key >= 0
            else None
        )
        free = {table.columns.index(c) for c in free_text.get(name, []) if c in table.columns}
        old = _masked(Counter(b.rows if b else ()), -1, None, free)
        new = _masked(Counter(a.rows if a else ()), key, top, free)
        added, removed = new - old, old - new
        if added or removed:
            diff[name] = {
                "added": sorted((list(r) for r in added.elements()), key=_sort_key),
                "removed": sorted((list(r) for r in removed.elements()), key=_sort_key),
            }
    return diff


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """A SQLite file opened read-only, its schema distrusted (a store written by code that
    ran in the sandbox: no trigger fires, no function of its views runs, nothing is written).
    """
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    db.execute("PRAGMA trusted_schema = OFF")
    db.execute("PRAGMA query_only = ON")
    return db
