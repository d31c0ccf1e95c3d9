"""Trainer adapters: what a trainer needs to train on referee's tasks, verifiers and store.

* TRL, single-turn: :func:`reward_function` (the sandboxed verifier as a TRL reward function)
  and :func:`tasks_dataset` (tasks as TRL's data set, held-out tasks refused);
* TRL, multi-turn: :func:`environment_class` (a referee environment as the class TRL's
  ``environment_factory`` wants) and :class:`TRLEnvironment`;
* :class:`CurriculumGRPOTrainer`: TRL's ``GRPOTrainer`` with the tasks of each step chosen by
  referee's curriculum (:class:`GroupSampler`);
* :class:`RunTracking`: a trainer's rollouts as trajectories in the run's ``TrackStore``,
  with the detectors run on every step.

The experiment behind ``referee train`` is not here: it is :mod:`referee.experiments.listops`.
Names are imported lazily, so ``import referee.train`` does not import torch or TRL.

>>> from referee.train import reward_function, tasks_dataset       # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module of this package that defines it.
_EXPORTS = {
    "reward_function": "trl_adapter",
    "tasks_dataset": "trl_adapter",
    "OnVerdicts": "trl_adapter",
    "TRLEnvironment": "trl_env",
    "environment_class": "trl_env",
    "CurriculumGRPOTrainer": "grpo",
    "GroupSampler": "grpo",
    "ChooseTasks": "grpo",
    "RunTracking": "tracking",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'referee.train' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"referee.train.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
