"""Rollouts: episodes of a policy in environments, run concurrently, recorded as trajectories.

* :class:`RolloutRunner`: bounded concurrency, groups of G per task, fault isolation and
  bounded retries of infrastructure faults;
* :class:`Trajectory` (with :class:`Turn` and :class:`TrajectoryError`): one episode as data;
* :class:`TrajectoryStore`: a run folder's ``trajectories.jsonl`` and ``trajectories.sqlite``.
"""

from __future__ import annotations

from referee.rollout.runner import EnvFactory, RolloutRunner
from referee.rollout.store import TrajectoryStore, read_jsonl
from referee.rollout.trajectory import (
    TRAJECTORY_SCHEMA_VERSION,
    ErrorKind,
    Trajectory,
    TrajectoryError,
    Turn,
)

__all__ = [
    "TRAJECTORY_SCHEMA_VERSION",
    "EnvFactory",
    "ErrorKind",
    "RolloutRunner",
    "Trajectory",
    "TrajectoryError",
    "TrajectoryStore",
    "Turn",
    "read_jsonl",
]
