"""The track store's SQLite file: connections, transactions, locking and errors.

:class:`Database` is the base of :class:`~referee.track.store.TrackStore`: one connection per
thread and process (a connection must not cross a fork), WAL mode with every commit synced,
writes in ``BEGIN IMMEDIATE`` transactions retried while another writer holds the lock, reads
retried likewise, and SQLite's errors turned into :class:`~referee.errors.StoreError` with the
fix. Several threads and processes may use one file at once. The SQL itself lives with the
store (:mod:`referee.track.store`, :mod:`referee.track.queries`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

from referee.errors import StoreError
from referee.track.layout import RunLayout
from referee.track.schema import init_schema

__all__ = ["Database", "where_clause"]

T = TypeVar("T")


class Database:
    """One SQLite file in WAL mode, shared by threads and processes; see the module docstring.

    Args:
        path: the file; made (with the current schema) if missing, migrated if older.
        lock_timeout_s: how long a write waits for other writers before giving up.
    """

    def __init__(self, path: Path, *, lock_timeout_s: float = 60.0) -> None:
        self.path = path
        self.lock_timeout_s = lock_timeout_s
        self._lock = threading.Lock()
        self._local = threading.local()
        self._conns: list[tuple[int, sqlite3.Connection]] = []
        self._closed = False
        self._write(lambda conn: init_schema(conn, self.path))

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"the track store {self.path} is closed; open a new TrackStore")
        pid = os.getpid()
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        # A connection must not cross a fork: the child opens its own.
        if conn is None or self._local.pid != pid:
            conn = self._open()
            self._local.conn, self._local.pid = conn, pid
            with self._lock:
                self._conns.append((pid, conn))
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            # isolation_level=None: transactions are begun explicitly (BEGIN IMMEDIATE below).
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            # SQLite waits this long for a lock itself; _write retries up to lock_timeout_s.
            busy_ms = int(min(5.0, self.lock_timeout_s) * 1000)
            conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
            mode = _retry_locked(
                lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone()[0],
                self.lock_timeout_s,
            )
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"{self.path}: SQLite refused WAL mode (got {mode!r}); keep the run folder "
                    "on a local filesystem (WAL does not work over most network filesystems)"
                )
            # FULL: in WAL mode NORMAL may lose the last commits on power loss (not on a
            # crash); an acknowledged trajectory is promised to be on disk, so every commit
            # syncs the WAL (about a millisecond per commit here).
            conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as e:
            raise self._error("open", e) from e
        return conn

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction, retrying while locked.

        IMMEDIATE takes the write lock up front, so two writers never both read and then
        deadlock on the upgrade; the busy timeout waits for a lock, and the loop bounds the
        total wait at ``lock_timeout_s``.
        """
        conn = self._conn()
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.01
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    out = work(conn)
                    conn.execute("COMMIT")
                    return out
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as e:
                if _is_locked(e) and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.25)
                    continue
                raise self._error("write", e) from e
            except sqlite3.Error as e:
                raise self._error("write", e) from e

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            return _retry_locked(
                lambda: self._conn().execute(sql, params).fetchall(), self.lock_timeout_s
            )
        except sqlite3.Error as e:
            raise self._error("read", e) from e

    def _error(self, doing: str, e: sqlite3.Error) -> StoreError:
        text = str(e)
        if _is_locked(e):
            fix = (
                f"another process held the write lock for over {self.lock_timeout_s:g} s; "
                "stop the stuck writer or raise lock_timeout_s"
            )
        elif "not a database" in text or "malformed" in text or "corrupt" in text:
            fix = "the file is damaged: " + _rebuild_advice(self.path.parent)
        elif "readonly" in text or "unable to open" in text or "disk" in text:
            fix = "check that the run folder is writable and the disk has space"
        else:
            fix = "check the run folder and that no other program rewrote the file"
        return StoreError(f"cannot {doing} the track store {self.path}: {text}; {fix}")

    def close(self) -> None:
        """Close this process's connections. Safe to call twice."""
        with self._lock:
            self._closed = True
            pid = os.getpid()
            # Closing a connection inherited through fork would drop the parent's locks.
            for owner, conn in self._conns:
                if owner == pid:
                    conn.close()
            self._conns.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_locked(e: sqlite3.Error) -> bool:
    text = str(e)
    return "locked" in text or "busy" in text


def _retry_locked(fn: Callable[[], T], timeout_s: float) -> T:
    """``fn()``, retried while SQLite reports a lock (opening races with another process)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as e:
            if not _is_locked(e) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def where_clause(**filters: Any) -> tuple[str, list[Any]]:
    """``WHERE a = ? AND ...`` for the filters that are not None."""
    given = {k: v for k, v in filters.items() if v is not None}
    if not given:
        return "", []
    clause = " AND ".join(f"{k} = ?" for k in given)
    return f"WHERE {clause}", [int(v) if isinstance(v, bool) else v for v in given.values()]


def _rebuild_advice(run_dir: Path) -> str:
    """How to get a damaged store back, for the way its run folder was made."""
    layout = RunLayout(run_dir)
    if layout.trajectories_jsonl.is_file():
        return (
            f"move it aside and rebuild the store from {layout.trajectories_jsonl} "
            "(TrackStore.import_jsonl), or restore a copy"
        )
    if layout.made_by_train:
        return (
            "move it aside and restore a copy, or re-run the `referee train` run into a new "
            "--run-dir (this run keeps its episodes only in the store)"
        )
    return "move it aside and restore a copy, or record the run again"
