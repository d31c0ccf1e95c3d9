"""``LabVerifier``: a submitted model judged on its predictions of held-out experiments.

The answer is a model as JSON (:mod:`.submission`); nothing of it runs. For each held-out
query of the task (conditions and times the agent never saw), the judge's own simulator
computes the truth, from the hidden law and parameters, and the model's prediction, from the
submitted ones, both without noise. A query's error is the RMS difference over its times
divided by its largest true value; it earns 1 within :data:`~.families.TOLERANCE`, nothing
from twice it, a straight line between. The reward is the mean over queries;
``passed`` needs every query within the tolerance. A text that is not a model earns 0 with
the reason; a task the judge cannot simulate is an ``infra_error``.

>>> from referee.domains.lab.families import generate_pharmacology
>>> task = generate_pharmacology(1, 0.5, 3)[0]
>>> LabVerifier().verify(task, task.hidden["reference"]).passed
True
>>> v = LabVerifier().verify(task, "the clearance is about 5 L/h")
>>> v.reward, v.tests[0].detail[:40]
(0.0, 'not a model: the submission is not JSON ')
"""

from __future__ import annotations

import math
import time
from typing import Any

from referee.domains.lab.families import system_of
from referee.domains.lab.submission import SubmissionError, read_submission
from referee.errors import RefereeError
from referee.tasks.model import Task
from referee.verify.verdict import TestOutcome, Verdict

__all__ = ["VERSION", "LabVerifier", "count_tests", "credit", "make_verifier", "query_error"]

VERSION = "lab@1"


def credit(error: float, tolerance: float) -> float:
    """What one query earns: 1 within ``tolerance``, 0 from twice it, linear between.

    >>> credit(0.04, 0.05), round(credit(0.075, 0.05), 9), credit(0.2, 0.05), credit(math.nan, 0.05)
    (1.0, 0.5, 0.0, 0.0)
    """
    if not math.isfinite(error):
        return 0.0
    if error <= tolerance:
        return 1.0
    return max(0.0, 2.0 - error / tolerance)


def query_error(predicted: list[float], true: list[float], scale: float) -> float:
    """The RMS difference of ``predicted`` and ``true``, over ``scale`` (inf if not finite)."""
    if any(not math.isfinite(p) for p in predicted):
        return math.inf
    try:
        rms = math.sqrt(sum((p - t) ** 2 for p, t in zip(predicted, true, strict=True)) / len(true))
    except OverflowError:
        return math.inf
    return rms / scale


class LabVerifier:
    """Judges ``lab`` tasks; see the module docstring. Needs no sandbox: it runs no code of
    the candidate's."""

    def verify(self, task: Task, answer: str, /) -> Verdict:
        started = time.perf_counter()
        try:
            system = system_of(task)
            hidden = task.hidden
            queries: list[dict[str, Any]] = hidden["holdout"]
            tolerance = float(hidden["tolerance"])
            truths = [
                system.simulate(hidden["law"], hidden["params"], q["conditions"], q["times"])
                for q in queries
            ]
            offered = list(task.payload["laws"])
        except (RefereeError, KeyError, TypeError, ValueError) as e:
            return Verdict.infra(task.id, f"task {task.id!r} cannot be judged: {e}", VERSION)
        if not queries or any(not all(math.isfinite(v) for v in t) for t in truths):
            return Verdict.infra(task.id, f"task {task.id!r}: its truth is not finite", VERSION)
        try:
            model = read_submission(answer, system, offered)
        except SubmissionError as e:
            tests = [
                TestOutcome(name=f"heldout-{i}", status="failed", detail=f"not a model: {e}"[:200])
                for i in range(len(queries))
            ]
            return Verdict(
                task_id=task.id,
                reward=0.0,
                passed=False,
                tests=tests,
                verifier=VERSION,
                timings={"verify_s": time.perf_counter() - started},
            )
        tests, credits = [], []
        for i, (query, true) in enumerate(zip(queries, truths, strict=True)):
            predicted = system.simulate(
                model.law, model.params, query["conditions"], query["times"]
            )
            error = query_error(predicted, true, system.scale(query["conditions"], true))
            credits.append(credit(error, tolerance))
            tests.append(
                TestOutcome(
                    name=f"heldout-{i}",
                    status="passed" if error <= tolerance else "failed",
                    detail=f"normalised RMS error {error:.3g} (tolerance {tolerance:g})",
                )
            )
        return Verdict(
            task_id=task.id,
            reward=sum(credits) / len(credits),
            passed=all(t.status == "passed" for t in tests),
            tests=tests,
            verifier=VERSION,
            timings={"verify_s": time.perf_counter() - started},
        )

    def close(self) -> None:
        """Nothing to release (no sandbox); here so a verifier set can close it."""

    def __enter__(self) -> LabVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_verifier(setup: Any) -> LabVerifier:
    """The factory :func:`referee.verify.dispatch.register_kind` is given (no sandbox used)."""
    return LabVerifier()


def count_tests(task: Task) -> int:
    """One test per held-out query."""
    holdout = task.hidden.get("holdout")
    return len(holdout) if isinstance(holdout, list) else 0
