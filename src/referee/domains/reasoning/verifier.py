"""``ReasoningVerifier``: a reasoning task's answer judged by its mode, on the host.

The answer is text, never run: the last ``<answer>`` block is compared with the gold answer by
the task's judge mode (:mod:`.judge`), which parses numbers, fractions and JSON as data. So no
sandbox is needed, and a verdict costs microseconds. A task whose hidden data lacks what its
mode reads is an ``infra_error`` (a broken task, not a wrong answer).

>>> from referee.domains import generate_family                            # doctest: +SKIP
>>> task = generate_family("rg-gcd", count=1, seed=0)[0]                  # doctest: +SKIP
>>> ReasoningVerifier().verify(task, task.hidden["reference"]).passed     # doctest: +SKIP
True
"""

from __future__ import annotations

import time
from typing import Any

from referee.domains.reasoning.judge import JUDGES, extract_answer, judge
from referee.tasks.model import Task
from referee.verify.verdict import TestOutcome, Verdict

__all__ = ["VERIFIER_NAME", "ReasoningVerifier", "count_tests", "make_verifier"]

VERIFIER_NAME = "reasoning/1"


class ReasoningVerifier:
    """Judges reasoning tasks; see the module docstring."""

    def verify(self, task: Task, answer: str, /) -> Verdict:
        started = time.perf_counter()
        mode = task.hidden.get("judge")
        if mode not in JUDGES or "answer" not in task.hidden:
            return Verdict.infra(
                task.id, f"task has no usable judge mode (hidden.judge={mode!r})", VERIFIER_NAME
            )
        extracted = extract_answer(answer)
        if extracted is None:
            outcome = TestOutcome(
                name="answer", status="missing", detail="no <answer>...</answer> block"
            )
        else:
            try:
                ok = judge(str(mode), extracted, task.hidden)
            except KeyError as e:  # the task lacks what its mode reads: a broken task
                return Verdict.infra(
                    task.id, f"judge {mode!r} could not read the task: {e!r}", VERIFIER_NAME
                )
            except (TypeError, ValueError, OverflowError, RecursionError):
                ok = False  # an answer the mode cannot read is a wrong answer
            outcome = TestOutcome(
                name="answer",
                status="passed" if ok else "failed",
                detail="" if ok else f"{mode}: {extracted[:80]!r} is not the answer",
            )
        passed = outcome.status == "passed"
        return Verdict(
            task_id=task.id,
            reward=1.0 if passed else 0.0,
            passed=passed,
            tests=[outcome],
            timings={"verify_s": time.perf_counter() - started},
            verifier=VERIFIER_NAME,
        )

    def close(self) -> None:
        """Nothing to close: no sandbox is held."""


def make_verifier(setup: Any) -> ReasoningVerifier:
    """The verifier of a :class:`~referee.verify.dispatch.VerifierSet` (it needs no sandbox)."""
    return ReasoningVerifier()


def count_tests(task: Task) -> int:
    """One test: the final answer."""
    return 1
