"""The typed rows the track store returns for its tables (runs, metrics, alerts, audit).

Frozen pydantic models: the store's read methods build them, callers never see SQL tuples.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from referee.rollout.cost import Cost

__all__ = [
    "AlertRow", "AuditItemRow", "LabelRow", "MetricRow", "RunRow", "StoreRow", "TaskCostRow",
]  # fmt: skip


class StoreRow(BaseModel):
    """A row of the store: frozen, built by the store's read methods."""

    model_config = ConfigDict(frozen=True)


class RunRow(StoreRow):
    run_id: str
    name: str | None
    config: dict[str, Any]
    status: str  # running | finished | failed | imported | what end_run was given
    started_at: float | None
    ended_at: float | None
    #: Why the run stopped early, where it did: ``{"reason": "budget", "budget": "tokens",
    #: "limit": ..., "spent": ...}`` (a :class:`~referee.rollout.cost.BudgetStop`).
    stop: dict[str, Any] | None = None


class MetricRow(StoreRow):
    run_id: str
    step: int
    name: str
    value: float
    split: str | None
    created_at: float


class AlertRow(StoreRow):
    id: str
    run_id: str
    detector: str
    step: int | None
    severity: str
    message: str
    evidence: dict[str, Any]
    trajectory_ids: list[str]
    created_at: float


class AuditItemRow(StoreRow):
    id: str
    run_id: str | None
    trajectory_id: str
    reason: str
    status: str  # pending until the audit queue moves it on
    enqueued_at: float


class LabelRow(StoreRow):
    id: str
    trajectory_id: str
    task_id: str | None
    verifier: str | None
    label: str
    note: str
    labeller: str
    created_at: float


class TaskCostRow(StoreRow):
    """What a run's rollouts of one task cost, summed (``cost.peak_memory_mb``: the highest)."""

    task_id: str
    #: The task's kind where the store has the task with one, else None.
    kind: str | None
    rollouts: int
    passed: int
    cost: Cost
