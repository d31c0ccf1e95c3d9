"""Where finished trajectories go: the :class:`TrajectorySink` protocol, and JSONL.

The rollout runner writes each trajectory, as soon as it is finished, to a sink: anything with
``log_trajectory(trajectory)``. A run's one trajectory database is
:class:`referee.track.store.TrackStore` (``<run>/track.sqlite``), which implements the protocol;
the runner does not import it, so ``rollout`` stays below ``track`` in the layering.

>>> from referee.track.store import TrackStore                          # doctest: +SKIP
>>> runner = RolloutRunner(make_env, policy, store=TrackStore("runs/mine"))   # doctest: +SKIP

JSONL stays the format to share, grep and export: :class:`JsonlSink` appends one record per
line (flushed and fsynced, so a killed run loses at most the record being written) for runs that
want no database, :func:`referee.track.export.export_jsonl` writes a store's trajectories, and
:func:`read_jsonl` reads either back (as does ``TrackStore.import_jsonl``).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO, Protocol, runtime_checkable

from pydantic import ValidationError

from referee.errors import StoreError
from referee.rollout.trajectory import Trajectory

__all__ = ["JSONL_NAME", "JsonlSink", "TrajectorySink", "read_jsonl"]

#: The conventional name of a run folder's JSONL log.
JSONL_NAME = "trajectories.jsonl"


@runtime_checkable
class TrajectorySink(Protocol):
    """Receives every finished trajectory of a rollout runner.

    ``log_trajectory`` is called from a worker thread (off the event loop), possibly from several
    at once; it must be thread-safe and durable by the time it returns, and raise
    :class:`~referee.errors.StoreError` when it cannot write (the runner then stops the batch).
    """

    def log_trajectory(self, trajectory: Trajectory) -> None: ...


class JsonlSink:
    """Trajectories appended to a JSONL file, one ``Trajectory.model_dump_json`` per line.

    Args:
        path: the file, created with its folder if missing; a run folder's is conventionally
            ``<run>/trajectories.jsonl`` (:data:`JSONL_NAME`).

    An append-only log: a trajectory written again adds a line, and readers keep the last line
    per id (:meth:`TrackStore.import_jsonl <referee.track.store.TrackStore.import_jsonl>` does).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: IO[str] = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            raise StoreError(
                f"cannot open the trajectory log {self.path}: {e}; "
                "check that the folder is writable"
            ) from e

    def log_trajectory(self, trajectory: Trajectory) -> None:
        """Append one trajectory durably (flushed and fsynced before returning)."""
        line = trajectory.model_dump_json()
        with self._lock:
            try:
                self._file.write(line + "\n")
                self._file.flush()
                os.fsync(self._file.fileno())
            except (OSError, ValueError) as e:  # ValueError: the file is closed
                raise StoreError(
                    f"cannot write trajectory {trajectory.id} to {self.path}: {e}; "
                    "is the disk full or the sink closed?"
                ) from e

    def close(self) -> None:
        """Close the file. Safe to call twice."""
        with self._lock:
            self._file.close()

    def __enter__(self) -> JsonlSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_jsonl(path: str | os.PathLike[str]) -> list[Trajectory]:
    """The trajectories of a JSONL file (a :class:`JsonlSink`'s or an export), in file order."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                out.append(_parse(line, Path(path), n))
    return out


def _parse(text: str, where: Path, line: int) -> Trajectory:
    try:
        return Trajectory.model_validate_json(text)
    except (ValidationError, json.JSONDecodeError) as e:
        raise StoreError(
            f"{where}:{line}: not a trajectory record ({e}); was it written by referee?"
        ) from e
