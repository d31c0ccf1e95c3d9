"""TrajectoryStore: JSONL and SQLite round trips, queries, concurrent writers."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from referee.errors import StoreError
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner, Trajectory, TrajectoryStore, read_jsonl
from tests.rollout.fakes import AnswerEnv, task


def run_into(store: TrajectoryStore, step: int) -> list[Trajectory]:
    tasks = [task("s/a"), task("s/b", answer="7"), task("s/bad", payload={"fault": "step"})]
    r = RolloutRunner(
        AnswerEnv,
        ScriptedPolicy(["42"]),
        group_size=2,
        store=store,
        run_id="run-1",
        max_infra_retries=0,
    )
    return r.run_sync(tasks, step=step)


def test_the_runner_writes_every_trajectory_to_jsonl_and_sqlite(tmp_path: Path) -> None:
    with TrajectoryStore(tmp_path / "run") as store:
        first = run_into(store, step=0)
        second = run_into(store, step=1)
        assert len(store) == 12
        by_task = store.query(task_id="s/a", step=1)
        assert {t.id for t in by_task} == {t.id for t in second if t.task_id == "s/a"}
        assert [t.reward for t in store.query(task_id="s/b")] == [0.0] * 4
        assert len(store.query(error_kind="infra")) == 4 and len(store.query(error_kind=None)) == 8
        assert len(store.query(passed=True, run_id="run-1")) == 4
        with pytest.raises(StoreError, match="unknown filters"):
            store.query(reward=1.0)

    written = {t.id: t for t in first + second}
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(line)["schema_version"] == 1 for line in lines)
    assert {t.id: t for t in read_jsonl(tmp_path / "run" / "trajectories.jsonl")} == written
    with TrajectoryStore(tmp_path / "run") as reopened:  # a later process reads the same run
        assert {t.id: t for t in reopened.iter()} == written

    db = sqlite3.connect(tmp_path / "run" / "trajectories.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    rows = db.execute(
        "SELECT task_id, split, step, reward, passed, error_kind, group_id FROM trajectories "
        "WHERE task_id = 's/bad' AND step = 0"
    ).fetchall()
    assert len(rows) == 2 and all(r[:6] == ("s/bad", "train", 0, None, 0, "infra") for r in rows)
    assert rows[0][6] == rows[1][6] is not None


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    trajs = [Trajectory(task_id=f"w/{i}", policy="p", env="e") for i in range(200)]

    def write(chunk: list[Trajectory]) -> None:
        for t in chunk:
            store.append(t)

    threads = [threading.Thread(target=write, args=(trajs[i::4],)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(store) == 200
    assert sorted(t.id for t in read_jsonl(store.jsonl_path)) == sorted(t.id for t in trajs)
    store.close()
    store.close()


def test_a_closed_store_fails_loudly_and_stops_the_batch(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    store.close()
    with pytest.raises(StoreError, match="cannot write"):
        run_into(store, step=0)


def test_a_corrupt_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    path.write_text(Trajectory(task_id="x", policy="p", env="e").model_dump_json() + "\n{oops\n")
    with pytest.raises(StoreError, match=r"trajectories.jsonl:2"):
        read_jsonl(path)


def test_an_unwritable_folder_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="cannot open"):
        TrajectoryStore(tmp_path / "file" / "run")
