"""What one ``referee audit`` call does to a run folder's queue: fill, label, export, pick next.

The steps in the order the command applies them, each one optional, as one library call whose
result is plain data (the command renders it; the dashboard or a script can call it too):

>>> with TrackStore(run_dir, create=False) as store:                     # doctest: +SKIP
...     queue = AuditQueue(store)
...     done = apply_audit(queue, fill=True, export=Path("labels.jsonl"))
...     done.filled, done.exported
...     print(fill_summary(done, store))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import ConfigError
from referee.track.audit import AuditQueue, FillResult, Labelled
from referee.track.store import AuditItemRow, TrackStore

__all__ = ["AuditActions", "apply_audit", "fill_summary", "next_item"]


@dataclass(frozen=True)
class AuditActions:
    """What :func:`apply_audit` did: the runs it covered, and each step's result (None: not
    asked for)."""

    runs: tuple[str, ...]
    filled: dict[str, FillResult] | None = None
    labelled: Labelled | None = None
    exported: int | None = None
    export_path: Path | None = field(default=None)

    @property
    def acted(self) -> bool:
        return self.filled is not None or self.labelled is not None or self.exported is not None

    @property
    def one_run(self) -> str | None:
        """The run the queue is narrowed to: the only one covered, else None (all)."""
        return self.runs[0] if len(self.runs) == 1 else None


def apply_audit(
    queue: AuditQueue,
    *,
    run_id: str | None = None,
    fill: bool = False,
    label: str | None = None,
    item_id: str | None = None,
    note: str = "",
    labeller: str = "",
    export: Path | None = None,
) -> AuditActions:
    """Fill the queue of ``run_id`` (every run when None), label ``item_id``, export the labels.

    An unknown ``run_id`` is a :class:`~referee.errors.NotFoundError`; a label without an item a
    :class:`~referee.errors.ConfigError`, raised before anything is written.
    """
    store = queue.store
    runs = (store.run(run_id).run_id,) if run_id else tuple(r.run_id for r in store.runs())
    if label is not None and not item_id:
        raise ConfigError("--label needs --id ITEM_OR_TRAJECTORY_ID (see --next)")
    filled = {r: queue.fill(r) for r in runs} if fill else None
    labelled = None
    if label is not None and item_id:
        labelled = queue.label(item_id, label, note=note, labeller=labeller)
    exported = queue.export_labels(export) if export is not None else None
    return AuditActions(runs, filled, labelled, exported, export)


def next_item(
    queue: AuditQueue, done: AuditActions, item_id: str | None = None
) -> tuple[AuditItemRow | None, str | None]:
    """The item to show (``item_id``'s, else the next pending one) and its trajectory id.

    ``item_id`` may name a trajectory that was never queued: then the item is None and the
    trajectory id is ``item_id``. Either id may be given in part (:meth:`AuditQueue.resolve`).
    """
    item_id = queue.resolve(item_id) if item_id else None
    item = queue.item(item_id) if item_id else queue.next(done.one_run)
    return item, (item.trajectory_id if item else item_id)


def fill_summary(done: AuditActions, store: TrackStore) -> list[str]:
    """One line per run on what ``--fill`` queued and what the queue holds now; when nothing
    was queued, why. Empty when no fill was asked for."""
    if done.filled is None:
        return []
    if not done.filled:
        orphans = store.count_trajectories()
        return [
            f"nothing to queue: {store.path} has no runs"
            + (
                f" ({orphans} trajectories were stored without a run id): start one with "
                "store.start_run(run_id, config) and pass the same run_id= to RolloutRunner "
                "(or Tracker) before the rollouts"
                if orphans
                else ""
            )
        ]
    lines = []
    for run_id, f in done.filled.items():
        holds = f"{f.pending} pending, {f.pending_flagged} of them from alerts and flags"
        if f.trajectories == 0:
            lines.append(f"{run_id}: nothing to queue: the run has no trajectories yet")
        elif f.flagged == f.random == 0:
            lines.append(
                f"{run_id}: nothing new to queue (flagged trajectories are queued already and "
                f"the random sample is at its share, --random-share/--max-random); {holds}"
            )
        else:
            lines.append(f"{run_id}: queued {f.flagged} flagged and {f.random} random; {holds}")
    return lines
