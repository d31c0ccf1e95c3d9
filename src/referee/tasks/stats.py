"""Summaries of a task file: counts by split, kind, domain and answer format, and test counts.

What ``referee tasks stats`` and ``referee tasks list`` show.

>>> from referee.tasks import read_tasks                                 # doctest: +SKIP
>>> task_stats(read_tasks("he.jsonl"))["by_split"]                       # doctest: +SKIP
{'heldout': 164}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from referee.tasks.model import Task

__all__ = ["count_tests", "task_row", "task_stats"]


def count_tests(task: Task) -> int:
    """Recorded inputs (function tasks), FAIL_TO_PASS + PASS_TO_PASS, or hidden mutants."""
    h = task.hidden
    if "inputs" in h:
        return len(h["inputs"])
    if "mutants" in h:
        return len(h["mutants"])
    return len(h.get("fail_to_pass", [])) + len(h.get("pass_to_pass", []))


def task_row(task: Task) -> dict[str, Any]:
    """One task's line in a listing: id, split, domain, answer format, number of tests."""
    return {
        "id": task.id,
        "split": task.split,
        "domain": task.domain,
        "answer_format": task.answer_format,
        "tests": count_tests(task),
    }


def task_stats(tasks: Sequence[Task]) -> dict[str, Any]:
    """Counts by split, kind, domain and answer format; the mean difficulty estimate; tests."""
    tests = [count_tests(t) for t in tasks]
    estimates = [t.difficulty.estimate for t in tasks if t.difficulty.estimate is not None]
    return {
        "tasks": len(tasks),
        "by_split": dict(Counter(t.split for t in tasks)),
        "by_kind": dict(Counter(str(t.payload.get("kind", "function")) for t in tasks)),
        "difficulty_mean": round(sum(estimates) / len(estimates), 3) if estimates else None,
        "by_domain": dict(Counter(t.domain for t in tasks)),
        "by_answer_format": dict(Counter(t.answer_format for t in tasks)),
        "tests_total": sum(tests),
        "tests_min": min(tests, default=0),
        "tests_max": max(tests, default=0),
    }
