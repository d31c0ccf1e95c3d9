"""Rollouts: episodes of a policy in environments, run concurrently, recorded as trajectories.

* :class:`RolloutRunner`: bounded concurrency, groups of G per task, fault isolation and
  bounded retries of infrastructure faults;
* :class:`Trajectory` (with :class:`Turn` and :class:`TrajectoryError`): one episode as data;
* :class:`TrajectorySink`: where the runner writes each finished trajectory; the run's
  :class:`~referee.track.store.TrackStore` is one, :class:`JsonlSink` (a JSONL log) another,
  and :func:`read_jsonl` reads JSONL back.
"""

from __future__ import annotations

from referee.rollout.runner import EnvFactory, RolloutRunner
from referee.rollout.sink import JSONL_NAME, JsonlSink, TrajectorySink, read_jsonl
from referee.rollout.trajectory import (
    TRAJECTORY_SCHEMA_VERSION,
    ErrorKind,
    Trajectory,
    TrajectoryError,
    Turn,
)

__all__ = [
    "JSONL_NAME",
    "TRAJECTORY_SCHEMA_VERSION",
    "EnvFactory",
    "ErrorKind",
    "JsonlSink",
    "RolloutRunner",
    "Trajectory",
    "TrajectoryError",
    "TrajectorySink",
    "Turn",
    "read_jsonl",
]
