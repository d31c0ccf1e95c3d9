"""How a trainer's row or a reward protocol's label names a referee task, and which kinds run
in the code environment: the pieces the trainer adapters (:mod:`referee.train.lookup`), the
service's trainer protocols (:mod:`referee.service.compat`) and the Ray pool's shared judges
(:mod:`referee.cluster.shared`) all read, kept here, below all three, so none imports another
upward.

>>> task_id_of({"extra_info": {"task_id": "HumanEval/0"}})
'HumanEval/0'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from referee.errors import ConfigError
from referee.tasks.kinds import TaskKind

__all__ = ["CODE_KINDS", "TASKS_ENV", "label_task_id", "label_task_id_or_none", "task_id_of"]

#: The environment variable naming the task file a trainer's rows were exported from (inherited
#: by the trainers' worker processes and threads).
TASKS_ENV = "REFEREE_TASKS"

#: Kinds whose episodes run in :class:`~referee.envs.code.CodeEnv`; every other kind (a
#: domain's: sql, dataframe, numeric, shell, toolworld, verilog) in the environment registered
#: under the kind's name (``make_env(task.kind.value)``), which CodeEnv leaves to it (it refuses
#: a domain's task).
CODE_KINDS = frozenset(
    {TaskKind.FUNCTION, TaskKind.PROGRAM, TaskKind.REPO_PATCH, TaskKind.TEST_WRITING}
)


def task_id_of(row: Mapping[str, Any]) -> str:
    """The task id a trainer's row names: the first of ``task_id``, ``extra_info.task_id``,
    ``reward_spec.ground_truth`` (SkyRL), ``reward_model.ground_truth`` (veRL) or
    ``ground_truth`` (rLLM); a :class:`ConfigError` naming the row's keys if none."""
    candidates: list[Any] = [row.get("task_id")]
    for outer in ("extra_info", "reward_spec", "reward_model"):
        inner = row.get(outer)
        if isinstance(inner, Mapping):
            candidates += [inner.get("task_id"), inner.get("ground_truth")]
    candidates.append(row.get("ground_truth"))
    for c in candidates:
        if isinstance(c, str) and c:
            return c
    raise ConfigError(
        "the row names no referee task: expected task_id, extra_info.task_id, "
        f"reward_spec.ground_truth or reward_model.ground_truth; its keys are {sorted(row)}"
    )


def label_task_id_or_none(label: Any) -> str | None:
    """The task id a reward-protocol label carries (OpenRLHF's and slime's ``--label-key``
    column), or None: the id itself (``"HumanEval/0"``), or a JSON object with a ``task_id``
    string, given as a string (``'{"task_id": "HumanEval/0"}'``) or as an object. The one rule
    for these labels: referee's reward service (:mod:`referee.service.compat.rewards`) and the
    in-process adapters (:mod:`referee.train.openrlhf`, :mod:`referee.train.slime`) both use it.

    >>> label_task_id_or_none("HumanEval/0"), label_task_id_or_none('{"task_id": "HumanEval/0"}')
    ('HumanEval/0', 'HumanEval/0')
    """
    value: Any = label
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            value = json.loads(label)
        except ValueError:
            value = label  # not JSON after all: an id that starts with a brace
    if isinstance(value, Mapping):
        value = value.get("task_id")
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def label_task_id(label: Any) -> str:
    """:func:`label_task_id_or_none`, with a :class:`ConfigError` for a label naming no task."""
    tid = label_task_id_or_none(label)
    if tid is None:
        shown = repr(label)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise ConfigError(
            f"cannot read a task id from the label {shown}; the label must be the task id "
            '(a string, e.g. "HumanEval/0") or a JSON object with a "task_id" string'
        )
    return tid
