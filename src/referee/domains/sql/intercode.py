"""Import source ``intercode-sql``: InterCode's SQL tasks, read from the installed
``intercode-bench`` package (``referee tasks import intercode-sql --out tasks.jsonl``).

InterCode (Yang et al., NeurIPS 2023) ships 23 questions over Spider's databases
(``intercode/assets/datasets/sql_queries.csv``: ``query``, ``gold``, ``db``) and the databases
as one MySQL dump (``spider_dev.sql``). Its judge runs the agent's last query and the gold on
MySQL and scores the rows' intersection over union, scaled by the Kendall correlation of their
order; a task is solved at reward 1.

Here each question becomes a ``sql`` task of the text-to-SQL import
(:func:`~referee.domains.sql.imports.row_task`: hidden instances, the sample in the prompt),
judged by the domain's verifier on SQLite:

* the question's database is the dump's, converted to SQLite (:mod:`.mysqldump`); the gold
  query runs on it as it is (Spider's queries are SQLite's dialect to begin with);
* the order of the rows matters when the gold has an ``ORDER BY`` (Spider's rule; InterCode's
  own judge also lowers the reward of rows in another order where the question asks none);
* a question is refused (one line naming the package file and row; ``--skip-bad`` reports it
  and goes on) when its database is not in the dump, its gold does not run on SQLite, or its
  gold returns no rows (then any empty result with the right columns would pass: the dump's
  ``wta_1`` tables are empty).

Ids are ``intercode-sql/<n>-v1``, n the question's row in the CSV from 1; a database's
questions are one unit (held out whole).
"""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Iterator

from referee.errors import TaskError
from referee.tasks.imports.packaged import PackagedBenchmark
from referee.tasks.imports.rows import OnBadRow, Row, skipping
from referee.tasks.model import Task

from .database import Database, run_trusted
from .imports import database_from_statements, row_task
from .mysqldump import sqlite_databases

__all__ = ["BENCHMARK", "intercode_sql_rows", "intercode_sql_tasks"]

BENCHMARK = PackagedBenchmark("intercode-sql", "intercode-bench", ">=0.1.22,<0.2", "0.1.22")
_QUERIES = "intercode/assets/datasets/sql_queries.csv"
_DUMP = "intercode/assets/datasets/spider_dev.sql"


def intercode_sql_rows() -> Iterator[Row]:
    """The questions as text-to-SQL rows (``id``, ``question``, ``gold_sql``, ``db``,
    ``order_matters``), each naming the package file and its row (from 1, the header aside)."""
    path = BENCHMARK.file(_QUERIES)
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
    for n, item in enumerate(reader, 1):
        gold = (item.get("gold") or "").strip()
        data = {
            "id": n,
            "question": (item.get("query") or "").strip(),
            "gold_sql": gold,
            "db": (item.get("db") or "").strip(),
            "order_matters": "order by" in " ".join(gold.lower().split()),
        }
        yield Row(str(path), n, data, by_line=False)


def intercode_sql_tasks(split: str, on_bad_row: OnBadRow | None = None) -> Iterator[Task]:
    """The InterCode SQL tasks (see the module docstring); the first bad question stops the
    import unless ``on_bad_row`` takes it."""
    dumps = sqlite_databases(BENCHMARK.file(_DUMP).read_text(encoding="utf-8"))
    built: dict[str, Database] = {}
    for row in intercode_sql_rows():
        with skipping(on_bad_row):
            name = row.get("db", str)
            if name not in dumps:
                raise row.error("db", f"no database {name!r} in the package's dump")
            if name not in built:
                try:
                    built[name] = database_from_statements(*dumps[name])
                except (sqlite3.Error, TaskError) as e:
                    raise row.error("db", f"the dump's {name!r} does not load: {e}") from None
            try:
                _, rows = run_trusted(row.get("gold_sql", str), built[name], "sqlite")
            except (sqlite3.Error, TaskError) as e:
                raise row.error("gold_sql", f"does not run on SQLite: {e}") from None
            if not rows:
                raise row.error(
                    "gold_sql",
                    f"returns no rows on {name!r} (its tables in the dump are empty or nothing "
                    "matches): any empty result with its columns would pass",
                )
            yield row_task(row, built[name], name, split, source="intercode-sql")
