"""pass@k: the unbiased estimator (Chen et al. 2021, "Evaluating Large Language Models Trained
on Code") of the chance that at least one of ``k`` samples of a task passes.

With ``n`` samples of which ``c`` passed it is ``1 - C(n-c, k) / C(n, k)``. The binomials
overflow floats for large ``n``, so it is computed as the equal product
``1 - prod_{i=n-c+1..n} (1 - k/i)``. It lives here, beside the policy evaluation that reports
it (:mod:`referee.rollout.evaluate`); the experiments' statistics re-export it.

>>> round(pass_at_k(10, 3, 1), 3), round(pass_at_k(10, 3, 5), 4)
(0.3, 0.9167)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from referee.errors import ConfigError

__all__ = ["mean_pass_at_k", "pass_at_k", "pass_at_ks", "pass_ks", "whole_number"]


def whole_number(name: str, value: object, low: int) -> int:
    """``value`` if it is a whole number of at least ``low``, else a ConfigError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} must be a whole number, at least {low}, got {value!r}")
    return value


# ---- pass@k ------------------------------------------------------------------------------------


def pass_ks(samples: int) -> tuple[int, ...]:
    """The k that ``samples`` completions per task report pass@k for: 1, 2, 4, 8, ... up to
    ``samples``, and ``samples`` itself (none without samples).

    >>> pass_ks(0), pass_ks(1), pass_ks(2), pass_ks(6), pass_ks(8)
    ((), (1,), (1, 2), (1, 2, 4, 6), (1, 2, 4, 8))
    """
    ks = [k for k in (2**i for i in range(samples.bit_length())) if k <= samples]
    return tuple(sorted({*ks, samples})) if samples > 0 else ()


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from ``n`` samples of which ``c`` passed.

    >>> pass_at_k(5, 0, 3), pass_at_k(5, 3, 3), pass_at_k(4, 1, 2)
    (0.0, 1.0, 0.5)
    """
    whole_number("n (samples)", n, 1)
    whole_number("c (passed samples)", c, 0)
    whole_number("k", k, 1)
    if c > n:
        raise ConfigError(f"c={c} passed samples is more than the n={n} drawn")
    if k > n:
        raise ConfigError(
            f"pass@{k} needs at least {k} samples per task, got n={n}; draw more samples or lower k"
        )
    if n - c < k:
        return 1.0  # every k-subset contains a passing sample
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def mean_pass_at_k(
    results: Mapping[str, Sequence[bool]] | Iterable[Sequence[bool]], k: int
) -> float:
    """pass@k averaged over tasks; ``results`` holds each task's sample outcomes.

    A mapping's keys name the task in errors.

    >>> mean_pass_at_k({"a": [True, False], "b": [False, False]}, k=1)
    0.25
    >>> mean_pass_at_k([[True, False], [False, False]], k=2)
    0.5
    """
    items = results.items() if isinstance(results, Mapping) else enumerate(results)
    values: list[float] = []
    for key, outcomes in items:
        outcomes = list(outcomes)
        if len(outcomes) < k:
            name = f"task {key!r}" if isinstance(results, Mapping) else f"task #{key}"
            raise ConfigError(
                f"{name} has {len(outcomes)} samples, fewer than k={k}; pass@{k} needs at least "
                f"{k} samples of every task"
            )
        values.append(pass_at_k(len(outcomes), sum(bool(o) for o in outcomes), k))
    if not values:
        raise ConfigError("no tasks to average pass@k over")
    return math.fsum(values) / len(values)


def pass_at_ks(
    outcomes: Mapping[str, Sequence[bool]], samples: int, ks: Sequence[int] | None = None
) -> dict[int, float]:
    """pass@k over tasks for each k of ``ks`` up to ``samples`` (default :func:`pass_ks`).

    >>> pass_at_ks({"a": [True, False], "b": [False, False]}, 2)
    {1: 0.25, 2: 0.5}
    """
    return {k: mean_pass_at_k(outcomes, k) for k in (pass_ks(samples) if ks is None else ks)
            if k <= samples}  # fmt: skip
