"""Rollouts: episodes of a policy in environments, run concurrently, recorded as trajectories.

* :class:`RolloutRunner`: bounded concurrency, groups of G per task, fault isolation and
  bounded retries of infrastructure faults;
* :class:`Cost`, :class:`RunBudget`, :class:`CostLedger`: what a rollout costs, a run's
  limits, and its running total (a spent budget stops sampling: :class:`BudgetExhausted`);
* :class:`Trajectory` (with :class:`Turn` and :class:`TrajectoryError`): one episode as data;
* :class:`TrajectorySink`: where the runner writes each finished trajectory; the run's
  :class:`~referee.track.store.TrackStore` is one, :class:`JsonlSink` (a JSONL log) another,
  and :func:`read_jsonl` reads JSONL back.
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
