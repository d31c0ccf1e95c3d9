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

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
