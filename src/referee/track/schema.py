"""The track store's schema: its tables, its version, and how an older file is brought up to it.

One SQLite file per run folder, ``<run_dir>/track.sqlite`` (:data:`DB_NAME`). Only the store's
modules (:mod:`referee.track.store`, :mod:`referee.track.queries`) write SQL against these
tables; everything else asks the store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from referee.errors import StoreError

__all__ = [
    "COST_COLUMNS",
    "DB_NAME",
    "MIGRATIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TRAJECTORY_COLUMNS",
    "UPSERT_TRAJECTORY",
    "init_schema",
]

DB_NAME = "track.sqlite"
#: ``PRAGMA user_version`` of a store this code writes; older stores are migrated on open.
SCHEMA_VERSION = 2
#: The cost columns of ``trajectories`` (``Trajectory.cost``, :mod:`referee.rollout.cost`;
#: ``completion_tokens`` was there before), after ``json`` in every store.
COST_COLUMNS = [
    "sandbox_cpu_s", "sandbox_wall_s", "sandbox_runs", "peak_memory_mb", "wall_s",
    "prompt_tokens", "bytes_stored",
]  # fmt: skip
#: SQL that brings a store from version N to N + 1.
MIGRATIONS: dict[int, str] = {
    # 1 -> 2: costs per trajectory, and why a run stopped (``runs.stop_json``). Records of
    # version 1 had no sandbox costs (0); their wall time, prompt tokens and the size of the
    # record are read back from what they stored.
    1: """
ALTER TABLE trajectories ADD COLUMN sandbox_cpu_s REAL NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN sandbox_wall_s REAL NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN sandbox_runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN peak_memory_mb REAL NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN wall_s REAL NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN bytes_stored INTEGER NOT NULL DEFAULT 0;
UPDATE trajectories SET
    wall_s = coalesce(json_extract(json, '$.timings.total_s'), 0),
    prompt_tokens = coalesce(
        (SELECT sum(json_extract(value, '$.prompt_tokens'))
         FROM json_each(trajectories.json, '$.turns')), 0),
    bytes_stored = length(CAST(json AS BLOB));
ALTER TABLE runs ADD COLUMN stop_json TEXT;
""",
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, name TEXT, config_json TEXT NOT NULL, status TEXT NOT NULL,
    started_at REAL, ended_at REAL, stop_json TEXT);
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY, split TEXT, domain TEXT, difficulty REAL, unit TEXT,
    json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trajectories (
    id TEXT PRIMARY KEY, run_id TEXT, task_id TEXT NOT NULL, split TEXT, policy TEXT, env TEXT,
    group_id TEXT, sample_index INTEGER, step INTEGER, reward REAL, passed INTEGER NOT NULL,
    error_kind TEXT, end_reason TEXT, n_turns INTEGER, completion_tokens INTEGER,
    tool_calls INTEGER, started_at REAL, finished_at REAL, json TEXT NOT NULL,
    sandbox_cpu_s REAL NOT NULL DEFAULT 0, sandbox_wall_s REAL NOT NULL DEFAULT 0,
    sandbox_runs INTEGER NOT NULL DEFAULT 0, peak_memory_mb REAL NOT NULL DEFAULT 0,
    wall_s REAL NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
    bytes_stored INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS trajectories_run_step ON trajectories (run_id, step);
CREATE INDEX IF NOT EXISTS trajectories_task ON trajectories (task_id);
CREATE INDEX IF NOT EXISTS trajectories_group ON trajectories (group_id);
CREATE TABLE IF NOT EXISTS turns (
    trajectory_id TEXT NOT NULL, idx INTEGER NOT NULL, role TEXT, content TEXT,
    tool_calls_json TEXT, observations_json TEXT, completion_tokens INTEGER, policy_s REAL,
    env_s REAL, PRIMARY KEY (trajectory_id, idx));
CREATE TABLE IF NOT EXISTS verdicts (
    trajectory_id TEXT PRIMARY KEY, task_id TEXT, reward REAL, passed INTEGER,
    infra_error TEXT, verifier TEXT, flags_json TEXT, timings_json TEXT);
CREATE TABLE IF NOT EXISTS test_outcomes (
    trajectory_id TEXT NOT NULL, name TEXT, status TEXT, detail TEXT);
CREATE INDEX IF NOT EXISTS test_outcomes_trajectory ON test_outcomes (trajectory_id);
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, name TEXT NOT NULL, value REAL, split TEXT,
    created_at REAL);
CREATE INDEX IF NOT EXISTS metrics_run_name ON metrics (run_id, name, step);
CREATE TABLE IF NOT EXISTS alerts (
    id TEXT PRIMARY KEY, run_id TEXT, detector TEXT, step INTEGER, severity TEXT, message TEXT,
    evidence_json TEXT, trajectory_ids_json TEXT, created_at REAL);
CREATE INDEX IF NOT EXISTS alerts_run ON alerts (run_id);
CREATE TABLE IF NOT EXISTS audit_items (
    id TEXT PRIMARY KEY, run_id TEXT, trajectory_id TEXT, reason TEXT, status TEXT,
    enqueued_at REAL);
CREATE INDEX IF NOT EXISTS audit_items_run ON audit_items (run_id, status);
CREATE TABLE IF NOT EXISTS audit_labels (
    id TEXT PRIMARY KEY, trajectory_id TEXT, task_id TEXT, verifier TEXT, label TEXT,
    note TEXT, labeller TEXT, created_at REAL);
CREATE TABLE IF NOT EXISTS quarantine (
    kind TEXT NOT NULL, key TEXT NOT NULL, reason TEXT, label_id TEXT, created_at REAL,
    PRIMARY KEY (kind, key));
"""

TRAJECTORY_COLUMNS = [
    "id", "run_id", "task_id", "split", "policy", "env", "group_id", "sample_index", "step",
    "reward", "passed", "error_kind", "end_reason", "n_turns", "completion_tokens", "tool_calls",
    "started_at", "finished_at", "json", *COST_COLUMNS,
]  # fmt: skip
UPSERT_TRAJECTORY = (
    f"INSERT INTO trajectories ({', '.join(TRAJECTORY_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(TRAJECTORY_COLUMNS))}) ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in TRAJECTORY_COLUMNS[1:])
)


def init_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the tables of a new store, or migrate an older one (inside a transaction)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this referee "
            f"understands ({SCHEMA_VERSION}); upgrade referee to read it"
        )
    if version == 0:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
    else:
        for v in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[v].split(";"):
                if statement.strip():
                    conn.execute(statement)
    if version != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
