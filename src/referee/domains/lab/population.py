"""Populations: a species grows in an enclosure under harvesting; its growth law is hidden.

Laws (``h`` is the harvesting rate an experiment sets, a share of the population per day):

* ``logistic``: ``dN/dt = r N (1 - N/K) - h N``;
* ``theta-logistic``: ``dN/dt = r N (1 - (N/K)^theta) - h N`` (density dependence that bites
  early, ``theta < 1``, or late, ``theta > 1``).

Both have a closed form: ``u = N^-theta`` obeys the linear equation
``du/dt = -theta (r - h) u + theta r K^-theta``, whatever the sign of ``r - h`` (harvesting
faster than the species grows drives it out). Held-out queries start from larger populations
and harvest harder as difficulty rises.

>>> round(POPULATION.simulate("logistic", {"r": 0.5, "K": 1000.0}, {"N0": 10, "h": 0.0},
...                           [200.0])[0], 6)
1000.0
"""

from __future__ import annotations

import math
import random
from typing import Any

from referee.domains.lab.system import Condition, Law, Param, Settings, System, Truth

__all__ = ["POPULATION", "Population"]

_R = Param("r", "1/day", 0.01, 3.0, "intrinsic growth rate")
_K = Param("K", "individuals", 10.0, 10000.0, "carrying capacity")


def _theta_logistic(n0: float, r: float, k: float, theta: float, h: float, t: float) -> float:
    if t <= 0:
        return n0
    u0 = n0**-theta
    growth = r - h
    if abs(growth) < 1e-12:
        u = u0 + theta * r * k**-theta * t
    else:
        target = r * k**-theta / growth
        try:
            u = target + (u0 - target) * math.exp(-theta * growth * t)
        except OverflowError:
            return 0.0  # u is astronomically large: the population is gone
    return float(u ** (-1 / theta)) if u > 0 else math.nan


class Population(System):
    """See the module docstring."""

    name = "population"
    story = (
        "A species lives in a large enclosure. You set the starting population N0 and a "
        "harvesting rate h (the share of the population removed per day, continuously) for a "
        "run and count the population N at days you choose. The growth law, without "
        "harvesting, is one of the candidates below; harvesting removes h * N per day."
    )
    observable = "N, the population (individuals)"
    time_unit = "day"
    t_max = 40.0
    conditions = (
        Condition("N0", "individuals", 10.0, 200.0, doc="starting population"),
        Condition("h", "1/day", 0.0, 0.3, doc="harvesting rate"),
    )
    laws = {
        "logistic": Law("logistic", "dN/dt = r * N * (1 - N/K) - h * N", (_R, _K)),
        "theta-logistic": Law(
            "theta-logistic",
            "dN/dt = r * N * (1 - (N/K)^theta) - h * N",
            (_R, _K, Param("theta", "1", 0.05, 5.0, "shape of the density dependence")),
        ),
    }
    simple_law = "logistic"
    floor = 2.0

    def simulate(
        self, law: str, params: dict[str, float], conditions: dict[str, Any], times: list[float]
    ) -> list[float]:
        n0, h = float(conditions["N0"]), float(conditions["h"])
        theta = params["theta"] if law == "theta-logistic" else 1.0
        try:
            return [_theta_logistic(n0, params["r"], params["K"], theta, h, t) for t in times]
        except (OverflowError, ZeroDivisionError, ValueError):
            return [math.nan] * len(times)

    def draw_truth(self, rng: random.Random, settings: Settings) -> Truth:
        law = rng.choice(sorted(self.laws)) if settings.law_hidden else self.simple_law
        params = {
            "r": rng.uniform(0.15, 0.6),
            "K": math.exp(rng.uniform(math.log(300.0), math.log(2000.0))),
        }
        if law == "theta-logistic":
            # Away from 1 (the logistic itself): below 0.6 or above 1.8.
            params["theta"] = (
                rng.uniform(0.25, 0.6) if rng.random() < 0.5 else rng.uniform(1.8, 3.5)
            )
        return Truth(law, params)

    def extrapolate(self, rng: random.Random, reach: float) -> dict[str, Any]:
        return {
            "N0": round(rng.uniform(10.0, 200.0 + 800.0 * reach), 1),
            "h": round(rng.uniform(0.0, 0.3 + 0.3 * reach), 3),
        }


POPULATION = Population()
