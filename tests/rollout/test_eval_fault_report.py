"""issue 20, QA finding 5: an unreachable server is said once, whole: `referee eval` against it
prints one line (the error), nothing cut mid-word; a runner that logs faults never cuts them."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import referee
from referee.cli import app
from referee.errors import PolicyError
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner
from tests.rollout.fakes import AnswerEnv, Tracker, task

LONG = "could not reach http://127.0.0.1:9/v1/chat/completions (ConnectError: " + "x" * 200 + ")"


def server_down(messages, tools):  # type: ignore[no-untyped-def]
    raise PolicyError(LONG)


def test_the_repeat_count_does_not_repeat_or_cut_the_message(caplog: pytest.LogCaptureFixture):
    r = RolloutRunner(
        lambda: AnswerEnv(Tracker()), ScriptedPolicy(server_down), retry_backoff_s=0.0
    )
    with caplog.at_level(logging.WARNING, logger="referee.rollout.runner"):
        r.run_sync([task(f"down/{i}") for i in range(2)])
    lines = [rec.getMessage() for rec in caplog.records]
    assert len(lines) == 2 and LONG in lines[0], lines
    assert "could not reach" not in lines[1] and "..." not in lines[1], lines[1]
    assert "down/0" in lines[1]


def test_eval_against_a_server_that_is_down_prints_one_whole_line(tmp_path):
    tasks = tmp_path / "t.jsonl"
    made = CliRunner().invoke(
        app, ["tasks", "generate", "list-ops", "--count", "2", "--out", str(tasks)]
    )
    assert made.exit_code == 0, made.output
    policy = "openai:http://127.0.0.1:9/v1#m"  # nothing listens on the discard port
    # In a process of its own: the runner's warnings reach stderr as they do for a user.
    src = str(Path(referee.__file__).parents[1])
    p = subprocess.run(
        [sys.executable, "-m", "referee.cli", "eval", "--policy", policy, "--tasks", str(tasks),
         "--split", "all", "--limit", "1"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    lines = [line for line in (p.stdout + p.stderr).splitlines() if line.strip()]
    assert p.returncode == 1, p.stderr
    assert len(lines) == 1 and lines[0].startswith("referee: no episode"), lines
    assert "could not reach http://127.0.0.1:9/v1/chat/completions" in lines[0]
    assert "..." not in lines[0]
