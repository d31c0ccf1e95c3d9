"""The server's tasks: every ``--tasks`` file read and checked before it listens, and read again
when it changes on disk.

:class:`LiveTasks` checks its files with one ``stat`` each per request
(:class:`~referee.tasks.watched.TaskFileCache`): a task re-exported or added to a ``--tasks``
file is served from the next request on, without a restart. A file that becomes unreadable
(deleted, malformed, an id now in two files) leaves the server on the tasks it last read, logged
once per error and shown by ``GET /health`` as ``tasks_error``.

>>> live = LiveTasks(["he.jsonl"])                                          # doctest: +SKIP
>>> "HumanEval/0" in live.current()                                         # doctest: +SKIP
True
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence

from referee.errors import ConfigError, RefereeError
from referee.tasks.model import Task
from referee.tasks.watched import TaskFileCache

__all__ = ["LiveTasks", "load_task_files"]

log = logging.getLogger("referee.service")


def _merge(paths: Sequence[str], indexes: Sequence[Mapping[str, Task]]) -> dict[str, Task]:
    tasks: dict[str, Task] = {}
    origin: dict[str, str] = {}
    for path, index in zip(paths, indexes, strict=True):
        for task in index.values():
            if task.id in origin:
                raise ConfigError(
                    f"task id {task.id!r} is in both {origin[task.id]} and {path}; "
                    "serve each task once"
                )
            origin[task.id] = str(path)
            tasks[task.id] = task
    return tasks


def load_task_files(paths: Sequence[str]) -> list[Task]:
    """All tasks of ``paths``, in order; an id in two files is a :class:`ConfigError` naming
    both."""
    return list(LiveTasks(paths).current().values())


class LiveTasks:
    """The tasks of ``paths`` by id, as the files hold them now (see the module docstring).
    The first read must succeed: a bad file is an error before the server listens."""

    def __init__(self, paths: Sequence[str], *, files: TaskFileCache | None = None) -> None:
        self.paths = [str(p) for p in paths]
        self._files = files or TaskFileCache()
        self._lock = threading.Lock()
        indexes = [self._files.get(p) for p in self.paths]
        self._indexes = indexes
        self._tasks = _merge(self.paths, indexes)
        if not self._tasks:
            raise ConfigError(f"the --tasks file(s) {', '.join(self.paths)} hold no tasks")
        #: Why the files' latest state is not being served (None: it is).
        self.error: str | None = None

    def current(self) -> dict[str, Task]:
        """The tasks now: re-read where a file changed; the last good tasks if it broke."""
        with self._lock:
            try:
                indexes = [self._files.get(p) for p in self.paths]
                if all(a is b for a, b in zip(indexes, self._indexes, strict=True)):
                    self.error = None
                    return self._tasks
                tasks = _merge(self.paths, indexes)
            except RefereeError as e:
                if str(e) != self.error:
                    log.warning("referee serve: keeping the tasks last read: %s", e)
                self.error = str(e)
                return self._tasks
            log.info("referee serve: task files changed; now serving %d tasks", len(tasks))
            self._indexes, self._tasks, self.error = indexes, tasks, None
            return tasks
