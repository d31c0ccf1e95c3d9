"""What a simulated laboratory system is: its conditions, its candidate laws, its simulator.

A :class:`System` is one of the lab's fields (kinetics, populations, pharmacology). It declares
the conditions an experiment sets (each a number in a range, or a choice), the candidate laws
(each a name, a formula in words and its parameters with wide public bounds), how long a run
lasts, and a noise-free simulator ``simulate(law, params, conditions, times)``. Which law and
which parameters are true is the task's hidden data; the simulator is the same trusted code
for the truth, the experiments and the judging of a submitted model.

Everything here is pure Python (``math``): the judge needs neither numpy nor scipy, and its
numbers are the same on every machine.

>>> from referee.domains.lab.kinetics import KINETICS
>>> law = KINETICS.laws["power-law"]
>>> [p.name for p in law.params]
['k_ref', 'n', 'Ea_kJ']
>>> KINETICS.simulate("power-law", {"k_ref": 0.1, "n": 1.0, "Ea_kJ": 50.0},
...                   {"A0": 1.0, "T": 300.0}, [0.0, 10.0])[1]     # e^-1
0.36787944117144233
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_SAMPLES",
    "Condition",
    "Law",
    "Param",
    "Settings",
    "System",
    "Truth",
    "corner_conditions",
]

#: Sample times one experiment may ask for.
MAX_SAMPLES = 8


@dataclass(frozen=True)
class Param:
    """One parameter of a law: its name, unit, public bounds and what it means."""

    name: str
    unit: str
    lo: float
    hi: float
    doc: str

    def describe(self) -> str:
        return f"{self.name} ({self.unit}; {self.lo:g} to {self.hi:g}): {self.doc}"


@dataclass(frozen=True)
class Law:
    """A candidate law: its name, its formula in words, its parameters."""

    name: str
    formula: str
    params: tuple[Param, ...]

    def param_names(self) -> list[str]:
        return [p.name for p in self.params]


@dataclass(frozen=True)
class Condition:
    """One condition an experiment sets: a number in ``lo..hi``, or one of ``choices``."""

    name: str
    unit: str
    lo: float = 0.0
    hi: float = 0.0
    choices: tuple[str, ...] = ()
    doc: str = ""

    def describe(self) -> str:
        if self.choices:
            return f"{self.name}: one of {', '.join(self.choices)} ({self.doc})"
        return f"{self.name} ({self.unit}): {self.lo:g} to {self.hi:g} ({self.doc})"

    def check(self, value: Any) -> str:
        """Why ``value`` is not a value this condition takes in an experiment, or ""."""
        if self.choices:
            if value not in self.choices:
                return f"{self.name} must be one of {', '.join(self.choices)}"
            return ""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{self.name} must be a number"
        if not math.isfinite(value) or not self.lo <= value <= self.hi:
            return f"{self.name} must be between {self.lo:g} and {self.hi:g} {self.unit}"
        return ""


@dataclass(frozen=True)
class Settings:
    """What the difficulty knob (0..1) sets, the same way in every system.

    * ``budget``: experiments the agent may run (8 at 0, 4 at 1);
    * ``noise``: the relative noise of a measurement (3 % at 0, 10 % at 1);
    * ``reach``: how far beyond the experimental ranges the held-out conditions go (0: inside
      them; 1: as far again as each system's ``extrapolate`` says);
    * ``law_hidden``: from 0.5 on the true law is drawn from the system's candidates and the
      prompt does not say which; below, the prompt names it.

    >>> Settings.at(0.0).budget, Settings.at(1.0).budget, Settings.at(0.5).law_hidden
    (8, 4, True)
    """

    difficulty: float
    budget: int
    noise: float
    reach: float
    law_hidden: bool

    @classmethod
    def at(cls, difficulty: float) -> Settings:
        d = min(1.0, max(0.0, float(difficulty)))
        return cls(
            difficulty=d,
            budget=round(8 - 4 * d),
            noise=round(0.03 + 0.07 * d, 4),
            reach=d,
            law_hidden=d >= 0.5,
        )


@dataclass(frozen=True)
class Truth:
    """The hidden law and its parameters."""

    law: str
    params: dict[str, float] = field(default_factory=dict)


class System(ABC):
    """One field's simulated system; see the module docstring."""

    #: Short name: the family is ``lab-<name>``.
    name: str
    #: One paragraph for the prompt: what is studied and what an experiment does.
    story: str
    #: What is measured, with its unit.
    observable: str
    #: The time unit and the longest time an experiment may sample.
    time_unit: str
    t_max: float
    conditions: tuple[Condition, ...]
    laws: dict[str, Law]
    #: The law named in the prompt below difficulty 0.5.
    simple_law: str
    #: Measurement floor: absolute noise (in the observable's unit) at the base noise level.
    floor: float
    #: The earliest time the reference agent samples, as a share of ``t_max``: what an
    #: experimenter knows of the apparatus's fastest time scale.
    design_start: float = 1 / 30

    @abstractmethod
    def simulate(
        self, law: str, params: dict[str, float], conditions: dict[str, Any], times: list[float]
    ) -> list[float]:
        """The noise-free observable at ``times`` (may hold inf/nan for absurd parameters)."""

    @abstractmethod
    def draw_truth(self, rng: random.Random, settings: Settings) -> Truth:
        """The hidden law and parameters of a task."""

    @abstractmethod
    def extrapolate(self, rng: random.Random, reach: float) -> dict[str, Any]:
        """Conditions of one held-out query: inside the experimental ranges at ``reach`` 0,
        up to the system's stated extension at 1."""

    def horizon(self, reach: float) -> float:
        """The longest time a held-out query asks about."""
        return self.t_max * (1 + 0.5 * reach)

    def law_names(self, settings: Settings) -> list[str]:
        """The candidate laws the prompt offers at ``settings``."""
        return sorted(self.laws) if settings.law_hidden else [self.simple_law]

    def scale(self, conditions: dict[str, Any], values: list[float]) -> float:
        """What a query's error is measured against: the largest true value (never below
        the floor)."""
        finite = [abs(v) for v in values if math.isfinite(v)]
        return max([self.floor * 10, *finite])

    def noisy(self, values: list[float], noise: float, stream: random.Random) -> list[float]:
        """``values`` as measured: relative noise ``noise`` and an absolute floor, never
        negative, four significant digits."""
        out = []
        for v in values:
            y = v * (1 + noise * stream.gauss(0, 1)) + self.floor * stream.gauss(0, 1)
            y = max(0.0, y) if math.isfinite(y) else 0.0
            out.append(float(f"{y:.4g}"))
        return out


def corner_conditions(system: System, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` experimental conditions spread over the box: its corners first (in an order
    that alternates extremes), then points drawn inside. The reference agent's design.

    >>> from referee.domains.lab.kinetics import KINETICS
    >>> corner_conditions(KINETICS, 2, random.Random(0))
    [{'A0': 0.2, 'T': 290.0}, {'A0': 2.0, 'T': 320.0}]
    """
    axes: list[list[Any]] = [
        list(c.choices) if c.choices else [c.lo, c.hi] for c in system.conditions
    ]
    corners: list[list[Any]] = [[]]
    for axis in axes:
        corners = [[*head, v] for head in corners for v in axis]
    # Alternate: the first corner, then the opposite one, then the rest.
    ordered = []
    while corners:
        ordered.append(corners.pop(0))
        if corners:
            ordered.append(corners.pop())
    out = [dict(zip([c.name for c in system.conditions], p, strict=True)) for p in ordered]
    while len(out) < count:
        out.append(
            {
                c.name: rng.choice(c.choices) if c.choices else rng.uniform(c.lo, c.hi)
                for c in system.conditions
            }
        )
    return out[:count]
