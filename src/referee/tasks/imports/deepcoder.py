"""DeepCoder (agentica-org/DeepCoder-Preview-Dataset) rows as program tasks.

A row: ``problem`` (the statement), ``tests`` (JSON text: either a list of ``{"input",
"output", "testtype"}`` as LiveCodeBench writes them, or ``{"inputs", "outputs", "fn_name"?}``
as APPS and TACO do), ``starter_code`` and ``metadata`` (``{"func_name"}``, a JSON text or an
object). The dataset comes in subsets (``primeintellect``, ``taco``, ``lcbv5``, ``codeforces``)
whose rows carry no id of their own: a task is ``deepcoder/<subset>-<index>``, the index being
the row's place in the file from 0, the subset the ``--subset`` option or, without it, the
file's name (its folder's for shards named ``train-00000-of-00001.parquet``).

Test types: ``stdin`` (also PrimeIntellect's ``stdin_stdout``) and ``functional`` (also
``function_call``), whose input is one JSON value per argument a line, as in LiveCodeBench.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from referee.errors import ConfigError
from referee.tasks.imports.program import apps_cases, listed_cases, program_task
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Task

__all__ = ["deepcoder_tasks", "subset_of"]

_SHARD = re.compile(r"^(train|test|validation|data)([-_.].*)?$")


def subset_of(path: str | Path) -> str:
    """The subset a DeepCoder file holds, from its name: ``lcbv5.jsonl`` → ``lcbv5``,
    ``taco/train-00000-of-00001.parquet`` → ``taco``."""
    p = Path(path)
    stem = p.name.split(".", 1)[0]
    return p.parent.name if _SHARD.match(stem) and p.parent.name else stem


def deepcoder_tasks(
    split: str,
    path: str | Path,
    subset: str | None = None,
    on_bad_row: OnBadRow | None = None,
) -> Iterator[Task]:
    """The problems of a DeepCoder file (Parquet as published, JSONL or JSON)."""
    name = subset or subset_of(path)
    if not name or "/" in name or name != name.strip():
        raise ConfigError(f"a DeepCoder subset is one word (lcbv5, taco...), got {name!r}")
    for index, row in enumerate(iter_rows(path, on_bad_row)):
        with skipping(on_bad_row):
            yield _task(row, name, index, split)


def _task(row: Row, subset: str, index: int, split: str) -> Task:
    metadata = row.json("metadata", default={})
    if not isinstance(metadata, dict):
        raise row.error("metadata", "expected an object (or its JSON text)")
    fn_name = metadata.get("func_name") or None
    tests = row.json("tests")
    if isinstance(tests, dict):
        if fn_name and not tests.get("fn_name"):  # the name in metadata only
            tests = {**tests, "fn_name": fn_name}
        cases, fn_name = apps_cases(row, "tests", tests)
    elif isinstance(tests, list):
        cases, fn_name = listed_cases(row, "tests", tests, fn_name)
    else:
        raise row.error("tests", "expected a list of cases or {inputs, outputs}")
    if not cases:
        raise row.error("tests", "no test cases (a task without tests cannot fail)")
    return program_task(
        name=f"deepcoder/{subset}-{index}",
        source="deepcoder",
        statement=row.get("problem", str),
        cases=cases,
        split=split,
        fn_name=fn_name,
        starter_code=row.get("starter_code", str, default=""),
        generator=f"referee.tasks.imports.deepcoder ({subset})",
    )
