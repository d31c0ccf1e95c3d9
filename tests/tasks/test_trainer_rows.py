"""``referee tasks export --format F``: every trainer format makes one row per task of the split,
and each row names its task where that trainer's adapter looks for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.tasks.trainer_rows import ROW_FORMATS, export_tasks, row_function


def _tasks() -> list[Task]:
    train = [
        Task.create(name=f"demo/add-{i}", prompt="Write add(a, b).", split="train")
        for i in range(3)
    ]
    held = Task.create(name="demo/held", prompt="Write sub(a, b).", split="heldout")
    return [*train, held]


def _mentions(row: Any, task_id: str) -> bool:
    return task_id in json.dumps(row)


@pytest.mark.parametrize("fmt", sorted(ROW_FORMATS))
def test_each_format_writes_the_splits_tasks_and_names_them(fmt: str, tmp_path: Path) -> None:
    tasks = _tasks()
    out = tmp_path / f"{fmt}.jsonl"
    done = export_tasks(tasks, fmt, out, split="train", source=str(tmp_path / "t.jsonl"))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert done.rows == len(rows) == 3
    assert done.left_out.get("heldout") == 1
    for row, task in zip(rows, tasks[:3], strict=True):
        assert _mentions(row, task.id), (fmt, row)
    held = tmp_path / f"{fmt}-held.jsonl"
    assert export_tasks(tasks, fmt, held, split="heldout").rows == 1


def test_an_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"verl.*skyrl"):
        row_function("parquet-for-my-trainer")
