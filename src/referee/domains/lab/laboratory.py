"""``Laboratory``: one episode's experiments on a task's hidden system, within its budget.

The simulator is ours and runs on the host; the agent reaches it only through
:meth:`Laboratory.run`, whose arguments are checked against the task's public conditions
(names, ranges, choices) and whose answer is the noisy measurements and nothing else: no
parameter, no law, no noise seed, in results or in errors.

Noise is seeded per experiment *index* within the episode: the ``k``-th experiment of an
episode draws from the task's hidden noise seed and ``k``. Repeating an experiment therefore
gives fresh noise (averaging is possible, and costs budget like any experiment), and the same
episode replayed gets the same numbers (a verdict is reproducible). A call past the budget,
with unknown arguments, or with values outside the ranges is refused and costs nothing.

>>> from referee.domains.lab.families import generate_kinetics
>>> lab = Laboratory(generate_kinetics(1, 1.0, 0)[0])
>>> ok, text = lab.run({"A0": 1.0, "T": 300.0, "times": [5, 10]})
>>> ok, sorted(json.loads(text))
(True, ['budget_left', 'experiment', 'times', 'values'])
>>> lab.run({"A0": 1.0, "T": 300.0, "times": [5], "seed": 0})
(False, 'unknown argument(s) seed (run_experiment takes: A0, T, times)')
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from typing import Any

from referee.domains.lab.families import system_of
from referee.domains.lab.system import MAX_SAMPLES
from referee.tasks.model import Task

__all__ = ["Laboratory", "Observation"]


@dataclass(frozen=True)
class Observation:
    """One experiment the agent ran: its conditions, times and measured values."""

    conditions: dict[str, Any]
    times: list[float]
    values: list[float]


@dataclass
class Laboratory:
    """See the module docstring."""

    task: Task
    observations: list[Observation] = field(default_factory=list)
    refused: int = 0

    @property
    def budget(self) -> int:
        return int(self.task.payload["budget"])

    @property
    def budget_left(self) -> int:
        return self.budget - len(self.observations)

    def argument_names(self) -> list[str]:
        return [c.name for c in system_of(self.task).conditions] + ["times"]

    def _problem(self, arguments: dict[str, Any]) -> str:
        system = system_of(self.task)
        names = self.argument_names()
        unknown = [k for k in arguments if k not in names]
        if unknown:
            return (
                f"unknown argument(s) {', '.join(map(str, unknown))[:80]} "
                f"(run_experiment takes: {', '.join(names)})"
            )
        missing = [k for k in names if k not in arguments]
        if missing:
            return f"missing argument(s) {', '.join(missing)}"
        for c in system.conditions:
            if why := c.check(arguments[c.name]):
                return why
        times = arguments["times"]
        if not isinstance(times, list) or not 1 <= len(times) <= MAX_SAMPLES:
            return f"times must be a list of 1 to {MAX_SAMPLES} numbers"
        for t in times:
            if isinstance(t, bool) or not isinstance(t, int | float):
                return "times must be numbers"
            if not math.isfinite(t) or not 0 <= t <= system.t_max:
                return f"each time must be between 0 and {system.t_max:g} {system.time_unit}"
        return ""

    def run(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        """Run one experiment: ``(True, JSON of its results)``, or ``(False, why not)``."""
        if self.budget_left <= 0:
            self.refused += 1
            return False, (f"the budget of {self.budget} experiments is spent; submit your model")
        if why := self._problem(arguments):
            self.refused += 1
            return False, why
        system = system_of(self.task)
        conditions = {c.name: arguments[c.name] for c in system.conditions}
        times = [float(t) for t in arguments["times"]]
        hidden = self.task.hidden
        true = system.simulate(hidden["law"], hidden["params"], conditions, times)
        index = len(self.observations)
        stream = random.Random(f"{hidden['noise_seed']}:run:{index}")
        values = system.noisy(true, float(self.task.payload["noise"]), stream)
        self.observations.append(Observation(conditions, times, values))
        return True, json.dumps(
            {
                "experiment": index + 1,
                "budget_left": self.budget_left,
                "times": times,
                "values": values,
            }
        )
