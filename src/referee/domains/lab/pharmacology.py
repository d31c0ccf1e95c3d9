"""Pharmacology: a drug's concentration in plasma after one dose; its elimination law is hidden.

Laws (one compartment of volume ``V``; an oral dose is absorbed at rate ``ka``, a share ``F``
of it reaching the blood; an intravenous dose is all there at once):

* ``linear``: elimination ``ke * C`` per hour (closed form, Bateman's function);
* ``saturable``: Michaelis-Menten elimination, ``vmax * C / (Km + C)`` mg per hour, which a
  large dose saturates (integrated by fixed-step Runge-Kutta, no closed form).

An experiment sets the dose and the route and samples ``C``. Held-out doses grow beyond the
experimental range as difficulty rises: where elimination saturates, a linear model fitted to
small doses under-predicts the exposure of large ones.

>>> c = PHARMACOLOGY.simulate("linear", {"V": 50.0, "ke": 0.2, "ka": 1.0, "F": 1.0},
...                           {"dose": 100.0, "route": "iv"}, [0.0])
>>> c
[2.0]
"""

from __future__ import annotations

import math
import random
from typing import Any

from referee.domains.lab.system import Condition, Law, Param, Settings, System, Truth

__all__ = ["PHARMACOLOGY", "Pharmacology"]

_V = Param("V", "L", 5.0, 500.0, "volume of distribution")
_KA = Param("ka", "1/h", 0.05, 10.0, "absorption rate constant (oral)")
_F = Param("F", "1", 0.01, 1.0, "bioavailability (share of an oral dose absorbed)")
#: The Runge-Kutta step: at most 0.1 h, and no more than 0.5 / (the fastest rate), within
#: 4000 steps per simulation (absurd rates then give absurd numbers, judged as such, and a
#: submission cannot make the judge integrate for long).
_STEP_H = 0.1
_MAX_STEPS = 4000


def _linear(dose: float, oral: bool, p: dict[str, float], t: float) -> float:
    v, ke, ka, f = p["V"], p["ke"], p["ka"], p["F"]
    if t < 0:
        return 0.0
    if not oral:
        return dose / v * math.exp(-ke * t)
    if abs(ka - ke) < 1e-9 * max(ka, ke):
        return f * dose / v * ka * t * math.exp(-ke * t)
    return f * dose * ka / (v * (ka - ke)) * (math.exp(-ke * t) - math.exp(-ka * t))


def _saturable(dose: float, oral: bool, p: dict[str, float], times: list[float]) -> list[float]:
    v, vmax, km, ka, f = p["V"], p["vmax"], p["Km"], p["ka"], p["F"]

    def rates(gut: float, central: float) -> tuple[float, float]:
        absorbed = ka * gut
        conc = max(central, 0.0) / v
        return -absorbed, absorbed - vmax * conc / (km + conc)

    order = sorted(range(len(times)), key=lambda i: times[i])
    horizon = max([0.0, *times])
    fastest = max(ka, vmax / (km * v), 1e-9)
    dt = max(min(_STEP_H, 0.5 / fastest), horizon / _MAX_STEPS)
    gut, central = (f * dose, 0.0) if oral else (0.0, dose)
    t, out = 0.0, [0.0] * len(times)
    for i in order:
        target = times[i]
        while t < target - 1e-12:
            h = min(dt, target - t)
            a1, b1 = rates(gut, central)
            a2, b2 = rates(gut + h / 2 * a1, central + h / 2 * b1)
            a3, b3 = rates(gut + h / 2 * a2, central + h / 2 * b2)
            a4, b4 = rates(gut + h * a3, central + h * b3)
            gut += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
            central += h / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
            t += h
        out[i] = max(central, 0.0) / v if target >= 0 else 0.0
    return out


class Pharmacology(System):
    """See the module docstring."""

    name = "pharmacology"
    story = (
        "A drug is given to a subject as one dose, intravenously (iv: all in the blood at "
        "once) or by mouth (oral: absorbed over time, only a share F reaching the blood). You "
        "set the dose and the route of a run and measure the plasma concentration C at hours "
        "you choose. The body is one compartment of volume V: C = (amount in the body) / V; "
        "gut is the part of an oral dose not absorbed yet (F * dose at time 0)."
    )
    observable = "C, the plasma concentration in mg/L"
    time_unit = "h"
    t_max = 24.0
    conditions = (
        Condition("dose", "mg", 10.0, 200.0, doc="the dose given at time 0"),
        Condition("route", "", choices=("iv", "oral"), doc="how the dose is given"),
    )
    laws = {
        "linear": Law(
            "linear",
            "d(amount)/dt = ka * gut - ke * amount (first-order elimination)",
            (_V, Param("ke", "1/h", 0.005, 3.0, "elimination rate constant"), _KA, _F),
        ),
        "saturable": Law(
            "saturable",
            "d(amount)/dt = ka * gut - vmax * C / (Km + C) (Michaelis-Menten elimination)",
            (
                _V,
                Param("vmax", "mg/h", 0.5, 500.0, "top elimination rate"),
                Param("Km", "mg/L", 0.1, 200.0, "concentration at half the top rate"),
                _KA,
                _F,
            ),
        ),
    }
    simple_law = "linear"
    floor = 0.01

    def simulate(
        self, law: str, params: dict[str, float], conditions: dict[str, Any], times: list[float]
    ) -> list[float]:
        dose, oral = float(conditions["dose"]), conditions["route"] == "oral"
        try:
            if law == "linear":
                return [_linear(dose, oral, params, t) for t in times]
            return _saturable(dose, oral, params, times)
        except (OverflowError, ZeroDivisionError, ValueError):
            return [math.nan] * len(times)

    def draw_truth(self, rng: random.Random, settings: Settings) -> Truth:
        law = rng.choice(sorted(self.laws)) if settings.law_hidden else self.simple_law

        def log_uniform(lo: float, hi: float) -> float:
            return math.exp(rng.uniform(math.log(lo), math.log(hi)))

        v, ke = log_uniform(20.0, 100.0), math.log(2) / log_uniform(2.0, 8.0)
        shared = {"V": v, "ka": max(log_uniform(0.5, 3.0), 2 * ke), "F": rng.uniform(0.4, 1.0)}
        if law == "linear":
            return Truth(law, {**shared, "ke": ke})
        km = log_uniform(1.0, 5.0)
        # At low concentration it eliminates as the linear law's ke would.
        return Truth(law, {**shared, "vmax": ke * km * v, "Km": km})

    def extrapolate(self, rng: random.Random, reach: float) -> dict[str, Any]:
        return {
            "dose": round(rng.uniform(10.0, 200.0 + 800.0 * reach), 1),
            "route": rng.choice(("iv", "oral")),
        }


PHARMACOLOGY = Pharmacology()
