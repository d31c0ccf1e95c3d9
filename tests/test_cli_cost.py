"""``referee cost --run DIR``: a run's costs as a table, or as JSON; a bad folder exits 2."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from referee.cli import app
from referee.rollout import BudgetStop, Cost, Trajectory, Turn
from referee.tasks.model import Task
from referee.track.store import TrackStore
from referee.verify.verdict import Verdict


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args))


def _store(run_dir: Path) -> None:
    task = Task.create(name="c/one", prompt="p", kind="function", hidden={"tests": "x"})
    with TrackStore(run_dir) as store:
        store.start_run("r1", {"budget": {"cpu_hours": None, "tokens": 50, "wall_s": None}})
        store.add_tasks([task])
        for i, passed in enumerate([True, False, True]):
            cost = Cost(sandbox_cpu_s=0.5, sandbox_wall_s=0.75, sandbox_runs=2,
                        peak_memory_mb=14.5, wall_s=1.0, prompt_tokens=12, completion_tokens=8)  # fmt: skip
            turn = Turn(index=0, assistant={"role": "assistant", "content": "x"},
                        prompt_tokens=12, completion_tokens=8)  # fmt: skip
            verdict = Verdict(task_id=task.id, reward=float(passed), passed=passed)
            t = Trajectory(id=f"t{i}", run_id="r1", task_id=task.id, policy="p", env="e",
                           turns=[turn], verdict=verdict, cost=cost)  # fmt: skip
            store.log_trajectory(t)
        stop = BudgetStop(budget="tokens", limit=50, spent=60)
        store.end_run("r1", "stopped", stop=stop.model_dump())


def test_cost_prints_totals_kinds_tasks_per_pass_budget_and_stop(tmp_path: Path) -> None:
    _store(tmp_path)
    r = _run("cost", "--run", str(tmp_path))
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "cost of run r1 (stopped)" in out
    total = next(line for line in out.splitlines() if "total" in line)
    for cell in ("3", "2", "1.50", "2.25", "6", "14.5", "3.0", "36", "24"):
        assert f" {cell} " in f" {total} ", (cell, total)
    assert "kind function" in out and "c/one" in out
    assert "per passed rollout: 0.750 CPU s, 30.0 tokens, 1.500 s" in out
    assert "budget tokens: 60 of 50 (120%)" in out
    assert "stopped: budget (tokens: 60 of 50)" in out


def test_cost_json_has_every_task_and_the_stop(tmp_path: Path) -> None:
    _store(tmp_path)
    r = _run("cost", "--run", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["run_id"] == "r1" and data["stop"]["budget"] == "tokens"
    assert data["total"]["sandbox_cpu_s"] == 1.5 and data["total"]["tokens"] == 60
    assert data["total"]["per_pass"] == {"sandbox_cpu_s": 0.75, "tokens": 30.0, "wall_s": 1.5}
    assert data["total"]["bytes_stored"] > 0
    assert [k["key"] for k in data["by_kind"]] == ["function"]
    assert data["budget"]["tokens"] == {"limit": 50, "spent": 60.0, "share": 1.2}


def test_cost_of_a_folder_without_a_store_exits_2_naming_the_fix(tmp_path: Path) -> None:
    r = _run("cost", "--run", str(tmp_path / "nowhere"))
    assert r.exit_code == 2
    text = " ".join(r.output.split())
    assert "--run" in text and "not a run folder" in text and "referee train" in text
    _store(tmp_path)
    r = _run("cost", "--run", str(tmp_path), "--run-id", "nope")
    assert r.exit_code == 2 and "no run 'nope'" in r.output and "known: r1" in r.output
