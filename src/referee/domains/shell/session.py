"""``ShellSession``: a small Linux system in one long-lived sandbox, for a whole episode.

The system's root file system view is a workspace mounted at ``/workspace`` (its ``etc``,
``var/log``, ``srv``...). Commands run one at a time through an in-sandbox supervisor
(:mod:`.supervisor`); what they leave in the background (services, a runaway writer) keeps
running between commands, because the sandbox (its pid namespace) lives until :meth:`close`.

What the session enforces by construction, whatever the commands do:

* the paths in ``read_only`` are bound read-only over themselves (writes, chmod, unlink and
  rename of them fail with EROFS or EBUSY), and the grader's files are never in the view;
* one cgroup holds every process of the session (memory, which also counts what it writes into
  its tmpfs workspace, and a pids limit: a fork bomb stops there), RLIMIT_FSIZE caps each file;
* :meth:`close` kills every process of the session (pid namespace and cgroup), so nothing the
  agent started survives into the grader's checks.

The process table the grader trusts is read on the **host**, from ``/proc`` of the processes in
the session's pid namespace (:meth:`processes`): a process cannot forge its host pid or its start
time, so :meth:`identify` and :meth:`is_alive` tell the original service from an impostor.

One uid is mapped in the sandbox (bubblewrap's user namespace maps only the sandbox user), so
``chown`` to another user is impossible inside; the permission tasks simulate users with files
(:mod:`.permissions`). With ``accounts`` (an imported row's ``users``, :mod:`.accounts`), the
session's ``/etc/passwd`` and ``/etc/group`` list those users, bound read-only over the
sandbox's own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.errors import ConfigError, SandboxError
from referee.sandbox.cgroups import Cgroup, Cgroups
from referee.sandbox.core import Sandbox
from referee.sandbox.limits import Limits
from referee.sandbox.paths import safe_relpath
from referee.sandbox.process import base_rlimits, make_preexec, open_join_fds, spawn_long_lived
from referee.sandbox.view import WORKSPACE_MOUNT
from referee.sandbox.workspace import Workspace

from .accounts import Account, group_text, passwd_text
from .supervisor import SUPERVISOR_SOURCE

__all__ = [
    "CommandResult",
    "ProcInfo",
    "SessionLimits",
    "ShellSession",
    "SystemFile",
    "dry_run_command",
]

#: One file of a system image: (relative path, text, mode).
SystemFile = tuple[str, str, int]


@dataclass(frozen=True)
class SessionLimits:
    """Bounds on one session: its memory (files written count), processes, one file's size,
    one command's wall time and the output kept of it."""

    memory_mb: int = 768
    max_processes: int = 96
    max_file_mb: int = 64
    command_timeout_s: float = 20.0
    max_output: int = 32768


