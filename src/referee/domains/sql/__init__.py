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

from referee.domains.kit import Domain, Source, families, hidden_count
from referee.tasks.kinds import TaskKind

__all__ = ["DOMAIN", "FAMILIES", "register"]

#: The families and what each asks for.
FAMILIES = {
    "sql-filter": "SQL: filters with NULLs, dates and ranges on one table",
    "sql-join": "SQL: inner and outer joins across two to four tables",
    "sql-aggregate": "SQL: GROUP BY, HAVING, top-k and aggregates of aggregates",
    "sql-window": "SQL: window functions (ROW_NUMBER, DENSE_RANK, LAG, running sums)",
    "sql-nested": "SQL: subqueries, NOT EXISTS, CTEs and correlated maxima",
}

DOMAIN = Domain(
    "sql",
    package=__name__,
    kind=TaskKind.SQL,
    families=families("families:generate", FAMILIES),
    verifier="verifier:make_verifier",
    count_tests=hidden_count("instances"),
    env="env:SqlEnv",
    sources=(
        Source(
            "text-to-sql",
            "imports:load_text_to_sql",
            "text-to-SQL JSONL (BIRD/Spider shape): question, db or ddl+inserts, gold_sql",
        ),
        Source(
            "intercode-sql",
            "intercode:intercode_sql_tasks",
            "InterCode's SQL questions on Spider databases (the intercode-bench package)",
            reads_file=False,
        ),
    ),
    corpus="redteam:run_corpus",
)


def register() -> None:
    """SQL questions over generated databases, judged by running the query on hidden instances."""
    DOMAIN.register()
