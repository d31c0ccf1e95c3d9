"""Spawning bubblewrap with limits applied, and collecting a run's output under caps.

The spawn happens through ``subprocess.Popen`` with a ``preexec_fn`` that only makes raw system
calls (join the cgroup through pre-opened files, set rlimits, drop to the sandbox uid), so the
process is inside its cgroup before bubblewrap runs its first instruction: there is no window in
which a fast fork escapes the group.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "OutputCollector",
    "Reaper",
    "RlimitSpec",
    "make_preexec",
    "open_join_fds",
    "runqueue_wait_s",
    "spawn",
    "spawn_long_lived",
    "stdin_fd",
]

RlimitSpec = Sequence[tuple[int, tuple[int, int]]]


def open_join_fds(procs_files: Sequence[object]) -> list[int]:
    """Open each ``cgroup.procs`` for writing in the parent, where opening files is safe."""
    return [os.open(str(p), os.O_WRONLY | os.O_CLOEXEC) for p in procs_files]


def make_preexec(
    *,
    uid: int | None,
    join_fds: Sequence[int],
    rlimits: RlimitSpec,
) -> Callable[[], None]:
    """The function run in the forked child just before ``exec(bwrap)``."""
    join = tuple(join_fds)
    limits = tuple(rlimits)

    def preexec() -> None:
        for fd in join:
            os.write(fd, b"0")  # "0" moves the writing process itself
        for res, value in limits:
            resource.setrlimit(res, value)
        if uid is not None and os.geteuid() == 0:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

    return preexec


class Reaper:
    """Waits for one child by hand (``Popen.poll`` would reap it and lose its rusage).

    Call it as a ``stop`` predicate while output is pumped; :meth:`wait` blocks for the rest.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.exited: tuple[int, Any] | None = None  # (wait status, rusage)

    def __call__(self) -> bool:
        if self.exited is None:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.exited = (status, ru)
        return self.exited is not None

    def wait(self) -> tuple[int, Any]:
        if self.exited is None:
            _, status, ru = os.wait4(self.pid, 0)
            self.exited = (status, ru)
        return self.exited


# bubblewrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked
# it exits, not the process. Long-lived sandboxes (fork-server workers) are therefore spawned from
# this one thread, which lives as long as the process, never from a caller's (pool) thread.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="referee-spawner")


