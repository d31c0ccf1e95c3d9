"""TrackStore: round trips, queries, replacement, artifacts, runs, metrics, alerts, audit tables."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from referee.errors import ConfigError, StoreError
from referee.rollout.sink import JsonlSink
from referee.rollout.trajectory import Trajectory, TrajectoryError, Turn
from referee.tasks.model import Task
from referee.track import TrackStore
from referee.track.store import DB_NAME, SCHEMA_VERSION
from referee.verify.verdict import Flag, Verdict
from referee.verify.verdict import TestOutcome as Outcome

#: Text no ASCII shortcut survives: multi-byte characters, a NUL, newlines, a lone CR.
ODD = "é漢🙂\x00\r\n\t\"'\\"


def make_trajectory(
    i: int = 0,
    *,
    run_id: str | None = "r1",
    task_id: str = "demo/add-v1",
    step: int | None = 0,
    reward: float = 1.0,
    split: str = "train",
    observation: str = "3\n",
    flags: bool = False,
    tool: bool = True,
    error: bool = False,
    id: str | None = None,
) -> Trajectory:
    """A two-turn tool-using episode (one turn when ``tool`` is False) with a verdict."""
    call = {
        "id": f"call-{i}",
        "type": "function",
        "function": {"name": "run_python", "arguments": json.dumps({"code": "print(1+2)"})},
    }
    turns = []
    if tool:
        turns.append(
            Turn(
                index=0,
                assistant={"role": "assistant", "content": "Let me try.", "tool_calls": [call]},
                observations=[
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "name": "run_python",
                        "content": observation,
                    }
                ],
                prompt_token_ids=[1, 2, 3],
                token_ids=[4, 5],
                logprobs=[-0.5, -0.25],
                completion_tokens=2,
                policy_s=0.1,
                env_s=0.2,
                metrics={"tool/ok": 1.0},
            )
        )
    turns.append(
        Turn(
            index=len(turns),
            assistant={"role": "assistant", "content": "def add(a, b):\n    return a + b\n"},
            observations=[{"role": "user", "content": "tests ran"}],
            completion_tokens=9,
        )
    )
    tests = [
        Outcome(name="test_small", status="passed"),
        Outcome(name="test_big", status="passed" if reward == 1.0 else "failed", detail="1 != 2"),
    ]
    verdict = Verdict(
        task_id=task_id,
        reward=reward,
        passed=reward == 1.0,
        tests=tests,
        flags=[Flag(kind="exit-call", evidence="sys.exit(0)")] if flags else [],
        timings={"verify_s": 0.05},
        verifier="function-v1",
    )
    return Trajectory(
        id=id or f"traj-{i}",
        run_id=run_id,
        task_id=task_id,
        split=split,
        policy="scripted",
        env="code",
        group_id=f"g-{i // 2}",
        sample_index=i % 2,
        step=step,
        messages=[{"role": "user", "content": "Write add(a, b)."}],
        turns=turns,
        verdict=verdict,
        end_reason="answered",
        error=TrajectoryError(kind="infra", where="env.step", message="boom") if error else None,
        timings={"total_s": 1.5},
        started_at=1000.0 + i,
        finished_at=1001.0 + i,
    )


@pytest.fixture
def store(tmp_path: Path):
    with TrackStore(tmp_path / "run") as s:
        yield s


def _db(store: TrackStore) -> sqlite3.Connection:
    return sqlite3.connect(store.path)


# --- trajectories ---------------------------------------------------------------------------


def test_a_trajectory_comes_back_equal_with_its_rows_in_every_table(store: TrackStore) -> None:
    t = make_trajectory(1, flags=True, reward=0.5)
    store.log_trajectory(t)
    assert store.trajectory(t.id) == t
    db = _db(store)
    row = db.execute(
        "SELECT run_id, task_id, step, reward, passed, n_turns, completion_tokens, tool_calls, "
        "group_id, sample_index FROM trajectories WHERE id = ?",
        (t.id,),
    ).fetchone()
    assert row == ("r1", "demo/add-v1", 0, 0.5, 0, 2, 11, 1, "g-0", 1)
    turns = db.execute(
        "SELECT idx, role, content, tool_calls_json, observations_json, completion_tokens "
        "FROM turns WHERE trajectory_id = ? ORDER BY idx",
        (t.id,),
    ).fetchall()
    assert [r[0] for r in turns] == [0, 1]
    assert json.loads(turns[0][3])[0]["function"]["name"] == "run_python"
    assert json.loads(turns[0][4])[0]["content"] == "3\n"
    assert turns[1][2].startswith("def add") and turns[1][5] == 9
    verdict = db.execute(
        "SELECT reward, passed, verifier, flags_json FROM verdicts WHERE trajectory_id = ?",
        (t.id,),
    ).fetchone()
    assert verdict[:3] == (0.5, 0, "function-v1")
    assert json.loads(verdict[3]) == [{"kind": "exit-call", "evidence": "sys.exit(0)"}]
    outcomes = db.execute(
        "SELECT name, status, detail FROM test_outcomes WHERE trajectory_id = ? ORDER BY name",
        (t.id,),
    ).fetchall()
    assert outcomes == [("test_big", "failed", "1 != 2"), ("test_small", "passed", "")]


def test_an_infra_error_is_stored_as_no_reward(store: TrackStore) -> None:
    t = make_trajectory(2, error=True)
    store.log_trajectory(t)
    (reward, kind) = _db(store).execute("SELECT reward, error_kind FROM trajectories").fetchone()
    assert reward is None and kind == "infra"
    assert store.trajectory(t.id).error == t.error


def test_queries_filter_on_every_column_and_page(store: TrackStore) -> None:
    ts = [
        make_trajectory(0, step=0),
        make_trajectory(1, step=0, reward=0.0),
        make_trajectory(2, step=1, task_id="demo/mul-v1"),
        make_trajectory(3, step=2, split="heldout"),
        make_trajectory(4, step=2, run_id="r2"),
        make_trajectory(5, step=None, run_id=None),
    ]
    assert store.log_trajectories(ts) == 6

    def ids(**kw: Any) -> list[str]:
        return [t.id for t in store.trajectories(**kw)]

    assert ids() == [t.id for t in ts]
    assert ids(run_id="r1") == ["traj-0", "traj-1", "traj-2", "traj-3"]
    assert ids(run_id="r1", step=0) == ["traj-0", "traj-1"]
    assert ids(task_id="demo/mul-v1") == ["traj-2"]
    assert ids(passed=False) == ["traj-1"]
    assert ids(passed=True, run_id="r1") == ["traj-0", "traj-2", "traj-3"]
    assert ids(split="heldout") == ["traj-3"]
    assert ids(limit=2, offset=1) == ["traj-1", "traj-2"]
    assert ids(offset=5) == ["traj-5"]
    assert [t.id for t in store.iter_trajectories(page=2)] == [t.id for t in ts]
    assert store.count_trajectories() == 6
    assert store.count_trajectories(run_id="r1", passed=True) == 3
    assert store.steps("r1") == [0, 1, 2] and store.steps("r2") == [2]
    with pytest.raises(StoreError, match="no trajectory 'nope'"):
        store.trajectory("nope")


def test_logging_an_id_again_replaces_every_row_of_it(store: TrackStore) -> None:
    store.log_trajectories([make_trajectory(0), make_trajectory(1)])
    first = make_trajectory(0)
    replaced = first.model_copy(
        update={
            "turns": first.turns[1:],
            "verdict": first.verdict.model_copy(  # type: ignore[union-attr]
                update={"tests": [Outcome(name="only", status="failed")], "reward": 0.0,
                        "passed": False}
            ),
        }
    )  # fmt: skip
    store.log_trajectory(replaced)
    assert store.trajectory("traj-0") == replaced
    assert store.count_trajectories() == 2
    # Still in the order first logged.
    assert [t.id for t in store.trajectories()] == ["traj-0", "traj-1"]
    db = _db(store)
    assert db.execute("SELECT COUNT(*) FROM turns WHERE trajectory_id='traj-0'").fetchone() == (1,)
    assert db.execute("SELECT name FROM test_outcomes WHERE trajectory_id='traj-0'").fetchall() == [
        ("only",)
    ]
    assert store.count_trajectories(passed=True) == 1


def test_one_store_is_safe_from_several_threads(store: TrackStore) -> None:
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(40):
                store.log_trajectory(make_trajectory(i, id=f"t{k}-{i}", step=k))
                store.log_metrics("r1", i, {f"thread{k}": float(i)})
                store.count_trajectories(step=k)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.count_trajectories() == 160
    assert len(store.metrics("r1")) == 160


# --- artifacts --------------------------------------------------------------------------------


def test_a_large_observation_moves_to_an_artifact_and_comes_back_byte_identical(
    tmp_path: Path,
) -> None:
    big = (ODD * 20_000)[:150_001]
    with TrackStore(tmp_path / "run", artifact_threshold=64_000) as store:
        t = make_trajectory(0, observation=big)
        store.log_trajectory(t)
        (text,) = _db(store).execute("SELECT json FROM trajectories").fetchone()
        assert big not in text and len(text) < 10_000
        ref = json.loads(text)["turns"][0]["observations"][0]["content"]
        assert set(ref) == {"$artifact", "sha256", "bytes"}
        assert ref["bytes"] == len(big.encode()) and ref["$artifact"].startswith("file://")
        blob = tmp_path / "run" / "artifacts" / ref["sha256"][:2]
        assert [p.read_bytes() for p in blob.iterdir()] == [big.encode()]
        back = store.trajectory(t.id)
        assert back.turns[0].observations[0]["content"] == big
        assert back == t
        (obs,) = _db(store).execute("SELECT observations_json FROM turns WHERE idx=0").fetchone()
        assert "$artifact" in obs
        # Content addressing: the same text again writes no second blob.
        store.log_trajectory(make_trajectory(1, observation=big))
        assert len(list(blob.iterdir())) == 1


def test_small_strings_stay_inline(store: TrackStore) -> None:
    store.log_trajectory(make_trajectory(0, observation="x" * 1000))
    (text,) = _db(store).execute("SELECT json FROM trajectories").fetchone()
    assert "$artifact" not in text and not (store.run_dir / "artifacts").exists()


def test_artifacts_go_to_any_fsspec_url(tmp_path: Path) -> None:
    base = f"memory://referee-test-{uuid.uuid4().hex}"
    with TrackStore(tmp_path / "run", artifacts=base, artifact_threshold=100) as store:
        t = make_trajectory(0, observation="y" * 500)
        store.log_trajectory(t)
        fs = fsspec.filesystem("memory")
        [stored] = fs.find(base.removeprefix("memory://"))
        assert fs.cat_file(stored) == b"y" * 500
        assert store.trajectory(t.id) == t
        url = store.put_artifact("workspace.tar.gz", b"\x1f\x8b tarball")
        assert url.startswith(base) and url.endswith("-workspace.tar.gz")
        assert store.put_artifact("workspace.tar.gz", b"\x1f\x8b tarball") == url
        assert store.get_artifact(url) == b"\x1f\x8b tarball"
        assert len(fs.find(base.removeprefix("memory://"))) == 2
    assert not (tmp_path / "run" / "artifacts").exists()


def test_a_run_stores_artifacts_in_s3(tmp_path: Path, s3) -> None:
    bucket, _ = s3
    base = f"s3://{bucket}/runs/r1"
    with TrackStore(tmp_path / "run", artifacts=base, artifact_threshold=100) as store:
        t = make_trajectory(0, observation="s" * 500)
        store.log_trajectory(t)
        assert store.trajectory(t.id) == t
    from tests.s3 import s3fs_now

    [stored] = s3fs_now().find(f"{bucket}/runs/r1")
    assert s3fs_now().cat_file(stored) == b"s" * 500
    with TrackStore(tmp_path / "run", artifacts=base, create=False) as again:  # read back from S3
        assert again.trajectory(t.id) == t


def test_an_altered_artifact_is_refused(tmp_path: Path) -> None:
    with TrackStore(tmp_path / "run", artifact_threshold=100) as store:
        store.log_trajectory(make_trajectory(0, observation="z" * 500))
        [blob] = (tmp_path / "run" / "artifacts").rglob("*-text")
        blob.write_bytes(b"z" * 499)
        with pytest.raises(StoreError, match="does not match its SHA-256"):
            store.trajectory("traj-0")
        blob.unlink()
        with pytest.raises(StoreError, match="is missing"):
            store.trajectory("traj-0")


def test_artifacts_land_in_a_run_folder_whose_name_has_spaces(tmp_path: Path) -> None:
    with TrackStore(tmp_path / "my run", artifact_threshold=100) as store:
        store.log_trajectory(make_trajectory(0, observation="v" * 500))
    assert len(list((tmp_path / "my run" / "artifacts").rglob("*-text"))) == 1
    assert not (tmp_path / "my%20run").exists()


def test_a_moved_run_folder_still_finds_its_artifacts(tmp_path: Path) -> None:
    t = make_trajectory(0, observation="w" * 500)
    with TrackStore(tmp_path / "run", artifact_threshold=100) as store:
        store.log_trajectory(t)
    shutil.move(tmp_path / "run", tmp_path / "moved")
    with TrackStore(tmp_path / "moved") as store:
        assert store.trajectory(t.id) == t


# --- runs, tasks, metrics, alerts, audit -------------------------------------------------------


def test_runs_start_end_and_resume(store: TrackStore) -> None:
    row = store.start_run("r1", {"lr": 1e-5, "model": "tiny"}, name="first")
    assert row.status == "running" and row.config == {"lr": 1e-5, "model": "tiny"}
    store.end_run("r1", status="failed")
    assert store.run("r1").status == "failed" and store.run("r1").ended_at is not None
    started = store.run("r1").started_at
    resumed = store.start_run("r1", {"lr": 2e-5})
    assert (resumed.status, resumed.name, resumed.ended_at) == ("running", "first", None)
    assert resumed.started_at == started and resumed.config == {"lr": 2e-5}
    store.start_run("r2", {})
    assert [r.run_id for r in store.runs()] == ["r1", "r2"]
    with pytest.raises(StoreError, match=r"no run 'r9'.*start_run"):
        store.end_run("r9")
    with pytest.raises(ConfigError, match="JSON-serialisable"):
        store.start_run("r3", {"fn": object()})


def test_tasks_are_recorded_and_read_back(store: TrackStore) -> None:
    a = Task.create(name="demo/a-v1", prompt="A?", hidden={"answer": "1"}, split="train")
    b = Task.create(name="demo/b-v1", prompt="B?", hidden={"answer": "2"}, split="heldout")
    assert store.add_tasks([a, b]) == 2
    assert store.task("demo/a-v1") == a
    assert store.tasks() == [a, b] and store.tasks(split="heldout") == [b]
    store.log_trajectory(make_trajectory(0, task_id="demo/b-v1"))
    assert store.tasks(run_id="r1") == [b] and store.tasks(run_id="r2") == []
    with pytest.raises(StoreError, match="add_tasks"):
        store.task("demo/zzz")


def test_metrics_by_step_and_name_a_repeat_replaces(store: TrackStore) -> None:
    store.log_metrics("r1", 0, {"reward/mean": 0.25, "loss": 2.0})
    store.log_metrics("r1", 1, {"reward/mean": 0.5, "loss": math.nan})
    store.log_metrics("r1", 1, {"reward/mean": 0.75})
    store.log_metrics("r1", 1, {"pass@1": 0.1}, split="heldout")
    store.log_metrics("r2", 0, {"loss": 9.0})
    rows = store.metrics("r1")
    assert [(m.step, m.name, m.value) for m in rows if m.name != "loss"] == [
        (0, "reward/mean", 0.25),
        (1, "pass@1", 0.1),
        (1, "reward/mean", 0.75),
    ]
    assert math.isnan(next(m.value for m in rows if m.step == 1 and m.name == "loss"))
    assert [m.value for m in store.metrics("r1", names=["reward/mean"])] == [0.25, 0.75]
    assert [m.name for m in store.metrics("r1", split="heldout")] == ["pass@1"]
    with pytest.raises(ConfigError, match="must be numbers"):
        store.log_metrics("r1", 2, {"bad": "high"})  # type: ignore[dict-item]


def test_alerts_keep_their_evidence(store: TrackStore) -> None:
    aid = store.log_alert(
        "r1", "length-collapse", 7, "warning", "mean length fell 80%",
        {"before": 120.0, "after": 24.0}, ["traj-1", "traj-2"],
    )  # fmt: skip
    store.log_alert("r2", "canary", 3, "critical", "canary passed", {}, [])
    [a] = store.alerts(run_id="r1")
    assert (a.id, a.detector, a.step, a.severity) == (aid, "length-collapse", 7, "warning")
    assert a.evidence == {"before": 120.0, "after": 24.0}
    assert a.trajectory_ids == ["traj-1", "traj-2"]
    assert len(store.alerts()) == 2 and [a.run_id for a in store.alerts(detector="canary")] == [
        "r2"
    ]


def test_the_audit_tables(store: TrackStore) -> None:
    store.log_trajectory(make_trajectory(0))
    item = store.enqueue_audit("r1", "traj-0", "flagged: exit-call")
    store.enqueue_audit("r2", "traj-9", "random sample")
    assert [i.reason for i in store.audit_items(run_id="r1")] == ["flagged: exit-call"]
    store.set_audit_status(item, "labelled")
    assert [i.trajectory_id for i in store.audit_items(status="pending")] == ["traj-9"]
    label = store.add_label("traj-0", "hack", note="exits before the asserts", labeller="ana")
    [row] = store.labels()
    assert (row.id, row.task_id, row.verifier, row.label) == (
        label,
        "demo/add-v1",
        "function-v1",
        "hack",
    )
    store.quarantine("task", "demo/add-v1", "hacked by exit", label_id=label)
    store.quarantine("verifier", "function-v1", "lets exit through")
    assert store.quarantined("task") == {"demo/add-v1"}
    assert store.quarantined("verifier") == {"function-v1"} and store.quarantined("x") == set()
    with pytest.raises(StoreError, match="no audit item"):
        store.set_audit_status("nope", "done")


# --- JSONL logs, files, errors -------------------------------------------------------


def test_a_rollout_trajectories_jsonl_is_imported(tmp_path: Path, store: TrackStore) -> None:
    old = [make_trajectory(i, run_id="old-run") for i in range(3)]
    with JsonlSink(tmp_path / "rollout" / "trajectories.jsonl") as rollout:
        for t in old:
            rollout.log_trajectory(t)
        rollout.log_trajectory(old[1].model_copy(update={"end_reason": "rewritten"}))
    assert store.import_jsonl(tmp_path / "rollout" / "trajectories.jsonl") == 4
    assert store.count_trajectories(run_id="old-run") == 3
    assert store.trajectory("traj-1").end_reason == "rewritten"
    assert store.trajectory("traj-2") == old[2]
    assert store.run("old-run").status == "imported"
    store.import_jsonl(tmp_path / "rollout" / "trajectories.jsonl", run_id="renamed")
    assert store.count_trajectories(run_id="renamed") == 3


def test_the_store_uses_wal_and_full_sync_and_versions_its_schema(store: TrackStore) -> None:
    conn = store._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_corrupt_file_is_a_store_error_naming_the_path_and_the_fix(tmp_path: Path) -> None:
    # The rebuild from trajectories.jsonl is advised only where there is one (issue 20, 9).
    (tmp_path / "trajectories.jsonl").write_text("")
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError) as e:
        TrackStore(tmp_path)
    assert str(tmp_path / DB_NAME) in str(e.value) and "import_jsonl" in str(e.value)


@pytest.mark.parametrize("made_by_train", [True, False])
def test_a_corrupt_store_without_trajectories_jsonl_is_not_told_to_rebuild_from_it(
    tmp_path: Path, made_by_train: bool
) -> None:
    # issue 20 (9): single-turn `referee train` runs (and library stores) have no JSONL export.
    if made_by_train:
        (tmp_path / "config.json").write_text("{}")
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError) as e:
        TrackStore(tmp_path)
    text = str(e.value)
    assert "trajectories.jsonl" not in text and "import_jsonl" not in text
    assert "restore a copy" in text
    assert ("referee train" in text) is made_by_train


def test_a_store_from_a_newer_referee_is_refused(tmp_path: Path) -> None:
    TrackStore(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match=r"newer than this referee.*upgrade"):
        TrackStore(tmp_path)


def test_a_missing_store_is_refused_when_not_creating(tmp_path: Path) -> None:
    (tmp_path / "trajectories.jsonl").write_text("")
    with pytest.raises(StoreError, match=r"no track store.*import_jsonl"):
        TrackStore(tmp_path, create=False)
    assert not (tmp_path / DB_NAME).exists()


def test_a_writer_locked_out_too_long_gets_a_store_error(tmp_path: Path) -> None:
    with TrackStore(tmp_path, lock_timeout_s=0.3) as store:
        other = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match=r"write lock.*lock_timeout_s"):
                store.log_trajectory(make_trajectory(0))
        finally:
            other.execute("ROLLBACK")
        store.log_trajectory(make_trajectory(0))  # and recovers once the lock is gone
        assert store.count_trajectories() == 1


def test_a_run_folder_that_cannot_be_made_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError, match=r"cannot create the run folder.*writable"):
        TrackStore(tmp_path / "file" / "run")


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = TrackStore(tmp_path)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.count_trajectories()


def test_what_is_not_there_is_a_not_found_error_and_still_a_store_error(
    store: TrackStore, tmp_path: Path
) -> None:
    from referee.errors import NotFoundError, exit_code_for

    store.start_run("r1", {})
    missing = [
        lambda: TrackStore(tmp_path / "nowhere", create=False),
        lambda: store.run("r9"),
        lambda: store.end_run("r9"),
        lambda: store.trajectory("nope"),
        lambda: store.task("demo/zzz"),
        lambda: store.set_audit_status("nope", "done"),
    ]
    for call in missing:
        with pytest.raises(NotFoundError) as e:
            call()
        assert isinstance(e.value, StoreError) and exit_code_for(e.value) == 2
    store.close()
    with pytest.raises(StoreError) as closed:  # a broken or closed store is not "not found"
        store.count_trajectories()
    assert not isinstance(closed.value, NotFoundError) and exit_code_for(closed.value) == 1
