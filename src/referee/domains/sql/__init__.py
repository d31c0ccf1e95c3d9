"""The SQL domain: questions over generated relational databases, judged by running the query.

A task gives a question, the schema and a sample database (SQLite or DuckDB); the answer is one
SELECT statement (or a model's text with a fenced ``sql`` block). The verifier runs it in the
sandbox, read-only, on hidden databases of the same schema with other contents, and compares
the rows with the trusted reference's on the host. Everything registers lazily here:

* families ``sql-filter``, ``sql-join``, ``sql-aggregate``, ``sql-window``, ``sql-nested``
  (:mod:`.families`);
* the verifier of :attr:`~referee.tasks.kinds.TaskKind.SQL` (:mod:`.verifier`);
* the environment ``sql`` with ``run_query``, ``show_schema`` and ``submit`` (:mod:`.env`);
* the import source ``text-to-sql`` (BIRD/Spider-shaped JSONL, :mod:`.imports`);
* the red-team corpus ``sql`` (:mod:`.redteam`).

``docs/domains/sql.md`` describes the tasks, the judging and the import format.
"""

from __future__ import annotations

from typing import Any

from referee.domains.registry import lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.tasks.sources import register_source
from referee.verify.dispatch import VerifierSetup, register_kind

__all__ = ["FAMILIES", "register"]

#: The families and what each asks for.
FAMILIES = {
    "sql-filter": "SQL: filters with NULLs, dates and ranges on one table",
    "sql-join": "SQL: inner and outer joins across two to four tables",
    "sql-aggregate": "SQL: GROUP BY, HAVING, top-k and aggregates of aggregates",
    "sql-window": "SQL: window functions (ROW_NUMBER, DENSE_RANK, LAG, running sums)",
    "sql-nested": "SQL: subqueries, NOT EXISTS, CTEs and correlated maxima",
}


def _family(name: str) -> Any:
    generate = lazy("referee.domains.sql.families:generate")

    def run(count: int, difficulty: float | None, seed: int) -> list[Task]:
        tasks: list[Task] = generate(name, count, difficulty, seed)
        return tasks

    return run


def _verifier(setup: VerifierSetup) -> Any:
    # Its own sandbox: the query runner and DuckDB preloaded (the set's sandbox has neither).
    from referee.domains.sql.verifier import SqlVerifier

    return SqlVerifier()


def _count_tests(task: Task) -> int:
    instances = task.hidden.get("instances", [])
    return len(instances) if isinstance(instances, list) else 0


def register() -> None:
    """SQL questions over generated databases, judged by running the query on hidden instances."""
    for _name, _description in FAMILIES.items():
        register_family(_name, _family(_name), domain="sql", description=_description)
    register_kind(TaskKind.SQL, _verifier, _count_tests)
    register_env("sql", lazy("referee.domains.sql.env:SqlEnv"))
    register_source(
        "text-to-sql",
        lazy("referee.domains.sql.imports:load_text_to_sql"),
        description="text-to-SQL JSONL (BIRD/Spider shape): question, db or ddl+inserts, gold_sql",
        reads_file=True,
        skips_bad_rows=True,
    )
    register_source(
        "intercode-sql",
        lazy("referee.domains.sql.intercode:intercode_sql_tasks"),
        description="InterCode's SQL questions on Spider databases (the intercode-bench package)",
        skips_bad_rows=True,
    )
    register_corpus(
        "sql",
        lazy(
            "referee.domains.sql.redteam:run_corpus",
            extra="sql",
            needed_for="the SQL red-team corpus (it attacks DuckDB too)",
        ),
    )
