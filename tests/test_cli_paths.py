"""issue 20, QA findings 2 and 16: every output path or folder option is checked before any
work, like --out: one line naming the option and the fix, exit 2, nothing made."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.tasks.model import Task, write_tasks


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
