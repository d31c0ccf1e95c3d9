"""issue 20, QA findings 8 and 14: errors and help speak the command line's words, and an
option a task file overrides is refused instead of ignored."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from referee.cli import app


def _one_line(args: list[str]) -> str:
    r = CliRunner().invoke(app, args)
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("referee: "), r.output
    return lines[0]


def test_exec_names_its_own_flags():
    line = _one_line(["exec", "--timeout", "-1", "--", "true"])
    assert line.startswith("referee: --timeout must be") and "timeout_s" not in line
    line = _one_line(["exec", "--memory", "8", "--", "true"])
    assert line.startswith("referee: --memory must be") and "memory_mb" not in line


def test_train_names_flags_not_internal_options(tmp_path: Path):
    line = _one_line(["train", "--steps", "-1", "--run-dir", str(tmp_path / "r")])
    assert "--steps must be" in line and "rl_steps" not in line


def test_train_refuses_tasks_with_a_task_file(tmp_path: Path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text("")
    line = _one_line(["train", "--task-file", str(pool), "--tasks", "60",
                      "--run-dir", str(tmp_path / "r")])  # fmt: skip
    assert "--tasks cannot apply with --task-file" in line
    assert not (tmp_path / "r").exists()


def test_train_json_help_says_what_the_readme_says():
    r = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert "one JSON object" in r.output and "Last stdout line" not in r.output


def test_the_multi_turn_system_prompt_is_logged_filled_in():
    from referee.experiments.listops.multi_turn import SYSTEM, system_prompt

    assert "{solution}" in SYSTEM and "{" not in system_prompt()
    assert "solution.py" in system_prompt()
