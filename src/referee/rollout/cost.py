"""What a rollout costs, what a run has spent, and the budget that stops it.

* :class:`Cost`: one rollout's (or many rollouts') sandbox CPU and wall seconds, the highest
  peak memory of one sandbox run, the rollout's wall time, prompt and completion tokens, and
  the bytes its record took in the store. ``Trajectory.cost`` holds it; costs add up.
* :class:`RunBudget`: limits on a run's sandbox CPU-hours, tokens (prompt + completion) and
  wall time; each ``None`` is unlimited.
* :class:`CostLedger`: a run's running total and its budget. Whoever samples asks
  :meth:`CostLedger.exhausted` before starting more work (the rollout runner before each
  rollout, ``referee train`` after each GRPO step) and stops cleanly on a
  :class:`BudgetStop`, which says which budget ran out and by how much; the run records it.

>>> ledger = CostLedger(RunBudget(tokens=100))
>>> ledger.add(Cost(prompt_tokens=60, completion_tokens=50))
>>> stop = ledger.exhausted()
>>> stop.budget, stop.limit, stop.spent
('tokens', 100.0, 110.0)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.errors import ConfigError, RefereeError
from referee.sandbox.metering import SandboxUsage

if TYPE_CHECKING:  # the trajectory module imports this one
    from referee.rollout.trajectory import Trajectory

__all__ = ["BudgetExhausted", "BudgetName", "BudgetStop", "Cost", "CostLedger", "RunBudget"]

BudgetName = Literal["cpu_hours", "tokens", "wall_s"]


class Cost(BaseModel):
    """What one rollout cost (or a sum of rollouts: see ``+``).

    ``sandbox_*``: every sandbox run of the rollout (tool calls and verification), from
    :mod:`referee.sandbox.metering`; ``peak_memory_mb`` is the highest of one run. ``wall_s``:
    the rollout from start to verdict. ``bytes_stored``: the bytes the store wrote for a
    rollout's record (its rows' text and its artifacts); the store measures it as it writes
    and keeps it in a column of its own, so it is 0 on a trajectory (which reads back as it
    was logged) and counted in the sums the store makes (``cost_by_task``, ``referee cost``).
    """

    model_config = ConfigDict(frozen=True)

    sandbox_cpu_s: float = 0.0
    sandbox_wall_s: float = 0.0
    sandbox_runs: int = 0
    peak_memory_mb: float = 0.0
    wall_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    bytes_stored: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(
        cls,
        sandbox: SandboxUsage | None = None,
        *,
        wall_s: float = 0.0,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> Cost:
        """A rollout's cost from its metered sandbox usage, wall time and tokens."""
        s = sandbox or SandboxUsage()
        return cls(
            sandbox_cpu_s=s.cpu_s,
            sandbox_wall_s=s.wall_s,
            sandbox_runs=s.runs,
            peak_memory_mb=s.peak_memory_mb,
            wall_s=round(wall_s, 6),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            sandbox_cpu_s=round(self.sandbox_cpu_s + other.sandbox_cpu_s, 6),
            sandbox_wall_s=round(self.sandbox_wall_s + other.sandbox_wall_s, 6),
            sandbox_runs=self.sandbox_runs + other.sandbox_runs,
            peak_memory_mb=max(self.peak_memory_mb, other.peak_memory_mb),
            wall_s=round(self.wall_s + other.wall_s, 6),
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            bytes_stored=self.bytes_stored + other.bytes_stored,
        )

    @classmethod
    def total(cls, costs: Iterable[Cost]) -> Cost:
        out = cls()
        for c in costs:
            out = out + c
        return out


