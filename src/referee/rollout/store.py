"""``TrajectoryStore``: every trajectory of a run, on disk, as it is finished.

Two files under the run's folder, written together:

* ``trajectories.jsonl``: one JSON object per line (``Trajectory.model_dump_json``), appended,
  flushed and fsynced per record, so a killed run loses at most the record being written; the
  format to share, grep and export;
* ``trajectories.sqlite``: the same records in a ``trajectories`` table (WAL mode, so readers
  can follow a running job) with the columns worth filtering on: ``id, run_id, task_id,
  split, group_id, step, reward, passed, error_kind`` and the whole record in ``json``.

>>> store = TrajectoryStore(tmp_path)          # doctest: +SKIP
>>> store.append(trajectory)                    # doctest: +SKIP
>>> [t.reward for t in store.query(task_id="demo/add-v1", step=3)]   # doctest: +SKIP

``append`` is safe from several threads at once (the rollout runner writes from a worker
thread). A record written again with the same id replaces the old one in SQLite; the JSONL
file is an append-only log, where the last line for an id wins.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from referee.errors import StoreError
from referee.rollout.trajectory import Trajectory

__all__ = ["TrajectoryStore", "read_jsonl"]

JSONL_NAME = "trajectories.jsonl"
SQLITE_NAME = "trajectories.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS trajectories (
    id TEXT PRIMARY KEY,
    run_id TEXT,
    task_id TEXT NOT NULL,
    split TEXT,
    group_id TEXT,
    step INTEGER,
    reward REAL,
    passed INTEGER NOT NULL,
    error_kind TEXT,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trajectories_task ON trajectories (task_id);
CREATE INDEX IF NOT EXISTS trajectories_step ON trajectories (step);
CREATE INDEX IF NOT EXISTS trajectories_group ON trajectories (group_id);
"""

#: Filters :meth:`TrajectoryStore.query` accepts, each an equality on its column.
_FILTERS = ("run_id", "task_id", "split", "group_id", "step", "passed", "error_kind")


class TrajectoryStore:
    """Trajectories of one run folder, in JSONL and SQLite; see the module docstring."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = Path(run_dir)
        self.jsonl_path = self.run_dir / JSONL_NAME
        self.sqlite_path = self.run_dir / SQLITE_NAME
        self._lock = threading.Lock()
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._jsonl = open(self.jsonl_path, "a", encoding="utf-8")
            # One connection shared by threads, serialised by the lock.
            self._db = sqlite3.connect(self.sqlite_path, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoint
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(
                f"cannot open the trajectory store in {self.run_dir}: {e}; "
                "check that the folder is writable and not on a filesystem without locking"
            ) from e

    def append(self, traj: Trajectory) -> None:
        """Write one trajectory to both files (durably, for the JSONL line)."""
        line = traj.model_dump_json()
        row = (
            traj.id,
            traj.run_id,
            traj.task_id,
            traj.split,
            traj.group_id,
            traj.step,
            traj.reward,
            int(traj.passed),
            traj.error.kind if traj.error else None,
            line,
        )
        with self._lock:
            try:
                self._jsonl.write(line + "\n")
                self._jsonl.flush()
                os.fsync(self._jsonl.fileno())
                with self._db:
                    self._db.execute(
                        "INSERT OR REPLACE INTO trajectories VALUES (?,?,?,?,?,?,?,?,?,?)", row
                    )
            except (OSError, sqlite3.Error, ValueError) as e:
                raise StoreError(
                    f"cannot write trajectory {traj.id} to {self.run_dir}: {e}; "
                    "is the disk full or the store closed?"
                ) from e

    def query(self, **filters: Any) -> list[Trajectory]:
        """Trajectories whose columns equal the filters, in the order they were written.

        Filters: ``run_id, task_id, split, group_id, step, passed, error_kind``; a value of
        None matches NULL (``error_kind=None``: the trajectories without an error).
        """
        unknown = set(filters) - set(_FILTERS)
        if unknown:
            raise StoreError(f"unknown filters {sorted(unknown)}; use {', '.join(_FILTERS)}")
        clauses, params = [], []
        for key, value in filters.items():
            if value is None:
                clauses.append(f"{key} IS NULL")
            else:
                clauses.append(f"{key} = ?")
                params.append(int(value) if isinstance(value, bool) else value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        return list(self._select(f"SELECT json FROM trajectories {where} ORDER BY rowid", params))

    def iter(self) -> Iterator[Trajectory]:
        """Every trajectory, in the order written."""
        return self._select("SELECT json FROM trajectories ORDER BY rowid", [])

    def __len__(self) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM trajectories").fetchone()
        return int(n)

    def _select(self, sql: str, params: list[Any]) -> Iterator[Trajectory]:
        with self._lock:
            try:
                rows = self._db.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"cannot read {self.sqlite_path}: {e}") from e
        for (text,) in rows:
            yield _parse(text, self.sqlite_path)

    def close(self) -> None:
        """Close both files. Safe to call twice."""
        with self._lock:
            if not self._jsonl.closed:
                self._jsonl.close()
                self._db.close()

    def __enter__(self) -> TrajectoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_jsonl(path: str | os.PathLike[str]) -> list[Trajectory]:
    """The trajectories of a ``trajectories.jsonl`` file (a run folder's, or a copy)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                out.append(_parse(line, Path(path), n))
    return out


def _parse(text: str, where: Path, line: int | None = None) -> Trajectory:
    try:
        return Trajectory.model_validate_json(text)
    except (ValidationError, json.JSONDecodeError) as e:
        at = f"{where}:{line}" if line else str(where)
        raise StoreError(f"{at}: not a trajectory record ({e}); was it written by referee?") from e
