"""One problem structure of the numeric families: its statement, reference and parameters.

A :class:`Problem` is one structure of one family (``num-ode/lotka-volterra``): the text that
states it, the reference program (trusted scipy with tight tolerances, or a closed form), how
seeded parameter sets are drawn for a difficulty in [0, 1], the tolerance the answer is held
to and the invariants checked on it (:mod:`.invariants`). The structures themselves are in
:mod:`.problems_dynamic` and :mod:`.problems_static`; :mod:`.problems` lists them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Params", "Problem", "fixed", "rounded"]

Params = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    family: str
    structure: str
    statement: str
    reference: str
    #: ``(rng, difficulty, visible) -> params``; the visible set may be smaller (prompt size).
    make_params: Callable[[np.random.Generator, float, bool], Params]
    #: ``difficulty -> (rtol, atol)``.
    tolerance: Callable[[float], tuple[float, float]]
    invariants: tuple[dict[str, Any], ...] = ()
    time_limit_s: float = 10.0
    features: Callable[[float], dict[str, float]] = field(default=lambda d: {})

    @property
    def unit(self) -> str:
        return f"{self.family}/{self.structure}"


def rounded(x: Any, digits: int = 6) -> Any:
    """Plain floats rounded to ``digits`` significant digits (short prompts, exact inputs)."""
    a = np.asarray(x, dtype=float)
    return np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(a).tolist()


def fixed(rtol: float, atol: float) -> Callable[[float], tuple[float, float]]:
    """A tolerance that does not depend on the difficulty."""
    return lambda d: (rtol, atol)
