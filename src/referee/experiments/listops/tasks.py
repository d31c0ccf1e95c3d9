"""The experiment's tasks: ``list-ops`` tasks (or a task file) split by structure and recorded,
the prompt a task shows the model, and the tasks earlier runs' audits quarantined.

A held-out task's composition (the kinds of its steps) was never trained on; *dev* is a share
of the training structures kept out of training, for choosing settings: the held-out split is
only ever reported, never used to pick anything. The tests of generated tasks are recorded by
running the reference in the sandbox.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from referee.errors import ConfigError
from referee.experiments.listops.config import TasksConfig
from referee.experiments.listops.task_file import read_task_file
from referee.tasks.compact import compact_prompt
from referee.tasks.model import Task
from referee.tasks.procedural import generate
from referee.tasks.split import assign_split

__all__ = [
    "check_generated_splits",
    "draft_tasks",
    "prepare_tasks",
    "quarantined_tasks",
    "read_task_file",
    "task_prompt",
]


def prepare_tasks(
    cfg: TasksConfig, sandbox: Any, *, seed: int = 0
) -> tuple[list[Task], list[Task], list[Task]]:
    """Generate (or read), split by structure and record the tasks; returns (train, dev,
    held-out), dev and held-out cut to ``cfg.dev_tasks`` and ``cfg.eval_tasks``."""
    from referee.verify.record import record_function_tasks

    if cfg.task_file:
        recorded = _task_file(cfg.task_file, sandbox)
    else:
        recorded = record_function_tasks(sandbox, list(draft_tasks(cfg, seed)))
    train: list[Task] = []
    dev: list[Task] = []
    for t in recorded:
        if t.split == "train":
            unit = t.provenance.unit or t.id
            is_dev = assign_split(unit, cfg.dev_fraction, salt="referee-dev-v1") == "heldout"
            (dev if is_dev else train).append(t)
    if not train:  # a few training units, all drawn for dev: training needs them more
        train, dev = dev, []
    heldout = [t for t in recorded if t.split == "heldout"]
    random.Random(seed).shuffle(heldout)
    random.Random(seed).shuffle(dev)
    return train, dev[: cfg.dev_tasks], heldout[: cfg.eval_tasks]


@lru_cache(maxsize=1)
def draft_tasks(cfg: TasksConfig, seed: int = 0) -> tuple[Task, ...]:
    """The generated ``list-ops`` tasks of ``cfg``, each in its split (by structure), not yet
    recorded: cheap (well under a second for thousands), made once for the check before any
    work (:func:`check_generated_splits`) and for :func:`prepare_tasks`."""
    drafts = []
    for i in range(cfg.count):
        d = cfg.difficulties[i % len(cfg.difficulties)]
        t = generate("list-ops", difficulty=d, seed=seed * 1_000_003 + i)
        split = assign_split(t.provenance.unit or t.id, cfg.heldout_fraction)
        drafts.append(t.model_copy(update={"split": split}))
    return tuple(drafts)


def check_generated_splits(cfg: TasksConfig, seed: int = 0) -> None:
    """Refuse (:class:`ConfigError`, naming the fix) generated tasks with no held-out task (nothing
    would measure the run) or no training task; a task file's splits are checked on reading."""
    if cfg.task_file:
        return
    drafts = draft_tasks(cfg, seed)
    heldout = sum(t.split == "heldout" for t in drafts)
    train = len(drafts) - heldout
    if heldout and train:
        return
    missing = "held-out" if not heldout else "training"
    raise ConfigError(
        f"--tasks {cfg.count} makes {train} training and {heldout} held-out tasks (whole "
        f"structures are held out, {cfg.heldout_fraction:g} of them), so no {missing} task: "
        "ask for more --tasks (e.g. --tasks 100), or give a --task-file with both splits"
    )


def task_prompt(task: Task, style: str = "compact") -> str:
    """What the model reads for ``task``: its description (``compact``) or its code prompt."""
    code = str(task.payload["code_prompt"])
    return compact_prompt(code) if style == "compact" else code


def quarantined_tasks(folders: Iterable[str]) -> set[str]:
    """The task ids quarantined in the stores of ``folders`` (earlier runs); a folder without
    a store raises :class:`~referee.errors.StoreError`."""
    from referee.track.audit import quarantined_task_ids
    from referee.track.store import TrackStore

    out: set[str] = set()
    for folder in folders:
        with TrackStore(folder, create=False) as store:
            out |= quarantined_task_ids(store)
    return out


def _task_file(path: str, sandbox: Any) -> list[Task]:
    from referee.verify.record import record_function_tasks

    usable = read_task_file(path)
    todo = [t for t in usable if "expected" not in t.hidden]
    done = {t.id: t for t in record_function_tasks(sandbox, todo)} if todo else {}
    return [done.get(t.id, t) for t in usable]
