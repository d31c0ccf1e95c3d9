"""What a SQL task holds, read and checked in one place.

``payload`` (the model may see it): ``engine`` (``sqlite`` | ``duckdb``), ``tables`` (the tables
the query may read), ``sample`` (the visible database, as :class:`Database` JSON),
``order_matters`` (the question asks for an order), ``column_names_matter`` (the question asks
for named columns: they must match, case aside), ``time_limit_s`` (per database).

``hidden`` (the grader's alone): ``reference`` (the trusted query), ``instances`` (the hidden
databases: same schema, other contents) and ``expected`` (the reference's result on each,
``{"columns": [...], "rows": [[...]]}``, computed on the host when the task was made).

>>> spec = SqlSpec.of_task(make_demo_task())                            # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.domains.sql.database import ENGINES, Database, Engine
from referee.errors import TaskError
from referee.tasks.model import Task

__all__ = ["DEFAULT_TIME_LIMIT_S", "SqlSpec"]

DEFAULT_TIME_LIMIT_S = 2.0


@dataclass(frozen=True)
class SqlSpec:
    """A SQL task's parts, validated."""

    engine: Engine
    tables: tuple[str, ...]
    sample: Database
    order_matters: bool
    column_names_matter: bool
    time_limit_s: float
    reference: str
    instances: tuple[Database, ...]
    expected: tuple[dict[str, Any], ...]

    @classmethod
    def of_task(cls, task: Task) -> SqlSpec:
        """The spec of ``task``; a :class:`TaskError` naming what is missing or malformed."""
        p, h = task.payload, task.hidden
        engine = p.get("engine")
        if engine not in ENGINES:
            raise TaskError(f"task {task.id!r}: payload.engine must be one of {ENGINES}")
        instances = h.get("instances")
        expected = h.get("expected")
        if not isinstance(instances, list) or not instances:
            raise TaskError(f"task {task.id!r}: hidden.instances must list the hidden databases")
        if not isinstance(expected, list) or len(expected) != len(instances):
            raise TaskError(f"task {task.id!r}: hidden.expected needs one result per instance")
        for e in expected:
            if not isinstance(e, dict) or not isinstance(e.get("rows"), list):
                raise TaskError(f"task {task.id!r}: an expected result is {{'rows': [...]}}")
        if not isinstance(h.get("reference"), str):
            raise TaskError(f"task {task.id!r}: hidden.reference (the gold query) is missing")
        try:
            sample = Database.from_json(p.get("sample", {}))
            dbs = tuple(Database.from_json(i) for i in instances)
        except TaskError as e:
            raise TaskError(f"task {task.id!r}: {e}") from e
        tables = p.get("tables") or sample.table_names
        return cls(
            engine=engine,
            tables=tuple(str(t) for t in tables),
            sample=sample,
            order_matters=bool(p.get("order_matters", False)),
            column_names_matter=bool(p.get("column_names_matter", False)),
            time_limit_s=float(p.get("time_limit_s", DEFAULT_TIME_LIMIT_S)),
            reference=h["reference"],
            instances=dbs,
            expected=tuple(expected),
        )