def spawn_long_lived(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """:func:`spawn` (same arguments), for a process that must outlive the calling thread."""
    return _SPAWNER.submit(spawn, argv, **kwargs).result()


def spawn(
    argv: list[str],
    *,
    pass_fds: Sequence[int],
    stdin: int,
    stdout: int,
    stderr: int,
    preexec: Callable[[], None],
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        pass_fds=tuple(pass_fds),
        preexec_fn=preexec,
        close_fds=True,
        env={},  # bwrap gets --clearenv anyway; keep the host's variables out of its own env too
    )


@dataclass
class _Stream:
    fd: int
    cap: int
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    truncated: bool = False
    open: bool = True


class OutputCollector:
    """Reads stdout and stderr of a run until both close, keeping at most ``cap`` bytes of each.

    When a stream passes its cap the read end is closed: the writer then gets EPIPE or SIGPIPE
    instead of filling the host's memory, and the result says ``*_truncated``.

    It waits with ``poll(2)``: for the three or so descriptors of one run, a poll set is made,
    filled and emptied without a system call (an epoll set costs one to create, one per
    descriptor added and removed, and one to close: eight per run of the fast path).
    """

    def __init__(self, out_fd: int, err_fd: int, out_cap: int, err_cap: int) -> None:
        self.streams = [_Stream(out_fd, out_cap), _Stream(err_fd, err_cap)]
        self._poll = select.poll()
        #: What each watched descriptor is: a stream to read, or a callback.
        self._watched: dict[int, _Stream | Callable[[], None]] = {}
        for s in self.streams:
            os.set_blocking(s.fd, False)
            self._add(s.fd, s)

    def _add(self, fd: int, target: _Stream | Callable[[], None]) -> None:
        self._poll.register(fd, select.POLLIN)
        self._watched[fd] = target

    def _remove(self, fd: int) -> None:
        if self._watched.pop(fd, None) is not None:
            self._poll.unregister(fd)

    def watch(self, fd: int, on_ready: Callable[[], None]) -> None:
        """Also call ``on_ready`` when ``fd`` becomes readable (e.g. a control socket)."""
        self._add(fd, on_ready)

    def unwatch(self, fd: int) -> None:
        """Stop calling back for ``fd`` (a stream stays read until it closes)."""
        target = self._watched.get(fd)
        if target is not None and not isinstance(target, _Stream):
            self._remove(fd)

    @property
    def streams_open(self) -> bool:
        out, err = self.streams
        return out.open or err.open

    def pump(self, deadline: float, stop: Callable[[], bool] = lambda: False) -> bool:
        """Read until both streams close and ``stop()`` is true, or ``deadline`` passes.

        Returns False when the deadline passed first.
        """
        while True:
            if not self.streams_open and stop():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if not self._watched:
                time.sleep(min(remaining, 0.0005))
                continue
            # Once the streams are closed only stop() is awaited: poll it often. poll(2) takes
            # whole milliseconds: round up, as the selectors module does, so as not to spin.
            wait = min(remaining, 0.5 if self.streams_open else 0.002)
            for fd, _ in self._poll.poll(math.ceil(wait * 1e3)):
                # Any event (data, end of file, an error) means a read or a callback is due;
                # the descriptor may have been dropped by an earlier event of this batch.
                target = self._watched.get(fd)
                if isinstance(target, _Stream):
                    self._read(target)
                elif target is not None:
                    target()

    def _read(self, s: _Stream) -> None:
        try:
            data = os.read(s.fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(s)
            return
        room = s.cap - s.size
        if len(data) > room:
            s.chunks.append(data[:room])
            s.size = s.cap
            s.truncated = True
            self._close(s)
        else:
            s.chunks.append(data)
            s.size += len(data)

    def _close(self, s: _Stream) -> None:
        if s.open:
            s.open = False
            self._remove(s.fd)
            with contextlib.suppress(OSError):
                os.close(s.fd)

    def finish(self) -> tuple[bytes, bool, bytes, bool]:
        """(stdout, truncated, stderr, truncated); closes everything still open."""
        for s in self.streams:
            self._close(s)
        for fd in list(self._watched):
            self._remove(fd)
        out, err = self.streams
        return b"".join(out.chunks), out.truncated, b"".join(err.chunks), err.truncated


def base_rlimits(
    *,
    nproc: int,
    nofile: int,
    fsize_bytes: int,
    cpu_s: int | None = None,
    as_bytes: int | None = None,
) -> list[tuple[int, tuple[int, int]]]:
    """The rlimits every sandboxed process starts with."""
    limits: list[tuple[int, tuple[int, int]]] = [
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NPROC, (nproc, nproc)),
        (resource.RLIMIT_NOFILE, (nofile, nofile)),
        (resource.RLIMIT_FSIZE, (fsize_bytes, fsize_bytes)),
    ]
    if cpu_s is not None:
        # The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
        limits.append((resource.RLIMIT_CPU, (cpu_s, cpu_s + 1)))
    if as_bytes is not None:
        limits.append((resource.RLIMIT_AS, (as_bytes, as_bytes)))
    return limits


def runqueue_wait_s(pids: Sequence[int], proc: str = "/proc") -> float | None:
    """Seconds the processes ``pids`` have spent runnable but waiting for a CPU, summed (the
    second field of ``/proc/<pid>/schedstat``); None where the kernel does not report it."""
    total, known = 0, False
    for pid in pids:
        try:
            with open(f"{proc}/{pid}/schedstat", "rb") as f:
                total += int(f.read().split()[1])
            known = True
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9 if known else None


def stdin_fd(data: bytes | None) -> int:
    """An fd to read ``data`` from (a sealed-off memfd), or /dev/null."""
    if data is None:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    fd = os.memfd_create("stdin", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
