"""An imported row becomes a task only if it can decide anything: its reference passes and the
empty answer fails, both judged by the domain's verifier in the sandbox.

>>> check_reference_and_empty(row, verifier.verify, task)                # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

from referee.tasks.imports.rows import Row
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["check_reference_and_empty", "failure"]


def failure(verdict: Verdict) -> str:
    """Why ``verdict`` did not pass, in one line: its infrastructure error, else its tests that
    did not pass (``name: detail``, joined by ``; ``).

    >>> from referee.verify.verdict import TestOutcome
    >>> v = Verdict(task_id="t", reward=0.0, passed=False,
    ...             tests=[TestOutcome(name="check script", status="failed", detail="exit 1")])
    >>> failure(v)
    'check script: exit 1'
    """
    if verdict.infra_error:
        return verdict.infra_error
    failed = [f"{t.name}: {t.detail}" for t in verdict.tests if t.status != "passed"]
    return "; ".join(failed) or "it does not pass"


def check_reference_and_empty(
    row: Row,
    verify: Callable[[Task, str], Verdict],
    task: Task,
    *,
    empty: str = "",
    gold: Verdict | None = None,
    reference_fails: str = "the reference does not pass",
    empty_field: str = "reference",
    empty_passes: str = "the empty answer passes: the task decides nothing",
) -> Verdict:
    """Judge ``task.hidden["reference"]`` (or take ``gold``, its verdict already made) and the
    ``empty`` answer; a :class:`~referee.tasks.imports.rows.RowError` naming the row unless the
    reference passes and the empty answer fails cleanly (an infrastructure error on it is no
    failure, and is named). Returns the reference's verdict."""
    gold = gold if gold is not None else verify(task, task.hidden["reference"])
    if not gold.passed:
        raise row.error("reference", f"{reference_fails} ({failure(gold)})")
    nothing = verify(task, empty)
    if nothing.infra_error:
        raise row.error(empty_field, f"the empty answer could not be judged: {nothing.infra_error}")
    if nothing.passed:
        raise row.error(empty_field, empty_passes)
    return gold
