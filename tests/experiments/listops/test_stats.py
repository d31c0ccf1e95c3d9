import doctest
import itertools
import math
import random
from fractions import Fraction

import pytest

import referee.experiments.listops.stats as stats_module
from referee.errors import ConfigError
from referee.experiments.listops.stats import (
    mcnemar_exact,
    mean_pass_at_k,
    newcombe_paired_ci,
    paired_test,
    paired_test_scores,
    pass_at_k,
)


def test_docstring_examples_run():
    result = doctest.testmod(stats_module)
    assert result.attempted > 0 and result.failed == 0


# ---- pass@k ------------------------------------------------------------------------------------


def _pass_at_k_by_enumeration(n, c, k):
    """The share of k-subsets of the n samples that hold a passing one."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(samples[i] for i in s) for s in subsets), len(subsets))


def test_pass_at_k_equals_brute_force_enumeration():
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = _pass_at_k_by_enumeration(n, c, k)
                assert pass_at_k(n, c, k) == pytest.approx(float(exact), abs=1e-12), (n, c, k)


def test_pass_at_k_is_stable_where_the_binomials_overflow_floats():
    # C(2000, 1000) is far beyond the float range; the product form is not.
    for n, c, k in [(2000, 1, 1000), (2000, 7, 100), (5000, 2500, 10), (1000, 0, 500)]:
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9, abs=1e-15)


def test_pass_at_1_is_the_pass_rate():
    assert all(pass_at_k(n, c, 1) == pytest.approx(c / n) for n in (1, 7, 200) for c in (0, 1, n))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 0, 1), "n"),
        ((3, 4, 1), "more than"),
        ((3, 1, 4), "at least 4 samples"),
        ((3, 1, 0), "k"),
    ],
)
def test_pass_at_k_rejects_impossible_counts(args, match):
    with pytest.raises(ConfigError, match=match):
        pass_at_k(*args)


def test_mean_pass_at_k_averages_tasks_and_names_the_short_one():
    results = {"a": [True, False, False, False], "b": [True, True, False, False]}
    assert mean_pass_at_k(results, 1) == pytest.approx((0.25 + 0.5) / 2)
    assert mean_pass_at_k(results, 2) == pytest.approx((0.5 + 5 / 6) / 2)
    assert mean_pass_at_k(list(results.values()), 2) == mean_pass_at_k(results, 2)
    with pytest.raises(ConfigError, match="task 'short' has 1 samples, fewer than k=2"):
        mean_pass_at_k({**results, "short": [True]}, 2)
    with pytest.raises(ConfigError, match="no tasks"):
        mean_pass_at_k({}, 1)


# ---- McNemar -----------------------------------------------------------------------------------


def _mcnemar_by_enumeration(a_only, b_only):
    """Every way the m discordant tasks could split between A and B, equally likely under the
    null: the share at least as unbalanced as the one observed."""
    m = a_only + b_only
    observed = abs(a_only - b_only)
    hits = sum(abs(2 * sum(bits) - m) >= observed for bits in itertools.product((0, 1), repeat=m))
    return Fraction(hits, 2**m)


def test_mcnemar_known_values():
    # By hand: C(22, 0..6) = 1, 22, 231, 1540, 7315, 26334, 74613; their sum is 110056.
    assert mcnemar_exact(6, 16) == pytest.approx(2 * 110056 / 2**22)
    assert mcnemar_exact(16, 6) == mcnemar_exact(6, 16)
    assert mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 2**10)
    assert mcnemar_exact(0, 5) == 2 / 32
    assert mcnemar_exact(0, 1) == 1.0 and mcnemar_exact(4, 4) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_mcnemar_equals_enumeration_of_every_split():
    for a_only in range(9):
        for b_only in range(9 - a_only):
            exact = _mcnemar_by_enumeration(a_only, b_only)
            assert mcnemar_exact(a_only, b_only) == pytest.approx(float(exact), abs=1e-15)


def test_mcnemar_handles_many_discordant_pairs():
    p = mcnemar_exact(4800, 5200)  # 2**10000 does not fit in a float; the integers do
    assert 0 < p < 1e-4
    assert mcnemar_exact(5000, 5000) == 1.0


def test_paired_test_counts_and_rates():
    a = [True, True, True, False, False, True, False]
    b = [True, False, False, False, True, True, False]
    t = paired_test(a, b)
    assert (t.n, t.both, t.a_only, t.b_only, t.neither) == (7, 2, 2, 1, 2)
    assert (t.a_rate, t.b_rate, t.diff) == (4 / 7, 3 / 7, pytest.approx(1 / 7))
    assert t.p_value == mcnemar_exact(2, 1) == 1.0
    assert t.ci_low < t.diff < t.ci_high
    assert t.to_dict()["a_only"] == 2
    assert "2 vs 1 discordant, n=7" in t.summary()


def test_paired_test_rejects_mismatched_or_non_binary_input():
    with pytest.raises(ConfigError, match="a has 2, b has 1"):
        paired_test([True, False], [True])
    with pytest.raises(ConfigError, match="paired_test_scores"):
        paired_test([0.5], [1.0])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="at least one task"):
        paired_test([], [])


def test_newcombe_interval_matches_the_published_example():
    # Fagerland, Lydersen and Laake, Statistical Analysis of Contingency Tables (2017), the
    # Cavo et al. table, Newcombe square-and-add: -0.0621 (95% CI -0.1186 to -0.0046).
    lo, hi = newcombe_paired_ci(59, 6, 16, 80)
    assert (round(lo, 4), round(hi, 4)) == (-0.1186, -0.0046)
    t = paired_test(
        [True] * 65 + [False] * 96, [True] * 59 + [False] * 6 + [True] * 16 + [False] * 80
    )
    assert round(t.diff, 4) == -0.0621 and (t.ci_low, t.ci_high) == (lo, hi)


def test_newcombe_interval_stays_in_bounds_at_the_extremes():
    for table in [(0, 10, 0, 0), (0, 0, 10, 0), (10, 0, 0, 0), (0, 0, 0, 10), (0, 1, 0, 0)]:
        lo, hi = newcombe_paired_ci(*table)
        n = sum(table)
        diff = (table[1] - table[2]) / n
        assert -1.0 <= lo <= diff <= hi <= 1.0
    wide = newcombe_paired_ci(5, 3, 1, 11, confidence=0.99)
    narrow = newcombe_paired_ci(5, 3, 1, 11, confidence=0.80)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]


def _simulate_pairs(rng, n, probs):
    """n paired outcomes from a joint distribution (both, a only, b only, neither)."""
    cells = rng.choices(range(4), weights=probs, k=n)
    return [c in (0, 1) for c in cells], [c in (0, 2) for c in cells]


@pytest.mark.parametrize(
    ("n", "probs"),
    [(60, (0.3, 0.15, 0.05, 0.5)), (200, (0.4, 0.06, 0.04, 0.5)), (25, (0.1, 0.1, 0.1, 0.7))],
)
def test_newcombe_interval_covers_the_true_difference_about_95_percent(n, probs):
    rng = random.Random(n)
    true_diff = probs[1] - probs[2]
    sims = 2000
    covered = 0
    for _ in range(sims):
        t = paired_test(*_simulate_pairs(rng, n, probs))
        covered += t.ci_low <= true_diff <= t.ci_high
    # Newcombe (1998) reports coverage close to nominal for this interval; 2000 runs give a
    # standard error of about 0.005.
    assert 0.925 <= covered / sims <= 0.985


def test_mcnemar_holds_its_level_under_the_null():
    rng = random.Random(1)
    sims = 2000
    rejections = sum(
        paired_test(*_simulate_pairs(rng, 80, (0.3, 0.1, 0.1, 0.5))).p_value <= 0.05
        for _ in range(sims)
    )
    # Exact tests are conservative: the rejection rate is at most 5% (plus noise).
    assert rejections / sims <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims)
    power = sum(
        paired_test(*_simulate_pairs(rng, 80, (0.3, 0.2, 0.02, 0.48))).p_value <= 0.05
        for _ in range(200)
    )
    assert power / 200 > 0.8  # and it does detect a real difference


# ---- paired scores -----------------------------------------------------------------------------


def _sign_flip_by_enumeration(diffs):
    observed = abs(sum(diffs))
    total = hits = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        total += 1
        hits += abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12
    return hits / total


def test_exact_sign_flip_equals_enumeration():
    rng = random.Random(0)
    for _ in range(40):
        m = rng.randint(1, 10)
        a = [rng.randint(0, 4) / 4 for _ in range(m)]
        b = [rng.randint(0, 4) / 4 for _ in range(m)]
        t = paired_test_scores(a, b, bootstrap=10)
        assert t.method == "exact sign-flip"
        diffs = [x - y for x, y in zip(a, b, strict=True)]
        assert t.p_value == pytest.approx(_sign_flip_by_enumeration(diffs), abs=1e-12)


def test_exact_sign_flip_known_values():
    assert paired_test_scores([1.0] * 10, [0.0] * 10).p_value == 2 / 2**10
    assert paired_test_scores([0.5, 0.25], [0.5, 0.25]).p_value == 1.0
    # Mixed denominators (rates over 3 and over 4 samples) still count exactly, over 1/12.
    t = paired_test_scores([1 / 3, 2 / 3, 1.0], [0.25, 0.0, 0.5])
    assert t.method == "exact sign-flip" and t.p_value == 2 / 8


def test_exact_sign_flip_scales_to_a_real_evaluation():
    rng = random.Random(3)
    a = [rng.randint(0, 8) / 8 for _ in range(300)]
    b = [min(1.0, x + rng.choice((0, 0, 1 / 8))) for x in a]
    t = paired_test_scores(a, b, bootstrap=200)
    assert t.method == "exact sign-flip"
    assert t.b_better > 0 and t.a_better == 0 and t.p_value < 1e-6


def test_monte_carlo_sign_flip_for_scores_without_a_common_denominator():
    rng = random.Random(5)
    a = [rng.random() for _ in range(9)]
    b = [rng.random() for _ in range(9)]
    t = paired_test_scores(a, b, permutations=20_000, bootstrap=10, seed=1)
    assert t.method.startswith("monte-carlo")
    exact = _sign_flip_by_enumeration([x - y for x, y in zip(a, b, strict=True)])
    assert abs(t.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4
    again = paired_test_scores(a, b, permutations=20_000, bootstrap=10, seed=1)
    assert again == t  # seeded


def test_paired_scores_summary_and_interval():
    rng = random.Random(8)
    a = [rng.randint(2, 4) / 4 for _ in range(100)]
    b = [rng.randint(0, 3) / 4 for _ in range(100)]
    t = paired_test_scores(a, b)
    assert t.ci_low <= t.diff <= t.ci_high
    assert t.ci_low > 0  # A is clearly better here
    assert t.a_better + t.b_better + t.ties == 100
    assert t.to_dict()["n"] == 100 and "exact sign-flip" in t.summary()


def test_paired_scores_rejects_bad_input():
    with pytest.raises(ConfigError, match="a has 1, b has 2"):
        paired_test_scores([1.0], [1.0, 0.0])
    with pytest.raises(ConfigError, match="finite"):
        paired_test_scores([math.nan], [1.0])
    with pytest.raises(ConfigError, match="confidence"):
        paired_test_scores([1.0], [0.0], confidence=95)
    with pytest.raises(ConfigError, match="at least one task"):
        paired_test_scores([], [])
