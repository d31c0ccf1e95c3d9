"""The track store's aggregate reads: what the dashboard draws and the audit queue selects.

The store's other methods return whole trajectories; a dashboard of a run with thousands of them
needs counts and means per step, split, task and difficulty instead, which SQLite computes in
milliseconds; the audit queue needs trajectory ids by flag and quarantine. These queries are
methods of :class:`~referee.track.store.TrackStore` (through :class:`StoreQueries`, its base),
so the store alone writes SQL against its tables, and they return typed rows.

Rates follow :mod:`referee.track.metrics`: reward and pass rate are over *scored* trajectories
(``reward IS NOT NULL``: a verdict was reached and it was no infrastructure error).

>>> summaries = TrackStore("runs/r1").run_summaries()                   # doctest: +SKIP
>>> summaries[0].trajectories, summaries[0].latest_pass_rate            # doctest: +SKIP
(320, 0.625)
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.rollout.cost import Cost
from referee.track.database import Database
from referee.track.rows import MetricRow, RunRow, TaskCostRow

__all__ = [
    "DIFFICULTY_BINS",
    "HELDOUT_DIFFICULTY_SPLIT",
    "DifficultyBucket",
    "FlaggedTrajectory",
    "Heatmap",
    "Points",
    "RunSummary",
    "StoreQueries",
    "TrajectoryFilters",
    "TrajectoryRow",
    "TrajectorySubject",
    "difficulty_bin",
    "difficulty_label",
    "heldout_by_difficulty",
]

Points = list[tuple[int, float]]
#: Metric names (as :class:`referee.track.metrics.StepMetrics` logs them) that stand in for a
#: curve when the store has no trajectories of that split to compute it from.
_METRIC_FALLBACK = {
    ("train", "reward"): ("reward_mean",),
    ("train", "pass"): ("pass_rate",),
    ("heldout", "reward"): ("heldout_reward_mean",),
    # referee train logs each held-out evaluation under split "heldout"
    ("heldout", "pass"): ("heldout_pass_rate [heldout]", "heldout_pass_rate", "heldout/pass@1"),
}


@dataclass(frozen=True)
class RunSummary:
    """One line of the runs list."""

    run_id: str
    name: str | None
    status: str
    started_at: float | None
    ended_at: float | None
    steps: int
    trajectories: int
    last_step: int | None
    latest_reward: float | None
    latest_pass_rate: float | None
    latest_heldout_pass_rate: float | None
    alerts: int
    pending_audit: int
    #: The train pass rate by step, for a sparkline.
    trend: Points = field(default_factory=list)


#: The split of the metrics a held-out evaluation logs per difficulty bin
#: (``heldout_pass_rate <label>`` and ``heldout_tasks <label>``: :func:`heldout_by_difficulty`):
#: the held-out bars of :meth:`StoreQueries.pass_by_difficulty` where no held-out trajectory
#: is kept.
HELDOUT_DIFFICULTY_SPLIT = "heldout-difficulty"
DIFFICULTY_BINS = 5


def difficulty_bin(estimate: float | None, bins: int = DIFFICULTY_BINS) -> int:
    """The bin of a difficulty estimate in ``bins`` equal bins of 0..1 (-1: no estimate)."""
    return -1 if estimate is None else min(int(estimate * bins), bins - 1)


def difficulty_label(b: int, bins: int = DIFFICULTY_BINS) -> str:
    """``0.2\u20130.4`` (an en dash) for bin 1 of 5; ``unknown`` for -1."""
    return "unknown" if b < 0 else f"{b / bins:.1f}\u2013{(b + 1) / bins:.1f}"


def heldout_by_difficulty(
    passed: dict[str, bool], difficulty: dict[str, float | None]
) -> dict[str, float]:
    """The metrics of one held-out evaluation by difficulty bin: for each bin of the tasks'
    estimates, ``heldout_pass_rate <label>`` and ``heldout_tasks <label>`` (log them under
    :data:`HELDOUT_DIFFICULTY_SPLIT`)."""
    cells: dict[int, list[bool]] = defaultdict(list)
    for task_id, ok in passed.items():
        cells[difficulty_bin(difficulty.get(task_id))].append(ok)
    out: dict[str, float] = {}
    for b, oks in cells.items():
        out[f"heldout_pass_rate {difficulty_label(b)}"] = sum(oks) / len(oks)
        out[f"heldout_tasks {difficulty_label(b)}"] = len(oks)
    return out


@dataclass(frozen=True)
class DifficultyBucket:
    """Pass rate of one bin of difficulty estimates, per split."""

    label: str
    train: tuple[float, int] | None  # (pass rate, scored trajectories)
    heldout: tuple[float, int] | None


@dataclass(frozen=True)
class Heatmap:
    """Pass counts of tasks (rows) over buckets of steps (columns)."""

    tasks: list[str]
    buckets: list[str]  # "a-b": the steps of each column
    cells: list[list[tuple[int, int] | None]]  # (passed, scored) per task and bucket


@dataclass(frozen=True)
class TrajectoryRow:
    """The columns of a trajectory list (no turns: those are in the viewer)."""

    id: str
    task_id: str
    split: str | None
    step: int | None
    reward: float | None
    passed: bool
    n_turns: int
    tool_calls: int
    completion_tokens: int
    error_kind: str | None
    flags: int
    duration_s: float | None


@dataclass(frozen=True)
class TrajectoryFilters:
    """What a trajectory list is narrowed to (None: any)."""

    step: int | None = None
    passed: bool | None = None
    task_id: str | None = None
    split: str | None = None

    def where(self, run_id: str) -> tuple[str, list[Any]]:
        """The ``WHERE`` clause (over ``trajectories t``) and its parameters."""
        sql, params = "WHERE t.run_id = ?", list[Any]([run_id])
        for column, value in (("step", self.step), ("task_id", self.task_id),
                              ("split", self.split)):  # fmt: skip
            if value is not None:
                sql, params = sql + f" AND t.{column} = ?", [*params, value]
        if self.passed is not None:
            sql, params = sql + " AND t.passed = ?", [*params, int(self.passed)]
        return sql, params


@dataclass(frozen=True)
class TrajectorySubject:
    """What a label on a trajectory is about: its task, its verifier and its run."""

    trajectory_id: str
    task_id: str
    verifier: str | None
    run_id: str | None


@dataclass(frozen=True)
class FlaggedTrajectory:
    """A trajectory whose verdict carries static flags, with the flags' kinds (sorted)."""

    trajectory_id: str
    kinds: tuple[str, ...]