class RunBudget(BaseModel):
    """Limits on what a run may spend; ``None`` is no limit.

    ``cpu_hours``: sandbox CPU time (``Cost.sandbox_cpu_s``), in hours; ``tokens``: prompt plus
    completion tokens of every rollout; ``wall_s``: seconds since the run's ledger started.
    """

    model_config = ConfigDict(frozen=True)

    cpu_hours: float | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    wall_s: float | None = Field(default=None, gt=0)

    @property
    def unlimited(self) -> bool:
        return self.cpu_hours is None and self.tokens is None and self.wall_s is None

    @classmethod
    def of(
        cls, *, cpu_hours: float | None = None, tokens: int | None = None,
        wall_s: float | None = None,
    ) -> RunBudget:  # fmt: skip
        """A budget from user input (CLI options): a non-positive limit is a ConfigError."""
        for name, value in (("cpu-hours", cpu_hours), ("tokens", tokens), ("wall", wall_s)):
            if value is not None and value <= 0:
                raise ConfigError(f"budget {name} must be positive, got {value}; omit it for none")
        return cls(cpu_hours=cpu_hours, tokens=tokens, wall_s=wall_s)


class BudgetStop(BaseModel):
    """Why sampling stopped: ``budget`` ran out, ``spent`` of ``limit`` (in the budget's unit:
    CPU-hours, tokens, seconds)."""

    model_config = ConfigDict(frozen=True)

    reason: Literal["budget"] = "budget"
    budget: BudgetName
    limit: float
    spent: float
    at: float = Field(default_factory=time.time)

    def describe(self) -> str:
        unit = {"cpu_hours": "sandbox CPU-hours", "tokens": "tokens", "wall_s": "s of wall time"}
        return f"budget spent: {self.spent:g} of {self.limit:g} {unit[self.budget]}"


class BudgetExhausted(RefereeError):
    """Sampling stopped because the run's budget is spent; ``stop`` says which and how much,
    ``completed`` holds what finished before (whole trajectories, all stored)."""

    def __init__(self, stop: BudgetStop, completed: list[Trajectory] | None = None) -> None:
        super().__init__(stop.describe())
        self.stop = stop
        self.completed = list(completed or [])


class CostLedger:
    """A run's spending so far against its budget; thread-safe.

    ``started``: the ``time.monotonic()`` the wall budget counts from (default: now)."""

    def __init__(self, budget: RunBudget | None = None, *, started: float | None = None) -> None:
        self.budget = budget or RunBudget()
        self.started = time.monotonic() if started is None else started
        self._lock = threading.Lock()
        self._spent = Cost()
        self._rollouts = 0
        self._stop: BudgetStop | None = None

    def add(self, cost: Cost) -> None:
        with self._lock:
            self._spent = self._spent + cost
            self._rollouts += 1

    @property
    def spent(self) -> Cost:
        with self._lock:
            return self._spent

    @property
    def rollouts(self) -> int:
        return self._rollouts

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def exhausted(self) -> BudgetStop | None:
        """The first budget spent (checked in the order CPU, tokens, wall), or None. Once
        spent, it stays spent: the same stop is returned from then on."""
        with self._lock:
            if self._stop is not None:
                return self._stop
            b, s = self.budget, self._spent
            checks: list[tuple[BudgetName, float | None, float]] = [
                ("cpu_hours", b.cpu_hours, s.sandbox_cpu_s / 3600),
                ("tokens", b.tokens, float(s.tokens)),
                ("wall_s", b.wall_s, self.elapsed_s()),
            ]
            for name, limit, spent in checks:
                if limit is not None and spent >= limit:
                    self._stop = BudgetStop(budget=name, limit=float(limit), spent=round(spent, 6))
                    break
            return self._stop

    def status(self) -> dict[str, Any]:
        """The budget, what was spent of each and the stop, as plain data (for the run's record)."""
        s = self.spent
        stop = self.exhausted()
        return {
            "budget": self.budget.model_dump(),
            "spent": {
                "cpu_hours": round(s.sandbox_cpu_s / 3600, 6),
                "tokens": s.tokens,
                "wall_s": round(self.elapsed_s(), 3),
            },
            "rollouts": self.rollouts,
            "stop": None if stop is None else stop.model_dump(),
        }