@dataclass(frozen=True)
class CommandResult:
    """What one command did, as the agent sees it."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    stdout: str
    stderr: str
    truncated: bool
    wall_s: float
    #: The session's supervisor was gone (killed by a command): the system is down.
    lost: bool = False

    def render(self) -> str:
        """The observation text: output, then how it ended."""
        status = (
            "the system is down (the session's supervisor was killed)"
            if self.lost
            else "timed out (its process group was killed)"
            if self.timed_out
            else f"killed by signal {self.signal}"
            if self.exit_code is None
            else f"exit {self.exit_code}"
        )
        text = self.stdout + (f"\n[stderr]\n{self.stderr}" if self.stderr else "")
        cut = " [output cut]" if self.truncated else ""
        return f"{text.rstrip()}\n[{status}{cut}]".lstrip()


@dataclass(frozen=True)
class ProcInfo:
    """A process of the session, as the host sees it in /proc."""

    host_pid: int
    pid: int  # inside the session's pid namespace
    start_ticks: int  # field 22 of /proc/PID/stat: with host_pid, one process's identity
    state: str
    cmdline: str


class ShellSession:
    """A system image (files), booted in a sandbox; see the module docstring.

    >>> files = [("etc/motd", "hi\\n", 0o644)]
    >>> with Sandbox() as sb, ShellSession(sb, files) as s:        # doctest: +SKIP
    ...     s.run("cat etc/motd").stdout
    'hi\\n'
    """

    def __init__(
        self,
        sandbox: Sandbox,
        files: Sequence[SystemFile],
        *,
        read_only: Sequence[str] = (),
        cgroups: Cgroups | None = None,
        limits: SessionLimits = SessionLimits(),
        workspace: Workspace | None = None,
        accounts: Sequence[Account] | None = None,
    ) -> None:
        if sandbox.backend != "bwrap":
            raise ConfigError(
                "the shell domain needs the bubblewrap sandbox (a long-lived system with its "
                f"own pid namespace), not the {sandbox.backend!r} backend; install bubblewrap"
            )
        self.limits = limits
        self.read_only = tuple(read_only)
        self.accounts = None if accounts is None else tuple(accounts)
        self._own_ws = workspace is None
        self.workspace = workspace or sandbox.workspace()
        self._group: Cgroup | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._ns: str | None = None
        self.closed = False
        try:
            for path, text, mode in files:
                self.workspace.write({path: text}, mode=mode)
            self._start(sandbox, cgroups)
        except BaseException:
            self.close()
            raise

    # ---- lifecycle ------------------------------------------------------------------------
    def _start(self, sandbox: Sandbox, cgroups: Cgroups | None) -> None:
        root = self.workspace.root
        cmd = sandbox.view.command(root, [sandbox.view.python, "-I", "-c", SUPERVISOR_SOURCE])
        at = cmd.argv.index(WORKSPACE_MOUNT) + 3  # after "--bind ROOT /workspace --chdir /ws"
        binds: list[str] = []
        for rel in self.read_only:
            parts = safe_relpath(rel)
            if os.path.lexists(root.joinpath(*parts)):
                binds += ["--ro-bind", str(root.joinpath(*parts)), f"{WORKSPACE_MOUNT}/{rel}"]
        etc_fds: list[int] = []
        if self.accounts is not None:
            for dest, text in (
                ("/etc/passwd", passwd_text(self.accounts)),
                ("/etc/group", group_text(self.accounts)),
            ):
                fd = os.memfd_create("etc", os.MFD_CLOEXEC)
                os.write(fd, text.encode())
                os.lseek(fd, 0, os.SEEK_SET)
                etc_fds.append(fd)
                # In place of the sandbox's own file (bwrap cannot mount over that bind).
                at_file = next(
                    (
                        i
                        for i in range(2, len(cmd.argv))
                        if cmd.argv[i] == dest and cmd.argv[i - 2] == "--ro-bind-data"
                    ),
                    None,
                )
                if at_file is None:
                    raise SandboxError(f"the sandbox's view binds no {dest} to replace")
                cmd.argv[at_file - 1] = str(fd)
        cmd.argv[at:at] = binds
        if cgroups is not None:
            # A label of its own: Cgroups.create's counter is not shared safely across threads.
            self._group = cgroups.create(f"shell{next(_SESSION_IDS)}")
            self._group.set_limits(
                memory_bytes=self.limits.memory_mb << 20, pids_max=self.limits.max_processes + 3
            )
        join = open_join_fds(self._group.procs_files()) if self._group is not None else []
        rl = base_rlimits(
            nproc=self.limits.max_processes + 3 + (8 if self._group is not None else 0),
            nofile=256,
            fsize_bytes=self.limits.max_file_mb << 20,
        )
        preexec = make_preexec(uid=self.workspace.owner, join_fds=join, rlimits=rl)
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        ans_r, ans_w = os.pipe2(os.O_CLOEXEC)
        devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        try:
            self._proc = spawn_long_lived(
                cmd.argv,
                pass_fds=(*cmd.pass_fds, *etc_fds),
                stdin=req_r,
                stdout=ans_w,
                stderr=devnull,
                preexec=preexec,
            )
        finally:
            for fd in (req_r, ans_w, devnull, *join, *etc_fds):
                os.close(fd)
            cmd.close()
        self._req, self._ans = req_w, ans_r
        self._buf = b""
        hello = self._receive(time.monotonic() + 30)
        if not hello or not hello.get("hello"):
            raise SandboxError("the shell session's supervisor did not start")

    def close(self) -> None:
        """Kill every process of the session and release it; the workspace stays for checks
        (it is removed too when the session made it). Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.stop()
        if self._own_ws:
            self.workspace.close()

    def stop(self) -> None:
        """Kill every process of the session (the workspace stays)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()  # bwrap's init dies with it (--die-with-parent), and so the pid ns
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            for fd in (self._req, self._ans):
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self._group is not None:
            with contextlib.suppress(SandboxError):
                self._group.kill_all()
                self._group.remove()
            self._group = None

    def __enter__(self) -> ShellSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- commands -------------------------------------------------------------------------
    @property
    def up(self) -> bool:
        """Whether the supervisor still answers (a command may have killed it)."""
        return self._proc is not None and self._proc.poll() is None

    def run(
        self, command: str, *, timeout_s: float | None = None, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        """Run ``command`` with ``/bin/sh -c`` in ``/workspace``; never raises for what it does.
        A command past its timeout has its process group killed (background jobs that left the
        group, such as services started with setsid, live on)."""
        timeout = timeout_s or self.limits.command_timeout_s
        if not self.up:
            return CommandResult(None, None, False, "", "", False, 0.0, lost=True)
        request: dict[str, Any] = {
            "cmd": command,
            "timeout": timeout,
            "max_out": self.limits.max_output,
            "env": dict(env) if env is not None else _ENV,
        }
        try:
            os.write(self._req, json.dumps(request).encode() + b"\n")
        except OSError:
            return CommandResult(None, None, False, "", "", False, 0.0, lost=True)
        answer = self._receive(time.monotonic() + timeout + 10)
        if answer is None or "exit" not in answer:
            return CommandResult(None, None, False, "", "", False, timeout, lost=True)
        return CommandResult(
            exit_code=_int_or_none(answer.get("exit")),
            signal=_int_or_none(answer.get("signal")),
            timed_out=bool(answer.get("timed_out")),
            stdout=str(answer.get("stdout", "")),
            stderr=str(answer.get("stderr", "")),
            truncated=bool(answer.get("truncated")),
            wall_s=float(answer.get("wall_s", 0.0)),
        )

    def _receive(self, deadline: float) -> dict[str, Any] | None:
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or self._proc is None:
                return None
            # poll, not select: select refuses fds past 1024, which a server holding a
            # thousand live sessions (3 fds or more each) reaches.
            if not _readable(self._ans, min(left, 1.0)):
                continue
            try:
                chunk = os.read(self._ans, 1 << 16)
            except OSError:
                return None
            if not chunk:
                return None
            self._buf += chunk
            if len(self._buf) > 4 * self.limits.max_output + 65536:
                return None  # garbage on the channel: treat the system as down
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            value = json.loads(line)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def limit_counters(self) -> dict[str, int]:
        """How often the session ran into its limits so far, from its cgroup (empty where
        there is none): memory allocations refused, OOM kills, forks refused."""
        if self._group is None:
            return {}
        with contextlib.suppress(OSError, ValueError, SandboxError):
            s = self._group.stats()
            return {
                "memory_refused": s.memory_failcnt,
                "oom_kills": s.oom_kills,
                "forks_refused": s.pids_refused,
            }
        return {}

    # ---- processes, as the host sees them -------------------------------------------------
    def _namespace(self) -> str | None:
        if self._ns is None and self._proc is not None:
            for pid in _host_pids():
                info = _stat(pid)
                if info is not None and info[1] == self._proc.pid:
                    with contextlib.suppress(OSError):
                        self._ns = os.readlink(f"/proc/{pid}/ns/pid")
                        break
        return self._ns

    def processes(self, *, system: bool = False) -> list[ProcInfo]:
        """The session's live processes (zombies left out), read from the host's /proc; the
        sandbox's init (pid 1) and the supervisor (pid 2) only with ``system``."""
        ns = self._namespace()
        if ns is None or not self.up:
            return []
        out = []
        for host_pid in _host_pids():
            try:
                if os.readlink(f"/proc/{host_pid}/ns/pid") != ns:
                    continue
                with open(f"/proc/{host_pid}/status") as f:
                    nspid = next(ln for ln in f if ln.startswith("NSpid:")).split()
                with open(f"/proc/{host_pid}/cmdline", "rb") as f:
                    cmdline = f.read(4096).replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, StopIteration):
                continue
            info = _stat(host_pid)
            if info is None or info[0] in ("Z", "X") or (int(nspid[-1]) <= 2 and not system):
                continue
            out.append(ProcInfo(host_pid, int(nspid[-1]), info[2], info[0], cmdline))
        return sorted(out, key=lambda p: p.pid)

    def identify(self, marker: str) -> ProcInfo | None:
        """The one process whose command line contains ``marker`` (None if none or several)."""
        found = [p for p in self.processes() if marker in p.cmdline]
        return found[0] if len(found) == 1 else None

    @staticmethod
    def is_alive(proc: ProcInfo) -> bool:
        """Whether that very process (same host pid and start time) still runs."""
        info = _stat(proc.host_pid)
        return info is not None and info[2] == proc.start_ticks and info[0] not in ("Z", "X")


