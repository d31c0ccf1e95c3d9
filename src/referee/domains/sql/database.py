"""A relational database as plain data, and the engine files made from it.

A task carries its databases as JSON (``{"tables": [{"name", "columns": [[name, type], ...],
"rows": [[...], ...]}]}``), so a task file is self-contained and its content hash covers every
row that decides the reward. Column types are ``INTEGER``, ``REAL``, ``TEXT`` and ``DATE``
(an ISO ``YYYY-MM-DD`` string: TEXT in SQLite, DATE in DuckDB). The grader turns a database
into an engine file on the host (:func:`database_file`) just before a verification, and the
file's *copy* is what the sandbox opens read-only.

>>> db = Database.from_json({"tables": [{"name": "t", "columns": [["a", "INTEGER"]],
...                                      "rows": [[1], [None]]}]})
>>> print(db.ddl())
CREATE TABLE t (a INTEGER);
>>> len(database_file(db, "sqlite")) > 0
True
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from referee.errors import TaskError
from referee.optional import require_extra

__all__ = [
    "COLUMN_TYPES",
    "ENGINES",
    "Database",
    "Engine",
    "Table",
    "database_file",
    "ident",
    "run_trusted",
    "run_trusted_typed",
    "sample_rows",
]

Engine = Literal["sqlite", "duckdb"]
ENGINES: tuple[Engine, ...] = ("sqlite", "duckdb")
COLUMN_TYPES = ("INTEGER", "REAL", "TEXT", "DATE")
_DUCKDB_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR", "DATE": "DATE"}


@dataclass(frozen=True)
class Table:
    """One table: its name, its ``(column, type)`` pairs and its rows (lists of plain values)."""

    name: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[Any, ...], ...]

    @property
    def column_names(self) -> list[str]:
        return [c for c, _ in self.columns]


@dataclass(frozen=True)
class Database:
    """Tables in order (the order of the schema shown to the model)."""

    tables: tuple[Table, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Database:
        """The database of its JSON form; a :class:`TaskError` saying what is malformed."""
        tables = data.get("tables") if isinstance(data, Mapping) else None
        if not isinstance(tables, list) or not tables:
            raise TaskError("a database is {'tables': [...]} with at least one table")
        out = []
        for t in tables:
            if not isinstance(t, Mapping) or not isinstance(t.get("name"), str):
                raise TaskError("every table of a database has a 'name'")
            cols = t.get("columns")
            if not isinstance(cols, list) or not cols:
                raise TaskError(f"table {t['name']!r} has no 'columns'")
            columns = []
            for c in cols:
                if not (isinstance(c, list) and len(c) == 2 and c[1] in COLUMN_TYPES):
                    raise TaskError(
                        f"table {t['name']!r}: a column is [name, type] with a type of "
                        f"{', '.join(COLUMN_TYPES)}, got {c!r}"
                    )
                columns.append((str(c[0]), str(c[1])))
            rows = t.get("rows", [])
            if not isinstance(rows, list) or any(
                not isinstance(r, list) or len(r) != len(columns) for r in rows
            ):
                raise TaskError(f"table {t['name']!r}: every row is a list of {len(columns)}")
            out.append(Table(t["name"], tuple(columns), tuple(tuple(r) for r in rows)))
        return cls(tuple(out))

    def to_json(self) -> dict[str, Any]:
        return {
            "tables": [
                {
                    "name": t.name,
                    "columns": [list(c) for c in t.columns],
                    "rows": list(map(list, t.rows)),
                }
                for t in self.tables
            ]
        }

    @property
    def table_names(self) -> list[str]:
        return [t.name for t in self.tables]

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def ddl(self, engine: Engine = "sqlite") -> str:
        """``CREATE TABLE`` statements, one a line, in the engine's types."""
        lines = []
        for t in self.tables:
            lines.append(f"CREATE TABLE {ident(t.name)} ({_columns_ddl(t, engine)});")
        return "\n".join(lines)

    def fingerprint(self) -> str:
        """A hash of the whole content (the cache key of its engine files)."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()


def _type(ty: str, engine: Engine) -> str:
    return _DUCKDB_TYPES[ty] if engine == "duckdb" else ty


def database_file(db: Database, engine: Engine) -> bytes:
    """The bytes of an engine file holding ``db``, cached by content: a task's instances are
    built once per process, not once per verification."""
    key = (db.fingerprint(), engine)
    with _CACHE_LOCK:
        data = _CACHE.get(key)
        if data is not None:
            _CACHE.move_to_end(key)
            return data
    with tempfile.TemporaryDirectory(prefix="referee-sql-") as tmp:
        path = os.path.join(tmp, "db")
        if engine == "sqlite":
            _write_sqlite(db, path)
        else:
            _write_duckdb(db, path)
        with open(path, "rb") as f:
            data = f.read()
    with _CACHE_LOCK:
        _CACHE[key] = data
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return data


_CACHE: OrderedDict[tuple[str, str], bytes] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 256


def _write_sqlite(db: Database, path: str) -> None:
    con = sqlite3.connect(path)
    try:
        con.executescript(db.ddl("sqlite"))
        for t in db.tables:
            marks = ", ".join("?" * len(t.columns))
            con.executemany(f"INSERT INTO {ident(t.name)} VALUES ({marks})", t.rows)
        con.commit()
    finally:
        con.close()


def _write_duckdb(db: Database, path: str) -> None:
    with _DUCK.lock:
        schema = _DUCK.load(db)
        con = _DUCK.con
        con.execute(f"ATTACH '{path}' AS referee_out")
        try:
            for t in db.tables:
                con.execute(
                    f"CREATE TABLE referee_out.main.{ident(t.name)} AS "
                    f"SELECT * FROM memory.{schema}.{ident(t.name)}"
                )
        finally:
            con.execute("DETACH referee_out")


class _DuckHost:
    """One in-memory DuckDB connection on the host for the grader's own work (references, the
    engine files), each database in a schema of its own: a DuckDB connection costs tens of
    milliseconds, a schema loaded from Arrow a few."""

    def __init__(self, keep: int = 64) -> None:
        self.lock = threading.RLock()
        self.keep = keep
        self._con: Any = None
        self._schemas: OrderedDict[str, None] = OrderedDict()

    @property
    def con(self) -> Any:
        if self._con is None:
            import duckdb

            self._con = duckdb.connect(":memory:", config={"threads": 1})
        return self._con

    def load(self, db: Database) -> str:
        """The schema holding ``db`` (loaded now if it is not); call under ``lock``."""
        require_extra("sql", needed_for="a DuckDB SQL task (SQLite ones need no extra)")
        import pyarrow as pa  # type: ignore[import-untyped]

        schema = f"s_{db.fingerprint()[:20]}"
        if schema in self._schemas:
            self._schemas.move_to_end(schema)
            return schema
        con = self.con
        con.execute(f"CREATE SCHEMA {schema}")
        types = {"INTEGER": pa.int64(), "REAL": pa.float64(), "TEXT": pa.string()}
        for t in db.tables:
            columns = list(zip(*t.rows, strict=True)) if t.rows else [() for _ in t.columns]
            arrow = pa.table(
                {
                    name: pa.array(list(values), type=types.get(ty, pa.string()))
                    for (name, ty), values in zip(t.columns, columns, strict=True)
                }
            )
            con.execute(f"CREATE TABLE {schema}.{ident(t.name)} ({_columns_ddl(t, 'duckdb')})")
            con.register("referee_rows", arrow)
            try:
                con.execute(f"INSERT INTO {schema}.{ident(t.name)} SELECT * FROM referee_rows")
            finally:
                con.unregister("referee_rows")
        self._schemas[schema] = None
        while len(self._schemas) > self.keep:
            old, _ = self._schemas.popitem(last=False)
            con.execute(f"DROP SCHEMA {old} CASCADE")
        return schema


_DUCK = _DuckHost()


def _columns_ddl(t: Table, engine: Engine) -> str:
    return ", ".join(f"{ident(c)} {_type(ty, engine)}" for c, ty in t.columns)


_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_KEYWORDS = {"order", "group", "select", "from", "where", "table", "index", "by", "to", "values"}


def ident(name: str) -> str:
    """``name`` as an SQL identifier: as it is when plain, else double-quoted.

    >>> ident("orders"), ident("Customer ID"), ident("order")
    ('orders', '"Customer ID"', '"order"')
    """
    if _PLAIN_NAME.fullmatch(name) and name not in _KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


#: Seconds a reference query may run on the host before SQLite interrupts it (an imported
#: dataset's gold query is not ours: a recursive CTE must not hang the import).
TRUSTED_TIMEOUT_S = 10.0


def run_trusted(sql: str, db: Database, engine: Engine) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run the grader's own (trusted) ``sql`` on ``db`` on the host: column names and rows.

    Never call this with a candidate's query: that runs only in the sandbox."""
    columns, _, rows = run_trusted_typed(sql, db, engine)
    return columns, rows


