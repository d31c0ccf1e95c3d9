"""``CodeRuntime``: the long-lived pieces that code episodes share (sandboxes, verifiers).

Verifiers are chosen by the task's kind through one :class:`~referee.verify.dispatch.VerifierSet`
(:meth:`CodeRuntime.verify`), the same dispatch the CLI's ``verify`` uses.

Starting a sandbox costs a fork-server pool, a scratch tmpfs and a cgroup; a verifier holds a
sandbox (and, for repository tasks, one per dependency environment). An episode must not pay
for them, so every :class:`~referee.envs.code.CodeEnv` draws them from a runtime, which makes
each on first use and keeps it until :meth:`CodeRuntime.close`.

Ownership is simple: a runtime closes exactly what it made, never what it was given.

>>> from referee.envs import CodeEnv, CodeRuntime                      # doctest: +SKIP
>>> with CodeRuntime() as rt:                                          # doctest: +SKIP
...     envs = [CodeEnv(rt) for _ in range(8)]   # 8 concurrent episodes, one set of sandboxes
...     ...                                      # each env.close() frees only its workspace

One runtime serves any number of episodes at once (its lazy construction is locked; the
sandboxes and verifiers are thread-safe).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

from referee.errors import ConfigError
from referee.sandbox import Sandbox
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.model import Task, TaskKind
from referee.tasks.venv import RepoVenv
from referee.verify.dispatch import Verifier, VerifierSet
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.pytest_verifier import PytestVerifier
from referee.verify.repo_run import RepoSandboxes
from referee.verify.testgen_verifier import TestgenVerifier
from referee.verify.verdict import Verdict

__all__ = ["CodeRuntime"]


class CodeRuntime:
    """Sandboxes and verifiers for code episodes, made lazily, shared, closed together.

    * ``sandbox``: where function tasks' tool runs go and where :class:`FunctionVerifier`
      checks; it must have the grader's harness preloaded
      (:func:`referee.verify.function.harness_sandbox`). Default: one made on first use, or the
      given ``function_verifier``'s.
    * ``repo_sandboxes``: one sandbox per dependency environment, with the grader's pytest, for
      repository tasks' tool runs.
    * ``program_sandbox``: where program tasks (``TaskKind.PROGRAM``) are built and run: one
      with every toolchain of this machine (:func:`referee.verify.program.program_sandbox`),
      or a callable giving it. Default: one made when the first program task comes.
    * ``function_verifier``, ``pytest_verifier``, ``testgen_verifier``: the judges of the
      three code kinds (default: made on first use by the kind registry of
      :mod:`referee.verify.dispatch`, which also supplies the judges of any other kind).
    * ``store``: the artifact store of repository snapshots (default: each task's own URL).
    * ``sandbox_kwargs``: passed to the sandboxes this runtime makes (``backend="local"`` on a
      machine without bubblewrap, ``python_workers``).
    """

    def __init__(
        self,
        *,
        sandbox: Sandbox | None = None,
        function_verifier: FunctionVerifier | None = None,
        pytest_verifier: PytestVerifier | None = None,
        testgen_verifier: TestgenVerifier | None = None,
        repo_sandboxes: RepoSandboxes | None = None,
        store: ArtifactStore | None = None,
        program_sandbox: Sandbox | Callable[[], Sandbox] | None = None,
        **sandbox_kwargs: Any,
    ) -> None:
        if sandbox is None and function_verifier is not None:
            sandbox = function_verifier.sandbox
        self._sandbox = sandbox
        self._repo_sandboxes = repo_sandboxes
        self._program_factory = program_sandbox if callable(program_sandbox) else None
        self._program_sandbox = None if callable(program_sandbox) else program_sandbox
        self.store = store
        self._kwargs = sandbox_kwargs
        self._made: list[Any] = []  # what close() must close, in the order made
        self._lock = threading.RLock()
        self._closed = False
        given: dict[TaskKind, Verifier | None] = {
            TaskKind.FUNCTION: function_verifier,
            TaskKind.REPO_PATCH: pytest_verifier,
            TaskKind.TEST_WRITING: testgen_verifier,
        }
        # Function tasks are judged in this runtime's sandbox (a callable: made on first use),
        # program tasks in its program sandbox (the same); the other verifiers make sandboxes
        # of their own, per dependency environment.
        self.verifiers = VerifierSet(
            lambda: self.sandbox,
            verifiers={k: v for k, v in given.items() if v is not None},
            store=store,
            program_sandbox=lambda: self.program_sandbox,
        )

    def _make(self, attr: str, factory: Any) -> Any:
        with self._lock:
            if self._closed:
                raise ConfigError("this CodeRuntime is closed; make a new one")
            value = getattr(self, attr)
            if value is None:
                value = factory()
                setattr(self, attr, value)
                self._made.append(value)
            return value

    # ---- function tasks -----------------------------------------------------------------
    @property
    def sandbox(self) -> Sandbox:
        """The sandbox of function tasks (tool runs and verification)."""
        sb: Sandbox = self._make("_sandbox", lambda: harness_sandbox(**self._kwargs))
        return sb

    @property
    def function_verifier(self) -> FunctionVerifier:
        return cast(FunctionVerifier, self._verifier(TaskKind.FUNCTION))

    # ---- program tasks ------------------------------------------------------------------
    @property
    def program_sandbox(self) -> Sandbox:
        """The sandbox of program tasks, with the toolchains (made on first use)."""
        from referee.verify.program import program_sandbox

        if self._program_factory is not None:
            return self._program_factory()
        sb: Sandbox = self._make("_program_sandbox", lambda: program_sandbox(**self._kwargs))
        return sb

    # ---- repository tasks ---------------------------------------------------------------
    @property
    def repo_sandboxes(self) -> RepoSandboxes:
        rs: RepoSandboxes = self._make("_repo_sandboxes", lambda: RepoSandboxes(**self._kwargs))
        return rs

    def repo_sandbox(self, environment: RepoVenv | None) -> Sandbox:
        """The sandbox for a repository's tool runs; may build its virtual environment (slow,
        once per set of requirements, cached on disk)."""
        site = environment.ensure() if environment is not None else None
        return self.repo_sandboxes.get(site)

    @property
    def pytest_verifier(self) -> PytestVerifier:
        return cast(PytestVerifier, self._verifier(TaskKind.REPO_PATCH))

    @property
    def testgen_verifier(self) -> TestgenVerifier:
        return cast(TestgenVerifier, self._verifier(TaskKind.TEST_WRITING))

    # ---- judging ------------------------------------------------------------------------
    def _verifier(self, kind: TaskKind) -> Verifier:
        with self._lock:
            if self._closed:
                raise ConfigError("this CodeRuntime is closed; make a new one")
        return self.verifiers.verifier(kind)

    def verify(self, task: Task, answer: str) -> Verdict:
        """The verdict of the verifier of ``task``'s kind on ``answer`` (blocking: call it off
        the event loop). Never raises for what the answer does."""
        return self._verifier(task.kind).verify(task, answer)

    # ---- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Close what this runtime made (verifiers before the sandboxes they use)."""
        with self._lock:
            made, self._made = self._made, []
            self._closed = True
        self.verifiers.close()
        for obj in reversed(made):
            obj.close()

    def __enter__(self) -> CodeRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
