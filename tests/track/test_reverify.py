"""``referee reverify``: stored answers judged again with today's verifiers; what changed is
reported, and the stored rewards are left as they were."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from referee.cli import app
from referee.rollout.sink import JsonlSink
from referee.rollout.trajectory import Trajectory, Turn
from referee.tasks.model import Task, write_tasks
from referee.verify.verdict import Verdict

DOUBLE = Task.create(
    name="test/double-v1",
    prompt="Read an integer n and print 2n.",
    kind="program",
    answer_format="code",
    payload={"io": "stdin", "examples": [], "languages": None, "time_limit_s": 2.0},
    hidden={"cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in (1, 7, -4)]},
)
RIGHT = "```python\nprint(int(input()) * 2)\n```"
WRONG = "```python\nprint(int(input()) * 3)\n```"


def _traj(tid: str, text: str, reward: float, turns: int = 1) -> Trajectory:
    return Trajectory(
        id=tid,
        task_id=DOUBLE.id,
        policy="stored",
        env="code",
        turns=[
            Turn(index=i, assistant={"role": "assistant", "content": text}) for i in range(turns)
        ],
        verdict=Verdict(task_id=DOUBLE.id, reward=reward, passed=reward == 1.0, verifier="old"),
    )


def test_reverify_reports_what_changed_and_writes_nothing_over_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with JsonlSink(run / "trajectories.jsonl") as sink:
        sink.log_trajectory(_traj("right-recorded-wrong", RIGHT, 0.0))  # recorded wrong on purpose
        sink.log_trajectory(_traj("wrong-recorded-right", WRONG, 1.0))
        sink.log_trajectory(_traj("right", RIGHT, 1.0))
        sink.log_trajectory(_traj("multi-turn", RIGHT, 1.0, turns=2))
    stored = (run / "trajectories.jsonl").read_bytes()
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(tasks, [DOUBLE])
    out = tmp_path / "changes.jsonl"
    result = CliRunner().invoke(
        app, ["reverify", str(run), "--tasks", str(tasks), "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["summary"] == {
        "unchanged": 1,
        "newly_passing": 1,
        "newly_failing": 1,
        "reward_changed": 0,
        "previously_unjudged": 0,
        "infra_error": 0,
        "skipped": 1,
    }
    by_id = {c["trajectory_id"]: c for c in map(json.loads, out.read_text().splitlines())}
    assert by_id["right-recorded-wrong"]["change"] == "newly_passing"
    assert by_id["right-recorded-wrong"]["old_reward"] == 0.0
    assert by_id["right-recorded-wrong"]["new_reward"] == 1.0
    assert by_id["wrong-recorded-right"]["change"] == "newly_failing"
    assert by_id["right"]["change"] == "unchanged"
    assert by_id["multi-turn"]["change"] == "skipped"
    assert by_id["right"]["old_verifier"] == "old" and by_id["right"]["new_verifier"]
    assert (run / "trajectories.jsonl").read_bytes() == stored

    text = CliRunner().invoke(app, ["reverify", str(run), "--tasks", str(tasks)])
    assert text.exit_code == 0, text.output
    assert "newly_passing" in text.stdout and "4 answers" in text.stdout


def test_reverify_refusals_are_one_line_exit_2(tmp_path: Path) -> None:
    gone = CliRunner().invoke(app, ["reverify", str(tmp_path / "nope")])
    assert gone.exit_code == 2 and "does not exist" in gone.output
    run = tmp_path / "run"
    with JsonlSink(run / "trajectories.jsonl") as sink:
        sink.log_trajectory(_traj("a", RIGHT, 1.0))
    no_tasks = CliRunner().invoke(app, ["reverify", str(run)])
    assert no_tasks.exit_code == 2 and "--tasks" in no_tasks.output
    over = CliRunner().invoke(app, ["reverify", str(run), "--out", str(run / "trajectories.jsonl")])
    assert over.exit_code == 2 and "own data" in over.output
