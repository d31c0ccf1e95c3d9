"""The problem structures of the numeric families: statement, reference, parameters, tolerance.

A :class:`Problem` is one structure of one family (``num-ode/lotka-volterra``): the text that
states it, the reference program (trusted scipy with tight tolerances, or a closed form), how
seeded parameter sets are drawn for a difficulty in [0, 1], the tolerance the answer is held
to and the invariants checked on it (:mod:`.invariants`).

Tolerance policy: each tolerance sits two or more orders of magnitude above the reference
method's own error and below what a sloppy method gets, so a right answer by another method
(RK45 instead of Radau, a hand-written RK4 with enough steps, LU or QR, Brent or Newton) passes
and scipy's default tolerances (``solve_ivp``'s rtol=1e-3), wrong signs and forgotten terms
do not (outputs merely rounded to single precision often pass, flagged as evidence). Where
conditioning forces a loose tolerance on the answer (ill-conditioned solves), an invariant
(the residual) is sharp instead. ``docs/domains/numeric.md`` has the table.
"""

from __future__ import annotations

from referee.domains.numeric.problem import Problem
from referee.domains.numeric.problems_dynamic import (
    HEAT_PERIODIC,
    LOTKA_VOLTERRA,
    NBODY,
    PENDULUM,
    STIFF_LINEAR,
)
from referee.domains.numeric.problems_static import (
    CONTRACTION_SYSTEM,
    DENSE,
    EXP_DECAY,
    KEPLER,
    LOGISTIC,
    OSCILLATORY,
)

__all__ = ["PROBLEMS", "Problem", "problems_of"]

#: Every problem structure, by family (a family's structures in the order its tasks cycle).
PROBLEMS: tuple[Problem, ...] = (
    LOTKA_VOLTERRA,
    STIFF_LINEAR,
    DENSE,
    KEPLER,
    CONTRACTION_SYSTEM,
    LOGISTIC,
    OSCILLATORY,
    EXP_DECAY,
    HEAT_PERIODIC,
    PENDULUM,
    NBODY,
)


def problems_of(family: str) -> list[Problem]:
    """The structures of ``family`` (``num-ode``...), in a fixed order."""
    return [p for p in PROBLEMS if p.family == family]
