"""Kinetics: a reactant A decays in a stirred vessel; its rate law and temperature dependence
are hidden.

Laws (the rate constant follows Arrhenius: ``k(T) = k_ref * exp(-Ea/R * (1/T - 1/300 K))``):

* ``power-law``: ``d[A]/dt = -k(T) * [A]^n`` (closed form for every order ``n``);
* ``saturable``: ``d[A]/dt = -vmax(T) * [A] / (Km + [A])`` (an enzyme-like rate; solved from
  its implicit closed form ``Km ln(A0/A) + A0 - A = vmax t`` by bisection).

An experiment sets the initial concentration ``A0`` and the temperature ``T`` and samples
``[A]``. Held-out queries go to hotter and more concentrated runs as difficulty rises.

>>> KINETICS.simulate("saturable", {"vmax_ref": 0.05, "Km": 0.5, "Ea_kJ": 50.0},
...                   {"A0": 1.0, "T": 300.0}, [0.0, 1e6])
[1.0, 0.0]
"""

from __future__ import annotations

import math
import random
from typing import Any

from referee.domains.lab.system import Condition, Law, Param, Settings, System, Truth

__all__ = ["KINETICS", "Kinetics"]

_R = 8.314462618e-3  # kJ/(mol K)
_T_REF = 300.0

_EA = Param("Ea_kJ", "kJ/mol", 0.0, 200.0, "activation energy (Arrhenius)")


def _arrhenius(value_ref: float, ea_kj: float, temperature: float) -> float:
    return value_ref * math.exp(-ea_kj / _R * (1 / temperature - 1 / _T_REF))


def _power(a0: float, k: float, n: float, t: float) -> float:
    if t <= 0:
        return a0
    if n == 1:
        return a0 * math.exp(-k * t)
    # [A] = A0 (1 - x)^(1/(1-n)), x = (1-n) k t A0^(n-1): through log1p, exact as n nears 1.
    x = (1 - n) * k * t * a0 ** (n - 1)
    if x >= 1:  # an order below 1 runs out in finite time
        return 0.0
    return a0 * math.exp(math.log1p(-x) / (1 - n))


def _saturable(a0: float, vmax: float, km: float, t: float) -> float:
    if t <= 0:
        return a0
    vt = vmax * t
    # g(ln A) = Km ln(A0/A) + A0 - A - vt falls with A; g >= 0 at ln A0 - vt/Km.
    lo, hi = math.log(a0) - vt / km - 1.0, math.log(a0)
    for _ in range(100):
        mid = (lo + hi) / 2
        a = math.exp(mid)
        if km * (math.log(a0) - mid) + a0 - a - vt > 0:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


class Kinetics(System):
    """See the module docstring."""

    name = "kinetics"
    story = (
        "A reactant A decays in a stirred, thermostatted vessel (A -> products). You set the "
        "initial concentration A0 and the temperature T of a run and measure the "
        "concentration [A] at times you choose. The rate constant depends on temperature as "
        "Arrhenius says: k(T) = k_ref * exp(-Ea/R * (1/T - 1/300 K)), R = 8.314 J/(mol K)."
    )
    observable = "[A], the reactant's concentration in mol/L"
    time_unit = "min"
    t_max = 60.0
    conditions = (
        Condition("A0", "mol/L", 0.2, 2.0, doc="initial concentration of A"),
        Condition("T", "K", 290.0, 320.0, doc="temperature of the vessel"),
    )
    laws = {
        "power-law": Law(
            "power-law",
            "d[A]/dt = -k(T) * [A]^n, k(T) = k_ref * exp(-Ea/R * (1/T - 1/300 K))",
            (
                Param("k_ref", "(mol/L)^(1-n)/min", 1e-4, 10.0, "rate constant at 300 K"),
                Param("n", "1", 0.0, 3.0, "reaction order"),
                _EA,
            ),
        ),
        "saturable": Law(
            "saturable",
            "d[A]/dt = -vmax(T) * [A] / (Km + [A]), "
            "vmax(T) = vmax_ref * exp(-Ea/R * (1/T - 1/300 K))",
            (
                Param("vmax_ref", "mol/(L min)", 1e-4, 10.0, "top rate at 300 K"),
                Param("Km", "mol/L", 0.01, 20.0, "concentration at half the top rate"),
                _EA,
            ),
        ),
    }
    simple_law = "power-law"
    floor = 0.005

    def simulate(
        self, law: str, params: dict[str, float], conditions: dict[str, Any], times: list[float]
    ) -> list[float]:
        a0, temperature = float(conditions["A0"]), float(conditions["T"])
        try:
            if law == "power-law":
                k = _arrhenius(params["k_ref"], params["Ea_kJ"], temperature)
                return [_power(a0, k, params["n"], t) for t in times]
            v = _arrhenius(params["vmax_ref"], params["Ea_kJ"], temperature)
            return [_saturable(a0, v, params["Km"], t) for t in times]
        except (OverflowError, ZeroDivisionError, ValueError):
            return [math.nan] * len(times)

    def draw_truth(self, rng: random.Random, settings: Settings) -> Truth:
        law = rng.choice(sorted(self.laws)) if settings.law_hidden else self.simple_law
        half_life = math.exp(rng.uniform(math.log(8.0), math.log(40.0)))  # at A0 1, 300 K
        ea = rng.uniform(30.0, 80.0)
        if law == "power-law":
            n = rng.uniform(0.5, 2.0)
            k = (
                math.log(2) / half_life
                if abs(n - 1) < 1e-9
                else (2 ** (n - 1) - 1) / ((n - 1) * half_life)
            )
            return Truth(law, {"k_ref": k, "n": n, "Ea_kJ": ea})
        km = math.exp(rng.uniform(math.log(0.2), math.log(2.0)))
        return Truth(law, {"vmax_ref": (km * math.log(2) + 0.5) / half_life, "Km": km, "Ea_kJ": ea})

    def extrapolate(self, rng: random.Random, reach: float) -> dict[str, Any]:
        return {
            "A0": round(rng.uniform(0.2, 2.0 + 2.0 * reach), 3),
            "T": round(rng.uniform(290.0 - 10.0 * reach, 320.0 + 20.0 * reach), 1),
        }


KINETICS = Kinetics()
