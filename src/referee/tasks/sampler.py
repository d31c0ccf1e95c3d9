"""The held-out guard: the training sampler, which cannot return a held-out task.

A task's split is fixed when it is created (:mod:`referee.tasks.split`). Held-out numbers mean
something only if training never saw those tasks, so the sampler enforces it twice:

* at construction it keeps the tasks whose ``split`` is ``"train"`` and remembers the ids and
  content hashes of the others (a training task with the same content as a held-out one is a
  leak, and refused);
* at every return it checks each task again: its id must be one it was built with, not a
  held-out id, with the same content hash, and its ``split`` still ``"train"``. Whatever
  happened in between (a task object changed in place, a held-out id slipped into the
  curriculum, a state loaded from elsewhere), it raises :class:`~referee.errors.TaskError`
  naming the task rather than return it.

Outcomes for held-out tasks are refused too, so evaluation results cannot steer the curriculum.
Evaluation takes its tasks from :func:`heldout_tasks`.

>>> from referee.tasks import Group, Task
>>> tasks = [Task.create(name=f"t/{i}", prompt=f"task {i}", split=s)
...          for i, s in enumerate(["train", "heldout", "train"])]
>>> sampler = TrainingSampler(tasks, seed=0)
>>> sorted(t.id for t in sampler.sample(2))
['t/0', 't/2']
>>> [t.id for t in heldout_tasks(tasks)]
['t/1']
>>> sampler.update(Group("t/1", [1.0]))                     # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
referee.errors.TaskError: task 't/1' is held out: its outcomes must not reach the training ...
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from referee.errors import ConfigError, TaskError
from referee.tasks.curriculum import Curriculum, FilterReport, G, GroupLike
from referee.tasks.model import Task

__all__ = ["TrainingSampler", "heldout_tasks"]


def heldout_tasks(tasks: Iterable[Task]) -> list[Task]:
    """The held-out tasks, for evaluation. None at all is an error: there would be no result."""
    tasks = list(tasks)
    out = [t for t in tasks if t.split == "heldout"]
    if not out:
        raise TaskError(
            f"none of the {len(tasks)} tasks is held out (split='heldout'), so there is nothing to "
            "evaluate on; create the tasks with a held-out fraction (referee.tasks.split)"
        )
    return out


class TrainingSampler:
    """Samples training tasks through a :class:`Curriculum`; never returns a held-out task.

    ``curriculum`` defaults to a :class:`Curriculum` with default settings seeded by ``seed``;
    one passed in (for example in uniform mode) keeps its own seed, and must not already hold
    ids other than this sampler's training tasks.
    """

    def __init__(
        self,
        tasks: Iterable[Task],
        curriculum: Curriculum | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        tasks = list(tasks)
        train: dict[str, Task] = {}
        heldout_ids: set[str] = set()
        heldout_hashes: set[str] = set()
        for t in tasks:
            if t.split == "train":
                if t.id in train:
                    raise TaskError(f"task id {t.id!r} appears twice; ids must be unique")
                train[t.id] = t
            else:
                heldout_ids.add(t.id)
                if t.content_hash:
                    heldout_hashes.add(t.content_hash)
        if not train:
            raise TaskError(
                f"no training tasks: all {len(tasks)} tasks given are held out (split != 'train')"
                if tasks
                else "no training tasks: the task list is empty"
            )
        both = sorted(heldout_ids & train.keys())
        if both:
            raise TaskError(
                f"task id {both[0]!r} is both a training and a held-out task"
                f"{f' (and {len(both) - 1} more)' if len(both) > 1 else ''}; "
                "give every task one split"
            )
        same = sorted(t.id for t in train.values() if t.content_hash in heldout_hashes)
        if same:
            raise TaskError(
                f"training task {same[0]!r} has the same content as a held-out task"
                f"{f' (and {len(same) - 1} more)' if len(same) > 1 else ''}: training on it "
                "would leak the held-out split; drop the duplicates"
            )
        self._train = train
        self._hashes = {t.id: t.content_hash for t in train.values()}
        self._heldout_ids = frozenset(heldout_ids)
        self._heldout_hashes = frozenset(heldout_hashes)

        if curriculum is None:
            curriculum = Curriculum(seed=0 if seed is None else seed)
        elif seed is not None:
            raise ConfigError("give the seed to the Curriculum passed in, not to the sampler")
        self._check_pool(curriculum.task_ids)
        curriculum.add_tasks(train)
        self.curriculum = curriculum

    # -- the guard --

    def _check_pool(self, ids: Iterable[str]) -> None:
        for task_id in ids:
            if task_id not in self._train:
                raise TaskError(
                    f"the curriculum holds task {task_id!r}, which is "
                    f"{'held out' if task_id in self._heldout_ids else 'not a training task'}"
                    " of this sampler; give it a curriculum with training task ids only"
                )

    def _refuse(self, task_id: str, why: str) -> TaskError:
        return TaskError(f"refusing to return task {task_id!r} for training: {why}")

    def _checked(self, task_id: str) -> Task:
        if task_id in self._heldout_ids:
            raise self._refuse(task_id, "it is held out")
        task = self._train.get(task_id)
        if task is None:
            raise self._refuse(task_id, "it is not one of the training tasks given to the sampler")
        # Frozen models can still be changed in place (object.__setattr__, __dict__), so the
        # task is looked at again rather than trusted.
        if task.split != "train":
            raise self._refuse(
                task_id, f"its split is now {task.split!r}; it was changed after sampling began"
            )
        if task.id != task_id or task.content_hash != self._hashes.get(task_id):
            raise self._refuse(task_id, "its id or content changed after sampling began")
        if task.content_hash and task.content_hash in self._heldout_hashes:
            raise self._refuse(task_id, "it has the content of a held-out task")
        return task

    def _check_update(self, task_id: str) -> None:
        if task_id in self._heldout_ids:
            raise TaskError(
                f"task {task_id!r} is held out: its outcomes must not reach the training "
                "curriculum; evaluate it with heldout_tasks() and keep the results apart"
            )
        if task_id not in self._train:
            raise TaskError(
                f"task {task_id!r} is not one of this sampler's {len(self._train)} training "
                "tasks; its outcomes are refused"
            )

    # -- the interface --

    @property
    def tasks(self) -> tuple[Task, ...]:
        """The training tasks, in the order given."""
        return tuple(self._train.values())

    @property
    def heldout_ids(self) -> frozenset[str]:
        """Ids of the tasks left out at construction (never returned)."""
        return self._heldout_ids

    def __len__(self) -> int:
        return len(self._train)

    def sample(self, n: int, *, replace: bool = False) -> list[Task]:
        """``n`` training tasks from the curriculum; every one checked by the guard."""
        return [self._checked(task_id) for task_id in self.curriculum.sample(n, replace=replace)]

    def update(self, group: GroupLike, *, step: int | None = None) -> None:
        """Pass a training task's outcomes to the curriculum; held-out ones are refused."""
        self._check_update(group.task_id)
        self.curriculum.update(group, step=step)

    def observe(self, groups: Iterable[G], *, step: int | None = None) -> FilterReport[G]:
        """Update with every group, then filter out those without signal (all checked first)."""
        groups = list(groups)
        for group in groups:
            self._check_update(group.task_id)
        return self.curriculum.observe(groups, step=step)

    def state_dict(self) -> dict[str, Any]:
        return self.curriculum.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume the curriculum; a state holding any id but this sampler's tasks is refused."""
        restored = Curriculum.from_state_dict(state)
        self._check_pool(restored.task_ids)
        self.curriculum.load_state_dict(state)
        self.curriculum.add_tasks(self._train)  # tasks added since the state was saved
