"""referee tasks as a ``verifiers`` v1 taskset (prime-rl's environments).

Written against ``verifiers`` 0.4.0 (``verifiers.v1``), checked by
``tests/trainers/test_verifiers_contract.py`` in the ``verifiers`` venv. This module imports
``verifiers`` at import time; the main package never imports it.

verifiers finds a taskset by id: ``--env.taskset.id referee-tasks`` imports the **top-level**
module ``referee_tasks`` (a dotted id does not resolve; ``docs/trainer-adapters.md``), which
exports :class:`RefereeTaskset` and nothing else of its kind. In prime-rl's or verifiers'
config::

    [env.taskset]
    id = "referee-tasks"
    tasks = "/data/tasks.jsonl"     # or REFEREE_TASKS in the environment server's environment
    split = "train"                 # "heldout" for an evaluation taskset

or in Python ``load_taskset(RefereeTasksetConfig(id="referee-tasks", tasks=...))``.

* The taskset yields the tasks of one split only (``train`` by default), so a training run never
  sees a held-out task; a held-out task that is scored anyway (its data sent by hand) is refused
  with an error unless its taskset was made with ``split="heldout"``.
* Each task's ``@vf.reward`` ``referee`` judges ``trace.last_reply`` (the agent's final reply)
  by :func:`referee.envs.answers.text_answer`'s rule with the task kind's verifier, in a worker
  thread (the sandbox run never blocks the environment server's loop); no runtime is needed, so
  ``task.score(trace)`` works offline. An infrastructure failure (after 2 retries) raises, and
  verifiers records it as the rollout's ``TaskError`` (stop condition ``task_error``), not as a
  reward of 0.
* The environment is verifiers' ``SingleAgentEnv`` (one agent seat, single-turn). A multi-turn
  environment with referee's tools is not offered here: v1 tools are MCP toolsets launched per
  rollout in the agent's runtime (``Task.toolsets``), which needs a runtime this adapter does not
  set up.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any, Literal

import verifiers.v1 as vf

from referee.tasks.model import Task, read_tasks
from referee.train.lookup import TASKS_ENV, check_split, resolve_task, score_text

__all__ = [
    "RefereeData",
    "RefereeTask",
    "RefereeTaskConfig",
    "RefereeTaskset",
    "RefereeTasksetConfig",
    "task_data",
]

TASKSET_ID = "referee-tasks"


class RefereeTaskConfig(vf.TaskConfig):
    """Run-time knobs of each task (``--env.taskset.task.*``)."""

    allow_heldout: bool = False
    """Score held-out tasks (an evaluation taskset sets it)."""


class RefereeTasksetConfig(vf.TasksetConfig):
    """``--env.taskset.*``: which task file, which split."""

    task: RefereeTaskConfig = RefereeTaskConfig()
    tasks: str = ""
    """The task file (path or fsspec URL); empty: the ``REFEREE_TASKS`` variable."""
    split: Literal["train", "heldout"] = "train"
    """The split the taskset yields; ``heldout`` only for evaluation."""


class RefereeData(vf.TaskData):
    """What a trace records of a referee task: its id, split and kind, never its tests."""

    task_id: str
    split: str = "train"
    kind: str = "function"
    tasks: str = ""
    """The task file the task came from (empty: ``REFEREE_TASKS``)."""


def task_data(task: Task, tasks: str = "") -> RefereeData:
    """The verifiers task data of a referee task: its prompt (system messages as the system
    prompt) and its id."""
    system = "\n\n".join(m.content for m in task.prompt if m.role == "system")
    rest = [m for m in task.prompt if m.role != "system"]
    prompt: Any = (
        rest[0].content
        if len(rest) == 1 and rest[0].role == "user"
        else [m.model_dump() for m in rest]
    )
    return RefereeData(
        id=task.id,
        prompt=prompt,
        system_prompt=system or None,
        task_id=task.id,
        split=task.split,
        kind=task.kind.value,
        tasks=tasks,
    )


class RefereeTask(vf.Task[RefereeData, vf.State, RefereeTaskConfig]):
    """One referee task; its reward is referee's verifier on the final reply."""

    @property
    def key(self) -> str:
        return str(self.data.task_id)

    def referee_task(self) -> Task:
        data = self.data
        return resolve_task({"task_id": data.task_id}, data.tasks or None)

    @vf.reward
    async def referee(self, task: RefereeData, trace: vf.Trace) -> float:
        t = self.referee_task()
        check_split(t, allow_heldout=self.config.allow_heldout)
        verdict = await asyncio.to_thread(score_text, t, trace.last_reply)
        return float(verdict.reward)


class RefereeTaskset(vf.Taskset[RefereeTask, RefereeTasksetConfig]):
    """The tasks of one split of a referee task file (see the module docstring)."""

    def __init__(self, config: vf.TasksetConfig) -> None:
        if not isinstance(config, RefereeTasksetConfig):
            # load_taskset(TasksetConfig(id=...)) passes the base config as it is.
            config = RefereeTasksetConfig.model_validate(
                {**config.model_dump(exclude={"task"}), "task": config.task.model_dump()}
            )
        super().__init__(config)

    def load(self) -> Iterator[RefereeTask]:
        path = self.config.tasks or os.environ.get(TASKS_ENV, "")
        if not path:
            from referee.errors import ConfigError

            raise ConfigError(
                f"no task file: set --env.taskset.tasks PATH or {TASKS_ENV}=PATH for the "
                f"{TASKSET_ID} taskset"
            )
        split = self.config.split
        config = self.config.task.model_copy(update={"allow_heldout": split != "train"})
        for task in read_tasks(path):
            if task.split == split:
                yield RefereeTask(task_data(task, self.config.tasks), config)
