"""What the CLI prints for people and for scripts: nothing cut, plain text when piped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.tasks.model import Task, write_tasks
from referee.tasks.procedural import FAMILIES

LONG_ID = "synth/minilib/bugfix-minilib-textutil.py-normalize_whitespace-3fa9c2b1d0-v1"


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    tasks = [
        Task.create(
            name=LONG_ID,
            prompt="Fix it.",
            kind="function",
            split="train",
            hidden={"reference": "return 1", "inputs": [[1], [2]]},
        ),
        Task.create(
            name="t/short-v1",
            prompt="Do it.",
            kind="function",
            split="heldout",
            hidden={"reference": "return 2", "inputs": [[3]]},
        ),
    ]
    path = tmp_path / "mini.jsonl"
    write_tasks(path, tasks)
    return path


def test_tasks_list_redirected_is_plain_tab_separated_text_with_whole_ids(task_file, tmp_path):
    # `referee tasks list mini.jsonl > ids.txt`, in a real process (stdout is a file)
    out = tmp_path / "ids.txt"
    with out.open("wb") as f:
        p = subprocess.run([sys.executable, "-m", "referee.cli", "tasks", "list", str(task_file)],
                           stdout=f, stderr=subprocess.PIPE, timeout=120,
                           env={**os.environ, "COLUMNS": "80"})  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines()
    assert lines == [f"{LONG_ID}\ttrain\tcode\tcode\t2", "t/short-v1\theldout\tcode\tcode\t1"]


def test_tasks_list_on_a_terminal_of_80_columns_keeps_ids_whole(task_file, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: stdout is a terminal
    monkeypatch.setenv("COLUMNS", "80")
    r = CliRunner().invoke(app, ["tasks", "list", str(task_file)])
    assert r.exit_code == 0, r.output
    assert LONG_ID in r.stdout and "…" not in r.stdout


def test_tasks_stats_reads_as_text_not_python_dicts(task_file):
    r = CliRunner().invoke(app, ["tasks", "stats", str(task_file)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert "{" not in r.stdout and "'" not in r.stdout
    assert "tasks: 2" in lines and "by split: heldout 1, train 1" in lines
    assert "tests: 3 (per task 1 to 2)" in lines


def test_tasks_generate_help_names_every_family():
    r = CliRunner().invoke(app, ["tasks", "generate", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "list-ops" in FAMILIES
    for family in FAMILIES:
        assert family in r.stdout, family


def test_redteam_piped_is_one_plain_line_per_exploit(monkeypatch):
    import contextlib
    from types import SimpleNamespace

    import referee.verify.function as function
    import referee.verify.redteam as redteam

    name = "forge-frames-via-frame-inspection-and-a-long-name"
    flag = SimpleNamespace(kind="frame-inspection")
    result = SimpleNamespace(
        exploit=SimpleNamespace(name=name, klass="log-spoofing"),
        verdicts=[SimpleNamespace(flags=[flag])] * 8,
        rejected=True,
        max_reward=0.0,
    )
    monkeypatch.setattr(function, "harness_sandbox", contextlib.nullcontext)
    monkeypatch.setattr(function, "FunctionVerifier", lambda *a, **k: None)
    monkeypatch.setattr(redteam, "default_targets", lambda sb: [])
    monkeypatch.setattr(redteam, "run_corpus", lambda fv, targets: [result])
    r = CliRunner().invoke(app, ["redteam"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [f"{name}\tlog-spoofing\t8\tyes\t0.00\tframe-inspection"]


# ---- referee train's output (issue 20) ---------------------------------------------------------


@pytest.fixture
def fake_train(monkeypatch, tmp_path):
    """`referee train` with the experiment replaced: it logs a stage and returns results whose
    run folder is a long path."""
    from types import SimpleNamespace

    import referee.experiments.listops as listops

    run = tmp_path / ("a-rather-long-folder-name-for-runs-" * 3) / "train-20260101-120000"

    def fake(cfg, log):
        log("fine-tuning: 20 steps in 8.4 s, loss 4.03 -> 0.02")
        data = {"run_dir": str(run), "heldout_tasks": 4, "heldout_sft": 0.25, "heldout_rl": 0.5}
        return SimpleNamespace(to_json=lambda: data)

    monkeypatch.setattr(listops, "run_experiment", fake)
    monkeypatch.setenv("COLUMNS", "80")
    return run


def test_train_prints_its_table_on_stdout_and_the_run_folder_whole(fake_train):
    r = CliRunner().invoke(app, ["train", "--run-dir", str(fake_train)])
    assert r.exit_code == 0, r.output
    assert "held-out pass@1" in r.stdout and "after GRPO" in r.stdout
    assert f"run folder: {fake_train}" in r.stdout.splitlines()  # one line, never split
    assert "fine-tuning:" not in r.stdout and "fine-tuning: 20 steps" in r.stderr  # the log


def test_train_json_keeps_stdout_to_the_one_json_line(fake_train):
    import json

    r = CliRunner().invoke(app, ["train", "--run-dir", str(fake_train), "--json"])
    assert r.exit_code == 0, r.output
    (line,) = r.stdout.splitlines()
    assert json.loads(line)["run_dir"] == str(fake_train)
    assert "held-out pass@1" in r.stderr


def test_train_help_names_the_default_run_folder():
    r = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert "default runs/train-<time>" in " ".join(r.stdout.split())


def test_tasks_families_and_sources_list_the_domains_too():
    from referee.domains import family_names
    from referee.tasks.sources import source_names

    families = CliRunner().invoke(app, ["tasks", "families"])
    assert families.exit_code == 0, families.output
    rows = [line.split("\t") for line in families.stdout.splitlines()]
    assert [r[0] for r in rows] == family_names()
    domains = {r[1] for r in rows}
    assert {"code", "sql", "dataframe", "numeric", "shell", "toolworld", "verilog"} <= domains
    sources = CliRunner().invoke(app, ["tasks", "sources"])
    assert sources.exit_code == 0, sources.output
    names = [line.split("\t")[0] for line in sources.stdout.splitlines()]
    assert names == source_names() and {"humaneval", "text-to-sql", "toolworld-rows"} <= set(names)