class StoreQueries(Database):
    """The aggregate reads of the dashboard and the audit queue; see the module docstring.

    A base of :class:`~referee.track.store.TrackStore`, which provides ``runs`` and ``metrics``.
    """

    def runs(self) -> list[RunRow]:  # pragma: no cover - TrackStore defines it
        raise NotImplementedError

    def metrics(self, run_id: str) -> list[MetricRow]:  # pragma: no cover - TrackStore's
        raise NotImplementedError

    # --- runs --------------------------------------------------------------------------------

    def run_summaries(self) -> list[RunSummary]:
        """Every run of the store with its counts and latest numbers, in the order started."""
        counts = {
            r[0]: r[1:]
            for r in self._read(
                "SELECT run_id, COUNT(*), COUNT(DISTINCT step), MAX(step) FROM trajectories "
                "GROUP BY run_id"
            )
        }
        alerts = dict(self._read("SELECT run_id, COUNT(*) FROM alerts GROUP BY run_id"))
        pending = dict(
            self._read(
                "SELECT run_id, COUNT(*) FROM audit_items WHERE status = 'pending' GROUP BY run_id"
            )
        )
        out = []
        for run in self.runs():
            n, steps, last = counts.get(run.run_id, (0, 0, None))
            c = self.curves(run.run_id)
            out.append(
                RunSummary(
                    run_id=run.run_id,
                    name=run.name,
                    status=run.status,
                    started_at=run.started_at,
                    ended_at=run.ended_at,
                    steps=steps,
                    trajectories=n,
                    last_step=last,
                    latest_reward=_last(c["train reward"]),
                    latest_pass_rate=_last(c["train pass rate"]),
                    latest_heldout_pass_rate=_last(c["held-out pass rate"]),
                    alerts=int(alerts.get(run.run_id, 0)),
                    pending_audit=int(pending.get(run.run_id, 0)),
                    trend=c["train pass rate"],
                )
            )
        return out

    # --- curves ------------------------------------------------------------------------------

    def curves(self, run_id: str) -> dict[str, Points]:
        """Per-step means: ``train reward``, ``held-out reward``, ``train pass rate``,
        ``held-out pass rate``. From the trajectories; from the logged metrics where a split
        has none."""
        by_split: dict[str, dict[str, Points]] = defaultdict(lambda: {"reward": [], "pass": []})
        for split, step, reward, passed in self._read(
            "SELECT split, step, AVG(reward), AVG(passed) FROM trajectories "
            "WHERE run_id = ? AND step IS NOT NULL AND reward IS NOT NULL "
            "GROUP BY split, step ORDER BY step",
            (run_id,),
        ):
            key = "heldout" if split == "heldout" else "train"
            by_split[key]["reward"].append((int(step), float(reward)))
            by_split[key]["pass"].append((int(step), float(passed)))
        metrics: dict[str, Points] | None = None
        out: dict[str, Points] = {}
        for split, label in (("train", "train"), ("heldout", "held-out")):
            for kind, name in (("reward", "reward"), ("pass", "pass rate")):
                points = by_split[split][kind]
                if not points:
                    metrics = metrics if metrics is not None else self.metric_series(run_id)
                    for metric in _METRIC_FALLBACK[(split, kind)]:
                        if points := metrics.get(metric, []):
                            break
                out[f"{label} {name}"] = points
        return out

    def metric_series(self, run_id: str) -> dict[str, Points]:
        """Every logged metric of a run by name (``name [split]`` where a split was given)."""
        out: dict[str, Points] = defaultdict(list)
        for row in self.metrics(run_id):
            if math.isfinite(row.value):
                key = row.name if row.split is None else f"{row.name} [{row.split}]"
                out[key].append((row.step, row.value))
        return dict(out)

    # --- difficulty ----------------------------------------------------------------------------

    def pass_by_difficulty(self, run_id: str, bins: int = 5) -> list[DifficultyBucket]:
        """Pass rate by the tasks' difficulty estimate in ``bins`` equal bins (and ``unknown``)."""
        cells: dict[tuple[int, str], tuple[float, int]] = {}
        for b, split, rate, n in self._read(
            "SELECT CASE WHEN k.difficulty IS NULL THEN -1 "
            "ELSE MIN(CAST(k.difficulty * ? AS INTEGER), ? - 1) END AS b, "
            "CASE WHEN t.split = 'heldout' THEN 'heldout' ELSE 'train' END, "
            "AVG(t.passed), COUNT(*) FROM trajectories t "
            "LEFT JOIN tasks k ON k.task_id = t.task_id "
            "WHERE t.run_id = ? AND t.reward IS NOT NULL GROUP BY b, 2",
            (bins, bins, run_id),
        ):
            cells[(int(b), split)] = (float(rate), int(n))
        if bins == DIFFICULTY_BINS and not any(split == "heldout" for _, split in cells):
            cells.update(self._heldout_by_difficulty(run_id))
        used = sorted({b for b, _ in cells})
        out = []
        for b in used:
            out.append(
                DifficultyBucket(
                    difficulty_label(b, bins), cells.get((b, "train")), cells.get((b, "heldout"))
                )
            )
        return out

    def _heldout_by_difficulty(self, run_id: str) -> dict[tuple[int, str], tuple[float, int]]:
        """The latest held-out evaluation's pass rate per difficulty bin, from the metrics a
        training run logs (it keeps no held-out trajectories)."""
        rows = [r for r in self.metrics(run_id) if r.split == HELDOUT_DIFFICULTY_SPLIT]
        if not rows:
            return {}
        last = max(r.step for r in rows)
        values = {r.name: r.value for r in rows if r.step == last}
        out: dict[tuple[int, str], tuple[float, int]] = {}
        for b in range(-1, DIFFICULTY_BINS):
            label = difficulty_label(b)
            rate, n = values.get(f"heldout_pass_rate {label}"), values.get(f"heldout_tasks {label}")
            if rate is not None and n:
                out[(b, "heldout")] = (rate, int(n))
        return out

    # --- the task heatmap ----------------------------------------------------------------------

    def task_heatmap(self, run_id: str, max_tasks: int = 30, max_buckets: int = 16) -> Heatmap:
        """Pass rate of the most-sampled training tasks (rows) over step buckets (columns).

        Rows are ordered hardest first (lowest overall pass rate), which is where to look for
        broken tasks and for hacking pressure.
        """
        span = self._read(
            "SELECT MIN(step), MAX(step) FROM trajectories WHERE run_id = ? "
            "AND step IS NOT NULL AND split != 'heldout'",
            (run_id,),
        )
        if not span or span[0][0] is None:
            return Heatmap([], [], [])
        lo, hi = int(span[0][0]), int(span[0][1])
        width = max(1, math.ceil((hi - lo + 1) / max_buckets))
        n_buckets = (hi - lo) // width + 1
        top = self._read(
            "SELECT task_id, AVG(passed) FROM trajectories WHERE run_id = ? "
            "AND step IS NOT NULL AND split != 'heldout' AND reward IS NOT NULL "
            "GROUP BY task_id ORDER BY COUNT(*) DESC, task_id LIMIT ?",
            (run_id, max_tasks),
        )
        tasks = [t for t, _ in sorted(top, key=lambda r: (r[1], r[0]))]
        index = {t: i for i, t in enumerate(tasks)}
        cells: list[list[tuple[int, int] | None]] = [[None] * n_buckets for _ in tasks]
        if tasks:
            marks = ", ".join("?" * len(tasks))
            for task_id, bucket, passed, n in self._read(
                f"SELECT task_id, (step - ?) / ?, SUM(passed), COUNT(*) FROM trajectories "
                f"WHERE run_id = ? AND step IS NOT NULL AND split != 'heldout' "
                f"AND reward IS NOT NULL AND task_id IN ({marks}) GROUP BY 1, 2",
                (lo, width, run_id, *tasks),
            ):
                cells[index[task_id]][int(bucket)] = (int(passed), int(n))
        buckets = [
            f"{lo + b * width}-{min(hi, lo + (b + 1) * width - 1)}" if width > 1 else str(lo + b)
            for b in range(n_buckets)
        ]
        return Heatmap(tasks, buckets, cells)

    # --- trajectory lists ----------------------------------------------------------------------

    def trajectory_rows(
        self,
        run_id: str,
        filters: TrajectoryFilters | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TrajectoryRow]:
        """A page of a run's trajectories, latest step first."""
        where, params = (filters or TrajectoryFilters()).where(run_id)
        return self._trajectory_rows(
            f"{where} ORDER BY t.step DESC, t.rowid LIMIT ? OFFSET ?", [*params, limit, offset]
        )

    def rows_by_id(self, ids: Sequence[str]) -> list[TrajectoryRow]:
        """The rows of the given trajectories (those the store has), in no particular order."""
        out: list[TrajectoryRow] = []
        chunk = 500  # SQLite's limit on bound parameters is lower on old builds
        for i in range(0, len(ids), chunk):
            part = list(ids[i : i + chunk])
            marks = ", ".join("?" * len(part))
            out += self._trajectory_rows(f"WHERE t.id IN ({marks})", part)
        return out

    def count_trajectory_rows(self, run_id: str, filters: TrajectoryFilters | None = None) -> int:
        """How many rows :meth:`trajectory_rows` pages through."""
        where, params = (filters or TrajectoryFilters()).where(run_id)
        return int(self._read(f"SELECT COUNT(*) FROM trajectories t {where}", params)[0][0])

    # --- costs ------------------------------------------------------------------------------

    def cost_by_task(self, run_id: str) -> list[TaskCostRow]:
        """What the run's trajectories cost, summed per task (most CPU first); the task's kind
        where the store has the task (tasks of the first schema have none in their record)."""
        rows = self._read(
            "SELECT t.task_id, json_extract(k.json, '$.kind'), COUNT(*), SUM(t.passed), "
            "SUM(t.sandbox_cpu_s), SUM(t.sandbox_wall_s), SUM(t.sandbox_runs), "
            "MAX(t.peak_memory_mb), SUM(t.wall_s), SUM(t.prompt_tokens), "
            "SUM(coalesce(t.completion_tokens, 0)), SUM(t.bytes_stored) FROM trajectories t "
            "LEFT JOIN tasks k ON k.task_id = t.task_id WHERE t.run_id = ? "
            "GROUP BY t.task_id ORDER BY SUM(t.sandbox_cpu_s) DESC, t.task_id",
            (run_id,),
        )
        return [
            TaskCostRow(
                task_id=r[0], kind=r[1], rollouts=r[2], passed=int(r[3] or 0),
                cost=Cost(
                    sandbox_cpu_s=round(r[4] or 0.0, 6), sandbox_wall_s=round(r[5] or 0.0, 6),
                    sandbox_runs=r[6] or 0, peak_memory_mb=r[7] or 0.0,
                    wall_s=round(r[8] or 0.0, 6), prompt_tokens=r[9] or 0,
                    completion_tokens=r[10] or 0, bytes_stored=r[11] or 0,
                ),
            )
            for r in rows
        ]  # fmt: skip

    def _trajectory_rows(self, tail: str, params: Sequence[Any]) -> list[TrajectoryRow]:
        rows = self._read(
            "SELECT t.id, t.task_id, t.split, t.step, t.reward, t.passed, t.n_turns, "
            "t.tool_calls, t.completion_tokens, t.error_kind, v.flags_json, t.started_at, "
            f"t.finished_at FROM trajectories t LEFT JOIN verdicts v ON v.trajectory_id = t.id "
            f"{tail}",
            params,
        )
        return [
            TrajectoryRow(
                id=r[0], task_id=r[1], split=r[2], step=r[3], reward=r[4], passed=bool(r[5]),
                n_turns=r[6] or 0, tool_calls=r[7] or 0, completion_tokens=r[8] or 0,
                error_kind=r[9], flags=len(json.loads(r[10] or "[]")),
                duration_s=(r[12] - r[11]) if r[11] and r[12] else None,
            )
            for r in rows
        ]  # fmt: skip

    # --- for the audit queue -------------------------------------------------------------------

    def trajectory_ids(self, run_id: str, *, unquarantined: bool = False) -> list[str]:
        """A run's trajectory ids in the order logged; with ``unquarantined``, only those whose
        task and verifier are not quarantined (sampling more of a task already judged broken
        teaches nothing)."""
        sql = (
            "SELECT t.id FROM trajectories t LEFT JOIN verdicts v ON v.trajectory_id = t.id "
            "WHERE t.run_id = ? "
        )
        if unquarantined:
            sql += (
                "AND t.task_id NOT IN (SELECT key FROM quarantine WHERE kind = 'task') "
                "AND coalesce(v.verifier, '') NOT IN "
                "(SELECT key FROM quarantine WHERE kind = 'verifier') "
            )
        return [r[0] for r in self._read(sql + "ORDER BY t.rowid", (run_id,))]

    def statically_flagged(self, run_id: str) -> list[FlaggedTrajectory]:
        """A run's trajectories whose verdict carries a static flag, in the order logged."""
        sql = (
            "SELECT t.id, v.flags_json FROM trajectories t JOIN verdicts v "
            "ON v.trajectory_id = t.id WHERE t.run_id = ? AND v.flags_json NOT IN ('', '[]') "
            "ORDER BY t.rowid"
        )
        out = []
        for trajectory_id, flags_json in self._read(sql, (run_id,)):
            flags = json.loads(flags_json or "[]")
            kinds = sorted({str(f.get("kind", "flag")) for f in flags if isinstance(f, dict)})
            out.append(FlaggedTrajectory(trajectory_id, tuple(kinds)))
        return out

    def trajectory_subject(self, trajectory_id: str) -> TrajectorySubject | None:
        """The task, verifier and run of a trajectory, or None if the store has no such one."""
        rows = self._read(
            "SELECT t.task_id, v.verifier, t.run_id FROM trajectories t LEFT JOIN verdicts v "
            "ON v.trajectory_id = t.id WHERE t.id = ?",
            (trajectory_id,),
        )
        if not rows:
            return None
        task_id, verifier, run_id = rows[0]
        return TrajectorySubject(trajectory_id, str(task_id), verifier or None, run_id)

    def ids_starting_with(self, prefix: str, limit: int = 10) -> list[str]:
        """The trajectory and audit-item ids that start with ``prefix`` (an exact id included),
        sorted, at most ``limit``: how an id given in part is completed."""
        if not prefix:
            return []
        n = len(prefix)
        sql = (
            "SELECT id FROM trajectories WHERE substr(id, 1, ?) = ? UNION "
            "SELECT id FROM audit_items WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT ?"
        )
        return [r[0] for r in self._read(sql, (n, prefix, n, prefix, limit))]

    def tasks_judged_by(self, verifiers: Sequence[str]) -> set[str]:
        """The ids of the tasks the store saw any of these verifiers judge."""
        if not verifiers:
            return set()
        marks = ", ".join("?" * len(verifiers))
        sql = (
            "SELECT DISTINCT t.task_id FROM trajectories t JOIN verdicts v "
            f"ON v.trajectory_id = t.id WHERE v.verifier IN ({marks})"
        )
        return {r[0] for r in self._read(sql, list(verifiers))}


def _last(points: Points) -> float | None:
    return points[-1][1] if points else None
