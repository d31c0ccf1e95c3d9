"""A task file as a trainer's dataset: ``referee tasks export TASKS.jsonl --format F --out FILE``.

:data:`ROW_FORMATS` maps a format name to the function that makes one task's row: ``row(task,
index, source=...)``, where ``source`` is where the task file lives (an absolute local path or
a URL: rows that do not carry their task name it, so the trainer's reward can find it). A
trainer's format is one function and one entry here; the CLI, the split rule and the writing
are shared (:func:`export_tasks`).

Held-out tasks leave only with ``split="heldout"`` (an evaluation file), never in a training
file; canary tasks never (:func:`referee.tasks.selection.select_split`).

**veRL** (:func:`verl_row`): the columns veRL's ``RLHFDataset`` reads: ``data_source``
(``referee/<domain>``), ``prompt`` (the task's chat messages), ``ability``, ``reward_model:
{style: "rule", ground_truth: <task id>}``, ``extra_info: {index, task_id, split, ...}``, and
``agent_name`` when an agent loop is named. Where the reward finds the task
(:func:`referee.train.verl.compute_score`):

* a **training** row carries the whole task as JSON in ``extra_info.referee_task``, so veRL's
  reward workers judge it with no task file, on any node. Its hidden tests are in the file:
  veRL shows the model the ``prompt`` column only (``extra_info`` goes to the reward function
  and the agent loop), and a model trained on these tasks is shaped by those tests anyway;
* a **held-out** row carries no hidden data (its tests must not travel with datasets that get
  copied and shared): ``extra_info.referee_tasks`` names the task file it came from, which the
  reward reads (give it as a URL, or keep it where the reward workers can read it).

>>> from referee.tasks.model import Task
>>> row = verl_row(Task.create(name="demo/add-v1", prompt="Write add."), 0, source="t.jsonl")
>>> row["reward_model"], sorted(row["extra_info"])
({'style': 'rule', 'ground_truth': 'demo/add-v1'}, ['index', 'referee_task', 'split', 'task_id'])
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.errors import ConfigError
from referee.storage import is_local, local_path
from referee.tasks.model import Task
from referee.tasks.rows_file import write_dataset
from referee.tasks.selection import select_split

__all__ = ["ROW_FORMATS", "TaskExport", "export_tasks", "row_function", "verl_row"]

Row = dict[str, Any]
#: ``row(task, index, *, source, **options) -> row``; see the module.
RowFormat = Callable[..., Row]

#: ``extra_info`` keys referee's trainer adapters read.
TASK_KEY = "referee_task"  # the task as JSON (training rows)
TASKS_KEY = "referee_tasks"  # where the task file is (rows without the task)


def verl_row(
    task: Task,
    index: int,
    *,
    source: str | None = None,
    agent_name: str | None = None,
    data_source: str | None = None,
    embed: bool | None = None,
) -> Row:
    """One veRL row (see the module). ``embed``: carry the whole task (default: for training
    tasks only); a row without it names ``source``, the task file."""
    embed = task.split == "train" if embed is None else embed
    extra: Row = {"index": index, "task_id": task.id, "split": task.split}
    if embed:
        extra[TASK_KEY] = task.model_dump_json()
    elif source is not None:
        extra[TASKS_KEY] = source
    row: Row = {
        "data_source": data_source or f"referee/{task.domain}",
        "prompt": [m.model_dump() for m in task.prompt],
        "ability": task.domain,
        "reward_model": {"style": "rule", "ground_truth": task.id},
        "extra_info": extra,
    }
    if agent_name is not None:
        row["agent_name"] = agent_name
    return row


#: Format name -> row function. Add a trainer's format here (one function each).
#: Format name -> its row function, or where it lives (``"module:function"``): the other
#: trainers' rows are made by their adapters (``referee.train.*``, ``referee.service.compat``),
#: which sit above this module, so they are named here and imported only when used.
ROW_FORMATS: dict[str, RowFormat | str] = {
    "verl": verl_row,
    "skyrl": "referee.train.skyrl:skyrl_row",
    "rllm": "referee.train.rllm:rllm_row",
    "areal": "referee.train.areal:areal_row",
    "nemo-gym": "referee.service.compat.nemo_gym:nemo_gym_row",
}


def row_function(fmt: str) -> RowFormat:
    """The row function of ``fmt`` as ``row(task, index, *, source, **options)``: a function
    that takes fewer arguments is given only those it takes (``index`` by position, ``source``
    and options by name). An unknown format is a :class:`ConfigError` naming the known ones."""
    entry = ROW_FORMATS.get(fmt)
    if entry is None:
        raise ConfigError(f"unknown format {fmt!r}; choose one of: {', '.join(ROW_FORMATS)}")
    if not isinstance(entry, str):
        return entry
    module, _, name = entry.partition(":")
    fn: Callable[..., Row] = getattr(importlib.import_module(module), name)
    params = inspect.signature(fn).parameters
    positional = [
        p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]

    def row(task: Task, index: int, **options: Any) -> Row:
        kwargs = {k: v for k, v in options.items() if k in params and v is not None}
        return fn(task, index, **kwargs) if len(positional) >= 2 else fn(task, **kwargs)

    return row


@dataclass(frozen=True)
class TaskExport:
    """What :func:`export_tasks` wrote: ``rows``, and the tasks it ``left_out`` by reason."""

    rows: int
    left_out: dict[str, int] = field(default_factory=dict)


def task_file_source(path: str | os.PathLike[str]) -> str:
    """How rows name their task file: a URL as given, a local path made absolute."""
    return str(local_path(path).resolve()) if is_local(path) else str(path)


def export_tasks(
    tasks: list[Task],
    fmt: str,
    out: str | os.PathLike[str],
    *,
    split: str = "train",
    source: str | None = None,
    **options: Any,
) -> TaskExport:
    """Rows of ``fmt`` for the tasks of ``split`` (held-out ones only with ``split="heldout"``;
    canaries never), written whole to ``out`` (``.parquet`` or ``.jsonl``; a URL works).
    ``options`` go to the format's row function (``agent_name=`` for veRL)."""
    make = row_function(fmt)
    chosen = select_split(tasks, split)
    rows = [make(t, i, source=source, **options) for i, t in enumerate(chosen.tasks)]
    return TaskExport(write_dataset(rows, out), chosen.left_out)
