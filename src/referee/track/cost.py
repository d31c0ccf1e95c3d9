"""A run's cost report: totals, per task, per kind, per passed rollout, and its budget.

Built from the run's store (``Trajectory.cost`` of every rollout, summed by the store:
:meth:`~referee.track.queries.StoreQueries.cost_by_task`); ``referee cost --run DIR`` prints it
and the dashboard's run page shows it.

* **per passed rollout**: the run's whole spending divided by the rollouts that passed (what a
  pass cost, failures included); ``None`` when nothing passed.
* **budget**: the limits the run was given (its config's ``budget``, a
  :class:`~referee.rollout.cost.RunBudget`), what was spent of each (sandbox CPU-hours and
  tokens from the store; wall time from the run's start to its end, or to now while it runs),
  and the stop, where a budget stopped the run.

>>> report = cost_report(TrackStore("runs/r1"))                         # doctest: +SKIP
>>> report.total.cost.sandbox_cpu_s, report.per_pass()["sandbox_cpu_s"]  # doctest: +SKIP
(41.2, 0.61)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from referee.errors import NotFoundError
from referee.rollout.cost import Cost
from referee.track.rows import RunRow, TaskCostRow
from referee.track.store import TrackStore

__all__ = ["CostLine", "CostReport", "cost_report"]


@dataclass(frozen=True)
class CostLine:
    """The rollouts of one group (a task, a kind, the run) and what they cost together."""

    key: str
    rollouts: int
    passed: int
    cost: Cost

    def per_pass(self) -> dict[str, float] | None:
        """Sandbox CPU seconds, tokens and wall seconds per passed rollout (None: no pass)."""
        if not self.passed:
            return None
        c, n = self.cost, self.passed
        return {
            "sandbox_cpu_s": round(c.sandbox_cpu_s / n, 6),
            "tokens": round(c.tokens / n, 3),
            "wall_s": round(c.wall_s / n, 6),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "rollouts": self.rollouts,
            "passed": self.passed,
            **self.cost.model_dump(),
            "tokens": self.cost.tokens,
            "per_pass": self.per_pass(),
        }


@dataclass(frozen=True)
class CostReport:
    """A run's costs (see the module docstring)."""

    run: RunRow
    total: CostLine
    by_task: list[CostLine] = field(default_factory=list)
    by_kind: list[CostLine] = field(default_factory=list)
    budget: dict[str, Any] = field(default_factory=dict)

    @property
    def stop(self) -> dict[str, Any] | None:
        return self.run.stop

    def per_pass(self) -> dict[str, float] | None:
        return self.total.per_pass()

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run.run_id,
            "status": self.run.status,
            "stop": self.run.stop,
            "total": self.total.as_dict(),
            "by_kind": [k.as_dict() for k in self.by_kind],
            "by_task": [t.as_dict() for t in self.by_task],
            "budget": self.budget,
        }


def cost_report(store: TrackStore, run_id: str | None = None) -> CostReport:
    """The cost report of ``run_id`` (default: the store's only run, or its latest)."""
    runs = store.runs()
    if not runs:
        raise NotFoundError(f"{store.path} has no runs yet; record one (referee train) first")
    run = store.run(run_id) if run_id is not None else runs[-1]
    rows = store.cost_by_task(run.run_id)
    kinds = _kinds(store, rows)
    by_task = [_line(r.task_id, [r]) for r in rows]
    groups: dict[str, list[TaskCostRow]] = {}
    for r in rows:
        groups.setdefault(kinds[r.task_id], []).append(r)
    by_kind = sorted(
        (_line(k, rs) for k, rs in groups.items()), key=lambda line: -line.cost.sandbox_cpu_s
    )
    total = _line("total", rows)
    return CostReport(
        run=run, total=total, by_task=by_task, by_kind=by_kind, budget=_budget(run, total.cost)
    )


def _line(key: str, rows: list[TaskCostRow]) -> CostLine:
    return CostLine(
        key=key,
        rollouts=sum(r.rollouts for r in rows),
        passed=sum(r.passed for r in rows),
        cost=Cost.total(r.cost for r in rows),
    )


def _kinds(store: TrackStore, rows: list[TaskCostRow]) -> dict[str, str]:
    """Each task's kind; tasks recorded without one in their JSON get it from the Task model
    (which infers it), tasks the store does not have are ``unknown``."""
    out: dict[str, str] = {}
    for r in rows:
        if r.kind is not None:
            out[r.task_id] = r.kind
            continue
        try:
            out[r.task_id] = store.task(r.task_id).kind.value
        except NotFoundError:
            out[r.task_id] = "unknown"
    return out


def _budget(run: RunRow, spent: Cost) -> dict[str, Any]:
    """Each limit of the run's budget with what was spent of it (empty: no budget)."""
    limits = run.config.get("budget") or {}
    if not isinstance(limits, dict):
        return {}
    end = run.ended_at if run.ended_at is not None else time.time()
    wall = max(0.0, end - run.started_at) if run.started_at is not None else 0.0
    spent_of = {
        "cpu_hours": spent.sandbox_cpu_s / 3600,
        "tokens": float(spent.tokens),
        "wall_s": wall,
    }
    out: dict[str, Any] = {}
    for name, limit in limits.items():
        if limit is None or name not in spent_of:
            continue
        used = spent_of[name]
        out[name] = {
            "limit": limit,
            "spent": round(used, 6),
            "share": round(used / limit, 4) if limit else None,
        }
    return out
