"""The ``text-to-sql`` import source: BIRD/Spider-shaped JSONL rows as SQL tasks.

One JSON object a line (or a JSON array, or Parquet: :func:`referee.tasks.imports.rows.iter_rows`):

* ``question`` (text), ``gold_sql`` (the reference query, SQLite dialect);
* the database: ``db``, the path of a SQLite file (relative to the JSONL file), or ``ddl`` (the
  ``CREATE TABLE`` statements) and ``inserts`` (``INSERT`` statements: one text or a list);
* optional ``id``, ``order_matters`` (default false: rows compare as a multiset),
  ``column_names_matter`` (default false: the gold's column names, which the prompt then
  asks for, must match, case aside), ``evidence`` (BIRD's hint, shown in the prompt).

An imported task has one database only, so its hidden instances are that database and, when
the gold's result does not depend on the order rows are stored in, a copy with every table's
rows shuffled (catching a ``LIMIT`` without ``ORDER BY``, say). A gold query that returns no
rows is imported with a warning naming the task (logged: ``referee tasks import`` prints it):
only an empty result with the gold's number of columns passes it, which a guess finds. Rows are
never dropped or duplicated: a gold written for this database may rely on its keys and its
foreign keys, and a perturbed copy would then judge right answers wrong. The visible sample
(prompt and ``run_query``) is each table's first 30 rows; where the whole database is no bigger,
a model can read the answer off it, which a single database cannot prevent
(``docs/domains/sql.md``).

>>> rows = list(load_text_to_sql("train", "bird.jsonl"))                # doctest: +SKIP
"""

from __future__ import annotations

import logging
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.domains.sql.compare import same_result
from referee.domains.sql.database import Database, Table, run_trusted
from referee.domains.sql.prompt import task_prompt
from referee.domains.sql.spec import DEFAULT_TIME_LIMIT_S
from referee.domains.sql.values import plain, plain_rows
from referee.domains.sql.verifier import MAX_ROWS
from referee.errors import TaskError
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = [
    "MAX_IMPORT_ROWS",
    "SAMPLE_ROWS",
    "database_from_statements",
    "load_text_to_sql",
    "read_sqlite",
    "row_task",
]

_log = logging.getLogger(__name__)

#: A database is kept whole in its task: at most this many rows over all its tables.
MAX_IMPORT_ROWS = 100_000
#: Each table's first rows that form the visible sample.
SAMPLE_ROWS = 30


def _column_type(declared: str) -> str:
    d = declared.upper()
    if "INT" in d:
        return "INTEGER"
    if any(k in d for k in ("REAL", "FLOA", "DOUB", "NUM", "DEC")):
        return "REAL"
    return "TEXT"  # dates too: SQLite keeps them as text, and the gold reads them so


def read_sqlite(path: str | Path) -> Database:
    """The tables of a SQLite file (opened read-only) as a :class:`Database`."""
    con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        return _database(con)
    finally:
        con.close()


def _database(con: sqlite3.Connection) -> Database:
    """The connection's tables (in the order they were made), read whole and checked."""
    names = [
        r[0]
        for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        )
    ]
    tables, total = [], 0
    for name in names:
        info = con.execute(f'PRAGMA table_info("{name}")').fetchall()
        columns = tuple((str(c[1]), _column_type(str(c[2] or ""))) for c in info)
        rows = con.execute(f'SELECT * FROM "{name}"').fetchall()
        total += len(rows)
        if total > MAX_IMPORT_ROWS:
            raise TaskError(
                f"the database has more than {MAX_IMPORT_ROWS} rows; an imported task keeps "
                "its database whole: import a smaller one"
            )
        tables.append(Table(name, columns, tuple(tuple(plain(v) for v in r) for r in rows)))
    if not tables:
        raise TaskError("the database has no tables")
    return Database(tuple(tables))


def _no_escape(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    # The statements build tables in memory; they may not reach a file (ATTACH) or an extension.
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_PRAGMA):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() == "load_extension":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _from_statements(ddl: str, inserts: str) -> Database:
    con = sqlite3.connect(":memory:")
    try:
        con.set_authorizer(_no_escape)
        con.executescript(ddl)
        con.executescript(inserts)
        con.set_authorizer(None)
        return _database(con)
    finally:
        con.close()


def _shuffled(db: Database, seed: str) -> Database:
    rng = random.Random(seed)
    tables = []
    for t in db.tables:
        rows = list(t.rows)
        rng.shuffle(rows)
        tables.append(Table(t.name, t.columns, tuple(rows)))
    return Database(tuple(tables))


def _sample(db: Database) -> Database:
    return Database(tuple(Table(t.name, t.columns, t.rows[:SAMPLE_ROWS]) for t in db.tables))


