"""A Beta prior fitted to a population of tasks' measured pass rates, for the curriculum.

The curriculum smooths each task's outcomes with a Beta(alpha, beta) prior
(:class:`~referee.tasks.curriculum.CurriculumConfig`). Beta(1, 1) says "any pass rate is as
likely as any other", which is far from true for a small model on hard tasks: calibrated with 4
samples each, SmolLM2-135M never solved 351 of 400 list-ops tasks (RESULTS §25). Under Beta(1, 1)
a task never solved in four tries is estimated at 1/6 and one solved once at 1/3, so their
curriculum weights p(1-p) differ by 1.6x and the curriculum samples almost like uniform sampling
(§42). Fitted to the population, the prior knows that most tasks sit near 0: the same two tasks
are then about 0.02 and 0.13, and the one that was solved once weighs about five times more.

:func:`fit_beta_prior` is the maximum-likelihood fit of the beta-binomial model: each task ``i``
has a pass probability ``p_i ~ Beta(alpha, beta)``, and its ``k_i`` passes in ``n_i`` tries are
binomial given ``p_i``. Tasks with the same ``(k, n)`` are counted once, so the likelihood has a
handful of terms however many tasks there are, and a grid search in (mean, log concentration),
refined around its best point, finds the maximum without an optimisation library.

>>> outcomes = {f"t{i}": [0.0] * 4 for i in range(85)}           # never passed
>>> outcomes |= {f"u{i}": [1.0, 0.0, 0.0, 0.0] for i in range(10)}  # passed once in four
>>> outcomes |= {f"v{i}": [1.0, 1.0, 0.0, 0.0] for i in range(5)}   # twice
>>> fit_beta_prior(outcomes)                          # mean 0.05, most of its mass near 0
(0.2814, 5.3941)

When every task looks alike (here 10 % of the tasks passed once, as a common rate of 2.5 % would
give by chance) the fit says so with a large concentration, and then tells tasks apart little:

>>> fit_beta_prior({f"t{i}": [0.0] * 4 for i in range(90)}
...                | {f"u{i}": [1.0, 0.0, 0.0, 0.0] for i in range(10)})
(25.0053, 974.9947)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from referee.errors import ConfigError

__all__ = ["fit_beta_prior", "parse_prior"]

#: A population whose tasks all passed, or all failed, has no finite maximum-likelihood prior;
#: the fit is kept inside these bounds (the mean within [MEAN_MIN, 1 - MEAN_MIN], the
#: concentration alpha + beta within [CONC_MIN, CONC_MAX]).
MEAN_MIN = 1e-3
CONC_MIN = 0.05
CONC_MAX = 1e3


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log_likelihood(counts: Mapping[tuple[int, int], int], a: float, b: float) -> float:
    base = _log_beta(a, b)
    return sum(c * (_log_beta(a + k, b + n - k) - base) for (k, n), c in counts.items())


def fit_beta_prior(outcomes: Mapping[str, Sequence[float]]) -> tuple[float, float]:
    """The maximum-likelihood Beta(alpha, beta) prior of the tasks' pass probabilities, from
    each task's outcomes (1.0 a pass, 0.0 a failure, as
    :func:`~referee.rollout.calibrate.calibrated_outcomes` gives them).

    A reward counts as a pass when it is at least 0.5. Raises ``ConfigError`` when fewer than two
    tasks have outcomes: one task says nothing about a population.
    """
    counts: Counter[tuple[int, int]] = Counter()
    for rewards in outcomes.values():
        if rewards:
            counts[(sum(1 for r in rewards if r >= 0.5), len(rewards))] += 1
    if sum(counts.values()) < 2:
        raise ConfigError(
            "a fitted prior needs the calibrated pass rates of at least two tasks: run "
            "`referee tasks calibrate` first, or give the prior as ALPHA,BETA"
        )
    lo_m, hi_m = math.log(MEAN_MIN / (1 - MEAN_MIN)), -math.log(MEAN_MIN / (1 - MEAN_MIN))
    lo_s, hi_s = math.log(CONC_MIN), math.log(CONC_MAX)
    best = (-math.inf, 0.0, 0.0)
    for _ in range(4):  # a 41 x 41 grid, then three finer grids around the best point
        for i in range(41):
            m = lo_m + (hi_m - lo_m) * i / 40
            mean = 1 / (1 + math.exp(-m))
            for j in range(41):
                s = lo_s + (hi_s - lo_s) * j / 40
                conc = math.exp(s)
                ll = _log_likelihood(counts, mean * conc, (1 - mean) * conc)
                if ll > best[0]:
                    best = (ll, m, s)
        _, m0, s0 = best
        dm, ds = (hi_m - lo_m) / 10, (hi_s - lo_s) / 10
        lo_m, hi_m = m0 - dm, m0 + dm
        lo_s, hi_s = max(math.log(CONC_MIN), s0 - ds), min(math.log(CONC_MAX), s0 + ds)
    _, m, s = best
    mean, conc = 1 / (1 + math.exp(-m)), math.exp(s)
    return round(mean * conc, 4), round((1 - mean) * conc, 4)


def parse_prior(text: str) -> tuple[float, float] | None:
    """``--prior``: ``fit`` (None: fit it to the calibration) or ``ALPHA,BETA``.

    >>> parse_prior("fit") is None, parse_prior("1,1"), parse_prior("0.2, 4.7")
    (True, (1.0, 1.0), (0.2, 4.7))
    """
    if text.strip().lower() == "fit":
        return None
    parts = text.split(",")
    try:
        a, b = (float(p) for p in parts)
    except ValueError:
        raise ConfigError(
            f"--prior {text!r}: give `fit` (fitted to the calibrated pass rates) or two "
            "positive numbers ALPHA,BETA, e.g. 1,1 for the uniform prior"
        ) from None
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ConfigError(f"--prior {text!r}: both parameters must be positive and finite")
    return a, b
