"""``TrackStore``: everything a run records, in one SQLite file under the run folder.

``<run_dir>/track.sqlite`` (WAL mode) holds runs, tasks, trajectories with their turns,
verdicts and test outcomes, metrics, alerts, and the audit queue's tables; strings too big for a
row (long observations, stdout) go to content-addressed artifacts through fsspec
(``file://<run_dir>/artifacts/`` by default, see :mod:`referee.track.artifacts`). One store per
run folder; it may hold several runs. Several threads and several processes may write at once.

>>> from referee.rollout.trajectory import Trajectory
>>> with TrackStore(tmp_path) as store:                                  # doctest: +SKIP
...     store.start_run("r1", {"lr": 1e-5})
...     store.log_trajectory(Trajectory(task_id="demo/add-v1", policy="p", env="code",
...                                     run_id="r1", step=0))
...     store.log_metrics("r1", 0, {"reward/mean": 0.5, "heldout/pass@1": 0.25})
...     [t.task_id for t in store.trajectories(run_id="r1", step=0)]
...     [(m.name, m.value) for m in store.metrics("r1")]
...     store.end_run("r1")
['demo/add-v1']
[('heldout/pass@1', 0.25), ('reward/mean', 0.5)]

API: ``start_run / end_run / runs / run``; ``add_tasks / task / tasks``; ``log_trajectory /
log_trajectories / trajectory / trajectories / iter_trajectories / count_trajectories /
steps / import_jsonl``; ``log_metrics / metrics``; ``log_alert / alerts``; ``put_artifact /
get_artifact``; the audit tables: ``enqueue_audit / audit_items / set_audit_status /
add_label / labels / quarantine / quarantined``; the aggregate reads of the dashboard and the
audit queue (:mod:`referee.track.queries`: ``run_summaries / curves / metric_series /
pass_by_difficulty / task_heatmap / trajectory_rows / rows_by_id / count_trajectory_rows /
trajectory_ids / statically_flagged / trajectory_subject / tasks_judged_by / cost_by_task``).
Each trajectory is written in one transaction with its turns, verdict and test outcomes, so a
crash never leaves half of one; logging the same id again replaces it; its ``cost`` goes into
columns of its own, with ``bytes_stored`` measured from what is written. ``trajectory(id)``
fetches its artifacts back transparently. ``log_trajectory`` makes the store the rollout runner's
:class:`~referee.rollout.sink.TrajectorySink`: one trajectory database per run.

The store owns its SQL, in modules of one idea each: :mod:`~referee.track.schema` (tables,
version, migrations), :mod:`~referee.track.database` (connections, transactions, locking),
:mod:`~referee.track.rows` (typed rows), :mod:`~referee.track.queries` (aggregate reads) and
this module (writes and record reads).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from referee.errors import ConfigError, NotFoundError, StoreError
from referee.rollout.sink import read_jsonl
from referee.rollout.trajectory import Trajectory
from referee.tasks.model import Task
from referee.track.artifacts import ArtifactStore, externalize, has_refs, internalize, is_ref
from referee.track.database import where_clause
from referee.track.layout import RunLayout
from referee.track.queries import StoreQueries
from referee.track.rows import AlertRow, AuditItemRow, LabelRow, MetricRow, RunRow
from referee.track.schema import DB_NAME, SCHEMA_VERSION, UPSERT_TRAJECTORY

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "AlertRow",
    "AuditItemRow",
    "LabelRow",
    "MetricRow",
    "RunRow",
    "TrackStore",
]

#: The assistant text kept in ``turns.content``, for listing and search; the whole message is
#: in the trajectory's JSON.
_CONTENT_SUMMARY = 1_000
#: Trajectories per transaction in ``log_trajectories``: big enough to share one fsync, small
#: enough not to hold the write lock long against other writers.
_BATCH = 100


class TrackStore(StoreQueries):
    """The tracking store of one run folder; see the module docstring.

    Args:
        run_dir: the run folder; ``track.sqlite`` and ``artifacts/`` are made in it.
        artifacts: an fsspec URL for large artifacts (default ``file://<run_dir>/artifacts``).
        artifact_threshold: strings longer than this many UTF-8 bytes become artifacts.
        create: False to refuse a folder that has no store yet (readers, exports).
        lock_timeout_s: how long a write waits for other writers before giving up.
    """

    def __init__(
        self,
        run_dir: str | os.PathLike[str],
        *,
        artifacts: str | None = None,
        artifact_threshold: int = 64_000,
        create: bool = True,
        lock_timeout_s: float = 60.0,
    ) -> None:
        self.run_dir = Path(run_dir)
        layout = RunLayout(self.run_dir)
        path = layout.track_db
        if not create and not path.is_file():
            if layout.trajectories_jsonl.is_file():
                name = layout.trajectories_jsonl.name
                raise NotFoundError(
                    f"no track store at {path}, only a {name}: load it with "
                    f"TrackStore(run_dir).import_jsonl(run_dir / {name!r})"
                )
            raise NotFoundError(
                f"no track store at {path}; pass the folder a run recorded into "
                f"(`referee train` makes runs/train-<time>; TrackStore(run_dir) writes "
                f"{path.name} into run_dir)"
            )
        if artifact_threshold < 1:
            raise ConfigError(
                f"artifact_threshold must be at least 1 byte, got {artifact_threshold}"
            )
        self.artifact_threshold = artifact_threshold
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(
                f"cannot create the run folder {self.run_dir}: {e.strerror}; "
                "choose a writable location"
            ) from e
        # Not Path.as_uri(): fsspec does not undo its percent-encoding ("my%20run").
        local = f"file://{layout.artifacts.resolve().as_posix()}"
        self.artifacts = ArtifactStore(artifacts or local)
        super().__init__(path, lock_timeout_s=lock_timeout_s)

    # --- runs ---------------------------------------------------------------------------------

    def start_run(self, run_id: str, config: Mapping[str, Any], name: str | None = None) -> RunRow:
        """Record a run as running; starting a known run again resumes it (new config kept)."""
        config_json = _dumps(dict(config), what=f"the config of run {run_id!r}")
        self._write(
            lambda c: c.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 'running', ?, NULL, NULL) ON CONFLICT(run_id) "
                "DO UPDATE SET name = coalesce(excluded.name, name), config_json = "
                "excluded.config_json, status = 'running', ended_at = NULL, stop_json = NULL",
                (run_id, name, config_json, time.time()),
            )
        )
        return self.run(run_id)

    def end_run(
        self, run_id: str, status: str = "finished", stop: Mapping[str, Any] | None = None
    ) -> None:
        """Mark a run ended (``finished``, ``failed``, ``cancelled``, ``stopped``...); ``stop``
        records why it stopped early (a :class:`~referee.rollout.cost.BudgetStop`'s
        ``model_dump()``: ``{"reason": "budget", "budget": "tokens", "limit": ..., "spent":
        ...}``), read back as ``RunRow.stop``."""
        stop_json = None if stop is None else _dumps(dict(stop), what=f"the stop of {run_id!r}")

        def work(c: sqlite3.Connection) -> int:
            sql = "UPDATE runs SET status = ?, ended_at = ?, stop_json = ? WHERE run_id = ?"
            return c.execute(sql, (status, time.time(), stop_json, run_id)).rowcount

        if not self._write(work):
            raise NotFoundError(f"no run {run_id!r} in {self.path}; start it with start_run first")

    def runs(self) -> list[RunRow]:
        """Every run, in the order started."""
        return [_run_row(r) for r in self._read("SELECT * FROM runs ORDER BY started_at, rowid")]

    def run(self, run_id: str) -> RunRow:
        rows = self._read("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise NotFoundError(f"no run {run_id!r} in {self.path}; known: {self._run_ids()}")
        return _run_row(rows[0])

    def _run_ids(self) -> str:
        ids = [r[0] for r in self._read("SELECT run_id FROM runs ORDER BY rowid")]
        return ", ".join(ids) or "none"

    # --- tasks ----------------------------------------------------------------------------------

    def add_tasks(self, tasks: Iterable[Task]) -> int:
        """Record tasks (replacing those with the same id). Returns how many."""
        rows = [
            (t.id, t.split, t.domain, t.difficulty.estimate, t.provenance.unit, t.model_dump_json())
            for t in tasks
        ]
        self._write(
            lambda c: c.executemany("INSERT OR REPLACE INTO tasks VALUES (?,?,?,?,?,?)", rows)
        )
        return len(rows)

    def task(self, task_id: str) -> Task:
        rows = self._read("SELECT json FROM tasks WHERE task_id = ?", (task_id,))
        if not rows:
            raise NotFoundError(f"no task {task_id!r} in {self.path}; record it with add_tasks")
        return Task.model_validate_json(rows[0][0])

    def tasks(self, split: str | None = None, run_id: str | None = None) -> list[Task]:
        """Recorded tasks in the order added: of one split, or those a run has trajectories of."""
        sql, params = "SELECT json FROM tasks WHERE 1", []
        if split is not None:
            sql, params = sql + " AND split = ?", [split]
        if run_id is not None:
            sql += " AND task_id IN (SELECT task_id FROM trajectories WHERE run_id = ?)"
            params.append(run_id)
        return [Task.model_validate_json(r[0]) for r in self._read(sql + " ORDER BY rowid", params)]

    # --- trajectories -----------------------------------------------------------------------

    def log_trajectory(self, t: Trajectory) -> None:
        """Write one trajectory durably (with its turns, verdict and outcomes, or not at all)."""
        self.log_trajectories([t])

    def log_trajectories(self, ts: Iterable[Trajectory]) -> int:
        """Write trajectories; each is whole or absent after a crash. Returns how many."""
        n = 0
        batch: list[_Prepared] = []
        for t in ts:
            # Artifacts are written before the transaction (outside the write lock), so a
            # committed record never points at a blob that is not there yet.
            batch.append(self._prepare(t))
            if len(batch) == _BATCH:
                n += self._insert(batch)
                batch = []
        return n + (self._insert(batch) if batch else 0)

    def _prepare(self, t: Trajectory) -> _Prepared:
        stored = externalize(t.model_dump(mode="json"), self.artifacts, self.artifact_threshold)
        head = (
            t.id, t.run_id, t.task_id, t.split, t.policy, t.env, t.group_id, t.sample_index,
            t.step, t.reward, int(t.passed), t.error.kind if t.error else None, t.end_reason,
            len(t.turns), t.completion_tokens, t.tool_calls, t.started_at, t.finished_at,
        )  # fmt: skip
        turns = []
        for turn, data in zip(t.turns, stored["turns"], strict=True):
            content = turn.assistant.get("content")
            turns.append((
                t.id, turn.index, turn.assistant.get("role", "assistant"),
                content[:_CONTENT_SUMMARY] if isinstance(content, str) else None,
                json.dumps(data["assistant"].get("tool_calls") or []),
                json.dumps(data["observations"]), turn.completion_tokens, turn.policy_s, turn.env_s,
            ))  # fmt: skip
        verdict, outcomes = None, []
        if (v := t.verdict) is not None:
            stored_v = stored["verdict"]
            verdict = (
                t.id, v.task_id, v.reward, int(v.passed), v.infra_error, v.verifier,
                json.dumps(stored_v["flags"]), json.dumps(v.timings),
            )  # fmt: skip
            outcomes = [
                (t.id, o["name"], o["status"], o["detail"] if isinstance(o["detail"], str) else
                 json.dumps(o["detail"]))
                for o in stored_v["tests"]
            ]  # fmt: skip
        # The bytes this record stores: its rows' text and the artifacts it refers to (not
        # SQLite's pages and indexes). Kept in its column only: the record reads back as it
        # was logged.
        text = _compact(stored)
        n = _text_bytes(head, *turns, verdict or (), *outcomes) + _artifact_bytes(stored)
        n += len(text.encode())
        c = t.cost
        traj = (
            *head, text, c.sandbox_cpu_s, c.sandbox_wall_s, c.sandbox_runs, c.peak_memory_mb,
            c.wall_s, c.prompt_tokens, n,
        )  # fmt: skip
        return _Prepared(traj, turns, verdict, outcomes)

    def _insert(self, batch: list[_Prepared]) -> int:
        def work(c: sqlite3.Connection) -> int:
            for p in batch:
                tid = p.traj[0]
                c.execute(UPSERT_TRAJECTORY, p.traj)
                for table in ("turns", "verdicts", "test_outcomes"):
                    c.execute(f"DELETE FROM {table} WHERE trajectory_id = ?", (tid,))
                c.executemany("INSERT INTO turns VALUES (?,?,?,?,?,?,?,?,?)", p.turns)
                if p.verdict is not None:
                    c.execute("INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?)", p.verdict)
                c.executemany("INSERT INTO test_outcomes VALUES (?,?,?,?)", p.outcomes)
            return len(batch)

        return self._write(work)

    def trajectory(self, trajectory_id: str) -> Trajectory:
        """One trajectory, as logged (artifacts fetched back)."""
        rows = self._read("SELECT json FROM trajectories WHERE id = ?", (trajectory_id,))
        if not rows:
            raise NotFoundError(f"no trajectory {trajectory_id!r} in {self.path}")
        return self._hydrate(rows[0][0])

    def trajectories(
        self,
        run_id: str | None = None,
        step: int | None = None,
        task_id: str | None = None,
        passed: bool | None = None,
        split: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        error_kind: str | None = None,
    ) -> list[Trajectory]:
        """Trajectories matching every filter given (None: any), in the order first logged.

        ``error_kind`` is ``infra`` or ``model`` (:class:`~referee.rollout.TrajectoryError`).
        """
        where, params = where_clause(
            run_id=run_id,
            step=step,
            task_id=task_id,
            passed=passed,
            split=split,
            error_kind=error_kind,
        )
        sql = f"SELECT json FROM trajectories {where} ORDER BY rowid LIMIT ? OFFSET ?"
        rows = self._read(sql, [*params, -1 if limit is None else limit, offset])
        return [self._hydrate(r[0]) for r in rows]

    def iter_trajectories(self, page: int = 500, **filters: Any) -> Iterator[Trajectory]:
        """Like :meth:`trajectories` but a page at a time, for stores too big for memory."""
        offset = 0
        while chunk := self.trajectories(**filters, limit=page, offset=offset):
            yield from chunk
            offset += len(chunk)

    def count_trajectories(
        self,
        run_id: str | None = None,
        step: int | None = None,
        task_id: str | None = None,
        passed: bool | None = None,
        split: str | None = None,
        error_kind: str | None = None,
    ) -> int:
        """How many trajectories match every filter given (None: any)."""
        where, params = where_clause(
            run_id=run_id,
            step=step,
            task_id=task_id,
            passed=passed,
            split=split,
            error_kind=error_kind,
        )
        return int(self._read(f"SELECT COUNT(*) FROM trajectories {where}", params)[0][0])

    def steps(self, run_id: str) -> list[int]:
        """The training steps that have trajectories in a run, in order."""
        sql = "SELECT DISTINCT step FROM trajectories WHERE run_id = ? AND step IS NOT NULL"
        return sorted(int(r[0]) for r in self._read(sql, (run_id,)))

    def import_jsonl(self, path: str | os.PathLike[str], run_id: str | None = None) -> int:
        """Load a JSONL file of trajectories (a ``JsonlSink``'s, an export); last line per id wins.

        ``run_id`` overrides the records' own; every run seen is listed in :meth:`runs` (status
        ``imported`` unless it was started here). Returns the records read.
        """
        ts = read_jsonl(path)
        if run_id is not None:
            ts = [t.model_copy(update={"run_id": run_id}) for t in ts]
        seen = sorted({t.run_id for t in ts if t.run_id is not None})
        self._write(
            lambda c: c.executemany(
                "INSERT OR IGNORE INTO runs VALUES (?, NULL, '{}', 'imported', ?, NULL, NULL)",
                [(r, time.time()) for r in seen],
            )
        )
        return self.log_trajectories(ts)

    def _hydrate(self, text: str) -> Trajectory:
        try:
            data = json.loads(text)
            if has_refs(data):
                data = internalize(data, self.artifacts)
            return Trajectory.model_validate(data)
        except (ValidationError, json.JSONDecodeError) as e:
            raise StoreError(f"{self.path}: a trajectory record does not parse ({e})") from e

    # --- artifacts ----------------------------------------------------------------------------

    def put_artifact(self, name: str, data: bytes) -> str:
        """Store bytes (a workspace tarball, a log) content-addressed; returns the URL."""
        return self.artifacts.put(name, data)

    def get_artifact(self, url: str, sha256: str | None = None) -> bytes:
        return self.artifacts.get(url, sha256)

    # --- metrics and alerts -----------------------------------------------------------------

    def log_metrics(
        self, run_id: str, step: int, values: Mapping[str, float], split: str | None = None
    ) -> None:
        """Record named values for one step; a name logged again for the step replaces it."""
        now = time.time()
        try:
            rows = [(run_id, step, k, float(v), split, now) for k, v in values.items()]
        except (TypeError, ValueError) as e:
            raise ConfigError(f"metrics of run {run_id!r} step {step} must be numbers: {e}") from e

        def work(c: sqlite3.Connection) -> None:
            c.executemany(
                "DELETE FROM metrics WHERE run_id = ? AND step = ? AND name = ? AND split IS ?",
                [(*r[:3], split) for r in rows],
            )
            c.executemany("INSERT INTO metrics VALUES (?,?,?,?,?,?)", rows)

        self._write(work)

    def metrics(
        self, run_id: str, names: Iterable[str] | None = None, split: str | None = None
    ) -> list[MetricRow]:
        """A run's metrics by step then name; only ``names`` / ``split`` when given."""
        sql, params = "SELECT * FROM metrics WHERE run_id = ?", [run_id]
        if names is not None:
            chosen = list(names)
            sql += f" AND name IN ({', '.join('?' * len(chosen))})"
            params += chosen
        if split is not None:
            sql, params = sql + " AND split = ?", [*params, split]
        rows = self._read(sql + " ORDER BY step, name, rowid", params)
        # SQLite stores NaN as NULL; give it back as NaN.
        return [
            MetricRow(run_id=r[0], step=r[1], name=r[2], value=math.nan if r[3] is None else r[3],
                      split=r[4], created_at=r[5])
            for r in rows
        ]  # fmt: skip

    def log_alert(
        self,
        run_id: str,
        detector: str,
        step: int | None,
        severity: str,
        message: str,
        evidence: Mapping[str, Any],
        trajectory_ids: Sequence[str],
    ) -> str:
        """Record a detector's alert with its evidence; returns the alert's id."""
        alert_id = uuid.uuid4().hex
        row = (
            alert_id, run_id, detector, step, severity, message,
            _dumps(dict(evidence), what=f"the evidence of the {detector} alert"),
            json.dumps(list(trajectory_ids)), time.time(),
        )  # fmt: skip
        self._write(lambda c: c.execute("INSERT INTO alerts VALUES (?,?,?,?,?,?,?,?,?)", row))
        return alert_id

    def alerts(self, run_id: str | None = None, detector: str | None = None) -> list[AlertRow]:
        where, params = where_clause(run_id=run_id, detector=detector)
        rows = self._read(f"SELECT * FROM alerts {where} ORDER BY created_at, rowid", params)
        return [
            AlertRow(id=r[0], run_id=r[1], detector=r[2], step=r[3], severity=r[4], message=r[5],
                     evidence=json.loads(r[6]), trajectory_ids=json.loads(r[7]), created_at=r[8])
            for r in rows
        ]  # fmt: skip

    # --- the audit queue's tables -----------------------------------------------------------

    def enqueue_audit(self, run_id: str | None, trajectory_id: str, reason: str) -> str:
        """Put a trajectory in the audit queue (status ``pending``); returns the item's id."""
        item_id = uuid.uuid4().hex
        row = (item_id, run_id, trajectory_id, reason, "pending", time.time())
        self._write(lambda c: c.execute("INSERT INTO audit_items VALUES (?,?,?,?,?,?)", row))
        return item_id

    def audit_items(
        self, run_id: str | None = None, status: str | None = None
    ) -> list[AuditItemRow]:
        where, params = where_clause(run_id=run_id, status=status)
        rows = self._read(f"SELECT * FROM audit_items {where} ORDER BY enqueued_at, rowid", params)
        return [
            AuditItemRow(id=r[0], run_id=r[1], trajectory_id=r[2], reason=r[3], status=r[4],
                         enqueued_at=r[5])
            for r in rows
        ]  # fmt: skip

    def set_audit_status(self, item_id: str, status: str) -> None:
        def work(c: sqlite3.Connection) -> int:
            sql = "UPDATE audit_items SET status = ? WHERE id = ?"
            return c.execute(sql, (status, item_id)).rowcount

        if not self._write(work):
            raise NotFoundError(f"no audit item {item_id!r} in {self.path}")

    def add_label(
        self,
        trajectory_id: str,
        label: str,
        *,
        task_id: str | None = None,
        verifier: str | None = None,
        note: str = "",
        labeller: str = "",
    ) -> str:
        """Record a person's label for a trajectory; task and verifier default to its own."""
        known = self._read(
            "SELECT t.task_id, v.verifier FROM trajectories t LEFT JOIN verdicts v "
            "ON v.trajectory_id = t.id WHERE t.id = ?",
            (trajectory_id,),
        )
        if known:
            task_id = task_id if task_id is not None else known[0][0]
            verifier = verifier if verifier is not None else known[0][1]
        label_id = uuid.uuid4().hex
        row = (label_id, trajectory_id, task_id, verifier, label, note, labeller, time.time())
        self._write(lambda c: c.execute("INSERT INTO audit_labels VALUES (?,?,?,?,?,?,?,?)", row))
        return label_id

    def labels(self, trajectory_id: str | None = None) -> list[LabelRow]:
        where, params = where_clause(trajectory_id=trajectory_id)
        rows = self._read(f"SELECT * FROM audit_labels {where} ORDER BY created_at, rowid", params)
        return [
            LabelRow(id=r[0], trajectory_id=r[1], task_id=r[2], verifier=r[3], label=r[4],
                     note=r[5], labeller=r[6], created_at=r[7])
            for r in rows
        ]  # fmt: skip

    def quarantine(self, kind: str, key: str, reason: str, label_id: str | None = None) -> None:
        """Quarantine a task or verifier (``kind`` ``task`` | ``verifier``) by id."""
        row = (kind, key, reason, label_id, time.time())
        self._write(
            lambda c: c.execute("INSERT OR REPLACE INTO quarantine VALUES (?,?,?,?,?)", row)
        )

    def quarantined(self, kind: str) -> set[str]:
        return {r[0] for r in self._read("SELECT key FROM quarantine WHERE kind = ?", (kind,))}


class _Prepared:
    """A trajectory's rows, ready to insert (its artifacts already written)."""

    __slots__ = ("outcomes", "traj", "turns", "verdict")

    def __init__(
        self,
        traj: tuple[Any, ...],
        turns: list[tuple[Any, ...]],
        verdict: tuple[Any, ...] | None,
        outcomes: list[tuple[Any, ...]],
    ) -> None:
        self.traj, self.turns, self.verdict, self.outcomes = traj, turns, verdict, outcomes


def _dumps(value: Any, *, what: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise ConfigError(
            f"{what} must be JSON-serialisable ({e}); convert such values to str"
        ) from e


def _run_row(r: Sequence[Any]) -> RunRow:
    return RunRow(
        run_id=r[0], name=r[1], config=json.loads(r[2]), status=r[3], started_at=r[4],
        ended_at=r[5], stop=None if r[6] is None else json.loads(r[6]),
    )  # fmt: skip


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _text_bytes(*rows: Sequence[Any]) -> int:
    """UTF-8 bytes of the text values of rows (numbers are a few bytes each: not counted)."""
    return sum(len(v.encode()) for row in rows for v in row if isinstance(v, str))


def _artifact_bytes(value: Any) -> int:
    """The bytes of the artifacts a stored record refers to."""
    if is_ref(value):
        return int(value["bytes"])
    if isinstance(value, dict):
        return sum(_artifact_bytes(v) for v in value.values())
    if isinstance(value, list):
        return sum(_artifact_bytes(v) for v in value)
    return 0
