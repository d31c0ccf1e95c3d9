"""What marks a task a canary (:mod:`referee.track.canary` makes them): a mark in its hidden
data, or its provenance's generator. Here, below the exports and the trackers that leave
canaries out, so that they need not load the canary generators to tell one."""

from __future__ import annotations

from referee.tasks.model import Task

__all__ = ["GENERATOR", "is_canary"]

#: The provenance generator of every canary.
GENERATOR = "referee.track.canary"


def is_canary(task: Task) -> bool:
    """Whether ``task`` is a canary (by its hidden mark or its provenance)."""
    return bool(task.hidden.get("canary")) or task.provenance.generator == GENERATOR
