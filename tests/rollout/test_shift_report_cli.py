"""``python -m referee.rollout.shift_report``: a real argument parser, and one line (no
traceback) for a file it cannot read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.rollout.shift_report import main
from referee.rollout.trajectory import Trajectory
from referee.verify.verdict import Verdict


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "referee.rollout.shift_report", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_help_prints_the_usage_and_exits_0() -> None:
    r = _run("--help")
    assert r.returncode == 0, r.stderr
    assert "usage:" in r.stdout and "TRAJECTORIES" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_a_missing_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main([str(missing)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert str(missing) in err and "no such file" in err.lower(), err


def test_a_file_that_is_not_trajectories_is_named_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a trajectory"}\n')
    assert main([str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert f"error: {bad}:1: not a trajectory record" in err.splitlines()[0], err
    assert "Traceback" not in err


def test_no_files_is_a_usage_error() -> None:
    r = _run()
    assert r.returncode == 2
    assert "usage:" in r.stderr and "Traceback" not in r.stderr


def test_the_table_of_good_files_still_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v = Verdict(task_id="t", reward=1.0, passed=True, verifier="x")
    path = tmp_path / "t.jsonl"
    path.write_text(Trajectory(task_id="t", policy="p", env="e", verdict=v).model_dump_json())
    assert main([str(path)]) == 0
    assert "| `clean` | 1 | 100% | 0 |" in capsys.readouterr().out
