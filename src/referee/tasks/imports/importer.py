"""Import a dataset file into a task file, whole or not at all.

The tasks stream from the source to the output (held in memory only when ``heldout`` asks for
a split over all of them); the output is written to a temporary file and renamed into place
when every row has been read (:func:`referee.tasks.model.write_tasks`), so a malformed row, or
an id seen twice, leaves no half-written file and an existing one as it was. With
``skip_bad``, a bad row is skipped and reported (:attr:`ImportSummary.skipped`) instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import TaskError
from referee.tasks.model import Task, write_tasks
from referee.tasks.sources import check_source_call, iter_source

__all__ = ["ImportSummary", "import_tasks"]


@dataclass(frozen=True)
class ImportSummary:
    """What an import wrote: how many tasks, per split and per io."""

    count: int
    splits: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    #: The one-line error of each row skipped (``skip_bad``), in file order.
    skipped: list[str] = field(default_factory=list)


def _unique(
    tasks: Iterable[Task], path: str | Path | None, seen: Counter[str], io: Counter[str]
) -> Iterator[Task]:
    ids: set[str] = set()
    for t in tasks:
        if t.id in ids:
            raise TaskError(
                f"{path or 'the source'}: two rows make the task id {t.id!r}; ids must be "
                "unique (the source's own ids repeat: remove the duplicate rows)"
            )
        ids.add(t.id)
        seen[t.split] += 1
        io[str(t.payload.get("io") or t.kind.value)] += 1
        yield t


def import_tasks(
    source: str,
    path: str | Path | None,
    out: str | Path,
    *,
    split: str = "heldout",
    heldout: float | None = None,
    by: str = "module",
    skip_bad: bool = False,
    **options: Any,
) -> ImportSummary:
    """Read ``path`` with the file source ``source`` (or, with ``path`` None, take the tasks a
    source that brings and validates its own rows brings: ``verilogeval``, ``agentbench-os``)
    and write its tasks to ``out``.

    Every task goes to ``split`` unless ``heldout`` (a share) splits them by unit
    (:func:`referee.tasks.split.split_tasks`). ``options`` are the source's (``subset``,
    ``repo_dir``...). A malformed row is a :class:`TaskError` naming the file, the row and the
    field, and nothing is written; with ``skip_bad``, each bad row is skipped and its error
    kept in the summary's ``skipped`` (the good rows are written).
    """
    given = {k: v for k, v in options.items() if v is not None}
    check_source_call(source, split, path, given)
    if heldout is not None:
        from referee.tasks.split import check_split_options

        check_split_options(heldout, by)
    splits: Counter[str] = Counter()
    io: Counter[str] = Counter()
    skipped: list[str] = []
    bad = (lambda e: skipped.append(str(e))) if skip_bad else None
    tasks: Iterable[Task] = _unique(
        iter_source(source, split, path, on_bad_row=bad, **given), path, splits, io
    )
    if heldout is not None:
        from referee.tasks.split import split_tasks

        tasks = split_tasks(list(tasks), heldout, by=by)
        splits = Counter(t.split for t in tasks)
    n = write_tasks(out, tasks)
    return ImportSummary(count=n, splits=dict(splits), kinds=dict(io), skipped=skipped)
