"""The UNSAFE ``local`` backend: plain subprocesses, no isolation at all.

It exists for one case only: a machine without bubblewrap where a user still wants to try referee
on code they trust. It must be asked for by name (``Sandbox(backend="local")``), and it warns on
every start: one line on stderr, for the person, and an :class:`UnsafeBackendWarning`, for code
(``warnings.catch_warnings`` records it). The warning is not *displayed* by
default, so that the person reads the message once, not twice.

The program can read and write all the user's files, reach the network and outlive
its run. Never point it at model-written code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

from referee.sandbox.limits import Limits
from referee.sandbox.outcome import RawOutcome, to_result
from referee.sandbox.process import (
    OutputCollector,
    Reaper,
    base_rlimits,
    make_preexec,
    runqueue_wait_s,
)
from referee.sandbox.result import ExecResult
from referee.sandbox.workspace import Workspace

__all__ = ["LOCAL_WARNING", "LocalRunner", "UnsafeBackendWarning"]

LOCAL_WARNING = (
    "referee: the 'local' backend runs programs WITHOUT ANY ISOLATION (no namespaces, no seccomp, "
    "no cgroups). Use it only for code you trust; install bubblewrap for real isolation."
)


class UnsafeBackendWarning(UserWarning):
    """Issued on every start of the local backend (the stderr line says the same to a person)."""


# Appended, so the user's own filters (-W, pytest's filterwarnings, catch_warnings) still win.
warnings.filterwarnings("ignore", category=UnsafeBackendWarning, append=True)


class LocalRunner:
    def __init__(self) -> None:
        warnings.warn(LOCAL_WARNING, UnsafeBackendWarning, stacklevel=3)
        print(LOCAL_WARNING, file=sys.stderr)

    def isolation(self) -> list[str]:
        return ["none"]

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
        ws = workspace or Workspace.temporary()
        try:
            if files:
                ws.write(files)
            return self._run(argv, ws.root, stdin, limits, env)
        finally:
            if workspace is None:
                ws.close()

    def run_python(
        self,
        source: str | bytes,
        *,
        name: str = "main.py",
        argv: list[str] | None = None,
        **kwargs: object,
    ) -> ExecResult:
        files = dict(kwargs.pop("files", None) or {})  # type: ignore[call-overload]
        files[name] = source
        return self.run([sys.executable, name, *(argv or [name])[1:]], files=files, **kwargs)  # type: ignore[arg-type]

    def _run(
        self,
        argv: list[str],
        cwd: Path,
        stdin: bytes | None,
        limits: Limits,
        env: dict[str, str] | None,
    ) -> ExecResult:
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        with tempfile.TemporaryFile() as stdin_file:
            stdin_file.write(stdin or b"")
            stdin_file.seek(0)
            rl = base_rlimits(
                nproc=4096,
                nofile=limits.max_open_files,
                fsize_bytes=limits.max_file_mb << 20,
                cpu_s=limits.cpu_seconds,
                as_bytes=limits.memory_bytes,
            )
            t0 = time.monotonic()
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=stdin_file,
                stdout=out_w,
                stderr=err_w,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})},
                preexec_fn=make_preexec(uid=None, join_fds=(), rlimits=rl),
                start_new_session=True,
            )
            os.close(out_w)
            os.close(err_w)
            collector = OutputCollector(out_r, err_r, limits.stdout_bytes, limits.stderr_bytes)
            reaper = Reaper(proc.pid)
            done = collector.pump(t0 + limits.timeout_s, stop=reaper)
            wait_s = None if done else runqueue_wait_s([proc.pid])
            if not done:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            status, ru = reaper.wait()
            proc.returncode = 0
            wall = time.monotonic() - t0
            out, ot, err, et = collector.finish()
        code = None if os.WIFSIGNALED(status) or not done else os.WEXITSTATUS(status)
        raw = RawOutcome(
            exit_code=code,
            signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            timed_out=not done,
            wall_s=wall,
            cpu_s=ru.ru_utime + ru.ru_stime,
            maxrss_bytes=ru.ru_maxrss * 1024,
            stdout=out,
            stderr=err,
            stdout_truncated=ot,
            stderr_truncated=et,
            rlimit_as=True,
            wait_s=wait_s,
        )
        return to_result(raw, limits, isolation=self.isolation(), backend="local")
