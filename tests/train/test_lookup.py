"""Long-lived reward workers see tasks written to their task file after they started."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.model import Task, write_tasks
from referee.train import verl
from referee.train.lookup import TASKS_ENV, resolve_task


def _task(n: int) -> Task:
    return Task.create(name=f"t/task{n:02d}-v1", prompt=f"Do thing {n:02d}.")


def test_verl_rows_find_tasks_re_exported_one_at_a_time(tmp_path: Path) -> None:
    """The check of issue 29: each task exported alone to the same path, then its row scored."""
    path = tmp_path / "tasks.jsonl"
    found = 0
    for n in range(24):
        write_tasks(path, [_task(n)])
        task = verl.row_task(f"t/task{n:02d}-v1", {}, tasks=str(path))
        found += task.id == f"t/task{n:02d}-v1"
    assert found == 24


def test_adapters_resolve_tasks_written_after_the_first_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tasks.jsonl"
    monkeypatch.setenv(TASKS_ENV, str(path))
    write_tasks(path, [_task(1)])
    assert resolve_task({"task_id": "t/task01-v1"}).id == "t/task01-v1"
    write_tasks(path, [_task(1), _task(2)])
    assert resolve_task({"extra_info": {"task_id": "t/task02-v1"}}).id == "t/task02-v1"


def test_a_deleted_task_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(1)])
    assert resolve_task({"task_id": "t/task01-v1"}, str(path))
    path.unlink()
    with pytest.raises(TaskError, match="is gone"):
        resolve_task({"task_id": "t/task01-v1"}, str(path))
    with pytest.raises(TaskError, match="is gone"):
        verl.row_task("t/task01-v1", {}, tasks=str(path))
