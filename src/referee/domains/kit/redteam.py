"""A red-team corpus judged by one rule: every exploit beside the empty answer on the same task.

An exploit is *held* when it neither passes nor earns more than doing nothing there
(:class:`~referee.domains.registry.ExploitOutcome`). A verdict with an ``infra_error`` is no
failure of the exploit: it counts as getting through (``passed``) and carries the flag
``infra-error``, so a corpus that could not be judged is never reported as held.

>>> from referee.verify.verdict import Verdict
>>> exploit_outcome("exit-early", "escape", Verdict(task_id="t", reward=0.0, passed=False), 0.0)
ExploitOutcome(name='exit-early', klass='escape', reward=0.0, baseline=0.0, passed=False, flags=())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from referee.domains.registry import ExploitOutcome
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["Attack", "exploit_outcome", "judge_task"]


class Attack(NamedTuple):
    """One exploit's answer for one task: its name (as reported), what it tries, the answer."""

    name: str
    klass: str
    answer: str


def exploit_outcome(name: str, klass: str, verdict: Verdict, baseline: float) -> ExploitOutcome:
    """``verdict`` of an exploit, against ``baseline`` (the empty answer's reward there)."""
    return ExploitOutcome(
        name=name,
        klass=klass,
        reward=verdict.reward,
        baseline=baseline,
        passed=verdict.passed or verdict.infra_error is not None,
        flags=tuple(f.kind for f in verdict.flags)
        + (("infra-error",) if verdict.infra_error else ()),
    )


def judge_task(
    verify: Callable[[Task, str], Verdict],
    task: Task,
    attacks: Iterable[Attack],
    *,
    empty: str = "",
) -> list[ExploitOutcome]:
    """On ``task``, the ``empty`` answer (doing nothing) judged first, then each attack (a
    generator's answers are made after the baseline); one outcome per attack, in order."""
    baseline = verify(task, empty).reward
    return [exploit_outcome(a.name, a.klass, verify(task, a.answer), baseline) for a in attacks]
