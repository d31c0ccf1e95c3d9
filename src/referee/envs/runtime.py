"""``CodeRuntime``: the long-lived pieces that code episodes share (sandboxes, verifiers).

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
from typing import Any

from referee.errors import ConfigError
from referee.sandbox import Sandbox
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.venv import RepoVenv
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.pytest_verifier import PytestVerifier
from referee.verify.repo_run import RepoSandboxes
from referee.verify.testgen_verifier import TestgenVerifier

__all__ = ["CodeRuntime"]


class CodeRuntime:
    """Sandboxes and verifiers for code episodes, made lazily, shared, closed together.

    * ``sandbox``: where function tasks' tool runs go and where :class:`FunctionVerifier`
      checks; it must have the grader's harness preloaded
      (:func:`referee.verify.function.harness_sandbox`). Default: one made on first use, or the
      given ``function_verifier``'s.
    * ``repo_sandboxes``: one sandbox per dependency environment, with the grader's pytest, for
      repository tasks' tool runs.
    * ``function_verifier``, ``pytest_verifier``, ``testgen_verifier``: the judges.
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
        **sandbox_kwargs: Any,
    ) -> None:
        if sandbox is None and function_verifier is not None:
            sandbox = function_verifier.sandbox
        self._sandbox = sandbox
        self._function_verifier = function_verifier
        self._pytest_verifier = pytest_verifier
        self._testgen_verifier = testgen_verifier
        self._repo_sandboxes = repo_sandboxes
        self.store = store
        self._kwargs = sandbox_kwargs
        self._made: list[Any] = []  # what close() must close, in the order made
        self._lock = threading.RLock()
        self._closed = False

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
        fv: FunctionVerifier = self._make(
            "_function_verifier", lambda: FunctionVerifier(self.sandbox)
        )
        return fv

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
        pv: PytestVerifier = self._make(
            "_pytest_verifier", lambda: PytestVerifier(store=self.store)
        )
        return pv

    @property
    def testgen_verifier(self) -> TestgenVerifier:
        tv: TestgenVerifier = self._make(
            "_testgen_verifier", lambda: TestgenVerifier(store=self.store)
        )
        return tv

    # ---- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Close what this runtime made (verifiers before the sandboxes they use)."""
        with self._lock:
            made, self._made = self._made, []
            self._closed = True
        for obj in reversed(made):
            obj.close()

    def __enter__(self) -> CodeRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
