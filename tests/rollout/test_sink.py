"""Trajectory sinks: the runner writes through TrackStore (the run's one database) and JsonlSink."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from referee.errors import StoreError
from referee.policy import ScriptedPolicy
from referee.rollout import (
    JsonlSink,
    RolloutRunner,
    Trajectory,
    TrajectorySink,
    read_jsonl,
)
from referee.track.export import export_jsonl
from referee.track.store import DB_NAME, TrackStore
from tests.rollout.fakes import AnswerEnv, task


def run_into(store: TrajectorySink, step: int) -> list[Trajectory]:
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


def test_the_track_store_is_a_sink() -> None:
    assert issubclass(TrackStore, TrajectorySink) and issubclass(JsonlSink, TrajectorySink)


def test_the_runner_writes_every_trajectory_to_the_run_track_store(tmp_path: Path) -> None:
    with TrackStore(tmp_path / "run") as store:
        first = run_into(store, step=0)
        second = run_into(store, step=1)
        assert store.count_trajectories() == 12
        by_task = store.trajectories(task_id="s/a", step=1)
        assert {t.id for t in by_task} == {t.id for t in second if t.task_id == "s/a"}
        assert [t.reward for t in store.trajectories(task_id="s/b")] == [0.0] * 4
        assert len(store.trajectories(error_kind="infra")) == 4
        assert sum(t.error is None for t in store.trajectories()) == 8
        assert len(store.trajectories(passed=True, run_id="run-1")) == 4
        with pytest.raises(TypeError, match="reward"):
            store.trajectories(reward=1.0)  # type: ignore[call-arg]
        # JSONL stays as the export: the same records, one a line.
        assert export_jsonl(store, tmp_path / "out.jsonl") == 12

    written = {t.id: t for t in first + second}
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(line)["schema_version"] == 1 for line in lines)
    assert {t.id: t for t in read_jsonl(tmp_path / "out.jsonl")} == written
    with TrackStore(tmp_path / "run", create=False) as reopened:  # a later process reads it
        assert {t.id: t for t in reopened.iter_trajectories()} == written
    # One trajectory database per run: no second SQLite file beside the track store.
    assert sorted(p.name for p in (tmp_path / "run").glob("*.sqlite")) == [DB_NAME]

    db = sqlite3.connect(tmp_path / "run" / DB_NAME)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    rows = db.execute(
        "SELECT task_id, split, step, reward, passed, error_kind, group_id FROM trajectories "
        "WHERE task_id = 's/bad' AND step = 0"
    ).fetchall()
    assert len(rows) == 2 and all(r[:6] == ("s/bad", "train", 0, None, 0, "infra") for r in rows)
    assert rows[0][6] == rows[1][6] is not None


def test_the_runner_writes_to_a_jsonl_sink(tmp_path: Path) -> None:
    with JsonlSink(tmp_path / "run" / "trajectories.jsonl") as sink:
        out = run_into(sink, step=0)
    back = read_jsonl(tmp_path / "run" / "trajectories.jsonl")
    assert {t.id: t for t in back} == {t.id: t for t in out} and len(back) == 6


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store = TrackStore(tmp_path)
    sink = JsonlSink(tmp_path / "trajectories.jsonl")
    trajs = [Trajectory(task_id=f"w/{i}", policy="p", env="e") for i in range(200)]

    def write(chunk: list[Trajectory]) -> None:
        for t in chunk:
            store.log_trajectory(t)
            sink.log_trajectory(t)

    threads = [threading.Thread(target=write, args=(trajs[i::4],)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert store.count_trajectories() == 200
    assert sorted(t.id for t in read_jsonl(sink.path)) == sorted(t.id for t in trajs)
    for closable in (store, sink):
        closable.close()
        closable.close()


@pytest.mark.parametrize("make", [TrackStore, lambda d: JsonlSink(d / "t.jsonl")])
def test_a_closed_sink_fails_loudly_and_stops_the_batch(tmp_path: Path, make: Any) -> None:
    sink = make(tmp_path)
    sink.close()
    with pytest.raises(StoreError, match="closed"):
        run_into(sink, step=0)


def test_a_corrupt_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    path.write_text(Trajectory(task_id="x", policy="p", env="e").model_dump_json() + "\n{oops\n")
    with pytest.raises(StoreError, match=r"trajectories.jsonl:2"):
        read_jsonl(path)


def test_an_unwritable_folder_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="cannot create the run folder"):
        TrackStore(tmp_path / "file" / "run")
    with pytest.raises(StoreError, match="cannot open"):
        JsonlSink(tmp_path / "file" / "run" / "trajectories.jsonl")
