"""The task file ``referee train --task-file`` takes, checked: read by the configuration's
validation (before any work) and by the task pool (:mod:`.tasks`)."""

from __future__ import annotations

from referee.errors import ConfigError
from referee.tasks.model import Task, TaskKind, read_tasks

__all__ = ["read_task_file"]


def read_task_file(path: str) -> list[Task]:
    """The tasks of ``path`` that ``referee train`` can use: function tasks with a reference
    solution, some held out (to measure the run) and some not (to train on).

    Raises :class:`ConfigError` naming the command that makes such a file, before any work.
    """
    tasks = read_tasks(path)
    usable = [t for t in tasks if t.kind == TaskKind.FUNCTION and "reference" in t.hidden]
    if not usable:
        raise ConfigError(
            f"{path} has no function tasks with a reference solution (kind 'function', "
            "hidden.reference); referee train fine-tunes on references"
        )
    heldout = sum(t.split == "heldout" for t in usable)
    fix = (
        f"assign the splits with `referee tasks split {path} --heldout 0.2 --by module "
        "--out split.jsonl` and pass --task-file split.jsonl"
    )
    if not heldout:
        raise ConfigError(
            f"{path} has no held-out tasks, so nothing would measure the training; {fix}"
        )
    if heldout == len(usable):
        raise ConfigError(f"{path} has no training tasks, every one is held out; {fix}")
    return usable
