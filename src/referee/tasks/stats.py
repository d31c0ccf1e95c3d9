"""Summaries of a task file: counts by split, kind, domain and answer format, and test counts.

What ``referee tasks stats`` and ``referee tasks list`` show.

>>> from referee.tasks import read_tasks                                 # doctest: +SKIP
>>> from referee.verify.dispatch import count_tests                     # doctest: +SKIP
>>> task_stats(read_tasks("he.jsonl"), count_tests)["by_split"]          # doctest: +SKIP
{'heldout': 164}
>>> print("\n".join(stats_lines(task_stats(read_tasks("he.jsonl"), count_tests))))  # doctest: +SKIP
tasks: 164
by split: heldout 164
...
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from referee.tasks.model import Task

__all__ = ["TestCounter", "stats_lines", "task_row", "task_stats"]

#: How many tests decide a task's reward. The count depends on the task's kind, and the kinds'
#: verifiers own it (:func:`referee.verify.dispatch.count_tests`, which a new domain's
#: registration extends); tasks sit below verify, so the caller passes it in.
TestCounter = Callable[[Task], int]


def task_row(task: Task, count_tests: TestCounter) -> dict[str, Any]:
    """One task's line in a listing: id, split, domain, answer format, number of tests."""
    return {
        "id": task.id,
        "split": task.split,
        "domain": task.domain,
        "answer_format": task.answer_format,
        "tests": count_tests(task),
    }


def task_stats(tasks: Sequence[Task], count_tests: TestCounter) -> dict[str, Any]:
    """Counts by split, kind, domain and answer format; the mean difficulty estimate; tests."""
    tests = [count_tests(t) for t in tasks]
    estimates = [t.difficulty.estimate for t in tasks if t.difficulty.estimate is not None]
    return {
        "tasks": len(tasks),
        "by_split": dict(Counter(t.split for t in tasks)),
        # by_kind as before: synthesized tasks by what synth made (bugfix, implement, testgen),
        # the others by their task kind; by_task_kind: the typed kinds alone.
        "by_kind": dict(Counter(str(t.payload.get("kind") or t.kind.value) for t in tasks)),
        "by_task_kind": dict(Counter(t.kind.value for t in tasks)),
        "difficulty_mean": round(sum(estimates) / len(estimates), 3) if estimates else None,
        "by_domain": dict(Counter(t.domain for t in tasks)),
        "by_answer_format": dict(Counter(t.answer_format for t in tasks)),
        "tests_total": sum(tests),
        "tests_min": min(tests, default=0),
        "tests_max": max(tests, default=0),
    }


def _counts(counts: dict[str, int]) -> str:
    """``{"train": 80, "heldout": 20}`` as ``train 80, heldout 20`` (largest first)."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{name} {n}" for name, n in ordered) or "none"


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """:func:`task_stats` for a person: one ``name: value`` line each, counts as
    ``name count`` pairs, never a Python dict (``referee tasks stats`` without ``--json``);
    ``by task kind`` only where it differs from ``by kind`` (``--json`` keeps both)."""
    mean = stats["difficulty_mean"]
    # The typed kinds only when they say something the first line does not (synthesized
    # tasks: bugfix, testgen... against repo-patch, test-writing); else the same counts twice.
    typed = stats["by_task_kind"]
    kinds = [f"by kind: {_counts(stats['by_kind'])}"]
    if typed != stats["by_kind"]:
        kinds.append(f"by task kind: {_counts(typed)}")
    return [
        f"tasks: {stats['tasks']}",
        f"by split: {_counts(stats['by_split'])}",
        *kinds,
        f"by domain: {_counts(stats['by_domain'])}",
        f"by answer format: {_counts(stats['by_answer_format'])}",
        f"difficulty mean: {'unknown' if mean is None else mean}",
        f"tests: {stats['tests_total']} (per task {stats['tests_min']} to {stats['tests_max']})",
    ]
