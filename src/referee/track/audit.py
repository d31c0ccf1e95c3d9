"""The audit queue: flagged and random trajectories for a person to label; labels quarantine.

Detectors raise alerts that name trajectories; :meth:`AuditQueue.fill` puts every one of them in
the queue (the reason is the detector's name), then the trajectories whose verdict carries a
static flag (reason ``flag:<kind>``), then a seeded random sample of the rest (reason
``random``), so that a person also sees what the detectors did not catch. Nothing is enqueued
twice. :meth:`AuditQueue.next` gives flagged items before random ones.

A label is one of :data:`LABELS`. ``hack`` and ``broken-task`` quarantine the task (a task that
is broken, or that is where hacking pressure is, should stop reaching the trainer);
``broken-verifier`` quarantines the verifier (``Verdict.verifier``). The training sampler drops
quarantined tasks with :func:`exclude_quarantined`.

>>> from referee.track import TrackStore                                  # doctest: +SKIP
>>> queue = AuditQueue(TrackStore("runs/r1"), random_share=0.1, seed=0)   # doctest: +SKIP
>>> queue.fill("r1")                                                      # doctest: +SKIP
FillResult(flagged=3, random=12, pending=15, pending_flagged=3, trajectories=160)
>>> item = queue.next("r1")                                               # doctest: +SKIP
>>> queue.label(item.id, "hack", note="exits before the asserts").quarantined   # doctest: +SKIP
(('task', 'demo/add-v1'),)
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.track.store import AlertRow, AuditItemRow, LabelRow, TrackStore

__all__ = [
    "LABELS",
    "RANDOM",
    "AuditQueue",
    "FillResult",
    "Labelled",
    "alerts_for",
    "exclude_quarantined",
    "is_flagged",
    "normalize_label",
    "quarantined_task_ids",
]

#: What a person can say about a trajectory.
LABELS = ("legitimate", "hack", "broken-task", "broken-verifier")
#: The reason of randomly sampled items.
RANDOM = "random"
#: The reason of a trajectory labelled without having been queued (from the dashboard's viewer).
MANUAL = "manual"
#: Which label quarantines what: ``hack`` quarantines the task because that is where the
#: hacking pressure is (the verifier may be fine; the task lets a shortcut through).
_QUARANTINES = {"hack": "task", "broken-task": "task", "broken-verifier": "verifier"}
_PENDING, _LABELLED = "pending", "labelled"
#: How many ids an ambiguous start of an id lists.
_SHOWN_MATCHES = 8


@dataclass(frozen=True)
class FillResult:
    """How many items one :meth:`AuditQueue.fill` added, by source, and what the run's queue
    holds afterwards: ``pending`` items, ``pending_flagged`` of them put there by alerts or
    static flags (this fill's or earlier ones, e.g. a Tracker's), out of ``trajectories``."""

    flagged: int
    random: int
    pending: int = 0
    pending_flagged: int = 0
    trajectories: int = 0


@dataclass(frozen=True)
class Labelled:
    """A recorded label and what it quarantined (``(kind, key)`` pairs)."""

    label: LabelRow
    item: AuditItemRow
    quarantined: tuple[tuple[str, str], ...]


def normalize_label(label: str) -> str:
    """The canonical spelling of a label (``Broken_Task`` -> ``broken-task``), or ConfigError.

    >>> normalize_label("Broken_Task")
    'broken-task'
    """
    canonical = label.strip().lower().replace("_", "-").replace(" ", "-")
    if canonical not in LABELS:
        raise ConfigError(f"unknown audit label {label!r}; use one of: {', '.join(LABELS)}")
    return canonical


def is_flagged(item: AuditItemRow) -> bool:
    """True for an item a detector or a static flag put in the queue (not random, not manual)."""
    return item.reason not in (RANDOM, MANUAL)


class AuditQueue:
    """The audit queue over a :class:`TrackStore` (its ``audit_items`` and label tables).

    Args:
        store: the run folder's store.
        random_share: the share of the trajectories no detector named that is sampled at random
            (0 to 1).
        seed: the random sample's seed; the same store, run and seed give the same sample.
        max_random: an upper bound on the random items of a run (None: no bound), for runs
            too big for a person to read a tenth of.
    """

    def __init__(
        self,
        store: TrackStore,
        *,
        random_share: float = 0.1,
        seed: int = 0,
        max_random: int | None = None,
    ) -> None:
        if not 0.0 <= random_share <= 1.0:
            raise ConfigError(f"random_share must be between 0 and 1, got {random_share}")
        if max_random is not None and max_random < 0:
            raise ConfigError(f"max_random must be 0 or more, got {max_random}")
        self.store = store
        self.random_share = random_share
        self.seed = seed
        self.max_random = max_random

    # --- filling ----------------------------------------------------------------------------

    def fill(self, run_id: str) -> FillResult:
        """Enqueue what the alerts and flags of ``run_id`` name, and a random sample of the rest.

        Safe to call again as the run goes on: it adds only new trajectories, and tops the
        random sample up to ``random_share`` of the run's unflagged trajectories.
        """
        queued = {i.trajectory_id for i in self.store.audit_items(run_id=run_id)}
        known = set(self.store.trajectory_ids(run_id))
        flagged: list[tuple[str, str]] = []  # (trajectory id, reason), in the order found
        for alert in self.store.alerts(run_id=run_id):
            flagged += [(t, alert.detector) for t in alert.trajectory_ids if t in known]
        flagged += [
            (f.trajectory_id, "flag:" + ",".join(f.kinds or ("flag",)))
            for f in self.store.statically_flagged(run_id)
        ]
        added_flagged = 0
        named: set[str] = set()
        for trajectory_id, reason in flagged:
            named.add(trajectory_id)
            if trajectory_id not in queued:
                self.store.enqueue_audit(run_id, trajectory_id, reason)
                queued.add(trajectory_id)
                added_flagged += 1
        added_random = self._fill_random(run_id, named, queued)
        pending = self.store.audit_items(run_id=run_id, status=_PENDING)
        return FillResult(
            flagged=added_flagged,
            random=added_random,
            pending=len(pending),
            pending_flagged=sum(1 for i in pending if is_flagged(i)),
            trajectories=len(known),
        )

    def _fill_random(self, run_id: str, named: set[str], queued: set[str]) -> int:
        rest = [t for t in self.store.trajectory_ids(run_id, unquarantined=True) if t not in named]
        have = sum(1 for i in self.store.audit_items(run_id=run_id) if i.reason == RANDOM)
        target = round(self.random_share * len(rest))
        if self.max_random is not None:
            target = min(target, self.max_random)
        candidates = [t for t in rest if t not in queued]
        want = min(max(0, target - have), len(candidates))
        # Seeded by run and by how many are already there, so a second fill that tops the
        # sample up draws afresh but reproducibly.
        rng = random.Random(f"{self.seed}:{run_id}:{have}")
        for trajectory_id in rng.sample(candidates, want):
            self.store.enqueue_audit(run_id, trajectory_id, RANDOM)
        return want

    # --- reading ------------------------------------------------------------------------------

    def items(self, run_id: str | None = None, status: str | None = None) -> list[AuditItemRow]:
        """Queue items, flagged before random, then in the order enqueued."""
        items = self.store.audit_items(run_id=run_id, status=status)
        return sorted(items, key=lambda i: (not is_flagged(i), i.enqueued_at))

    def pending(self, run_id: str | None = None) -> list[AuditItemRow]:
        return self.items(run_id, _PENDING)

    def labelled(self, run_id: str | None = None) -> list[AuditItemRow]:
        return self.items(run_id, _LABELLED)

    def next(self, run_id: str | None = None) -> AuditItemRow | None:
        """The next item to label (flagged first, then random), or None when none is pending."""
        pending = self.pending(run_id)
        return pending[0] if pending else None

    def resolve(self, given: str) -> str:
        """The whole id of the queue item or trajectory that ``given`` is, or is the start of
        (ids may be shown shortened); ``given`` itself when nothing starts with it. A start
        that several ids share is a :class:`ConfigError` listing them."""
        matches = self.store.ids_starting_with(given, limit=_SHOWN_MATCHES + 1)
        if given in matches or not matches:
            return given
        if len(matches) == 1:
            return matches[0]
        shown = ", ".join(matches[:_SHOWN_MATCHES])
        more = ", ..." if len(matches) > _SHOWN_MATCHES else ""
        raise ConfigError(
            f"{given!r} is the start of several trajectory or queue item ids ({shown}{more}); "
            "give more of the id"
        )

    def item(self, item_or_trajectory_id: str) -> AuditItemRow | None:
        """The queue item with this id, else the latest item of this trajectory, else None
        (either id may be given in part: :meth:`resolve`)."""
        item_or_trajectory_id = self.resolve(item_or_trajectory_id)
        items = self.store.audit_items()
        for i in items:
            if i.id == item_or_trajectory_id:
                return i
        of_trajectory = [i for i in items if i.trajectory_id == item_or_trajectory_id]
        pending = [i for i in of_trajectory if i.status == _PENDING]
        chosen = pending or of_trajectory
        return chosen[-1] if chosen else None

    # --- labelling ----------------------------------------------------------------------------

    def label(
        self, item_or_trajectory_id: str, label: str, note: str = "", labeller: str = ""
    ) -> Labelled:
        """Record a label for a queue item (or a trajectory, queued or not) and quarantine.

        A trajectory that was not in the queue gets an item of reason ``manual``, so every
        label shows in the queue's labelled list.
        """
        canonical = normalize_label(label)
        item_or_trajectory_id = self.resolve(item_or_trajectory_id)
        item = self.item(item_or_trajectory_id)
        trajectory_id = item.trajectory_id if item else item_or_trajectory_id
        task_id, verifier, run_id = self._about(trajectory_id)
        kind = _QUARANTINES.get(canonical)
        key = task_id if kind == "task" else verifier
        if kind is not None and not key:
            raise ConfigError(
                f"trajectory {trajectory_id!r} has no verifier name on its verdict, so "
                f"{canonical!r} cannot quarantine a verifier; label it broken-task instead"
            )
        if item is None:
            item_id = self.store.enqueue_audit(run_id, trajectory_id, MANUAL)
        else:
            item_id = item.id
        label_id = self.store.add_label(trajectory_id, canonical, note=note, labeller=labeller)
        # Every pending item of the trajectory is answered by this one label.
        for other in self.store.audit_items(status=_PENDING):
            if other.trajectory_id == trajectory_id:
                self.store.set_audit_status(other.id, _LABELLED)
        quarantined: tuple[tuple[str, str], ...] = ()
        if kind is not None and key:
            self.store.quarantine(kind, key, f"labelled {canonical}", label_id)
            quarantined = ((kind, key),)
        row = next(r for r in self.store.labels(trajectory_id) if r.id == label_id)
        done = next(i for i in self.store.audit_items() if i.id == item_id)
        return Labelled(label=row, item=done, quarantined=quarantined)

    def _about(self, trajectory_id: str) -> tuple[str, str | None, str | None]:
        subject = self.store.trajectory_subject(trajectory_id)
        if subject is None:
            raise ConfigError(
                f"no audit item or trajectory {trajectory_id!r} in {self.store.path}; "
                "`referee audit --run DIR --json` lists the pending items and their ids"
            )
        return subject.task_id, subject.verifier, subject.run_id

    def labels(self) -> list[LabelRow]:
        return self.store.labels()

    def quarantined_tasks(self) -> set[str]:
        return self.store.quarantined("task")

    def quarantined_verifiers(self) -> set[str]:
        return self.store.quarantined("verifier")

    # --- export -------------------------------------------------------------------------------

    def export_labels(self, path: str | Path) -> int:
        """Write every label as JSONL (with the run and the queue's reason); returns the count.

        One object per line: ``id, trajectory_id, run_id, task_id, verifier, label, note,
        labeller, created_at, reason``.
        """
        reasons = {i.trajectory_id: i for i in self.store.audit_items()}
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        n = 0
        try:
            with tmp.open("w", encoding="utf-8") as f:
                for row in self.store.labels():
                    item = reasons.get(row.trajectory_id)
                    record: dict[str, Any] = {
                        **row.model_dump(),
                        "run_id": item.run_id if item else None,
                        "reason": item.reason if item else None,
                    }
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")
                    n += 1
            tmp.replace(path)  # atomically: a reader never sees half a file
        except OSError as e:
            raise ConfigError(f"cannot write the labels to {path}: {e.strerror}") from e
        return n


# --- for the sampler and the views -----------------------------------------------------------


def quarantined_task_ids(store: TrackStore) -> set[str]:
    """Task ids out of training: quarantined themselves, or judged by a quarantined verifier.

    A verifier's tasks are the ones the store saw it judge (``verdicts.verifier``).
    """
    return store.quarantined("task") | store.tasks_judged_by(sorted(store.quarantined("verifier")))


def exclude_quarantined(tasks: Iterable[Task], store: TrackStore) -> list[Task]:
    """The tasks that are not quarantined (see :func:`quarantined_task_ids`), in order.

    >>> pool = exclude_quarantined(pool, TrackStore(run_dir))                # doctest: +SKIP
    """
    out = quarantined_task_ids(store)
    return [t for t in tasks if t.id not in out]


def alerts_for(store: TrackStore, trajectory_id: str, run_id: str | None = None) -> list[AlertRow]:
    """The alerts that name a trajectory (the evidence of why it is in the queue)."""
    return [a for a in store.alerts(run_id=run_id) if trajectory_id in a.trajectory_ids]
