"""Circuits: a sealed box holds a capacitor in series with unknown parts; a voltage step is
applied through a resistor the experimenter chooses, and the capacitor's voltage is recorded.

Laws (the source steps to ``Vs`` at time 0 through the chosen series resistance ``Rs``):

* ``rc``: the box is a resistance ``R`` and a capacitance ``C``: a first-order charge with
  time constant ``(R + Rs) C``;
* ``rlc``: the box also holds an inductance ``L``: a second-order response, over-damped,
  critically damped or ringing as ``(R + Rs) / 2 * sqrt(C / L)`` falls below 1.

Both have closed forms. Held-out runs use smaller series resistances (down to none: the box
rings if it can) and larger steps as difficulty rises.

>>> v = CIRCUITS.simulate("rc", {"R": 50.0, "C": 2.0}, {"Vs": 2.0, "Rs": 450.0}, [1.0])
>>> round(v[0], 6)   # one time constant: 2 V * (1 - 1/e)
1.264241
"""

from __future__ import annotations

import math
import random
from typing import Any

from referee.domains.lab.system import Condition, Law, Param, Settings, System, Truth

__all__ = ["CIRCUITS", "Circuits"]

_R = Param("R", "ohm", 0.1, 1000.0, "resistance inside the box")
_C = Param("C", "uF", 0.01, 100.0, "capacitance")
#: 1 / sqrt(1 mH * 1 uF), in 1/ms.
_OMEGA_UNIT = 1 / math.sqrt(1e-3 * 1e-6) / 1e3


def _rc(vs: float, resistance: float, c_uf: float, t: float) -> float:
    tau_ms = resistance * c_uf / 1000
    return vs * -math.expm1(-t / tau_ms)


def _rlc(vs: float, resistance: float, l_mh: float, c_uf: float, t: float) -> float:
    alpha = resistance / (2 * l_mh)  # 1/ms
    omega0 = _OMEGA_UNIT / math.sqrt(l_mh * c_uf)
    if alpha < omega0 * (1 - 1e-9):
        wd = math.sqrt(omega0**2 - alpha**2)
        return vs * (1 - math.exp(-alpha * t) * (math.cos(wd * t) + alpha / wd * math.sin(wd * t)))
    if alpha <= omega0 * (1 + 1e-9):
        return vs * (1 - math.exp(-alpha * t) * (1 + alpha * t))
    root = math.sqrt(alpha**2 - omega0**2)
    slow = -(omega0**2) / (alpha + root)  # -alpha + root, without the cancellation
    fast = -alpha - root
    return vs * (1 + (fast * math.exp(slow * t) - slow * math.exp(fast * t)) / (slow - fast))


class Circuits(System):
    """See the module docstring."""

    name = "circuits"
    story = (
        "A sealed box holds a capacitor in series with unknown parts. At time 0 a voltage "
        "step Vs is applied to the box through a series resistor Rs that you choose, and "
        "you record the capacitor's voltage at milliseconds you choose (it starts "
        "discharged, with no current flowing)."
    )
    observable = "V, the capacitor's voltage in volts"
    time_unit = "ms"
    t_max = 20.0
    conditions = (
        Condition("Vs", "V", 1.0, 5.0, doc="the step's voltage"),
        Condition("Rs", "ohm", 50.0, 500.0, doc="the series resistor you add"),
    )
    laws = {
        "rc": Law("rc", "(R + Rs) * C * dV/dt = Vs - V", (_R, _C)),
        "rlc": Law(
            "rlc",
            "L * C * d2V/dt2 + (R + Rs) * C * dV/dt + V = Vs",
            (_R, Param("L", "mH", 0.01, 1000.0, "inductance"), _C),
        ),
    }
    simple_law = "rc"
    floor = 0.01
    design_start = 1 / 1000  # 20 us: a box with a few ohms charges in tens of microseconds

    def simulate(
        self, law: str, params: dict[str, float], conditions: dict[str, Any], times: list[float]
    ) -> list[float]:
        vs, rs = float(conditions["Vs"]), float(conditions["Rs"])
        resistance = params["R"] + rs
        try:
            if law == "rc":
                return [_rc(vs, resistance, params["C"], t) if t > 0 else 0.0 for t in times]
            return [
                _rlc(vs, resistance, params["L"], params["C"], t) if t > 0 else 0.0 for t in times
            ]
        except (OverflowError, ZeroDivisionError, ValueError):
            return [math.nan] * len(times)

    def draw_truth(self, rng: random.Random, settings: Settings) -> Truth:
        law = rng.choice(sorted(self.laws)) if settings.law_hidden else self.simple_law

        def log_uniform(lo: float, hi: float) -> float:
            return math.exp(rng.uniform(math.log(lo), math.log(hi)))

        params = {"R": rng.uniform(5.0, 50.0), "C": log_uniform(1.0, 10.0)}
        if law == "rlc":
            params["L"] = log_uniform(10.0, 100.0)
        return Truth(law, params)

    def extrapolate(self, rng: random.Random, reach: float) -> dict[str, Any]:
        return {
            "Vs": round(rng.uniform(1.0, 5.0 + 5.0 * reach), 2),
            "Rs": round(rng.uniform(50.0 - 50.0 * reach, 500.0), 1),
        }


CIRCUITS = Circuits()
