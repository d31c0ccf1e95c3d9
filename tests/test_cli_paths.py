"""issue 20, QA findings 2 and 16: every output path or folder option is checked before any
work, like --out: one line naming the option and the fix, exit 2, nothing made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.tasks.model import Task, write_tasks
from tests.s3 import free_port, fresh_s3fs


def _refused(args: list[str], says: str) -> None:
    r = CliRunner().invoke(app, args)
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("referee: "), r.output
    assert says in lines[0], lines[0]


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    write_tasks(path, [Task.create(name="t/a-v1", prompt="Do it.", kind="function")])
    return path


def test_tasks_split_out_in_a_missing_folder_or_onto_a_folder_is_refused(tasks, tmp_path):
    missing = tmp_path / "nonexistent" / "y.jsonl"
    split = ["tasks", "split", str(tasks), "--heldout", "0.2", "--by", "module", "--out"]
    _refused([*split, str(missing)], f"the folder {missing.parent} does not exist")
    (tmp_path / "runs").mkdir()
    _refused([*split, str(tmp_path / "runs")], "is a folder; name the file to write")
    assert not missing.parent.exists()


def test_synth_store_in_a_missing_folder_is_refused_like_out(tmp_path):
    store = tmp_path / "nonexistent" / "store"
    out = str(tmp_path / "t.jsonl")
    _refused(["synth", str(tmp_path), "--out", out, "--store", str(store)], "--store")
    assert not store.parent.exists()
    (tmp_path / "afile").write_text("x")
    _refused(["synth", str(tmp_path), "--out", out, "--store", str(tmp_path / "afile")], "a file")


# --- task files and outputs at s3:// URLs (issue 13) ------------------------------------------


def _referee(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed command in a process of its own, reading the environment as a user's
    shell gives it (AWS_ENDPOINT_URL and the credentials: the s3 fixture sets them)."""
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_task_commands_read_and_write_s3_urls(tasks, s3):
    bucket, _ = s3
    split = f"s3://{bucket}/split.jsonl"
    args = ["tasks", "split", str(tasks), "--heldout", "0.5", "--by", "module", "--out", split]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    listed = _referee("tasks", "list", split, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == ["t/a-v1"]


def test_a_missing_or_unreachable_s3_task_file_is_one_line(s3, monkeypatch):
    bucket, _ = s3
    missing = CliRunner().invoke(app, ["tasks", "list", f"s3://{bucket}/nope.jsonl"])
    assert missing.exit_code == 2, missing.output
    assert missing.output.strip() == (
        f"referee: cannot read task file 's3://{bucket}/nope.jsonl': No such file or directory"
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")  # nobody there
    fresh_s3fs()
    down = CliRunner().invoke(app, ["tasks", "stats", f"s3://{bucket}/t.jsonl"])
    lines = down.output.strip().splitlines()
    assert down.exit_code == 1 and len(lines) == 1, down.output  # no traceback
    assert lines[0].startswith(f"referee: cannot read s3://{bucket}/t.jsonl: ")
    assert "AWS_ENDPOINT_URL" in lines[0]


def test_an_s3_out_is_checked_before_any_work(tasks, s3, monkeypatch):
    bucket, _ = s3
    split = ["tasks", "split", str(tasks), "--heldout", "0.2", "--by", "module", "--out"]
    _refused([*split, "s3://no-such-bucket-referee/y.jsonl"], "the bucket 'no-such-bucket-referee'")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    fresh_s3fs()
    _refused([*split, f"s3://{bucket}/y.jsonl"], "cannot reach the store")
