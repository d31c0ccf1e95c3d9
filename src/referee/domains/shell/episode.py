"""One episode on a shell task: boot the system, let the agent act, judge the final state.

The same sequence serves the single-turn verifier (the agent's act is one script) and the
multi-turn environment (the agent's acts are tool calls):

1. the system's files are written into a fresh workspace and a :class:`ShellSession` boots on
   it, with the task's protected paths bound read-only;
2. the task's ``setup`` (the grader's, trusted: it shapes the files) runs, then its ``boot``
   (it starts the services, and runs again after a restore); then the host records the
   processes named by ``hidden["track"]`` (host pid and start time);
3. the agent acts;
4. :meth:`Episode.finish`: the tracked processes' fates and the ``running`` checks' patterns
   are read on the host, **every process of the session is killed**, and the checks run on
   what is left (:mod:`.checks`).

A task with ``hidden["accounts"]`` (an imported row's ``users``, :mod:`.accounts`) has those
users in its ``/etc/passwd`` and ``/etc/group`` and its ``$HOME`` (``/workspace/root``) and the
users' homes created before the setup runs.

A failure of steps 1 and 2 is the grader's or the machine's, never the agent's: it raises
:class:`~referee.errors.SandboxError` and the verifier turns it into an ``infra_error`` verdict.

>>> spec = ShellSpec.of(task)                                              # doctest: +SKIP
>>> with Episode(sandbox, spec) as ep:                                     # doctest: +SKIP
...     ep.session.run("echo fixed > etc/app/app.ini")
...     outcomes = ep.finish()
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import SandboxError, TaskError
from referee.sandbox.cgroups import Cgroups
from referee.sandbox.core import Sandbox
from referee.sandbox.workspace import Snapshot
from referee.tasks.model import Task
from referee.verify.verdict import TestOutcome

from .accounts import Account, accounts_of, homes
from .checks import CHECK_TYPES, CheckContext, ordered, run_check
from .lines import last_line
from .session import ProcInfo, SessionLimits, ShellSession, SystemFile

__all__ = ["Episode", "ShellSpec", "judge", "script_of"]

_SETTLE_S = 0.2
_SETTLE_MAX_S = 2.0
_FENCE = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)


def script_of(answer: str) -> str:
    """The script in a single-turn answer: the last ```bash/```sh/```shell block, else the last
    bare block, else the whole text.

    >>> script_of("I will fix it.\\n```bash\\nchmod 640 f\\n```\\nDone.")
    'chmod 640 f\\n'
    """
    blocks = [(m[1].lower(), m[2]) for m in _FENCE.finditer(answer)]
    shell = [b for lang, b in blocks if lang in ("bash", "sh", "shell", "console")]
    bare = [b for lang, b in blocks if lang == ""]
    chosen = shell or bare
    return chosen[-1] if chosen else answer


@dataclass(frozen=True)
class ShellSpec:
    """A shell task's system and grading, read and checked once from the task."""

    task_id: str
    files: tuple[SystemFile, ...]
    read_only: tuple[str, ...]
    setup: str
    boot: str
    track: tuple[str, ...]
    checks: tuple[Mapping[str, Any], ...]
    hidden: Mapping[str, Any]
    manifest: Mapping[str, Any] = field(default_factory=dict)
    #: The single-turn answer's time limit (and the reference's, at import).
    timeout_s: float = 30.0
    #: One multi-turn command's time limit, when the task sets one (else the environment's).
    command_timeout_s: float | None = None
    #: The time limit of ``setup`` and of ``boot``.
    setup_timeout_s: float = 30.0
    #: The task's users (None: the sandbox's own /etc/passwd, no homes made).
    accounts: tuple[Account, ...] | None = None

    @classmethod
    def of(cls, task: Task) -> ShellSpec:
        """The spec of ``task``; a :class:`TaskError` naming the field that is wrong."""
        p, h = task.payload, task.hidden

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise TaskError(f"shell task {task.id!r}: {what}")

        files = p.get("files", [])
        need(isinstance(files, list), "payload.files must be a list of [path, text, mode]")
        parsed: list[SystemFile] = []
        for f in files:
            need(
                isinstance(f, list | tuple)
                and len(f) == 3
                and isinstance(f[0], str)
                and isinstance(f[1], str)
                and isinstance(f[2], int),
                f"payload.files entry {str(f)[:60]!r} is not [path, text, mode]",
            )
            parsed.append((f[0], f[1], f[2]))
        manifest = p.get("manifest", {})
        need(isinstance(manifest, dict), "payload.manifest must be an object")
        checks = h.get("checks")
        if not isinstance(checks, list) or not checks:
            raise TaskError(f"shell task {task.id!r}: hidden.checks must be a non-empty list")
        for c in checks:
            need(
                isinstance(c, dict) and c.get("type") in CHECK_TYPES,
                f"hidden.checks entry {str(c)[:60]!r} has no known type "
                f"(types: {', '.join(CHECK_TYPES)})",
            )
        setup = h.get("setup", "")
        need(isinstance(setup, str), "hidden.setup must be a shell script (a string)")
        for key in ("timeout_s", "command_timeout_s", "setup_timeout_s"):
            value = h.get(key)
            need(
                value is None
                or (isinstance(value, int | float) and not isinstance(value, bool) and value > 0),
                f"hidden.{key} must be a positive number of seconds",
            )
        try:
            accounts = accounts_of(h) if "accounts" in h else None
        except (KeyError, TypeError, ValueError) as e:
            raise TaskError(f"shell task {task.id!r}: hidden.accounts is malformed ({e})") from None
        command_timeout = h.get("command_timeout_s")
        return cls(
            task_id=task.id,
            files=tuple(parsed),
            read_only=tuple(manifest.get("read_only", ())),
            setup=setup,
            boot=str(h.get("boot", "")),
            track=tuple(h.get("track", ())),
            checks=tuple(checks),
            hidden=h,
            manifest=manifest,
            timeout_s=float(h.get("timeout_s", 30.0)),
            command_timeout_s=None if command_timeout is None else float(command_timeout),
            setup_timeout_s=float(h.get("setup_timeout_s", 30.0)),
            accounts=accounts,
        )


class Episode:
    """A booted system for one episode; see the module docstring."""

    def __init__(
        self,
        sandbox: Sandbox,
        spec: ShellSpec,
        *,
        cgroups: Cgroups | None = None,
        limits: SessionLimits = SessionLimits(),
    ) -> None:
        self.sandbox, self.spec, self.cgroups, self.limits = sandbox, spec, cgroups, limits
        self.workspace = sandbox.workspace()
        self.tracked: dict[str, ProcInfo] = {}
        try:
            self.session = self._session(spec.files)
            if spec.accounts is not None:  # made inside, so that they are the agent's user's
                dirs = " ".join(shlex.quote(rel) for rel in homes(spec.accounts))
                self._run_grader(f"mkdir -p -- {dirs}", "home directories")
            self._run_grader(spec.setup, "setup")
            self._boot()
        except BaseException:
            self.close()
            raise

    def _session(self, files: Sequence[SystemFile]) -> ShellSession:
        return ShellSession(
            self.sandbox,
            files,
            read_only=self.spec.read_only,
            cgroups=self.cgroups,
            limits=self.limits,
            workspace=self.workspace,
            accounts=self.spec.accounts,
        )

    def _run_grader(self, script: str, what: str) -> None:
        if script.strip():
            limit = self.spec.setup_timeout_s
            r = self.session.run(script, timeout_s=limit)
            if r.exit_code != 0:
                # One line, escapes stripped: apt's colours and progress lines say nothing.
                if r.timed_out:
                    why = f"timed out after {limit:g} s"
                elif r.lost or r.exit_code is None:
                    why = "failed: the system went down" if r.lost else f"killed by {r.signal}"
                else:
                    line = last_line(r.stderr) or last_line(r.stdout)
                    why = f"failed: exit {r.exit_code}" + (f": {line}" if line else "")
                raise SandboxError(f"task {self.spec.task_id!r}: its {what} {why}")

    def _boot(self) -> None:
        """Start the services (``hidden["boot"]``) and record the tracked processes."""
        self._run_grader(self.spec.boot, "boot")
        self.tracked = {}
        for marker in self.spec.track:
            proc = self.session.identify(marker)
            if proc is None:
                raise SandboxError(
                    f"task {self.spec.task_id!r}: after its boot, no single process matches "
                    f"the tracked marker {marker!r}"
                )
            self.tracked[marker] = proc
        self._limits_at_boot = self.session.limit_counters()

    def snapshot(self) -> Snapshot:
        """The system's files now (processes cannot be copied: :meth:`restore` reboots)."""
        return self.workspace.snapshot()

    def restore(self, snapshot: Snapshot) -> None:
        """Kill every process, put the files back as in ``snapshot`` and boot the services
        again (``hidden["boot"]``); the tracked processes are the new ones."""
        self.session.stop()
        self.workspace.restore(snapshot)
        self.session = self._session(())
        self._boot()

    def finish(self, output: str | None = None, *, truncated: bool = False) -> list[TestOutcome]:
        """Read the tracked processes' fates, kill everything, run the checks; ``output`` is
        what the answer printed (``truncated``: cut at the cap), for the ``output`` check."""
        if self.tracked:
            time.sleep(_SETTLE_S)  # a signal sent by the last command lands
        up = self.session.up
        # A session whose supervisor died is a system that went down: its pid namespace is
        # being torn down, so every process in it counts as dead, whatever /proc still shows.
        alive = {m: up and ShellSession.is_alive(p) for m, p in self.tracked.items()}
        patterns = [str(c["pattern"]) for c in self.spec.checks if c.get("type") == "running"]
        running: dict[str, bool] = {}
        if patterns:
            table = self._settled_processes() if up else []
            for pattern in patterns:
                with contextlib.suppress(re.error):  # a bad pattern: the check fails (None)
                    running[pattern] = any(re.search(pattern, p.cmdline) for p in table)
        counters = self.session.limit_counters()
        self.session.stop()
        hits = {k: v - self._limits_at_boot.get(k, 0) for k, v in counters.items()}
        hits["files_at_size_cap"] = _files_at_cap(self.workspace.root, self.limits.max_file_mb)
        hit = {k: v for k, v in hits.items() if v > 0}
        ctx = CheckContext(
            workspace=self.session.workspace,
            sandbox=self.sandbox,
            original=self.spec.files,
            hidden=self.spec.hidden,
            alive=alive,
            running=running,
            output=output,
            output_truncated=truncated,
        )
        limits = TestOutcome(
            name="stayed within the system's limits",
            status="failed" if hit else "passed",
            detail=", ".join(f"{k}: {v}" for k, v in hit.items()),
        )
        return [*(run_check(c, ctx) for c in ordered(self.spec.checks)), limits]

    def _settled_processes(self) -> list[ProcInfo]:
        """The session's processes once the table holds still: a job the last command put in
        the background may not have reached its ``exec`` yet (its command line is still its
        shell's). Two reads 0.1 s apart that agree, after a first settle; at most 2 s."""
        time.sleep(_SETTLE_S)
        table = self.session.processes()
        deadline = time.monotonic() + _SETTLE_MAX_S
        while time.monotonic() < deadline:
            time.sleep(0.1)
            again = self.session.processes()
            if [(p.host_pid, p.cmdline) for p in again] == [(p.host_pid, p.cmdline) for p in table]:
                return again
            table = again
        return table

    def close(self) -> None:
        """Kill every process and remove the system's files. Idempotent."""
        session = getattr(self, "session", None)
        if session is not None:
            session.close()
        self.workspace.close()

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _files_at_cap(root: Path, cap_mb: int) -> int:
    """Regular files at the size cap (RLIMIT_FSIZE stopped a writer: the disk was filled)."""
    count = 0
    for top, _, names in os.walk(root):
        for name in names:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(top, name))
                count += stat.S_ISREG(st.st_mode) and st.st_size >= cap_mb << 20
    return count


def judge(outcomes: Sequence[TestOutcome]) -> tuple[float, bool]:
    """(reward, passed): all or nothing, because a half-fixed system is a broken system and
    partial credit would pay an exploit that keeps the easy checks green."""
    passed = bool(outcomes) and all(o.status == "passed" for o in outcomes)
    return (1.0 if passed else 0.0), passed
