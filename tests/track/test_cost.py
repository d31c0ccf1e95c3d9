"""Costs in the store: per trajectory, migrated from version 1, summed into a run's report;
a budget that runs out mid-run stops it with the reason recorded and nothing half-written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.policy import Generation, Sampling
from referee.rollout import BudgetExhausted, Cost, RolloutRunner, RunBudget, Trajectory, Turn
from referee.sandbox import Limits
from referee.tasks.model import Task
from referee.track.cost import cost_report
from referee.track.store import DB_NAME, TrackStore
from referee.verify.verdict import TestOutcome as Outcome
from referee.verify.verdict import Verdict

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.05:\n    pass\n"


def traj(i: int, task_id: str, passed: bool, cost: Cost, **kw) -> Trajectory:  # type: ignore[no-untyped-def]
    return Trajectory(
        id=f"t{i}",
        run_id="r1",
        task_id=task_id,
        policy="p",
        env="code",
        step=0,
        turns=[
            Turn(
                index=0,
                assistant={"role": "assistant", "content": "x" * 50},
                prompt_tokens=cost.prompt_tokens,
                completion_tokens=cost.completion_tokens,
            )
        ],
        verdict=Verdict(
            task_id=task_id,
            reward=float(passed),
            passed=passed,
            tests=[Outcome(name="a", status="passed" if passed else "failed")],
        ),
        cost=cost,
        **kw,
    )


def test_costs_are_stored_and_bytes_stored_is_what_was_written(tmp_path: Path) -> None:
    big = "y" * 5000  # over the artifact threshold below: written as an artifact
    with TrackStore(tmp_path, artifact_threshold=1000) as store:
        store.start_run("r1", {})
        t = traj(0, "a", True, Cost(sandbox_cpu_s=1.5, sandbox_runs=2, peak_memory_mb=12,
                                    wall_s=3.0, prompt_tokens=10, completion_tokens=4))  # fmt: skip
        t.turns[0].observations.append({"role": "tool", "content": big})
        store.log_trajectory(t)
        back = store.trajectory("t0")
        row = store._read(
            "SELECT json, sandbox_cpu_s, sandbox_runs, peak_memory_mb, wall_s, prompt_tokens, "
            "completion_tokens, bytes_stored FROM trajectories"
        )[0]
        others = store._read(
            "SELECT (SELECT sum(length(CAST(coalesce(content,'') AS BLOB)) + "
            "length(CAST(role AS BLOB)) + length(CAST(tool_calls_json AS BLOB)) + "
            "length(CAST(observations_json AS BLOB)) + length(CAST(trajectory_id AS BLOB))) "
            "FROM turns)"
        )[0][0]
    assert row[1:7] == (1.5, 2, 12.0, 3.0, 10, 4)
    n = row[7]
    # The number covers the record, its turns' rows and the artifact; the record reads back
    # as it was logged.
    assert len(row[0].encode()) + others + 5000 < n < len(row[0].encode()) + others + 5600
    assert back == t and back.cost.bytes_stored == 0
    assert store_sum(tmp_path) == n
    assert back.turns[0].observations[0]["content"] == big
    assert back.cost.sandbox_cpu_s == 1.5


def test_a_version_1_store_is_migrated_and_keeps_loading(tmp_path: Path) -> None:
    with TrackStore(tmp_path) as store:
        store.start_run("r1", {})
        t = traj(0, "a", True, Cost())
        t.turns = [t.turns[0].model_copy(update={"prompt_tokens": 9})]
        t.timings = {"total_s": 2.5}
        store.log_trajectory(t)
    # Back to version 1: no cost columns, no stop, records without a cost.
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        for column in ("sandbox_cpu_s", "sandbox_wall_s", "sandbox_runs", "peak_memory_mb",
                       "wall_s", "prompt_tokens", "bytes_stored"):  # fmt: skip
            db.execute(f"ALTER TABLE trajectories DROP COLUMN {column}")
        db.execute("ALTER TABLE runs DROP COLUMN stop_json")
        db.execute("UPDATE trajectories SET json = json_remove(json, '$.cost')")
        db.execute("PRAGMA user_version = 1")
        size = db.execute("SELECT length(CAST(json AS BLOB)) FROM trajectories").fetchone()[0]
    with TrackStore(tmp_path) as store:
        old = store.trajectory("t0")
        assert old.cost == Cost() and old.passed
        (row,) = store.cost_by_task("r1")
        assert (row.cost.wall_s, row.cost.prompt_tokens, row.cost.bytes_stored) == (2.5, 9, size)
        assert store.run("r1").stop is None
        store.end_run("r1", "stopped", stop={"reason": "budget", "budget": "tokens"})
        assert store.run("r1").stop == {"reason": "budget", "budget": "tokens"}


def test_the_report_sums_per_task_per_kind_and_per_pass(tmp_path: Path) -> None:
    fn = Task.create(name="f/one", prompt="p", kind="function", hidden={"tests": "x"})
    with TrackStore(tmp_path) as store:
        store.start_run("r1", {"budget": {"cpu_hours": 1.0, "tokens": 100, "wall_s": None}})
        store.add_tasks([fn])
        c = Cost(sandbox_cpu_s=2.0, sandbox_runs=1, peak_memory_mb=10, prompt_tokens=8,
                 completion_tokens=2, wall_s=1.0)  # fmt: skip
        store.log_trajectories([
            traj(0, fn.id, True, c), traj(1, fn.id, False, c),
            traj(2, "other/two", True, c.model_copy(update={"peak_memory_mb": 30})),
            traj(3, "other/two", True, c),
        ])  # fmt: skip
        store.end_run("r1")
        report = cost_report(store)
    total = report.total
    assert (total.rollouts, total.passed) == (4, 3)
    assert (total.cost.sandbox_cpu_s, total.cost.tokens, total.cost.peak_memory_mb) == (8, 40, 30)
    assert total.cost.bytes_stored > 4 * 300
    assert report.per_pass() == {"sandbox_cpu_s": pytest.approx(8 / 3, abs=1e-5),
                                 "tokens": pytest.approx(40 / 3, abs=1e-3),
                                 "wall_s": pytest.approx(4 / 3, abs=1e-5)}  # fmt: skip
    tasks = {line.key: line for line in report.by_task}
    assert tasks[fn.id].passed == 1 and tasks["other/two"].cost.peak_memory_mb == 30
    kinds = {line.key: (line.rollouts, line.passed) for line in report.by_kind}
    assert kinds == {"function": (2, 1), "unknown": (2, 2)}
    assert report.budget["tokens"] == {"limit": 100, "spent": 40.0, "share": 0.4}
    assert report.budget["cpu_hours"]["spent"] == pytest.approx(8 / 3600, abs=1e-6)
    assert "wall_s" not in report.budget
    assert json.loads(json.dumps(report.as_dict()))["total"]["per_pass"]["tokens"] > 13


class _Burn(Environment):
    """One turn; the verification burns 50 ms of CPU in the real sandbox."""

    name = "burn"

    def __init__(self, sandbox) -> None:  # type: ignore[no-untyped-def]
        self.sandbox, self.task, self._done = sandbox, None, False

    async def reset(self, task):  # type: ignore[no-untyped-def]
        self.task = task
        return [{"role": "user", "content": "?"}]

    def tools(self):  # type: ignore[no-untyped-def]
        return []

    async def step(self, message: ChatMessage) -> StepResult:
        self._done = True
        return StepResult(observations=[], done=True)

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        import asyncio

        r = await asyncio.to_thread(self.sandbox.run_python, BURN, limits=Limits(timeout_s=10))
        tests = [Outcome(name="t", status="passed" if r.ok else "error")]
        return Verdict(task_id=self.task.id, reward=1.0, passed=r.ok, tests=tests)  # type: ignore[union-attr]


class _Policy:
    name = "fixed"

    async def generate(self, messages, *, tools=None, sampling=Sampling()):  # type: ignore[no-untyped-def]
        return Generation(
            message={"role": "assistant", "content": "ok"}, prompt_tokens=20, completion_tokens=5
        )


def test_a_budget_that_runs_out_mid_run_stops_it_with_the_reason_and_whole_records(
    tmp_path: Path, sandbox
) -> None:
    tasks = [Task.create(name=f"b/t{i}", prompt="p", hidden={"answer": "x"}) for i in range(12)]
    budget = RunBudget(tokens=60)  # 25 tokens a rollout, one at a time: the third spends it
    with TrackStore(tmp_path) as store:
        store.start_run("r1", {"budget": budget.model_dump()})
        store.add_tasks(tasks)
        runner = RolloutRunner(
            lambda: _Burn(sandbox), _Policy(), concurrency=1, store=store, run_id="r1",
            budget=budget,
        )  # fmt: skip
        with pytest.raises(BudgetExhausted) as caught:
            for i in range(0, 12, 4):  # three "steps" of four tasks
                runner.run_sync(tasks[i : i + 4], step=i // 4)
        stop = caught.value.stop
        store.end_run("r1", "stopped", stop=stop.model_dump())

    with TrackStore(tmp_path, create=False) as store:
        run = store.run("r1")
        assert run.status == "stopped"
        assert run.stop is not None and run.stop["reason"] == "budget"
        assert (run.stop["budget"], run.stop["limit"], run.stop["spent"]) == ("tokens", 60, 75)
        stored = store.trajectories(run_id="r1")
        # Three rollouts of the first step finished (75 tokens); nothing started after that.
        assert len(stored) == len(caught.value.completed) == 3
        for t in stored:  # every stored trajectory is whole: turns, verdict, outcomes, cost
            assert t.verdict is not None and t.verdict.tests and len(t.turns) == 1
            assert t.cost.sandbox_runs == 1 and t.cost.sandbox_cpu_s >= 0.03
        counts = store._read(
            "SELECT (SELECT COUNT(*) FROM turns), (SELECT COUNT(*) FROM verdicts), "
            "(SELECT COUNT(*) FROM test_outcomes)"
        )[0]
        assert tuple(counts) == (len(stored),) * 3
        report = cost_report(store)
        assert report.total.cost.bytes_stored > 3 * 500
        assert report.stop == run.stop and report.total.cost.tokens == 75
        assert report.budget["tokens"]["share"] == 1.25
    # Nothing half-written: no temporary files beside the store.
    leftovers = [p.name for p in tmp_path.rglob("*") if ".tmp" in p.name or p.name.startswith(".")]
    assert leftovers == []


def store_sum(run_dir: Path) -> int:
    with TrackStore(run_dir, create=False) as store:
        return store.cost_by_task("r1")[0].cost.bytes_stored
