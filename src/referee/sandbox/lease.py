"""``Lease``: one warm fork-server worker held for a sequence of runs on one workspace.

A verification that takes several steps on the same files (write a repository, ``git apply`` a
patch, read the result back, run its tests) would otherwise pay, per step, for a fresh sandbox
(``Sandbox.run``: bubblewrap and a new process tree) or for copying the workspace into a worker
and back out (``Sandbox.run_python(workspace=...)``). A lease writes into the worker's own
``/workspace`` directly and runs each step as a fork of the worker, so the steps share the
files and nothing is copied:

>>> from referee.sandbox import Sandbox
>>> with Sandbox() as sb, sb.lease() as lease:                       # doctest: +SKIP
...     lease.workspace.write({"a.txt": "one\\n"})
...     lease.exec(["sed", "-i", "s/one/two/", "a.txt"]).exit_code
...     lease.workspace.read("a.txt")
0
b'two\\n'

Every run keeps each isolation layer of :meth:`Sandbox.run_python` (the worker's namespaces,
cgroup and uid; the child's session, rlimits and seccomp filter; the sweep of its processes,
``/tmp`` and ``/dev/shm`` after it). What the runs share is the workspace, by design: only
steps of *one* verification belong in one lease. The workspace is emptied when the lease ends.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from referee.errors import SandboxError
from referee.sandbox.deadline import clip_limits
from referee.sandbox.forkserver import ForkWorker
from referee.sandbox.limits import Limits
from referee.sandbox.metering import record_run
from referee.sandbox.result import ExecResult
from referee.sandbox.workspace import Workspace

__all__ = ["Lease"]


class Lease:
    """Runs on one held worker, sharing its workspace; made by :meth:`Sandbox.lease`."""

    def __init__(self, worker: ForkWorker, default_limits: Limits) -> None:
        if worker.workspace is None:
            raise SandboxError("the fork-server worker is not started")
        self._worker = worker
        self._workspace = worker.workspace
        self._limits = default_limits

    @property
    def workspace(self) -> Workspace:
        """The worker's ``/workspace`` on the host: write the files of the next run here."""
        self._check()
        return self._workspace

    def run_python(
        self,
        source: str | bytes,
        *,
        name: str = "main.py",
        argv: list[str] | None = None,
        files: Mapping[str, bytes | str] | None = None,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """As :meth:`Sandbox.run_python`, on this lease's workspace, which the run may change.

        Raises :class:`~referee.errors.SandboxError` if the worker died since the last run, or
        during this one (it is then replaced, with an empty workspace: the steps are lost)."""
        self._check()
        if not self._worker.alive:
            raise SandboxError("the leased fork-server worker died; its workspace is lost")
        result = self._worker.run(
            source,
            name=name,
            argv=argv,
            files=files,
            stdin=stdin,
            limits=clip_limits(limits or self._limits),
            env=env,
            keep_workspace=True,
        )
        recorded = record_run(result)
        self._check()
        return recorded

    def exec(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a command (``argv[0]`` a path, or a name on the sandbox's ``PATH``) in
        ``/workspace``: a fork of the worker that ``exec``s it, as cheap as a Python run."""
        if not argv:
            raise SandboxError("exec needs a command")
        source = f"import os\nos.execvp({argv[0]!r}, {json.dumps(argv)})\n"
        return self.run_python(source, name="exec", argv=argv, stdin=stdin, limits=limits, env=env)

    def _check(self) -> None:
        # A run that took the worker down makes the pool start a new one, with a new, empty
        # workspace: the steps before it are lost, and carrying on would judge missing files.
        if self._worker.workspace is not self._workspace:
            raise SandboxError("the leased fork-server worker was restarted; its workspace is lost")
