"""The curriculum's fitted Beta prior: it recovers a known population, stays finite on
degenerate ones, and makes tasks solved once weigh clearly more than tasks never solved."""

from __future__ import annotations

import random

import pytest

from referee.errors import ConfigError
from referee.tasks.beta_prior import CONC_MAX, fit_beta_prior, parse_prior
from referee.tasks.curriculum import Curriculum, CurriculumConfig


def _population(alpha: float, beta: float, tasks: int, tries: int, seed: int = 0):
    rng = random.Random(seed)
    out = {}
    for i in range(tasks):
        p = rng.betavariate(alpha, beta)
        out[f"t{i}"] = [float(rng.random() < p) for _ in range(tries)]
    return out


@pytest.mark.parametrize(("alpha", "beta"), [(0.3, 5.0), (2.0, 2.0), (1.0, 1.0)])
def test_the_fit_recovers_the_population_it_was_drawn_from(alpha: float, beta: float) -> None:
    a, b = fit_beta_prior(_population(alpha, beta, tasks=3000, tries=8))
    assert a / (a + b) == pytest.approx(alpha / (alpha + beta), abs=0.02)
    # the concentration (how alike tasks are) is the harder half: within 35 %
    assert a + b == pytest.approx(alpha + beta, rel=0.35)


def test_a_population_that_never_passes_gets_a_finite_prior_near_zero() -> None:
    a, b = fit_beta_prior({f"t{i}": [0.0] * 4 for i in range(50)})
    assert a / (a + b) < 0.01 and a + b <= CONC_MAX


def test_one_task_is_not_a_population_and_bad_priors_are_refused() -> None:
    with pytest.raises(ConfigError, match="at least two tasks"):
        fit_beta_prior({"t": [1.0, 0.0]})
    for text in ("0,1", "1", "a,b", "1,2,3", "inf,1"):
        with pytest.raises(ConfigError, match="--prior"):
            parse_prior(text)


def test_under_the_fitted_prior_a_task_solved_once_weighs_five_times_one_never_solved() -> None:
    # the shape of SmolLM2-135M's calibration on 400 list-ops tasks (RESULTS §25): 351 never
    # passed in four tries, 36 once, 11 twice, 1 three times, 1 always
    counts = {0: 351, 1: 36, 2: 11, 3: 1, 4: 1}
    outcomes = {
        f"k{k}-{i}": [1.0] * k + [0.0] * (4 - k) for k, n in counts.items() for i in range(n)
    }
    a, b = fit_beta_prior(outcomes)
    assert (a, b) == pytest.approx((0.20, 4.7), rel=0.05)

    def weights(cfg: CurriculumConfig) -> tuple[float, float]:
        cur = Curriculum(["never", "once"], cfg)
        cur.tracker.record("never", [0.0] * 4, step=0)
        cur.tracker.record("once", [1.0, 0.0, 0.0, 0.0], step=0)
        return cur.weight("never"), cur.weight("once")

    never, once = weights(CurriculumConfig(prior_alpha=a, prior_beta=b))
    assert once / never > 5
    never, once = weights(CurriculumConfig())  # Beta(1, 1): hardly a difference
    assert once / never < 1.7
