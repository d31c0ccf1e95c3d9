"""The fresh-process path: every run is a new bubblewrap sandbox around any command.

Use it for anything that is not plain Python (a shell pipeline, a compiler, pytest), or when a run
must not share even an interpreter image with earlier runs. It costs a bubblewrap start plus the
program's own start (15-20 ms for Python here); the fork server (:mod:`.forkserver`) is the fast
path for Python.

Every process of the run lives in the run's pid namespace: when the command exits, bubblewrap's
init exits and the kernel kills whatever is left, daemons and double-forks included. A timeout
kills the run's whole cgroup.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping

from referee.errors import SandboxError
from referee.sandbox.cgroups import Cgroup, Cgroups
from referee.sandbox.host import Scratch, UidPool, isolation_layers
from referee.sandbox.limits import Limits
from referee.sandbox.outcome import RawOutcome, to_result
from referee.sandbox.process import (
    OutputCollector,
    Reaper,
    base_rlimits,
    make_preexec,
    open_join_fds,
    runqueue_wait_s,
    spawn,
    stdin_fd,
)
from referee.sandbox.result import ExecResult
from referee.sandbox.view import SandboxView
from referee.sandbox.workspace import Workspace

__all__ = ["BubblewrapRunner"]

# Processes bubblewrap itself needs on top of the program's: its parent and its pid-1 init.
_BWRAP_PROCS = 3


class BubblewrapRunner:
    """Runs commands, each in a fresh bubblewrap sandbox."""

    def __init__(
        self, view: SandboxView, *, cgroups: Cgroups | None, scratch: Scratch, uids: UidPool
    ) -> None:
        self.view = view
        self.cgroups = cgroups
        self.scratch = scratch
        self.uids = uids

    def isolation(self) -> list[str]:
        return isolation_layers(
            cgroup_version=self.cgroups.version if self.cgroups is not None else None,
            scratch=self.scratch,
            uids=self.uids,
            extra=(),
        )

    def run(
        self,
        argv: list[str],
        *,
        files: Mapping[str, bytes | str] | None = None,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        workspace: Workspace | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        limits = limits or Limits()
        if not argv:
            raise SandboxError("no command given; pass the program and its arguments")
        own_ws = workspace is None
        if workspace is not None and workspace.owner is not None:
            uid = workspace.owner
        else:
            uid = self.uids.acquire()
        ws = workspace or Workspace(self.scratch.new_dir("run", uid), owner=uid, cleanup=True)
        group: Cgroup | None = None
        try:
            if files:
                ws.write(files)
            if self.cgroups is not None:
                group = self.cgroups.create("run")
                group.set_limits(
                    memory_bytes=limits.memory_bytes, pids_max=limits.max_processes + _BWRAP_PROCS
                )
            return self._run(argv, ws, uid, group, stdin, limits, env)
        finally:
            if group is not None:
                group.remove()
            if own_ws:
                ws.close()
            if workspace is None or workspace.owner is None:
                self.uids.release(uid)

    def _run(
        self,
        argv: list[str],
        ws: Workspace,
        uid: int,
        group: Cgroup | None,
        stdin: bytes | None,
        limits: Limits,
        env: dict[str, str] | None,
    ) -> ExecResult:
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        in_fd = stdin_fd(stdin)
        join_fds = open_join_fds(group.procs_files()) if group is not None else []
        cmd = self.view.command(ws.root, argv, env=env, pass_fds=(status_w,))
        cmd.argv[1:1] = ["--json-status-fd", str(status_w)]
        rl = base_rlimits(
            # Above the pids cgroup's limit when there is one, so that the cgroup binds first
            # and its counter shows the run hit it; where there is none, RLIMIT_NPROC binds.
            nproc=limits.max_processes + _BWRAP_PROCS + (8 if group is not None else 0),
            nofile=limits.max_open_files,
            fsize_bytes=limits.max_file_mb << 20,
            cpu_s=limits.cpu_seconds,
            as_bytes=None if group is not None else limits.memory_bytes,
        )
        preexec = make_preexec(uid=uid, join_fds=join_fds, rlimits=rl)
        t0 = time.monotonic()
        try:
            proc = spawn(
                cmd.argv,
                pass_fds=cmd.pass_fds,
                stdin=in_fd,
                stdout=out_w,
                stderr=err_w,
                preexec=preexec,
            )
        except OSError as e:
            for fd in (status_r, out_r, err_r):
                os.close(fd)
            raise SandboxError(f"could not start bubblewrap: {e}") from e
        finally:
            for fd in (status_w, out_w, err_w, in_fd, *join_fds):
                os.close(fd)
            cmd.close()
        collector = OutputCollector(out_r, err_r, limits.stdout_bytes, limits.stderr_bytes)
        status_chunks: list[bytes] = []

        def read_status() -> None:
            data = os.read(status_r, 4096)
            if data:
                status_chunks.append(data)
            else:
                collector.unwatch(status_r)

        collector.watch(status_r, read_status)
        reaper = Reaper(proc.pid)
        finished = collector.pump(t0 + limits.timeout_s, stop=reaper)
        timed_out = not finished
        wait_s: float | None = None
        if timed_out:
            # Before the kill: whether the tree was starved of CPU or waiting on its own.
            wait_s = runqueue_wait_s(group.pids()) if group is not None else None
            self._kill(proc.pid, group)
        status, ru = reaper.wait()
        proc.returncode = 0  # reaped by hand above; keep Popen from waiting again
        wall = time.monotonic() - t0
        # Drain what the killed tree left in the pipes, briefly.
        collector.pump(time.monotonic() + 0.2, stop=lambda: True)
        # What bubblewrap wrote is in the pipe by now; don't wait for EOF, which comes only once
        # the kernel has finished tearing the namespace down.
        os.set_blocking(status_r, False)
        with contextlib.suppress(OSError):
            while chunk := os.read(status_r, 4096):
                status_chunks.append(chunk)
        os.close(status_r)
        out, out_trunc, err, err_trunc = collector.finish()
        stats = group.stats() if group is not None else None
        child_pid = _child_pid(b"".join(status_chunks))
        started = child_pid is not None
        # bubblewrap returns as soon as its init (pid 1 of the run's namespace) has reported the
        # exit status, so that init is often still in the group, on its way out: it is
        # bubblewrap's process, not one the program left behind. Killed, not counted.
        bwrap_init = () if child_pid is None else (child_pid,)
        strays = group.kill_all(uncounted=bwrap_init) if group is not None else 0
        code, sig = _code_and_signal(status)
        # bubblewrap reports its own setup failures as "bwrap: ..." with exit code 1, before the
        # program could have written anything.
        if code == 1 and err.startswith(b"bwrap: execvp "):
            # as a shell would say: 126 found but not executable, 127 not found
            code = 126 if err.rstrip().endswith(b"Permission denied") else 127
        elif not timed_out and (not started or (code == 1 and err.startswith(b"bwrap: "))):
            raise SandboxError(
                "bubblewrap failed before starting the program: "
                + err.decode(errors="replace").strip()[-2000:]
                + " (check that user namespaces are enabled: sysctl user.max_user_namespaces)"
            )
        if timed_out:
            code = None
        cpu_s = ru.ru_utime + ru.ru_stime
        if stats is not None and stats.cpu_s is not None:
            cpu_s = stats.cpu_s  # the cgroup counts every process, reaped or not
        raw = RawOutcome(
            exit_code=code,
            signal=sig,
            timed_out=timed_out,
            wall_s=wall,
            cpu_s=cpu_s,
            maxrss_bytes=ru.ru_maxrss * 1024,
            stdout=out,
            stderr=err,
            stdout_truncated=out_trunc,
            stderr_truncated=err_trunc,
            stats=stats,
            strays=strays,
            rlimit_as=group is None,
            wait_s=wait_s,
        )
        return to_result(raw, limits, isolation=self.isolation(), backend="bwrap")

    @staticmethod
    def _kill(pid: int, group: Cgroup | None) -> None:
        # Killing bubblewrap's parent makes its init die (--die-with-parent), and with the pid
        # namespace's init gone the kernel kills every process in it. The cgroup kill is belt
        # and braces, and also catches anything in between.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        if group is not None:
            group.kill_all()


def _child_pid(data: bytes) -> int | None:
    """The pid bubblewrap reported for its child (the pid namespace's init), if it got that far.

    Only whether the child started and which process is bubblewrap's own init are taken from
    this channel; the exit code comes from the wait status. The channel is bubblewrap's: the
    program never holds its descriptor, and anything it could write into must not decide a result.
    """
    pid: int | None = None
    for line in data.decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            value = json.loads(line).get("child-pid")
            if isinstance(value, int) and not isinstance(value, bool):
                pid = value
    return pid


def _code_and_signal(status: int) -> tuple[int | None, int | None]:
    """bubblewrap reports a child killed by signal N as exit code 128+N, like a shell."""
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    exit_code = os.waitstatus_to_exitcode(status)
    if 128 < exit_code <= 128 + 64:
        return None, exit_code - 128
    return exit_code, None
