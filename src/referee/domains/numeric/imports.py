"""The ``numeric-rows`` import: numeric problems written as JSONL rows.

One JSON object a line (a JSON array or Parquet file works too)::

    {"id": "decay-1",                                  # unique, becomes numeric/rows/<id>
     "problem": "Return the amount left after time t of N0 decaying at rate k.",
     "reference": "import math\\ndef solve(params):\\n    return {...}\\n",
     "parameter_sets": [{"N0": 1.0, "k": 0.5, "t": 2.0}, {...}, ...],  # first: visible
     "tolerance": {"rtol": 1e-9, "atol": 1e-12},
     "signature": "def solve(params: dict) -> dict",   # optional; names the entry point
     "invariants": [{"name": "...", ...}],              # optional, from INVARIANTS
     "time_limit_s": 10}                                # optional, per call

The first parameter set is shown in the prompt with its expected output; the others (one at
least) are hidden and judged. The reference is imported code, so untrusted: it runs in the
numeric sandbox to record the expected outputs, which must be finite numbers. A malformed row,
or a reference that fails on a set, stops the import with an error naming the file, the row
and the field, and nothing is written.

>>> from referee.tasks.sources import load_source                        # doctest: +SKIP
>>> tasks = load_source("numeric-rows", "train", "problems.jsonl")        # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.domains.numeric.compare import Tolerance
from referee.domains.numeric.invariants import INVARIANTS
from referee.domains.numeric.sandbox import numeric_sandbox
from referee.domains.numeric.spec import (
    DEFAULT_MEMORY_MB,
    DEFAULT_SIGNATURE,
    numeric_prompt,
    record_outputs,
)
from referee.errors import TaskError
from referee.sandbox import Sandbox
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Task

__all__ = ["numeric_rows_tasks", "row_task"]

_SIGNATURE = re.compile(r"^\s*def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def _parameter_sets(row: Row) -> list[dict[str, Any]]:
    sets: list[dict[str, Any]] = row.get("parameter_sets", list)
    if len(sets) < 2:
        raise row.error(
            "parameter_sets", "needs at least two sets: the first is shown, the rest judged"
        )
    for i, s in enumerate(sets):
        if not isinstance(s, dict):
            raise row.error("parameter_sets", f"set {i} is a {type(s).__name__}, not an object")
    return sets


def _tolerance(row: Row) -> Tolerance:
    raw = row.get("tolerance", dict)
    try:
        return Tolerance(raw["rtol"], raw["atol"])
    except KeyError as e:
        raise row.error("tolerance", f"missing {e.args[0]!r} (give rtol and atol)") from None
    except ValueError as e:
        raise row.error("tolerance", str(e)) from None


def _invariants(row: Row) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = row.get("invariants", list, default=[])
    for s in specs:
        if not isinstance(s, dict) or s.get("name") not in INVARIANTS:
            raise row.error(
                "invariants", f"{s!r} is not one of {{'name': {', '.join(sorted(INVARIANTS))}}}"
            )
    return specs


@dataclass(frozen=True)
class _Draft:
    """A row's fields, checked; what is left is to record its reference's outputs."""

    row: Row
    task_id: str
    problem: str
    reference: str
    signature: str
    entry: str
    sets: list[dict[str, Any]]
    tolerance: Tolerance
    invariants: list[dict[str, Any]]
    limit: float


def _draft(row: Row) -> _Draft:
    task_id = row.get("id", str)
    if not _ID.match(task_id):
        raise row.error("id", "use letters, digits, '.', '_' and '-' (up to 100)")
    problem = row.get("problem", str)
    reference = row.get("reference", str)
    signature = row.get("signature", str, default=DEFAULT_SIGNATURE)
    m = _SIGNATURE.match(signature)
    if m is None:
        raise row.error("signature", "expected 'def NAME(params...) -> ...'")
    limit = row.get("time_limit_s", (int, float), default=10.0)
    if isinstance(limit, bool) or not 0 < limit <= 60:
        raise row.error("time_limit_s", "must be a number of seconds in (0, 60]")
    return _Draft(
        row,
        task_id,
        problem,
        reference,
        signature,
        m.group(1),
        _parameter_sets(row),
        _tolerance(row),
        _invariants(row),
        float(limit),
    )


def row_task(row: Row, split: str, sandbox: Sandbox) -> Task:
    """The task of one row, its expected outputs recorded in ``sandbox``."""
    return _task(_draft(row), split, sandbox)


def _task(draft: _Draft, split: str, sandbox: Sandbox) -> Task:
    row, task_id, problem, reference = draft.row, draft.task_id, draft.problem, draft.reference
    signature, entry, sets, limit = draft.signature, draft.entry, draft.sets, draft.limit
    tolerance, invariants = draft.tolerance, draft.invariants
    try:
        outputs = record_outputs(
            sandbox,
            reference,
            entry,
            sets,
            time_limit_s=limit,
            memory_mb=DEFAULT_MEMORY_MB,
            where="the reference",
        )
    except TaskError as e:
        raise row.error("reference", str(e)) from None
    payload = {
        "entry_point": entry,
        "signature": signature,
        "visible": {"params": sets[0], "expected": outputs[0]},
        "tolerance": dict(tolerance),
        "invariants": invariants,
        "time_limit_s": float(limit),
        "memory_mb": DEFAULT_MEMORY_MB,
    }
    prompt = numeric_prompt(
        problem, signature, sets[0], outputs[0], tolerance, invariants, float(limit)
    )
    return Task.create(
        name=f"numeric/rows/{task_id}",
        prompt=prompt,
        domain="numeric",
        kind="numeric",
        answer_format="code",
        payload=payload,
        hidden={"reference": reference, "params": sets[1:], "expected": outputs[1:]},
        split=split,
        provenance={"source": "numeric-rows", "unit": f"numeric-rows/{task_id}"},
    )


def numeric_rows_tasks(
    split: str,
    path: str | Path,
    *,
    sandbox: Sandbox | None = None,
    on_bad_row: OnBadRow | None = None,
) -> Iterator[Task]:
    """The tasks of a ``numeric-rows`` file, one at a time (see the module docstring).

    Every row is checked before any reference runs, so a malformed file fails at once; the
    references are recorded in ``sandbox`` (default: a numeric sandbox made for the import)."""
    drafts = []
    for row in iter_rows(path, on_bad_row):
        with skipping(on_bad_row):
            drafts.append(_draft(row))
    seen: set[str] = set()
    unique = []
    for d in drafts:
        with skipping(on_bad_row):
            if d.task_id in seen:
                raise d.row.error("id", f"{d.task_id!r} appears twice; ids must be unique")
            seen.add(d.task_id)
            unique.append(d)
    box = sandbox
    try:
        for d in unique:
            if box is None:
                box = numeric_sandbox(python_workers=1)
            with skipping(on_bad_row):
                yield _task(d, split, box)
    finally:
        if sandbox is None and box is not None:
            box.close()
