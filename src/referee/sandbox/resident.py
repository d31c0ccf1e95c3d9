"""``Resident``: a sandboxed program that stays up and answers requests, one at a time.

A run of the fast path is a fork of a warm interpreter: about a millisecond of the fork itself,
then the workspace, the cgroup's limits and counters, the pipes and the reaping around it
(three to ten milliseconds in all here). Work that is itself well under a millisecond (a SQL
query on a small database) is then mostly that. A resident is the same fork, kept: a program
started once in a fork-server worker of its own, with every isolation layer of
:meth:`Sandbox.run_python` (the worker's namespaces, cgroup, uid; the run's session, rlimits and
seccomp filter), that reads one request at a time on its stdin and writes its reply on its
stdout: a request is one frame (a 4-byte big-endian length, then the bytes), a reply is frames
ended by an empty one (so that what a reply had sent survives the program's death).

What a resident does not have is a fresh process per request: the program must make each
request's state fresh itself, and bound each request's CPU itself (it lowers its own soft
``RLIMIT_CPU`` before each one: the kernel kills it at the limit). The host bounds each request
on the wall clock: past it, the worker is killed and replaced. A resident that died (killed at a
limit, or at its wall clock) is started again at the next request, and the request that killed
it is reported like a run that died (``ExecResult``: signal, violations, memory).

>>> with Sandbox() as sb, sb.resident(ECHO) as r:                    # doctest: +SKIP
...     r.exchange(b"hello", timeout_s=5).stdout
'hello'
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import time

from referee.errors import SandboxError
from referee.sandbox.forkserver import ForkWorker
from referee.sandbox.limits import Limits
from referee.sandbox.outcome import RawOutcome, to_result
from referee.sandbox.result import ExecResult
from referee.sandbox.workspace import Workspace

__all__ = ["Resident"]

_LEN = struct.Struct(">I")
#: Seconds to wait for the fork server's reply once a resident's stdout has closed.
_REAP_S = 5.0


class Resident:
    """One resident program on one dedicated worker; made by :meth:`Sandbox.resident`.

    Not thread-safe: one exchange at a time (hold several residents for concurrency).
    ``limits`` are the program's for its whole life (memory, processes; ``cpu_s`` and
    ``timeout_s`` bound its life, not one request). ``max_requests``: the program is started
    again after this many, so that nothing it accumulates (its heap) grows without bound.
    """

    def __init__(
        self,
        worker: ForkWorker,
        source: str,
        *,
        limits: Limits,
        name: str = "resident.py",
        env: dict[str, str] | None = None,
        max_requests: int = 1000,
    ) -> None:
        self._worker = worker
        self._source = source
        self._limits = limits
        self._name = name
        self._env = env
        self.max_requests = max_requests
        self._fds: tuple[int, int] | None = None
        self._served = 0
        #: How many times the program was started (1 after the first request).
        self.starts = 0

    @property
    def workspace(self) -> Workspace:
        """The worker's ``/workspace`` on the host, for files the program reads (the worker
        started again first if it died: a new worker has a new, empty workspace)."""
        if not self._worker.alive:
            self._close_fds()
            self._worker.restart()
        assert self._worker.workspace is not None
        return self._worker.workspace

    @property
    def running(self) -> bool:
        return self._fds is not None

    def _start(self) -> None:
        self._fds = self._worker.spawn(
            self._source, name=self._name, limits=self._limits, env=self._env
        )
        os.set_blocking(self._fds[0], False)  # a write never blocks past the deadline
        self._served = 0
        self.starts += 1

    def exchange(self, data: bytes, *, timeout_s: float) -> ExecResult:
        """Send one request and wait at most ``timeout_s`` seconds (wall clock) for its reply.

        The reply (its frames' bytes, joined) is the result's ``stdout`` (``exit_code`` 0). If
        the program died during the request, the result says how (signal, ``cpu-limit``,
        ``memory-limit``...), with ``stdout`` what it had sent; past ``timeout_s`` the worker
        is killed and the result is ``timed_out``. ``cpu_s`` is the worker cgroup's CPU time
        over the request."""
        if self._fds is None or self._served >= self.max_requests:
            self.stop()
            self._start()
        assert self._fds is not None
        in_w, out_r = self._fds
        self._served += 1
        self._worker.mark_cpu()
        t0 = time.monotonic()
        deadline = t0 + timeout_s
        reply, how = _talk(in_w, out_r, _LEN.pack(len(data)) + data, deadline)
        wall = time.monotonic() - t0
        if how == "done":
            cpu = self._worker.cpu_since_mark()
            return ExecResult(
                exit_code=0,
                stdout=reply.decode("utf-8", errors="replace"),
                wall_s=round(wall, 6),
                cpu_s=round(cpu or 0.0, 6),
                isolation=self._worker.isolation(),
                backend="bwrap-resident",
            )
        self._close_fds()
        if how == "died":  # the program died (a limit, or a crash): the server says how
            raw = self._worker.reap(self._limits, stdout=reply, wall_s=wall, wait_s=_REAP_S)
        else:  # past its wall clock: the whole worker goes, and a fresh one replaces it
            cpu = self._worker.cpu_since_mark()
            with contextlib.suppress(Exception):
                self._worker.restart()
            raw = RawOutcome(
                exit_code=None,
                signal=9,
                timed_out=True,
                wall_s=wall,
                cpu_s=cpu or 0.0,
                maxrss_bytes=0,
                stdout=reply,
                stderr=b"",
                stdout_truncated=False,
                stderr_truncated=False,
            )
        return to_result(
            raw, self._limits, isolation=self._worker.isolation(), backend="bwrap-resident"
        )

    def _close_fds(self) -> None:
        fds, self._fds = self._fds, None
        for fd in fds or ():
            with contextlib.suppress(OSError):
                os.close(fd)

    def stop(self) -> None:
        """End the program (its stdin closes: it exits) and wait for the worker to be free."""
        if self._fds is None:
            return
        self._close_fds()
        if self._worker.alive:
            raw = self._worker.reap(self._limits, stdout=b"", wall_s=0.0, wait_s=_REAP_S)
            if "supervisor-lost" in raw.extra_violations:
                raise SandboxError("a resident program did not end when its stdin closed")

    def close(self) -> None:
        """Stop the program and its worker."""
        with contextlib.suppress(SandboxError):
            self.stop()
        self._worker.close()

    def __enter__(self) -> Resident:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _talk(in_w: int, out_r: int, frame: bytes, deadline: float) -> tuple[bytes, str]:
    """Write ``frame``, then read the reply: frames until an empty one. Returns the frames'
    bytes joined and ``"done"``; or what arrived and ``"died"`` when the program closed its
    end first, or ``"late"`` at the deadline."""
    view = memoryview(frame)
    got = bytearray()
    reply = bytearray()
    poller = select.poll()
    poller.register(out_r, select.POLLIN)
    writing = bool(view)
    if writing:
        poller.register(in_w, select.POLLOUT)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(reply), "late"
        for fd, ev in poller.poll(left * 1000):
            if fd == in_w:
                try:
                    if ev & (select.POLLERR | select.POLLHUP):
                        raise BrokenPipeError
                    view = view[os.write(in_w, view[: 1 << 16]) :]
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    view = view[:0]
                if not view:
                    poller.unregister(in_w)
                    writing = False
                continue
            chunk = os.read(out_r, 1 << 20)
            if not chunk:
                return bytes(reply), "died"
            got += chunk
            while len(got) >= _LEN.size:
                need = _LEN.unpack_from(got)[0]
                if len(got) < _LEN.size + need:
                    break
                if need == 0:
                    # A reply ends only after its request was read whole (else the program
                    # is broken: treated as dead).
                    return bytes(reply), "died" if writing or got[_LEN.size :] else "done"
                reply += got[_LEN.size : _LEN.size + need]
                del got[: _LEN.size + need]
