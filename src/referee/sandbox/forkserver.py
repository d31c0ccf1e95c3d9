"""The Python fast path: warm interpreters inside long-lived sandboxes, one fork per run.

A :class:`ForkWorker` is one bubblewrap sandbox (with every layer of the fresh path) holding the
fork server of :mod:`._server`. The worker has a cgroup of its own whose memory and pids limits
are set for each run, a host uid of its own, and a workspace directory mounted at ``/workspace``
that the host fills before a run and empties after it. A :class:`ForkServerPool` holds several
workers and hands each run to an idle one.

If a run manages to take its worker down, the run is reported with a ``supervisor-lost``
violation, the worker's cgroup is killed and a fresh worker takes its place. The same happens when
the worker dies of something else (killed from the host, say): the sandbox cannot tell the two
apart, so a caller that wants to retry such runs counts them with :func:`watch_lost_workers`.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import os
import queue
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

from referee.errors import SandboxError
from referee.sandbox.cgroups import Cgroup, Cgroups, CgroupStats
from referee.sandbox.host import Scratch, UidPool, isolation_layers
from referee.sandbox.limits import Limits
from referee.sandbox.outcome import RawOutcome, to_result
from referee.sandbox.process import (
    OutputCollector,
    base_rlimits,
    make_preexec,
    open_join_fds,
    spawn_long_lived,
    stdin_fd,
)
from referee.sandbox.result import ExecResult
from referee.sandbox.seccomp_policy import child_filter_bpf
from referee.sandbox.view import SandboxView
from referee.sandbox.workspace import Workspace

__all__ = ["ForkServerPool", "ForkWorker", "LostWorkers", "watch_lost_workers"]

_SERVER_SOURCE = resources.files("referee.sandbox").joinpath("_server.py").read_text()
# Processes outside the run: bwrap's parent, its init and the server.
_WORKER_PROCS = 3
# The server's resident memory is charged to the same cgroup as the run: allow for it.
_START_TIMEOUT_S = 15.0
_INLINE_SOURCE_BYTES = 16 << 10
_GRACE_S = 2.0


@dataclasses.dataclass
class LostWorkers:
    """How many runs started in one context found their worker dead (see
    :func:`watch_lost_workers`)."""

    count: int = 0


_LOST: contextvars.ContextVar[LostWorkers | None] = contextvars.ContextVar(
    "referee_lost_workers", default=None
)


@contextlib.contextmanager
def watch_lost_workers() -> Iterator[LostWorkers]:
    """Count the runs started in this context (this thread, or work started from it with the
    context copied) whose fork server died under them: the run was reported with a
    ``supervisor-lost`` violation, or the server could not be reached to start it. Either way
    the worker has been replaced. The run's result says nothing about the program, so a caller
    may run the same work again (the service engine does, once).

    >>> with watch_lost_workers() as lost:
    ...     lost.count
    0
    """
    tally = LostWorkers()
    token = _LOST.set(tally)
    try:
        yield tally
    finally:
        _LOST.reset(token)


def _note_lost() -> None:
    tally = _LOST.get()
    if tally is not None:
        tally.count += 1


class ForkWorker:
    """One sandboxed fork server. Not thread-safe: a pool gives it one run at a time."""

    def __init__(
        self,
        view: SandboxView,
        *,
        cgroups: Cgroups | None,
        scratch: Scratch,
        uids: UidPool,
        index: int = 0,
        preload: dict[str, str] | None = None,
        warm_imports: tuple[str, ...] = (),
        warm_paths: tuple[str, ...] = (),
    ) -> None:
        self.view = view
        self.preload = dict(preload or {})
        self.warm_imports = tuple(warm_imports)
        self.warm_paths = tuple(warm_paths)
        self.cgroups = cgroups
        self.scratch = scratch
        self.uids = uids
        self.index = index
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.group: Cgroup | None = None
        self.uid = -1
        self.workspace: Workspace | None = None
        self.baseline = 0
        self._limit_set: tuple[int, int] | None = None
        self._counters = (0, 0)
        #: The worker cgroup's CPU seconds when the current run started (None: no accounting).
        self._cpu_mark: float | None = None
        self._devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        self._isolation: tuple[bool, tuple[str, ...]] | None = None
        #: The last run's rlimits, and what they were made for (most runs repeat their limits).
        self._rlimits: tuple[tuple[Limits, bool], list[tuple[str, tuple[int, int]]]] | None = None

    # ---- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        self.uid = self.uids.acquire()
        self.workspace = Workspace(
            self.scratch.new_dir(f"worker{self.index}", self.uid), owner=self.uid
        )
        if self.cgroups is not None:
            self.group = self.cgroups.create(f"worker{self.index}")
            # Generous until the first run sets its own limits.
            self.group.set_limits(memory_bytes=1 << 30, pids_max=256)
        host_sock, server_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = server_sock.fileno()
        join_fds = open_join_fds(self.group.procs_files()) if self.group is not None else []
        cmd = self.view.command(
            self.workspace.root,
            [self.view.python, "-I", "-c", _SERVER_SOURCE, str(fd)],
            pass_fds=(fd,),
        )
        rl = base_rlimits(nproc=4096, nofile=4096, fsize_bytes=1 << 40)
        # Each run raises its own oom_score_adj to 1000, so under pressure the run dies first.
        preexec = make_preexec(uid=self.uid, join_fds=join_fds, rlimits=rl)
        devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        try:
            self.proc = spawn_long_lived(
                cmd.argv,
                pass_fds=cmd.pass_fds,
                stdin=devnull,
                stdout=devnull,
                stderr=subprocess.PIPE,
                preexec=preexec,
            )
        finally:
            os.close(devnull)
            cmd.close()
            server_sock.close()
            for jfd in join_fds:
                os.close(jfd)
        self.sock = host_sock
        host_sock.settimeout(_START_TIMEOUT_S)
        problem = ""
        try:
            hello = json.loads(host_sock.recv(1 << 16) or b"null")
        except (OSError, ValueError) as e:
            hello, problem = None, f" ({e})"
        if not isinstance(hello, dict):
            stderr = b""
            if self.proc.stderr is not None:
                with contextlib.suppress(Exception):
                    self.proc.kill()
                    stderr = self.proc.stderr.read()
            self.close()
            raise SandboxError(
                f"fork server did not start: {stderr.decode(errors='replace')[-2000:]}{problem}"
            )
        server_pid = int(hello["pid"])
        host_sock.send(child_filter_bpf((1, server_pid)))
        host_sock.send(json.dumps(self.preload).encode())
        host_sock.send(
            json.dumps({"paths": self.warm_paths, "imports": self.warm_imports}).encode()
        )
        host_sock.settimeout(None)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
            self.proc.stderr = None
        if self.group is not None:
            first = self.group.stats()
            self.baseline = first.peak_bytes
            self._counters = (first.oom_kills, first.pids_refused)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
            self.proc = None
        if self.group is not None:
            with contextlib.suppress(SandboxError):
                self.group.remove()
            self.group = None
        if self.workspace is not None:
            with contextlib.suppress(OSError):
                self.workspace.clear()
                self.workspace.root.rmdir()
            self.workspace = None
        if self.uid >= 0:
            self.uids.release(self.uid)
            self.uid = -1

    def restart(self) -> None:
        self.close()
        self.start()

    # ---- one run ------------------------------------------------------------------------
    def isolation(self) -> list[str]:
        # The same for every run of this worker's life (its cgroup, scratch and uids): made once
        # per start, copied per result.
        with_group = self.group is not None
        if self._isolation is None or self._isolation[0] != with_group:
            layers = isolation_layers(
                cgroup_version=self.cgroups.version
                if with_group and self.cgroups is not None
                else None,
                scratch=self.scratch,
                uids=self.uids,
                extra=("seccomp-child", "fork-server"),
            )
            self._isolation = (with_group, tuple(layers))
        return list(self._isolation[1])

    def _set_limits(self, limits: Limits) -> None:
        if self.group is None:
            return
        wanted = (limits.memory_bytes + self.baseline, limits.max_processes + _WORKER_PROCS)
        if wanted != self._limit_set:
            self.group.set_limits(memory_bytes=wanted[0], pids_max=wanted[1])
            self._limit_set = wanted
        self.group.reset_peak()
        self._cpu_mark = self.group.cpu_s()

    def run(
        self,
        source: str | bytes,
        *,
        name: str = "main.py",
        argv: list[str] | None = None,
        files: Mapping[str, bytes | str] | None = None,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        workspace: Workspace | None = None,
        env: dict[str, str] | None = None,
        keep_workspace: bool = False,
    ) -> ExecResult:
        """One run in a fork of this worker. ``keep_workspace`` leaves the worker's own
        workspace as the run left it (for the next run of a lease) instead of emptying it."""
        limits = limits or Limits()
        if not self.alive:
            self.restart()
        assert self.workspace is not None and self.sock is not None
        ws = self.workspace
        if workspace is not None:
            ws.restore(workspace.snapshot())
        if files:
            ws.write(files)
        try:
            self._set_limits(limits)
            raw = self._exchange(source, name, argv, stdin, limits, env)
            if raw.stats is not None:
                # OOM kills and refused forks are cumulative counters: keep this run's share.
                s = raw.stats
                raw.stats = CgroupStats(
                    peak_bytes=s.peak_bytes,
                    oom_kills=s.oom_kills - self._counters[0],
                    memory_failcnt=s.memory_failcnt,
                    pids_refused=s.pids_refused - self._counters[1],
                    cpu_s=s.cpu_s,
                )
                self._counters = (s.oom_kills, s.pids_refused)
            if workspace is not None:
                workspace.restore(ws.snapshot())
        finally:
            if not keep_workspace:
                with contextlib.suppress(OSError):
                    ws.clear()
        return to_result(raw, limits, isolation=self.isolation(), backend="bwrap-forkserver")

    def _run_rlimits(self, limits: Limits) -> list[tuple[str, tuple[int, int]]]:
        """The rlimits the server sets in a run's child (made again only when they change)."""
        key = (limits, self.group is None)
        if self._rlimits is None or self._rlimits[0] != key:
            rlimits = [
                ("RLIMIT_CPU", (limits.cpu_seconds, limits.cpu_seconds + 1)),
                ("RLIMIT_NOFILE", (limits.max_open_files, limits.max_open_files)),
                ("RLIMIT_FSIZE", (limits.max_file_mb << 20, limits.max_file_mb << 20)),
                ("RLIMIT_CORE", (0, 0)),
                # Above the pids cgroup limit, so the cgroup binds first and counts the refusal.
                ("RLIMIT_NPROC", (limits.max_processes + _WORKER_PROCS + 8,) * 2),
            ]
            if self.group is None:
                rlimits.append(("RLIMIT_AS", (limits.memory_bytes, limits.memory_bytes)))
            self._rlimits = (key, rlimits)
        return self._rlimits[1]

    def _exchange(
        self,
        source: str | bytes,
        name: str,
        argv: list[str] | None,
        stdin: bytes | None,
        limits: Limits,
        env: dict[str, str] | None,
    ) -> RawOutcome:
        assert self.sock is not None
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        in_fd = stdin_fd(stdin) if stdin is not None else os.dup(self._devnull)
        data = source.encode() if isinstance(source, str) else bytes(source)
        # Small programs travel inside the request; large ones in a memfd of their own.
        inline = len(data) <= _INLINE_SOURCE_BYTES
        fds = [in_fd, out_w, err_w]
        if not inline:
            fds.append(stdin_fd(data))
        request = {
            "name": name,
            "argv": argv or [name],
            "env": self.view.env(env),
            "timeout": limits.timeout_s,
            "rlimits": self._run_rlimits(limits),
        }
        if inline:
            request["source"] = data.decode("utf-8", errors="surrogateescape")
        try:
            socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        except OSError as e:
            for fd in (out_r, err_r):
                os.close(fd)
            # The server died between runs and its process is not reaped yet (``alive`` still
            # said yes): replace it now, so that only this run fails.
            _note_lost()
            with contextlib.suppress(Exception):
                self.restart()
            raise SandboxError(f"fork server unreachable: {e}") from e
        finally:
            for fd in fds:
                os.close(fd)
        collector = OutputCollector(out_r, err_r, limits.stdout_bytes, limits.stderr_bytes)
        reply: list[bytes] = []

        def on_reply() -> None:
            try:
                data = self.sock.recv(1 << 16)  # type: ignore[union-attr]
            except OSError:
                data = b""
            reply.append(data)
            collector.unwatch(self.sock.fileno())  # type: ignore[union-attr]

        collector.watch(self.sock.fileno(), on_reply)
        t0 = time.monotonic()
        in_time = collector.pump(t0 + limits.timeout_s + _GRACE_S, stop=lambda: bool(reply))
        wall = time.monotonic() - t0
        out, out_trunc, err, err_trunc = collector.finish()
        stats = self.group.stats() if self.group is not None else None
        # The worker's cgroup counts every process of the run, reaped or killed, where the
        # child's rusage misses what it did not wait for (and a run that took the server down
        # has no rusage at all). The server's own share (a fork, a wait) is noise.
        group_cpu: float | None = None
        if stats is not None and stats.cpu_s is not None and self._cpu_mark is not None:
            group_cpu = max(0.0, stats.cpu_s - self._cpu_mark)
        common: dict[str, Any] = {
            "stdout": out,
            "stderr": err,
            "stdout_truncated": out_trunc,
            "stderr_truncated": err_trunc,
            "stats": stats,
            "memory_baseline": self.baseline,
        }
        if not in_time or not reply or not reply[0]:
            # The server is gone or hung: the run took it down. Replace the worker.
            lost = not reply or not reply[0]
            if lost and in_time:
                _note_lost()
            with contextlib.suppress(Exception):
                self.restart()
            return RawOutcome(
                exit_code=None,
                signal=9,
                timed_out=not in_time,
                wall_s=wall,
                cpu_s=group_cpu or 0.0,
                maxrss_bytes=0,
                extra_violations=("supervisor-lost",) if lost and in_time else (),
                **common,
            )
        resp: dict[str, Any] = json.loads(reply[0])
        if "fatal" in resp:
            with contextlib.suppress(Exception):
                self.restart()
            raise SandboxError(f"fork server crashed: {resp['fatal']}")
        if "error" in resp:
            raise SandboxError(f"fork server failed: {resp['error']}")
        return RawOutcome(
            exit_code=None if resp.get("timed_out") else resp.get("exit_code"),
            signal=resp.get("signal"),
            timed_out=bool(resp["timed_out"]),
            wall_s=float(resp["wall"]),
            cpu_s=group_cpu if group_cpu is not None else float(resp["utime"]) + resp["stime"],
            maxrss_bytes=int(resp["maxrss_kb"]) * 1024,
            strays=int(resp["strays"]),
            wait_s=resp.get("wait"),
            rlimit_as=self.group is None,
            **common,
        )

    # ---- a run that outlives the call (referee.sandbox.resident) -----------------------
    def spawn(
        self,
        source: str | bytes,
        *,
        name: str = "main.py",
        limits: Limits,
        env: dict[str, str] | None = None,
    ) -> tuple[int, int]:
        """Start a run that keeps running after this returns, with every isolation layer of
        :meth:`run`; its stdin and stdout are pipes, and their host ends are returned
        ``(stdin_w, stdout_r)`` (the caller's to close; its stderr is discarded). The worker
        serves nothing else until the run ends and :meth:`reap` has read the server's reply."""
        if not self.alive:
            self.restart()
        assert self.sock is not None
        in_r, in_w = os.pipe2(os.O_CLOEXEC)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_w = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        data = source.encode() if isinstance(source, str) else bytes(source)
        fds = [in_r, out_w, err_w]
        inline = len(data) <= _INLINE_SOURCE_BYTES
        if not inline:
            fds.append(stdin_fd(data))
        request: dict[str, Any] = {
            "name": name,
            "argv": [name],
            "env": self.view.env(env),
            "timeout": limits.timeout_s,
            "rlimits": self._run_rlimits(limits),
        }
        if inline:
            request["source"] = data.decode("utf-8", errors="surrogateescape")
        try:
            self._set_limits(limits)
            socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        except (OSError, SandboxError) as e:
            os.close(in_w)
            os.close(out_r)
            with contextlib.suppress(Exception):
                self.restart()
            raise SandboxError(f"fork server unreachable: {e}") from e
        finally:
            for fd in fds:
                os.close(fd)
        return in_w, out_r

    def reap(self, limits: Limits, *, stdout: bytes, wall_s: float, wait_s: float) -> RawOutcome:
        """The outcome of a :meth:`spawn` run that has ended (its stdout closed): the server's
        reply, read for at most ``wait_s`` seconds (else the worker is replaced and the run
        reported ``supervisor-lost``). CPU time is the worker cgroup's since the last
        :meth:`mark_cpu` (the run's whole life without a cgroup)."""
        assert self.sock is not None
        self.sock.settimeout(wait_s)
        try:
            data = self.sock.recv(1 << 16)
        except OSError:
            data = b""
        finally:
            if self.sock is not None:
                self.sock.settimeout(None)
        stats = self.group.stats() if self.group is not None else None
        group_cpu = None
        if stats is not None and stats.cpu_s is not None and self._cpu_mark is not None:
            group_cpu = max(0.0, stats.cpu_s - self._cpu_mark)
        if stats is not None:
            s = stats
            stats = CgroupStats(
                peak_bytes=s.peak_bytes,
                oom_kills=s.oom_kills - self._counters[0],
                memory_failcnt=s.memory_failcnt,
                pids_refused=s.pids_refused - self._counters[1],
                cpu_s=s.cpu_s,
            )
            self._counters = (s.oom_kills, s.pids_refused)
        common: dict[str, Any] = {
            "stdout": stdout,
            "stderr": b"",
            "stdout_truncated": False,
            "stderr_truncated": False,
            "stats": stats,
            "memory_baseline": self.baseline,
            "wall_s": wall_s,
        }
        resp: dict[str, Any] = json.loads(data) if data else {}
        if not isinstance(resp, dict) or "wall" not in resp:
            _note_lost()
            with contextlib.suppress(Exception):
                self.restart()
            return RawOutcome(
                exit_code=None,
                signal=9,
                timed_out=False,
                cpu_s=group_cpu or 0.0,
                maxrss_bytes=0,
                extra_violations=("supervisor-lost",),
                **common,
            )
        return RawOutcome(
            exit_code=None if resp.get("timed_out") else resp.get("exit_code"),
            signal=resp.get("signal"),
            timed_out=bool(resp["timed_out"]),
            cpu_s=group_cpu if group_cpu is not None else float(resp["utime"]) + resp["stime"],
            maxrss_bytes=int(resp["maxrss_kb"]) * 1024,
            strays=int(resp["strays"]),
            rlimit_as=self.group is None,
            **common,
        )

    def mark_cpu(self) -> float | None:
        """Start counting the CPU time that :meth:`reap` and :meth:`cpu_since_mark` report
        (the worker cgroup's, None without one); returns the cgroup's total."""
        self._cpu_mark = self.group.cpu_s() if self.group is not None else None
        return self._cpu_mark

    def cpu_since_mark(self) -> float | None:
        """CPU seconds the worker's cgroup used since :meth:`mark_cpu` (None without one)."""
        if self.group is None or self._cpu_mark is None:
            return None
        now = self.group.cpu_s()
        return None if now is None else max(0.0, now - self._cpu_mark)


