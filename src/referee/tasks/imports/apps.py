"""APPS and TACO rows as program tasks (``referee tasks import apps|taco FILE``).

A row: ``question``, ``solutions`` (JSON text: a list of Python programs), ``input_output``
(JSON text ``{"inputs", "outputs", "fn_name"?}``), ``starter_code``, ``difficulty``, and the id,
``problem_id`` (APPS) or ``id`` (TACO rows mostly have none: the row's index from 0 then). TACO
adds ``time_limit`` ("1 second", "2.5 seconds") and ``memory_limit`` ("256 megabytes").

With ``fn_name`` the task calls that function (io ``function``); APPS's wrapped outputs are
unwrapped per problem (:func:`~referee.tasks.imports.program.apps_cases`). Every case is hidden;
APPS statements already show their examples, so none are repeated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.tasks.imports.program import apps_cases, difficulty_of, program_task
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Task

__all__ = ["apps_tasks", "taco_tasks"]


def apps_tasks(split: str, path: str | Path, on_bad_row: OnBadRow | None = None) -> Iterator[Task]:
    """The problems of an APPS file (JSONL, JSON or Parquet), ids ``apps/<problem_id>``."""
    for index, row in enumerate(iter_rows(path, on_bad_row)):
        with skipping(on_bad_row):
            yield _task(row, "apps", _id(row, ("problem_id", "id"), index), split)


def taco_tasks(split: str, path: str | Path, on_bad_row: OnBadRow | None = None) -> Iterator[Task]:
    """The problems of a TACO file, ids ``taco/<id>`` (the row's index from 0 without one)."""
    for index, row in enumerate(iter_rows(path, on_bad_row)):
        with skipping(on_bad_row):
            yield _task(row, "taco", _id(row, ("id", "problem_id"), index), split)


def _id(row: Row, fields: tuple[str, ...], index: int) -> str:
    for field in fields:
        value = row.data.get(field)
        if value is not None and value != "":
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise row.error(field, f"an id is a string or integer, got {value!r}")
            return str(value)
    return str(index)


def _task(row: Row, source: str, ident: str, split: str) -> Task:
    question = row.get("question", str)
    cases, fn_name = apps_cases(row, "input_output", row.json("input_output"))
    if not cases:
        raise row.error("input_output", "no test cases (a task without tests cannot fail)")
    solutions = row.json("solutions", default=[])
    if not isinstance(solutions, list) or not all(isinstance(s, str) for s in solutions):
        raise row.error("solutions", "expected a JSON list of programs (strings)")
    return program_task(
        name=f"{source}/{ident}",
        source=source,
        statement=question,
        cases=cases,
        split=split,
        fn_name=fn_name,
        starter_code=row.get("starter_code", str, default=""),
        time_limit_s=_seconds(row),
        memory_mb=_megabytes(row),
        reference={"language": "python", "source": solutions[0]} if solutions else None,
        difficulty=difficulty_of(row.data.get("difficulty")),
        generator=f"referee.tasks.imports.apps ({source})",
    )


def _number(row: Row, field: str) -> float | None:
    value: Any = row.data.get(field)
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise row.error(field, f"expected a number with its unit, got {value!r}")
    m = re.match(r"\s*(\d+(?:\.\d+)?)", value)
    return float(m.group(1)) if m else None  # TACO writes "None" where it has no limit


def _seconds(row: Row) -> float | None:
    """TACO's ``time_limit`` ("2 seconds"); APPS has none."""
    return _number(row, "time_limit")


def _megabytes(row: Row) -> int | None:
    """TACO's ``memory_limit`` ("256 megabytes"); APPS has none."""
    mb = _number(row, "memory_limit")
    return int(mb) if mb else None
