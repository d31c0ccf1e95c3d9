"""The server's tasks: every ``--tasks`` file read and checked before it listens."""

from __future__ import annotations

from collections.abc import Sequence

from referee.errors import ConfigError
from referee.tasks.model import Task, read_tasks

__all__ = ["load_task_files"]


def load_task_files(paths: Sequence[str]) -> list[Task]:
    """All tasks of ``paths``, in order; an id in two files is a :class:`ConfigError` naming
    both."""
    tasks: list[Task] = []
    origin: dict[str, str] = {}
    for path in paths:
        for task in read_tasks(path):
            if task.id in origin:
                raise ConfigError(
                    f"task id {task.id!r} is in both {origin[task.id]} and {path}; "
                    "serve each task once"
                )
            origin[task.id] = str(path)
            tasks.append(task)
    if not tasks:
        raise ConfigError(f"the --tasks file(s) {', '.join(map(str, paths))} hold no tasks")
    return tasks
