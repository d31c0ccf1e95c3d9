"""The tasks of one split fit for a trainer's dataset: held-out tasks only for an evaluation
file (``split="heldout"``), quarantined and canary tasks never, and how many were left out.

:func:`referee.track.export.select_tasks` applies it to a track store (its audit's quarantine);
:func:`referee.tasks.trainer_rows.export_tasks` to a task file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from referee.errors import ConfigError
from referee.tasks.canary_mark import is_canary
from referee.tasks.model import Task

__all__ = ["TaskSelection", "check_split_name", "select_split"]


@dataclass(frozen=True)
class TaskSelection:
    """The tasks an RL export takes, and how many it left out by reason: the other split
    (``heldout`` or ``train``), ``quarantined``, ``canary``. A task counts once, under the
    first reason in that order."""

    tasks: list[Task]
    left_out: dict[str, int] = field(default_factory=dict)


def check_split_name(split: str) -> None:
    """Refuse a split other than ``train`` and ``heldout``."""
    if split not in ("train", "heldout"):
        raise ConfigError(f"split must be 'train' or 'heldout' (for evaluation), got {split!r}")


def select_split(
    tasks: Iterable[Task], split: str = "train", quarantined: Collection[str] = frozenset()
) -> TaskSelection:
    """The ``tasks`` of ``split``, less the ``quarantined`` ids and the canaries."""
    check_split_name(split)
    kept: list[Task] = []
    left_out: Counter[str] = Counter()
    for t in tasks:
        if t.split != split:
            left_out[t.split] += 1
        elif t.id in quarantined:
            left_out["quarantined"] += 1
        elif is_canary(t):
            left_out["canary"] += 1
        else:
            kept.append(t)
    order = ("train" if split == "heldout" else "heldout", "quarantined", "canary")
    return TaskSelection(kept, {why: left_out[why] for why in order if left_out[why]})