def run_trusted_typed(
    sql: str, db: Database, engine: Engine
) -> tuple[list[str], list[str] | None, list[tuple[Any, ...]]]:
    """:func:`run_trusted` with the result's column types: DuckDB's type names (``INTEGER``,
    ``VARCHAR``...), None for SQLite (whose result columns have no type)."""
    if engine == "duckdb":
        with _DUCK.lock:
            schema = _DUCK.load(db)
            con = _DUCK.con
            con.execute(f"USE memory.{schema}")
            try:
                cur = con.execute(sql)
                d = cur.description
                return [c[0] for c in d], [str(c[1]) for c in d], cur.fetchall()
            finally:
                con.execute("USE memory.main")
    lite = sqlite3.connect(":memory:")
    try:
        lite.executescript(db.ddl("sqlite"))
        for t in db.tables:
            marks = ", ".join("?" * len(t.columns))
            lite.executemany(f"INSERT INTO {ident(t.name)} VALUES ({marks})", t.rows)
        # An imported reference is the dataset's, not ours: it may read, nothing more, and only
        # for so long (SQLite interrupts the statement when the handler says so).
        lite.set_authorizer(_read_only)
        deadline = time.monotonic() + TRUSTED_TIMEOUT_S
        lite.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        cur = lite.execute(sql)
        if cur.description is None:
            raise TaskError("the reference is not a query (it returns no result set)")
        return [d[0] for d in cur.description], None, cur.fetchall()
    finally:
        lite.close()


_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}


def _read_only(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() == "load_extension":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def sample_rows(db: Database, per_table: int) -> dict[str, Sequence[tuple[Any, ...]]]:
    """The first ``per_table`` rows of each table (what a prompt shows)."""
    return {t.name: t.rows[:per_table] for t in db.tables}