class ForkServerPool:
    """Several fork workers; ``run`` is thread-safe and uses whichever worker is idle."""

    def __init__(
        self,
        view: SandboxView,
        *,
        cgroups: Cgroups | None,
        scratch: Scratch,
        uids: UidPool,
        workers: int = 2,
        preload: dict[str, str] | None = None,
        warm_imports: tuple[str, ...] = (),
        warm_paths: tuple[str, ...] = (),
    ) -> None:
        if workers < 1:
            raise SandboxError("a fork-server pool needs at least one worker")
        self._idle: queue.Queue[ForkWorker] = queue.Queue()
        self.workers: list[ForkWorker] = []
        for i in range(workers):
            w = ForkWorker(
                view,
                cgroups=cgroups,
                scratch=scratch,
                uids=uids,
                index=i,
                preload=preload,
                warm_imports=warm_imports,
                warm_paths=warm_paths,
            )
            self.workers.append(w)
        # The first worker starts here, so that a sandbox that cannot start fails now, with its
        # reason; the others start concurrently (each start is mostly waiting for bwrap and an
        # interpreter) and join the idle queue as each is ready, so the first run need not
        # wait for all of them. A worker whose start failed joins it dead: the run that takes
        # it restarts it, and raises if that fails too, as for a worker that died later.
        self._starters: list[threading.Thread] = []
        try:
            self.workers[0].start()
        except BaseException:
            self.close()
            raise
        self._idle.put(self.workers[0])
        for w in self.workers[1:]:
            t = threading.Thread(target=self._start, args=(w,), daemon=True)
            t.start()
            self._starters.append(t)

    def _start(self, worker: ForkWorker) -> None:
        with contextlib.suppress(Exception):
            worker.start()
        self._idle.put(worker)

    def run(self, source: str | bytes, **kwargs: Any) -> ExecResult:
        worker = self._idle.get()
        try:
            return worker.run(source, **kwargs)
        finally:
            self._idle.put(worker)

    @contextlib.contextmanager
    def held(self) -> Iterator[ForkWorker]:
        """One worker, alive, for the caller alone until the block ends (then its workspace is
        emptied and it goes back to the idle queue). Never run on the pool itself while holding
        every worker: that run would wait forever."""
        worker = self._idle.get()
        try:
            if not worker.alive:
                worker.restart()
            yield worker
        finally:
            if worker.workspace is not None:
                with contextlib.suppress(OSError):
                    worker.workspace.clear()
            self._idle.put(worker)

    def close(self) -> None:
        for t in self._starters:
            t.join()
        for w in self.workers:
            w.close()
