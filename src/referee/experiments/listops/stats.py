"""Evaluation statistics: pass@k, and paired tests of two policies on the same tasks.

Everything here is exact or seeded, so an evaluation table reproduces to the last digit.

**pass@k** (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): with ``n``
samples of a task of which ``c`` passed, the unbiased estimator of the chance that at least one
of ``k`` samples passes is ``1 - C(n-c, k) / C(n, k)``. The binomials overflow floats for large
``n``, so it is computed as the equal product ``1 - prod_{i=n-c+1..n} (1 - k/i)``.

**Two policies, pass/fail per task** (:func:`paired_test`): the same tasks, so the outcomes are
paired and only the *discordant* tasks (one policy passed, the other did not) say which is
better. The exact McNemar test: under "no difference" each discordant task is A's with
probability 1/2, so with ``a_only`` and ``b_only`` of them the two-sided p-value is::

    p = min(1, 2 * P(X <= min(a_only, b_only))),     X ~ Binomial(a_only + b_only, 1/2)

computed with exact integers. The confidence interval for the difference of pass rates is
Newcombe's (1998) hybrid score interval for paired proportions (his method 10): Wilson score
intervals for each rate, combined with the estimated correlation between them (with his
continuity correction of that correlation). It stays inside [-1, 1], needs no random numbers,
and unlike the Wald interval keeps its coverage with few discordant tasks.

**Two policies, a score per task** (:func:`paired_test_scores`, for per-task pass rates over
several samples): the sign-flip permutation test on the per-task differences ``d``. Under "no
difference" each ``d`` is as likely to have either sign; the p-value is the share of the
``2**m`` sign assignments whose ``|sum|`` is at least the observed one. It is computed
*exactly* when the differences are multiples of a common fraction (pass rates over ``k``
samples are multiples of ``1/k``), by counting the sums with dynamic programming over
integers; otherwise by a seeded Monte Carlo over random sign flips, with the ``(1 + hits) /
(1 + draws)`` estimate that never gives 0. The interval for the mean difference is a seeded
paired bootstrap (percentile).

>>> round(pass_at_k(10, 3, 1), 3), round(pass_at_k(10, 3, 5), 4)
(0.3, 0.9167)
>>> t = paired_test([True] * 12 + [False] * 8, [True] * 5 + [False] * 15)
>>> t.a_only, t.b_only, round(t.p_value, 4)
(7, 0, 0.0156)
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any

from referee.errors import ConfigError

# pass@k lives with the evaluation that needs it (referee.rollout); re-exported here beside
# the paired tests.
from referee.rollout.pass_at_k import mean_pass_at_k, pass_at_k, whole_number

__all__ = [
    "PairedScoresTest",
    "PairedTest",
    "mcnemar_exact",
    "mean_pass_at_k",
    "newcombe_paired_ci",
    "paired_test",
    "paired_test_scores",
    "pass_at_k",
    "wilson_interval",
]


def _confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be between 0 and 1 (0.95 for 95%), got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


# ---- paired pass/fail --------------------------------------------------------------------------


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    >>> mcnemar_exact(0, 5), mcnemar_exact(3, 3), mcnemar_exact(0, 0)
    (0.0625, 1.0, 1.0)
    """
    whole_number("a_only", a_only, 0)
    whole_number("b_only", b_only, 0)
    m = a_only + b_only
    # sum of C(m, i) for i <= min(a_only, b_only), each term from the last (exact integers:
    # C(m, i) * (m - i) is always divisible by i + 1), not one math.comb per term.
    term = tail = 1
    for i in range(min(a_only, b_only)):
        term = term * (m - i) // (i + 1)
        tail += term
    # Integer true division is correctly rounded however large the integers are.
    return min(1.0, 2 * tail / (1 << m))


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    p = x / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_interval(x: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a pass rate of ``x`` in ``n`` (``(0, 1)`` when ``n`` is 0).

    >>> [round(v, 4) for v in wilson_interval(3, 200)]
    [0.0051, 0.0432]
    """
    return _wilson(x, n, _confidence(confidence)) if n else (0.0, 1.0)


def newcombe_paired_ci(
    both: int, a_only: int, b_only: int, neither: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for ``rate(A) - rate(B)`` from a paired 2x2 table.

    >>> lo, hi = newcombe_paired_ci(59, 6, 16, 80)      # Fagerland et al. 2017, section 8.6
    >>> round(lo, 4), round(hi, 4)
    (-0.1186, -0.0046)
    """
    for name, v in (("both", both), ("a_only", a_only), ("b_only", b_only), ("neither", neither)):
        whole_number(name, v, 0)
    z = _confidence(confidence)
    n = both + a_only + b_only + neither
    if n == 0:
        raise ConfigError("a confidence interval needs at least one paired task")
    a_pass, b_pass = both + a_only, both + b_only
    p1, p2 = a_pass / n, b_pass / n
    l1, u1 = _wilson(a_pass, n, z)
    l2, u2 = _wilson(b_pass, n, z)
    # The correlation between the two rates, with Newcombe's continuity correction; 0 when a
    # margin is empty (it is undefined there).
    margins = a_pass * (n - a_pass) * b_pass * (n - b_pass)
    phi = 0.0
    if margins > 0:
        cross = both * neither - a_only * b_only
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    diff = p1 - p2
    dl1, du2 = p1 - l1, u2 - p2
    dl2, du1 = p2 - l2, u1 - p1
    lo = diff - math.sqrt(max(0.0, dl1 * dl1 - 2 * phi * dl1 * du2 + du2 * du2))
    hi = diff + math.sqrt(max(0.0, dl2 * dl2 - 2 * phi * dl2 * du1 + du1 * du1))
    return max(-1.0, lo), min(1.0, hi)


@dataclass(frozen=True)
class PairedTest:
    """Two policies' pass/fail on the same ``n`` tasks: rates, discordant counts, p, interval."""

    n: int
    a_rate: float
    b_rate: float
    diff: float  # a_rate - b_rate
    a_only: int  # tasks A passed and B failed
    b_only: int
    both: int
    neither: int
    p_value: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str = "exact McNemar; Newcombe hybrid score interval"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line for a results table.

        >>> paired_test([True, True, False], [True, False, False]).summary()
        'A 0.667 vs B 0.333: +0.333 [-0.316, 0.718], p=1 (1 vs 0 discordant, n=3)'
        """
        return (
            f"A {self.a_rate:.3f} vs B {self.b_rate:.3f}: {self.diff:+.3f} "
            f"[{self.ci_low:.3f}, {self.ci_high:.3f}], p={self.p_value:.3g} "
            f"({self.a_only} vs {self.b_only} discordant, n={self.n})"
        )


def _bools(name: str, values: Sequence[bool]) -> list[bool]:
    out = []
    for v in values:
        if v not in (0, 1):  # True, False, 0 and 1
            raise ConfigError(
                f"{name} holds {v!r}; paired_test takes pass/fail per task (use "
                "paired_test_scores for per-task rates)"
            )
        out.append(bool(v))
    return out


def paired_test(a: Sequence[bool], b: Sequence[bool], *, confidence: float = 0.95) -> PairedTest:
    """Compare policies A and B on the same tasks (``a[i]``, ``b[i]``: task ``i`` passed).

    Exact McNemar p-value and Newcombe's interval for the difference (module docstring).
    """
    xs, ys = _bools("a", a), _bools("b", b)
    if len(xs) != len(ys):
        raise ConfigError(
            f"paired outcomes must cover the same tasks: a has {len(xs)}, b has {len(ys)}"
        )
    n = len(xs)
    if n == 0:
        raise ConfigError("a paired test needs at least one task")
    both = sum(x and y for x, y in zip(xs, ys, strict=True))
    a_only = sum(x and not y for x, y in zip(xs, ys, strict=True))
    b_only = sum(y and not x for x, y in zip(xs, ys, strict=True))
    neither = n - both - a_only - b_only
    lo, hi = newcombe_paired_ci(both, a_only, b_only, neither, confidence=confidence)
    return PairedTest(
        n=n,
        a_rate=(both + a_only) / n,
        b_rate=(both + b_only) / n,
        diff=(a_only - b_only) / n,
        a_only=a_only,
        b_only=b_only,
        both=both,
        neither=neither,
        p_value=mcnemar_exact(a_only, b_only),
        ci_low=lo,
        ci_high=hi,
        confidence=confidence,
    )


# ---- paired scores -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedScoresTest:
    """Two policies' scores on the same ``n`` tasks: means, sign-flip p-value, interval."""

    n: int
    a_mean: float
    b_mean: float
    diff: float  # a_mean - b_mean
    a_better: int  # tasks where A scored higher
    b_better: int
    ties: int
    p_value: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        return (
            f"A {self.a_mean:.3f} vs B {self.b_mean:.3f}: {self.diff:+.3f} "
            f"[{self.ci_low:.3f}, {self.ci_high:.3f}], p={self.p_value:.3g} "
            f"(A better on {self.a_better}, B on {self.b_better}, n={self.n}; {self.method})"
        )


#: The exact count is used while the dynamic programme stays this small (tasks x sums).
_EXACT_BUDGET = 20_000_000
#: Scores are recognised as multiples of 1/q for q up to this (pass rates over q samples).
_MAX_DENOMINATOR = 1000


def _as_integers(diffs: Sequence[float]) -> list[int] | None:
    """The differences as integer multiples of a common fraction, or None if they are not."""
    fracs = []
    for d in diffs:
        f = Fraction(d).limit_denominator(_MAX_DENOMINATOR)
        if abs(float(f) - d) > 1e-9:
            return None
        fracs.append(f)
    scale = math.lcm(*(f.denominator for f in fracs)) if fracs else 1
    return [int(f * scale) for f in fracs]


def _sign_flip_exact(values: Sequence[int]) -> float:
    """P(|sum of +-v| >= |sum of v|) over all equally likely sign assignments, exactly."""
    observed = abs(sum(values))
    counts = [1]  # counts[i]: assignments so far whose sum is i - reach
    reach = 0
    for v in values:
        v = abs(v)
        new = [0] * (len(counts) + 2 * v)
        for i, c in enumerate(counts):
            if c:
                new[i] += c  # this value subtracted
                new[i + 2 * v] += c  # added
        counts, reach = new, reach + v
    hits = sum(c for i, c in enumerate(counts) if abs(i - reach) >= observed)
    return hits / (1 << len(values))


def _sign_flip_monte_carlo(diffs: Sequence[float], draws: int, rng: random.Random) -> float:
    observed = abs(math.fsum(diffs))
    # Sums of the same terms in another order differ by rounding; a permuted sum that equals
    # the observed one in exact arithmetic must still count as a hit.
    tol = 1e-9 * max(1.0, math.fsum(abs(d) for d in diffs))
    m = len(diffs)
    hits = 0
    for _ in range(draws):
        bits = rng.getrandbits(m)
        total = math.fsum(d if (bits >> i) & 1 else -d for i, d in enumerate(diffs))
        hits += abs(total) >= observed - tol
    return (1 + hits) / (1 + draws)


def paired_test_scores(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = 0.95,
    permutations: int = 10_000,
    bootstrap: int = 2_000,
    seed: int = 0,
) -> PairedScoresTest:
    """Compare policies A and B by a score per task (for example pass rates over k samples).

    Sign-flip permutation test, exact where the scores allow it (module docstring), else
    ``permutations`` seeded random flips; a seeded ``bootstrap`` percentile interval.

    >>> t = paired_test_scores([1.0, 0.75, 0.5, 1.0, 0.25], [0.5, 0.5, 0.5, 0.25, 0.0])
    >>> t.method, t.a_better, t.ties, t.p_value                   # 2 of 2**4 flips as extreme
    ('exact sign-flip', 4, 1, 0.125)
    """
    _confidence(confidence)  # validated before any work
    whole_number("permutations", permutations, 1)
    whole_number("bootstrap", bootstrap, 1)
    xs, ys = [float(v) for v in a], [float(v) for v in b]
    if len(xs) != len(ys):
        raise ConfigError(
            f"paired scores must cover the same tasks: a has {len(xs)}, b has {len(ys)}"
        )
    if not xs:
        raise ConfigError("a paired test needs at least one task")
    if not all(math.isfinite(v) for v in (*xs, *ys)):
        raise ConfigError("scores must be finite numbers")
    n = len(xs)
    diffs = [x - y for x, y in zip(xs, ys, strict=True)]
    nonzero = [d for d in diffs if d != 0.0]  # a zero difference is the same under either sign
    rng = random.Random(seed)

    ints = _as_integers(nonzero)
    if not nonzero:
        p_value, method = 1.0, "exact sign-flip"
    elif ints is not None and len(ints) * (2 * sum(abs(v) for v in ints) + 1) <= _EXACT_BUDGET:
        p_value, method = _sign_flip_exact(ints), "exact sign-flip"
    else:
        p_value = _sign_flip_monte_carlo(nonzero, permutations, rng)
        method = f"monte-carlo sign-flip ({permutations} draws, seed {seed})"

    means = sorted(math.fsum(rng.choices(diffs, k=n)) / n for _ in range(bootstrap))
    alpha = 1.0 - confidence
    lo = means[max(0, math.floor(alpha / 2 * bootstrap))]
    hi = means[min(bootstrap - 1, math.ceil((1 - alpha / 2) * bootstrap) - 1)]
    return PairedScoresTest(
        n=n,
        a_mean=math.fsum(xs) / n,
        b_mean=math.fsum(ys) / n,
        diff=math.fsum(diffs) / n,
        a_better=sum(d > 0 for d in diffs),
        b_better=sum(d < 0 for d in diffs),
        ties=sum(d == 0 for d in diffs),
        p_value=p_value,
        ci_low=lo,
        ci_high=hi,
        confidence=confidence,
        method=method,
    )
