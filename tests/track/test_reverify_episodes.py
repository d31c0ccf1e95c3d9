"""``referee reverify`` on multi-turn episodes: recorded tool calls replayed in a fresh
environment and the final state judged again; a record that cannot be replayed faithfully is
skipped with the exact reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from referee.cli import app
from referee.domains.sql.families import make_task
from referee.domains.sql.verifier import SqlVerifier
from referee.envs import make_env
from referee.envs.base import EpisodeLimits
from referee.policy import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.rollout.sink import JsonlSink
from referee.rollout.trajectory import Trajectory
from referee.tasks.model import write_tasks


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": f"c-{name}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }  # fmt: skip


def _episodes(task: Any, gold: str) -> list[Trajectory]:
    """Two real three-turn SQL episodes (explore, then submit the right and a wrong query)."""
    wrong = "SELECT 1"
    out = []
    with SqlVerifier() as verifier:
        for final in (gold, wrong):
            script = [
                _call("show_schema"),
                _call("run_query", query="SELECT count(*) FROM orders"),
                _call("submit", query=final),
            ]
            runner = RolloutRunner(
                lambda: make_env("sql", verifier=verifier),
                ScriptedPolicy(script),
                limits=EpisodeLimits(max_turns=6),
                max_infra_retries=0,
            )
            [traj] = runner.run_sync([task])
            assert traj.error is None and len(traj.turns) == 3, traj.error
            out.append(traj)
    return out


def test_multi_turn_episodes_are_replayed_and_judged_or_skipped_with_the_reason(
    tmp_path: Path,
) -> None:
    task = make_task("sql-join", 0.7, 0)
    right, wrong = _episodes(task, task.hidden["reference"])
    assert right.reward == 1.0 and wrong.reward is not None and wrong.reward < 1.0
    # A record whose stored reward is wrong (as after a verifier bug): the replay shows it.
    misjudged = right.model_copy(update={"id": "misjudged"})
    assert misjudged.verdict is not None
    misjudged.verdict = misjudged.verdict.model_copy(update={"reward": 0.0, "passed": False})
    # A record whose tool result differs from what the environment gives today.
    tampered = right.model_copy(deep=True, update={"id": "tampered"})
    tampered.turns[1].observations[0]["content"] = "count\n999999"
    # A record that ran under a distribution-shift wrapper.
    shifted = right.model_copy(update={"id": "shifted", "shift": [{"spec": "noisy-tools"}]})
    run = tmp_path / "run"
    with JsonlSink(run / "trajectories.jsonl") as sink:
        for t in (right, wrong, misjudged, tampered, shifted):
            sink.log_trajectory(t)
    stored = (run / "trajectories.jsonl").read_bytes()
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(tasks, [task])

    result = CliRunner().invoke(app, ["reverify", str(run), "--tasks", str(tasks), "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["summary"]["unchanged"] == 2, report  # right and wrong, judged as recorded
    assert report["summary"]["newly_passing"] == 1
    assert report["summary"]["skipped"] == 2
    by_id = {c["trajectory_id"]: c for c in report["changed"]}
    assert by_id["misjudged"]["new_reward"] == 1.0 and by_id["misjudged"]["new_passed"] is True
    assert by_id["misjudged"]["new_verifier"].startswith("sql")
    assert "tool results differ from the record at turn 2 of 3" in by_id["tampered"]["note"]
    assert "999999" in by_id["tampered"]["note"]
    assert "distribution-shift" in by_id["shifted"]["note"]
    assert "noisy-tools" in by_id["shifted"]["note"]
    assert (run / "trajectories.jsonl").read_bytes() == stored  # nothing written over the run
