"""Task files read once and read again when they change: the index long-lived processes keep.

A trainer's reward worker (veRL's, AReaL's, ...) and ``referee serve`` look tasks up by id for
hours while the file they came from may be re-exported or refreshed (a curriculum step). A
:class:`TaskFileCache` keeps each file's tasks by id and checks the file on every lookup with
one ``stat`` (about a microsecond): a change of size, mtime, ctime, inode or device re-reads it.

The stat alone misses a rewrite of the same size within the filesystem's timestamp granularity
(one second on some filesystems, two on FAT, coarser on some network mounts) when the rewrite
also keeps the inode (an in-place write, not :func:`~referee.tasks.model.write_tasks`' rename).
So, as git does with its index ("racy git"), a file whose last change (mtime or ctime) falls
within ``racy_ns`` (2 s) of the moment its content was last read is not trusted on its stat:
its bytes are hashed (BLAKE2b) on each lookup until a check happens safely after that change;
from then on a later write must move mtime or ctime, and the stat is enough. Only files changed
in the last two seconds cost a read per lookup.

A file given as a URL (``s3://...``) has no cheap stat: its bytes are fetched and hashed at most
once every ``remote_check_s`` (5 s), so a change is seen within that time.

A file that is gone raises :class:`~referee.errors.TaskError` naming it (its tasks are not kept:
a worker must not score against a file that no longer exists). The cache is thread-safe.

>>> from referee.tasks.model import Task, write_tasks
>>> url = "memory://referee-doc/watched.jsonl"
>>> write_tasks(url, [Task.create(name="d/a-v1", prompt="p")])
1
>>> cache = TaskFileCache()
>>> sorted(cache.get(url))
['d/a-v1']
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from referee.errors import TaskError
from referee.storage import is_local, local_path, os_reason, read_bytes
from referee.tasks.model import Task, read_tasks

__all__ = [
    "RACY_NS",
    "REMOTE_CHECK_S",
    "Signature",
    "TaskFileCache",
    "file_signature",
    "task_index",
]

#: A file changed this close (ns) to when its content was read is checked by its bytes.
RACY_NS = 2_000_000_000
#: Seconds between checks of a task file given as a URL.
REMOTE_CHECK_S = 5.0

#: What a stat says about a file: (size, mtime_ns, ctime_ns, inode, device).
Signature = tuple[int, int, int, int, int]


def file_signature(path: str) -> Signature:
    """The stat of a local file as a :data:`Signature` (``OSError`` if it cannot be stat'ed)."""
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


@dataclass
class _Entry:
    signature: Signature | None  # None: a URL
    digest: bytes
    tasks: dict[str, Task]
    checked_ns: int  # clock time just before the content was last read


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class TaskFileCache:
    """Tasks by id of each task file, re-read when the file changes (see the module docstring).

    ``stat`` and ``clock`` (``time.time_ns``) are the file's signature and the wall clock;
    tests replace them to act out a filesystem with coarse timestamps.
    """

    def __init__(
        self,
        *,
        racy_ns: int = RACY_NS,
        remote_check_s: float = REMOTE_CHECK_S,
        stat: Callable[[str], Signature] = file_signature,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.racy_ns = racy_ns
        self.remote_check_s = remote_check_s
        self._stat = stat
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        #: Times a file's tasks were (re-)read, for tests and curiosity.
        self.reads = 0

    def get(self, source: str | os.PathLike[str]) -> Mapping[str, Task]:
        """The tasks of ``source`` by id, as the file holds them now; :class:`TaskError` if it
        cannot be read (gone, unreadable, malformed)."""
        key = os.fspath(source)
        with self._lock:
            if is_local(key):
                return self._local(key, str(local_path(key)))
            return self._remote(key)

    def forget(self, source: str | os.PathLike[str]) -> None:
        """Drop ``source``'s tasks (the next lookup reads the file)."""
        with self._lock:
            self._entries.pop(os.fspath(source), None)

    # ---- local files ------------------------------------------------------------------------
    def _local(self, key: str, path: str) -> dict[str, Task]:
        try:
            signature = self._stat(path)
        except OSError as e:
            self._entries.pop(key, None)
            gone = isinstance(e, FileNotFoundError)
            raise TaskError(
                f"task file {key!r} is gone (deleted or moved)"
                if gone
                else f"cannot read task file {key!r}: {os_reason(e)}"
            ) from e
        entry = self._entries.get(key)
        if entry is not None and entry.signature == signature:
            changed_ns = max(signature[1], signature[2])
            if changed_ns < entry.checked_ns - self.racy_ns:
                return entry.tasks  # changed well before its content was read: stat suffices
            now = self._clock()
            if _digest(self._bytes(key)) == entry.digest:
                entry.checked_ns = now
                return entry.tasks
        return self._read(key, signature)

    def _bytes(self, key: str) -> bytes:
        try:
            return read_bytes(key, option="task file")
        except FileNotFoundError as e:
            self._entries.pop(key, None)
            raise TaskError(f"task file {key!r} is gone (deleted or moved)") from e
        except OSError as e:
            self._entries.pop(key, None)
            raise TaskError(f"cannot read task file {key!r}: {os_reason(e)}") from e

    def _read(self, key: str, signature: Signature | None) -> dict[str, Task]:
        now = self._clock()
        data = self._bytes(key)
        # Parsed from a second read: a change between the two leaves the entry racy (its
        # mtime is after ``now``), so the next lookup hashes the file again and re-reads it.
        tasks = {t.id: t for t in read_tasks(key)}
        self._entries[key] = _Entry(signature, _digest(data), tasks, now)
        self.reads += 1
        return tasks

    # ---- URLs -------------------------------------------------------------------------------
    def _remote(self, key: str) -> dict[str, Task]:
        entry = self._entries.get(key)
        now = self._clock()
        if entry is not None and now - entry.checked_ns < self.remote_check_s * 1e9:
            return entry.tasks
        if entry is not None and _digest(self._bytes(key)) == entry.digest:
            entry.checked_ns = now
            return entry.tasks
        return self._read(key, None)


_shared = TaskFileCache()


def task_index(source: str | os.PathLike[str]) -> Mapping[str, Task]:
    """The tasks of ``source`` by id, from this process's shared :class:`TaskFileCache` (the
    one the trainer adapters use)."""
    return _shared.get(source)
