"""A dataframe task's design, as a family draws it: :class:`Plan` (no pandas, no sandbox).

:mod:`referee.domains.dataframe.families` turns a plan into a
:class:`~referee.domains.dataframe.build.Draft` by drawing its visible and hidden tables.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.domains.dataframe import datagen as G

__all__ = ["InputMaker", "Plan"]

InputMaker = Callable[[random.Random, G.Shape], dict[str, str]]


@dataclass(frozen=True)
class Plan:
    """One task's design: what to ask, the reference, the tables, the rules and, where the
    family declares one, the output's data contract
    (:mod:`referee.domains.dataframe.datacontract`)."""

    variant: str
    instruction: str
    reference: str
    schema: dict[str, dict[str, str]]
    make_inputs: InputMaker
    rules: list[dict[str, Any]] = field(default_factory=list)
    ordered: bool = False
    steps: int = 1
    contract: dict[str, Any] | None = None
