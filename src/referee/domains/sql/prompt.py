"""The prompt of a SQL task: the question, the engine, the schema and the sample's rows.

>>> from referee.domains.sql.datagen import generate_database
>>> text = task_prompt("How many customers?", generate_database(0, 0.0), "sqlite", False)
>>> "CREATE TABLE customers" in text and "```sql" in text
True
"""

from __future__ import annotations

from referee.domains.sql.compare import describe_rows
from referee.domains.sql.database import Database, Engine

__all__ = ["ENGINE_NAMES", "SAMPLE_ROWS", "sample_text", "task_prompt"]

#: How many rows of each table the prompt shows.
SAMPLE_ROWS = 8
ENGINE_NAMES = {"sqlite": "SQLite", "duckdb": "DuckDB"}


def sample_text(db: Database, per_table: int = SAMPLE_ROWS) -> str:
    """The first rows of each table, as small text tables."""
    parts = []
    for t in db.tables:
        parts.append(
            f"{t.name}:\n{describe_rows(t.column_names, list(map(list, t.rows)), per_table)}"
        )
    return "\n\n".join(parts)


def task_prompt(
    question: str,
    sample: Database,
    engine: Engine,
    order_matters: bool,
    evidence: str = "",
    column_names: list[str] | None = None,
) -> str:
    """The user message of a task."""
    order = (
        "The order of the rows matters."
        if order_matters
        else "The order of the rows does not matter."
    )
    hint = f"\nHint: {evidence}\n" if evidence else ""
    names = (
        f"Name the columns {', '.join(column_names)}, in this order."
        if column_names
        else "Column names do not matter; the number and order of the columns do."
    )
    return (
        f"You are given a {ENGINE_NAMES[engine]} database. Write one SQL query (a single "
        f"SELECT statement, {ENGINE_NAMES[engine]} dialect) that answers the question.\n\n"
        f"Question: {question}\n{hint}\n"
        f"{order} {names}\n\n"
        f"Schema:\n{sample.ddl(engine)}\n\n"
        "Sample rows (the query is judged on other databases with the same schema and "
        f"different contents):\n{sample_text(sample)}\n\n"
        "Answer with the query in a ```sql fenced block."
    )
