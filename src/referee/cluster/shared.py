"""One pool per process for the trainers' reward code: :func:`shared_pool` and
:func:`judge_texts`.

A trainer calls referee's reward function from its own workers (veRL's ``RewardLoopWorker``
actors, NeMo RL's environment actor), many times, from many threads. Those calls judge on a
:class:`~referee.cluster.SandboxPool` made once per process on first use (joining the trainer's
Ray cluster: :func:`~referee.cluster.connect` never starts a second one) and let go at exit;
the sandbox work then runs on the pool's actors, spread over the cluster's nodes, instead of in
the worker's own process. The pool is the job's named one (:func:`~referee.cluster.named_pool`):
every reward worker of the trainer's Ray job that asks for the same task file and size shares
the same ``actors`` sandbox actors (N in all, not workers x N); the last one to let go ends it.

>>> pool = shared_pool("/data/tasks.jsonl", actors=4)                    # doctest: +SKIP
>>> [v.reward for v in judge_texts(pool, [(task, model_text)], deadline_s=60)]  # doctest: +SKIP
[1.0]

The pool's actors hold the tasks of the task file, so rows must name tasks in it (a veRL row
that embeds its task still needs the file, given as ``tasks=``).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from referee.envs.answers import answer_for
from referee.errors import ConfigError, VerifierError
from referee.tasks.labels import TASKS_ENV
from referee.tasks.model import Task
from referee.verify.dispatch import verify_with_retries
from referee.verify.verdict import Verdict

if TYPE_CHECKING:
    from referee.cluster.named import NamedPool
    from referee.cluster.pool import SandboxPool

__all__ = ["close_shared_pools", "judge_texts", "shared_pool"]

_lock = threading.Lock()
_pools: dict[tuple[str, int], NamedPool] = {}


def shared_pool(tasks: str | None, actors: int) -> NamedPool:
    """This process's handle on the job's shared pool of ``actors`` sandbox actors holding the
    tasks of the file ``tasks`` (default: the file ``REFEREE_TASKS`` names; got or made on first
    use, the same handle afterwards; detached at exit)."""
    tasks = tasks or os.environ.get(TASKS_ENV)
    if not tasks:
        raise ConfigError(
            "judging on a Ray pool needs the task file its actors load: give tasks=PATH (or "
            "set REFEREE_TASKS) to the reward function or environment"
        )
    if actors < 1:
        raise ConfigError(f"a Ray pool needs at least 1 actor, got {actors}")
    key = (str(tasks), int(actors))
    with _lock:
        pool = _pools.get(key)
        if pool is None:
            from referee.cluster.named import named_pool

            pool = _pools[key] = named_pool(str(tasks), int(actors))
            if len(_pools) == 1:
                atexit.register(close_shared_pools)
        return pool


def close_shared_pools() -> None:
    """Let go of the pools :func:`shared_pool` handed out (each ends when its last process
    lets go; a later call gets or makes new ones)."""
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


def judge_texts(
    pool: SandboxPool | NamedPool,
    items: Sequence[tuple[Task, str]],
    *,
    deadline_s: float | None = None,
    retries: int = 2,
) -> list[Verdict]:
    """Verdicts on models' raw texts (each read by :func:`~referee.envs.answers.answer_for`),
    judged on ``pool``; samples without a verdict are judged again up to ``retries`` times,
    then raised as :class:`~referee.errors.VerifierError`: never a 0 the model did not earn."""
    pairs = [(task, answer_for(task, text)) for task, text in items]
    verdicts = verify_with_retries(
        lambda some: pool.verify_many(some, deadline_s=deadline_s), pairs, retries=retries
    )
    failed = [v for v in verdicts if v.infra_error]
    if failed:
        raise VerifierError(
            f"{len(failed)} of {len(verdicts)} sample(s) could not be judged on the Ray pool "
            f"after {retries + 1} tries (first: {failed[0].task_id}: {failed[0].infra_error}); "
            "no reward is given for them rather than a 0 the model did not earn"
        )
    return verdicts