_SESSION_IDS = itertools.count(1)


def dry_run_command(
    sandbox: Sandbox,
    workspace: Workspace,
    command: str,
    *,
    timeout_s: float,
    limits: SessionLimits = SessionLimits(),
) -> CommandResult:
    """``command`` run once as a session runs it (``/bin/sh -c`` in ``/workspace``, the
    session's environment, process, file and output limits), in a one-shot sandbox of its own
    on ``workspace``: no session is booted, and every process it starts ends with it. What
    ``ShellEnv``'s ``dry_run`` runs on a copy of the session's files.

    A session captures output in files and keeps ``max_output`` bytes of each stream; here the
    streams are pipes read up to 1 MB (a one-shot run's default) and cut to ``max_output``, so
    a command that writes more than 1 MB gets SIGPIPE where a session's would run on."""
    cap = max(limits.max_output, Limits().stdout_bytes)
    run_limits = Limits(
        timeout_s=timeout_s,
        memory_mb=limits.memory_mb,
        max_processes=limits.max_processes + 3,
        max_file_mb=limits.max_file_mb,
        max_open_files=256,
        stdout_bytes=cap,
        stderr_bytes=cap,
    )
    try:
        r = sandbox.run(
            ["/bin/sh", "-c", command], workspace=workspace, limits=run_limits, env=dict(_ENV)
        )
    except ValueError as e:  # a NUL byte in the command: as the supervisor answers it
        return CommandResult(127, None, False, "", f"cannot start: {e}", False, 0.0)
    out, err = (_cut(text, limits.max_output) for text in (r.stdout, r.stderr))
    return CommandResult(
        exit_code=r.exit_code,
        signal=r.signal,
        timed_out=r.timed_out,
        stdout=out[0],
        stderr=err[0],
        truncated=out[1] or err[1] or r.stdout_truncated or r.stderr_truncated,
        wall_s=r.wall_s,
    )


def _cut(text: str, cap: int) -> tuple[str, bool]:
    """The first ``cap`` bytes of ``text`` (as the supervisor keeps them), and whether it was
    longer."""
    data = text.encode("utf-8", "surrogateescape")
    if len(data) <= cap:
        return text, False
    return data[:cap].decode("utf-8", "replace"), True


_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/workspace/root",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _host_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time in ticks) of a host process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = data[data.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[19])


def _readable(fd: int, timeout_s: float) -> bool:
    """Whether ``fd`` has data (or its end) within ``timeout_s``: poll, which takes any fd
    number, where select refuses those past 1024."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(timeout_s * 1000))
