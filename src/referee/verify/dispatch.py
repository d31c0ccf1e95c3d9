"""One dispatch from a task's kind to its verifier.

A registry maps each :class:`~referee.tasks.kinds.TaskKind` to a verifier factory and a test
counter; the four code kinds are registered here, and a later domain registers its own with
:func:`register_kind`. :class:`VerifierSet` holds the verifiers of one sandbox, makes each on
first use and judges any task by its kind. The CLI's ``verify``, :class:`~referee.envs.CodeRuntime`
(and through it every ``CodeEnv``) judge through it; nothing else picks a verifier.

>>> from referee.verify.dispatch import VerifierSet                     # doctest: +SKIP
>>> with VerifierSet() as verifiers:                                     # doctest: +SKIP
...     verdicts = verifiers.verify_many(zip(tasks, completions))
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from referee.discovery import broken_note, discover_domains, note_part
from referee.errors import ConfigError
from referee.sandbox.metering import metering
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.verdict import Verdict

# The repository verifiers (pytest's and the test-writing one) are imported when a set first
# makes one: `referee verify` of function tasks starts without them (~10-15 ms of imports).

if TYPE_CHECKING:
    from referee.sandbox import Sandbox
    from referee.tasks.artifacts import ArtifactStore

__all__ = [
    "KindSpec",
    "Verifier",
    "VerifierFactory",
    "VerifierSet",
    "VerifierSetup",
    "count_tests",
    "kind_spec",
    "register_kind",
    "unregister_kind",
    "verify_with_retries",
]


class Verifier(Protocol):
    """What a verifier offers: a verdict that never raises (faults are infra errors), and close."""

    def verify(self, task: Task, answer: str, /) -> Verdict: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class VerifierSetup:
    """What a verifier factory is given by its :class:`VerifierSet`.

    ``sandbox()`` is the set's sandbox, with the grader's harness preloaded (made on first
    call). ``shared`` says whether every verifier should use it (it then has the grader's
    pytest too, as the CLI's does); when False, only verifiers that need the harness use it and
    the others make sandboxes of their own (as :class:`~referee.envs.CodeRuntime` wants, whose
    sandbox is also where function tasks' tool calls run).
    """

    sandbox: Callable[[], Sandbox]
    store: ArtifactStore | None
    shared: bool
    #: The set's sandbox for program tasks: every toolchain of this machine bound in, the
    #: harness preloaded (:func:`referee.verify.program.program_sandbox`; made on first call).
    program_sandbox: Callable[[], Sandbox] | None = None


#: Makes the verifier of one kind for a set.
VerifierFactory = Callable[[VerifierSetup], Verifier]


@dataclass(frozen=True)
class KindSpec:
    """How tasks of one kind are judged, and how many tests one has (:func:`count_tests`,
    ``referee tasks stats``)."""

    kind: TaskKind
    make_verifier: VerifierFactory
    count_tests: Callable[[Task], int]


_REGISTRY: dict[TaskKind, KindSpec] = {}
_REGISTRY_LOCK = threading.Lock()


def register_kind(
    kind: TaskKind,
    make_verifier: VerifierFactory,
    count_tests: Callable[[Task], int],
    *,
    replace: bool = False,
) -> KindSpec:
    """Register how tasks of ``kind`` are judged. Registering a kind twice is a
    :class:`ConfigError` unless ``replace`` is given (tests that swap a verifier in)."""
    spec = KindSpec(kind=kind, make_verifier=make_verifier, count_tests=count_tests)
    with _REGISTRY_LOCK:
        if kind in _REGISTRY and not replace:
            raise ConfigError(
                f"a verifier for task kind {kind.value!r} is registered already; "
                "pass replace=True to swap it"
            )
        _REGISTRY[kind] = spec
    note_part("kind", kind.value)
    return spec


def unregister_kind(kind: TaskKind) -> KindSpec | None:
    """Withdraw the registration of ``kind`` (a plugin unloading, a test cleaning up); the
    registration it had, if any. Sets made before keep the verifiers they made."""
    with _REGISTRY_LOCK:
        return _REGISTRY.pop(kind, None)


def kind_spec(kind: TaskKind) -> KindSpec:
    """The registration of ``kind``; a :class:`ConfigError` naming the judged kinds if none."""
    spec = _registered(kind)
    if spec is None:
        judged = ", ".join(repr(k.value) for k in _REGISTRY)
        raise ConfigError(
            f"no verifier is registered for task kind {kind.value!r} (kinds with one: {judged}); "
            "such tasks are judged by their own environment, or register one with "
            f"referee.verify.dispatch.register_kind{broken_note()}"
        )
    return spec


def count_tests(task: Task) -> int:
    """How many tests decide ``task``'s reward (0 for a kind without a registered verifier)."""
    spec = _registered(task.kind)
    return spec.count_tests(task) if spec is not None else 0


def _registered(kind: TaskKind) -> KindSpec | None:
    """The registration of ``kind``, after importing the domains (which register theirs) if
    it has none yet."""
    spec = _REGISTRY.get(kind)
    if spec is None and kind != TaskKind.CUSTOM:
        discover_domains()
        spec = _REGISTRY.get(kind)
    return spec


class VerifierSet:
    """The verifiers of one sandbox: each made on first use from the registry, shared by every
    thread, closed together.

    * ``sandbox``: a sandbox to share with every verifier (it must have the grader's harness
      preloaded, and the grader's pytest for inline repository tasks:
      ``harness_sandbox(python_packages=PYTEST_PACKAGES)``); or a callable giving the sandbox
      of function tasks only (the others then make their own); default: one such sandbox made
      on first use, with ``sandbox_kwargs``, and shared.
    * ``verifiers``: verifiers to use for some kinds instead of making them.
    * ``store``: the artifact store of repository snapshots (default: each task's own URL).
    * ``program_sandbox``: the sandbox of program tasks (one with the toolchains:
      :func:`referee.verify.program.program_sandbox`), or a callable giving it; default: one
      made on first use with ``sandbox_kwargs`` (its ``python_packages`` left out).

    A set closes exactly what it made (its sandbox included), never what it was given.
    """

    def __init__(
        self,
        sandbox: Sandbox | Callable[[], Sandbox] | None = None,
        *,
        verifiers: Mapping[TaskKind, Verifier] | None = None,
        store: ArtifactStore | None = None,
        program_sandbox: Sandbox | Callable[[], Sandbox] | None = None,
        **sandbox_kwargs: Any,
    ) -> None:
        self._given_sandbox = sandbox
        self._sandbox: Sandbox | None = None
        self._given_program_sandbox = program_sandbox
        self._program_sandbox: Sandbox | None = None
        self._sandbox_kwargs = sandbox_kwargs
        self._verifiers: dict[TaskKind, Verifier] = dict(verifiers or {})
        self._made: list[Verifier] = []
        self._lock = threading.RLock()
        self._closed = False
        self.setup = VerifierSetup(
            sandbox=self._get_sandbox,
            store=store,
            shared=not callable(sandbox),
            program_sandbox=self._get_program_sandbox,
        )

    def _get_sandbox(self) -> Sandbox:
        given = self._given_sandbox
        if given is not None and not callable(given):
            return given
        if callable(given):
            return given()
        with self._lock:
            if self._sandbox is None:
                from referee.verify.pytest_verifier import PYTEST_PACKAGES

                self._sandbox = harness_sandbox(
                    python_packages=PYTEST_PACKAGES, **self._sandbox_kwargs
                )
            return self._sandbox

    def _get_program_sandbox(self) -> Sandbox:
        given = self._given_program_sandbox
        if given is not None:
            return given() if callable(given) else given
        with self._lock:
            if self._program_sandbox is None:
                from referee.verify.program import program_sandbox

                kwargs = {k: v for k, v in self._sandbox_kwargs.items() if k != "python_packages"}
                self._program_sandbox = program_sandbox(**kwargs)
            return self._program_sandbox

    @property
    def sandbox(self) -> Sandbox:
        """The set's sandbox (made now if it is the set's own and not made yet)."""
        return self._get_sandbox()

    def verifier(self, kind: TaskKind) -> Verifier:
        """The verifier of ``kind``, made now if this set has none yet."""
        with self._lock:
            if self._closed:
                raise ConfigError("this VerifierSet is closed; make a new one")
            v = self._verifiers.get(kind)
            if v is None:
                v = kind_spec(kind).make_verifier(self.setup)
                self._verifiers[kind] = v
                self._made.append(v)
            return v

    def verify(self, task: Task, answer: str) -> Verdict:
        """The verdict of ``task``'s verifier on ``answer``. Never raises for what the answer
        does; a kind without a registered verifier is a :class:`ConfigError`. The verdict's
        ``sandbox`` is what its sandbox runs cost."""
        verifier = self.verifier(task.kind)
        with metering() as meter:
            verdict = verifier.verify(task, answer)
        return verdict.model_copy(update={"sandbox": meter.usage()})

    def verify_many(
        self, items: Iterable[tuple[Task, str]], *, workers: int | None = None
    ) -> Iterator[Verdict]:
        """Verdicts on (task, answer) pairs, judged concurrently, yielded in input order as
        they are ready (a caller can show progress)."""
        pairs = list(items)
        for task, _ in pairs:  # a kind nobody judges is refused before any work starts
            self.verifier(task.kind)
        n = workers or self.sandbox.python_workers
        with ThreadPoolExecutor(max(1, n)) as pool:
            # Each pair in a copy of the caller's context: its deadline and meters hold there.
            jobs = [
                pool.submit(contextvars.copy_context().run, self.verify, t, a) for t, a in pairs
            ]
            for job in jobs:
                yield job.result()

    def close(self) -> None:
        """Close the verifiers this set made, then its own sandbox."""
        with self._lock:
            made, self._made = self._made, []
            sandbox, self._sandbox = self._sandbox, None
            program_box, self._program_sandbox = self._program_sandbox, None
            self._closed = True
        for v in reversed(made):
            v.close()
        for box in (program_box, sandbox):
            if box is not None:
                box.close()

    def __enter__(self) -> VerifierSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- the code kinds ---------------------------------------------------------------------------
def _function_verifier(setup: VerifierSetup) -> Verifier:
    return FunctionVerifier(setup.sandbox())


def _pytest_verifier(setup: VerifierSetup) -> Verifier:
    from referee.verify.pytest_verifier import PytestVerifier

    return PytestVerifier(setup.sandbox() if setup.shared else None, store=setup.store)


def _testgen_verifier(setup: VerifierSetup) -> Verifier:
    # Test-writing tasks always run in their repository's own environment's sandboxes.
    from referee.verify.testgen_verifier import TestgenVerifier

    return TestgenVerifier(store=setup.store)


def _program_verifier(setup: VerifierSetup) -> Verifier:
    # Programs need the toolchains' directories in the sandbox's view: a sandbox of their own,
    # the set's program sandbox (made when the first program task comes).
    from referee.verify.program import ProgramVerifier

    if setup.program_sandbox is None:
        return ProgramVerifier()
    return ProgramVerifier(setup.program_sandbox())


def _cases(task: Task) -> int:
    cases = task.hidden.get("cases", [])
    return len(cases) if isinstance(cases, list) else 0


def _recorded_calls(task: Task) -> int:
    return len(task.hidden.get("inputs", []))


def _f2p_and_p2p(task: Task) -> int:
    h = task.hidden
    return len(h.get("fail_to_pass", [])) + len(h.get("pass_to_pass", []))


def _mutants(task: Task) -> int:
    return len(task.hidden.get("mutants", []))


register_kind(TaskKind.FUNCTION, _function_verifier, _recorded_calls)
register_kind(TaskKind.REPO_PATCH, _pytest_verifier, _f2p_and_p2p)
register_kind(TaskKind.TEST_WRITING, _testgen_verifier, _mutants)
register_kind(TaskKind.PROGRAM, _program_verifier, _cases)


def verify_with_retries(
    judge: Callable[[list[tuple[Task, str]]], Iterable[Verdict]],
    pairs: list[tuple[Task, str]],
    *,
    retries: int = 2,
) -> list[Verdict]:
    """``judge(pairs)`` (a ``verify_many``: a :class:`VerifierSet`'s, a Ray pool's, a
    server client's), then the samples it could not judge (``infra_error``) judged again, up to
    ``retries`` times. Verdicts in the pairs' order; those still infra errors are left so for
    the caller to raise or report, never turned into a 0."""
    verdicts = list(judge(pairs))
    for _ in range(retries):
        redo = [i for i, v in enumerate(verdicts) if v.infra_error]
        if not redo:
            break
        for i, v in zip(redo, judge([pairs[i] for i in redo]), strict=True):
            verdicts[i] = v
    return verdicts
