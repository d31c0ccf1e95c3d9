"""The ``Tracker``: one call per training step turns trajectories into metrics and alerts.

``log(trajectories, step)`` computes the step's :class:`~referee.track.metrics.StepMetrics`,
runs the detectors, hands the metrics to the sinks (a Prometheus endpoint; the trainer's own
loggers read them through :mod:`referee.track.loggers`), and, with a store, writes the
trajectories, the metrics and the alerts, and puts every trajectory an alert names in the audit
queue (once). The store is anything with the four methods of :class:`StoreLike`
(:class:`referee.track.store.TrackStore` has them); a store that can also ``add_tasks`` records
the tasks the tracker is given, so that exports and the dashboard find them.

>>> tracker = Tracker(tasks=pool)                                        # doctest: +SKIP
>>> for step in range(steps):                                            # doctest: +SKIP
...     alerts = tracker.log(rollouts_of(step), step, heldout_pass_rate=evaluate(step))
...     for a in alerts:
...         print(a.severity, a.detector, a.message)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from referee.rollout.trajectory import Trajectory
from referee.tasks.model import Task
from referee.track.canary import is_canary
from referee.track.detectors import Alert, Context, Detector, default_detectors
from referee.track.metrics import StepMetrics, step_metrics

__all__ = ["MetricsSink", "StoreLike", "Tracker"]

log = logging.getLogger(__name__)


class StoreLike(Protocol):
    """What the tracker needs of a store."""

    def log_trajectories(self, ts: Iterable[Trajectory]) -> Any: ...

    def log_metrics(
        self, run_id: str, step: int, values: Mapping[str, float], split: str | None = None
    ) -> Any: ...

    def log_alert(
        self,
        run_id: str,
        detector: str,
        step: int | None,
        severity: str,
        message: str,
        evidence: Mapping[str, Any],
        trajectory_ids: Sequence[str],
    ) -> str: ...

    def enqueue_audit(self, run_id: str | None, trajectory_id: str, reason: str) -> str: ...


@runtime_checkable
class _TaskRecorder(Protocol):
    """A store that records tasks (:class:`referee.track.store.TrackStore` does)."""

    def add_tasks(self, tasks: Iterable[Task]) -> Any: ...


@runtime_checkable
class MetricsSink(Protocol):
    """Takes each step's flat metrics (``MetricsServer`` is one). A sink that also has
    ``alert(detector, severity, run_id)`` is told of every alert."""

    def update(self, metrics: Mapping[str, float], run_id: str) -> None: ...


class Tracker:
    """Metrics, detectors, sinks and the store, per step; see the module docstring.

    ``tasks`` (or :meth:`add_tasks`) let the metrics tell visible tests from hidden ones and
    the detectors know difficulties and canaries; without them those parts stay silent.
    ``run_id`` defaults to the first trajectory's. Call :meth:`log` once per step, with all of
    the step's trajectories: the detectors count steps.
    """

    def __init__(
        self,
        store: StoreLike | None = None,
        detectors: Sequence[Detector] | None = None,
        sinks: Sequence[MetricsSink] = (),
        *,
        tasks: Iterable[Task] | Mapping[str, Task] | None = None,
        run_id: str | None = None,
        store_trajectories: bool = True,
    ) -> None:
        self.store = store
        self.detectors = list(default_detectors() if detectors is None else detectors)
        self.sinks = list(sinks)
        self.run_id = run_id
        self.store_trajectories = store_trajectories
        self.tasks: dict[str, Task] = {}
        self.canaries: set[str] = set()
        self.detector_errors: list[tuple[int, str, str]] = []
        self._alerts: list[Alert] = []
        self._latest: StepMetrics | None = None
        self._audited: set[str] = set()
        if tasks is not None:
            self.add_tasks(tasks.values() if isinstance(tasks, Mapping) else tasks)

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        """Make tasks known (by id); canaries among them are recognised by their mark. A store
        that records tasks records them too (RL exports are built from the store's tasks)."""
        tasks = list(tasks)
        for t in tasks:
            self.tasks[t.id] = t
            if is_canary(t):
                self.canaries.add(t.id)
        if tasks and isinstance(self.store, _TaskRecorder):
            self.store.add_tasks(tasks)

    def log(
        self,
        trajectories: Sequence[Trajectory],
        step: int,
        heldout_pass_rate: float | None = None,
        *,
        heldout_n: int | None = None,
    ) -> list[Alert]:
        """Record one step; returns the alerts it raised. ``heldout_n``: how many held-out
        verdicts ``heldout_pass_rate`` is over (sharpens the divergence detector's test)."""
        ts = list(trajectories)
        if self.run_id is None:
            self.run_id = next((t.run_id for t in ts if t.run_id), None)
        run_id = self.run_id or "run"
        canaries = frozenset(self.canaries)
        metrics = step_metrics(
            ts,
            step=step,
            tasks=self.tasks,
            heldout_pass_rate=heldout_pass_rate,
            heldout_n=heldout_n,
            canaries=canaries,
        )
        context = Context(tasks=self.tasks, canaries=canaries, run_id=run_id)
        alerts: list[Alert] = []
        for d in self.detectors:
            try:
                alerts += d.observe(step, ts, metrics, context)
            except Exception as e:
                # A detector's bug must not stop a training run; it is kept and logged.
                self.detector_errors.append((step, d.name, f"{type(e).__name__}: {e}"))
                log.exception("detector %s failed at step %d", d.name, step)
        self._latest = metrics
        self._alerts += alerts
        values = metrics.as_dict()
        for sink in self.sinks:
            sink.update(values, run_id)
            notify = getattr(sink, "alert", None)
            if callable(notify):
                for a in alerts:
                    notify(a.detector, a.severity, run_id)
        if self.store is not None:
            self._write(ts, step, values, alerts, run_id)
        return alerts

    def _write(
        self,
        ts: list[Trajectory],
        step: int,
        values: dict[str, float],
        alerts: list[Alert],
        run_id: str,
    ) -> None:
        assert self.store is not None
        if self.store_trajectories and ts:
            self.store.log_trajectories(ts)
        self.store.log_metrics(run_id, step, values)
        for a in alerts:
            self.store.log_alert(
                run_id, a.detector, a.step, a.severity, a.message, a.evidence, a.trajectory_ids
            )
            for tid in a.trajectory_ids:
                if tid not in self._audited:
                    self._audited.add(tid)
                    self.store.enqueue_audit(run_id, tid, f"{a.detector}: {a.message}"[:500])

    def anomalies(self) -> list[Alert]:
        """Every alert so far, in order."""
        return list(self._alerts)

    def latest_metrics(self) -> StepMetrics | None:
        """The metrics of the last step logged (None before the first)."""
        return self._latest