def _database_of(row: Row, base: Path, cache: dict[str, Database]) -> tuple[Database, str]:
    db_path = row.get("db", str, None)
    if db_path is not None:
        path = (base / db_path).resolve()
        if str(path) not in cache:
            if not path.is_file():
                raise row.error(
                    "db", f"no SQLite file at {str(path)!r} (paths are relative to the file)"
                )
            try:
                cache[str(path)] = read_sqlite(path)
            except (sqlite3.Error, TaskError) as e:
                raise row.error("db", f"cannot read the SQLite file: {e}") from e
        return cache[str(path)], Path(db_path).stem
    ddl = row.get("ddl", str, None)
    inserts = row.get("inserts", (str, list), None)
    if ddl is None or inserts is None:
        raise row.error("db", "missing: give db (a SQLite file) or ddl and inserts")
    if isinstance(inserts, list):
        if not all(isinstance(s, str) for s in inserts):
            raise row.error("inserts", "expected a text or a list of texts")
        inserts = ";\n".join(s.rstrip().rstrip(";") for s in inserts) + ";"
    try:
        return _from_statements(ddl, inserts), "inline"
    except (sqlite3.Error, TaskError) as e:
        raise row.error("ddl", f"the ddl and inserts do not build a database: {e}") from e


def _task(row: Row, base: Path, split: str, cache: dict[str, Database]) -> Task:
    db, db_name = _database_of(row, base, cache)
    return row_task(row, db, db_name, split)


def database_from_statements(ddl: str, inserts: str) -> Database:
    """The database that ``ddl`` (``CREATE TABLE`` statements) and ``inserts`` build, in an
    in-memory SQLite that may not reach a file or an extension; a :class:`sqlite3.Error` or
    :class:`TaskError` if they do not."""
    return _from_statements(ddl, inserts)


def row_task(
    row: Row, db: Database, db_name: str, split: str, *, source: str = "text-to-sql"
) -> Task:
    """The task of one text-to-SQL row (``question``, ``gold_sql`` and the optional fields of
    the module docstring) over ``db``, named ``<source>/<id>-v1``; a
    :class:`~referee.tasks.imports.rows.RowError` naming the field where the gold query does not
    run or returns too many rows."""
    question = row.get("question", str)
    gold = row.get("gold_sql", str)
    order_matters = row.get("order_matters", bool, False)
    names_matter = row.get("column_names_matter", bool, False)
    evidence = row.get("evidence", str, "")
    task_id = row.get("id", (str, int), None)
    try:
        columns, rows = run_trusted(gold, db, "sqlite")
    except (sqlite3.Error, TaskError) as e:
        raise row.error("gold_sql", f"does not run on its database: {e}") from e
    if len(rows) > MAX_ROWS:
        raise row.error("gold_sql", f"returns {len(rows)} rows; the verifier keeps {MAX_ROWS}")
    expected_rows = plain_rows(rows)
    expected = {"columns": columns, "rows": expected_rows}
    instances, results = [db], [expected]
    shuffled = _shuffled(db, f"{db_name}:{task_id}:{row.number}")
    _, again = run_trusted(gold, shuffled, "sqlite")
    if same_result(plain_rows(again), expected_rows, ordered=order_matters)[0]:
        instances.append(shuffled)
        results.append(expected)
    sample = _sample(db)
    name = f"{source}/{task_id if task_id is not None else f'row-{row.number}'}-v1"
    if not expected_rows:  # empty on its database and so on every hidden instance
        _log.warning(
            "%s: task %r: the gold query returns no rows, so any query returning no rows "
            "with its %d column(s) passes it; check gold_sql or drop the row",
            row.where, name, len(columns),
        )  # fmt: skip
    return Task.create(
        name=name,
        prompt=task_prompt(
            question, sample, "sqlite", order_matters, evidence, columns if names_matter else None
        ),
        domain="sql",
        kind="sql",
        answer_format="code",
        payload={
            "engine": "sqlite",
            "tables": db.table_names,
            "sample": sample.to_json(),
            "order_matters": order_matters,
            "column_names_matter": names_matter,
            "time_limit_s": DEFAULT_TIME_LIMIT_S,
            "question": question,
        },
        hidden={
            "reference": gold,
            "instances": [d.to_json() for d in instances],
            "expected": results,
        },
        split=split,
        difficulty=Difficulty(),
        provenance=Provenance(source=source, unit=f"{source}:{db_name}"),
    )


def load_text_to_sql(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None, **options: Any
) -> Iterator[Task]:
    """The tasks of a text-to-SQL file, one per row; a malformed row is a :class:`TaskError`
    naming the file, the row and the field (given to ``on_bad_row`` and skipped, with one)."""
    base = Path(path).resolve().parent
    cache: dict[str, Database] = {}
    for row in iter_rows(path, on_bad_row):
        with skipping(on_bad_row):
            yield _task(row, base, split, cache)
