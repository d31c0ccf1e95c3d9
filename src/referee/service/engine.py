"""``ServiceEngine``: the sandbox work behind the routes, off the event loop, under deadlines.

One engine holds the server's tasks, one sandbox (fork-server workers with the grader's harness
preloaded, shared by verification, program runs and environment sessions), the verifiers of
every task kind, and a thread pool as large as the sandbox's worker pool. Each blocking call
runs in that pool with the request's deadline in its context
(:func:`referee.sandbox.deadline.deadline`): every sandbox run it starts is killed when the
deadline passes, so a hung candidate costs its worker at most the deadline, never more.

A verdict whose work ran into the request's deadline becomes an infrastructure error (the
candidate was not judged), never a pass and never a plain 0. So does one whose sandbox worker
died under it (killed from outside, say): the dead worker is replaced at once and the sample is
judged once more; if its worker dies again, its verdict is an infrastructure error.

>>> engine = ServiceEngine(read_tasks("he.jsonl"), workers=3)              # doctest: +SKIP
>>> verdicts = await engine.verify([("HumanEval/0", completion)], deadline_s=10)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from referee.envs.runtime import CodeRuntime
from referee.errors import ConfigError
from referee.sandbox import ExecResult, Limits, Sandbox
from referee.sandbox.deadline import DeadlineExceeded, deadline, deadline_passed
from referee.sandbox.forkserver import watch_lost_workers
from referee.service.tasks_loading import LiveTasks
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSet
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.pytest_verifier import PYTEST_PACKAGES
from referee.verify.verdict import Verdict

__all__ = ["LANGUAGES", "ExecRequest", "RemoteVerifier", "ServiceEngine", "UnknownTasks"]

T = TypeVar("T")
#: Languages ``exec`` runs, and how: Python on the fork-server fast path, shells as commands.
LANGUAGES = ("python", "bash", "sh")
#: Seconds a deadline-bound job may take past its deadline to report back (the sandbox's kill
#: and the result's way home) before the engine gives up on it as an infrastructure fault.
GRACE_S = 2.0
#: Times a sample whose sandbox worker died under it is judged again (on a fresh worker).
LOST_WORKER_RETRIES = 1
VERIFIER = "service"


class UnknownTasks(ConfigError):
    """Samples name tasks the server does not hold."""

    def __init__(self, ids: Sequence[str], message: str | None = None) -> None:
        shown = ", ".join(repr(i) for i in ids[:10]) + (" ..." if len(ids) > 10 else "")
        super().__init__(
            message
            or f"unknown task id(s): {shown}; the server holds {{n}} tasks from its --tasks files "
            "(GET /v1/tasks lists them)"
        )
        self.ids = list(ids)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled with its message and ids (it crosses process boundaries: Ray actors).
        return (type(self), (self.ids, str(self)))


class RemoteVerifier(Protocol):
    """Where verification goes instead of the engine's own sandbox (``referee serve --ray``:
    a :class:`referee.cluster.SandboxPool`)."""

    async def verify(
        self,
        samples: Sequence[tuple[str, str]],
        *,
        deadline_s: float | None = None,
        within_s: float | None = None,
    ) -> list[Verdict]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ExecRequest:
    """One program to run in the sandbox (``POST /v1/exec``)."""

    code: str
    language: str = "python"
    stdin: bytes | None = None
    files: Mapping[str, bytes] = field(default_factory=dict)
    timeout_s: float = 10.0
    memory_mb: int = 512


class ServiceEngine:
    """The server's tasks, sandbox and verifiers; see the module docstring.

    ``deadline_cap_s`` bounds every job; ``workers`` sizes the sandbox's worker pool and the
    thread pool that feeds it (default: CPUs + 1). ``call_timeout_s`` and ``run_timeout_s``
    are the function verifier's limits on one call and one whole run (the latter at most
    ``deadline_cap_s``; default 30 s). ``on_busy`` hears the number of busy
    workers after each change, ``on_lost_worker`` each sandbox worker that died under a sample
    (for the metrics). ``remote``: where verification runs instead (``referee serve
    --ray``); programs and environment sessions stay on this engine's sandbox.
    """

    def __init__(
        self,
        tasks: Sequence[Task] | LiveTasks,
        *,
        workers: int | None = None,
        deadline_cap_s: float = 60.0,
        backend: str = "bwrap",
        call_timeout_s: float = 5.0,
        run_timeout_s: float = 30.0,
        on_busy: Callable[[int], None] | None = None,
        on_lost_worker: Callable[[], None] | None = None,
        remote: RemoteVerifier | None = None,
    ) -> None:
        self._live = tasks if isinstance(tasks, LiveTasks) else None
        self._fixed: dict[str, Task] = {}
        for t in tasks if isinstance(tasks, Sequence) else ():
            if t.id in self._fixed:
                raise ConfigError(
                    f"task id {t.id!r} appears in more than one --tasks file; ids must be unique"
                )
            self._fixed[t.id] = t
        self.deadline_cap_s = deadline_cap_s
        self.sandbox: Sandbox = harness_sandbox(
            backend=backend, python_workers=workers, python_packages=PYTEST_PACKAGES
        )
        self.workers = self.sandbox.python_workers
        # A candidate's own program is bounded by the verifier's run limit; keep that inside
        # the server's cap so the cap, not a longer verifier default, is what kills.
        function = FunctionVerifier(
            self.sandbox,
            call_timeout_s=call_timeout_s,
            run_timeout_s=min(run_timeout_s, deadline_cap_s),
        )
        # Program tasks get a sandbox with the toolchains, made when the first one is judged
        # (the set's kwargs make only that one: the set is given its harness sandbox).
        self.verifiers = VerifierSet(
            self.sandbox,
            verifiers={TaskKind.FUNCTION: function},
            backend=backend,
            python_workers=self.workers,
        )
        self._function = function
        # Environment sessions share the sandbox, the function verifier and the program sandbox.
        self.runtime = CodeRuntime(
            sandbox=self.sandbox,
            function_verifier=function,
            program_sandbox=self.verifiers.setup.program_sandbox,
        )
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="referee-service")
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._on_busy = on_busy
        self._on_lost_worker = on_lost_worker
        #: Verification's home when not this engine's sandbox (closed with the engine).
        self.remote = remote
        self._closed = False

    @property
    def tasks(self) -> dict[str, Task]:
        """The tasks by id: given ones, or the ``--tasks`` files as they are now (a ``stat``
        per file; see :class:`~referee.service.tasks_loading.LiveTasks`)."""
        return self._live.current() if self._live is not None else self._fixed

    @property
    def tasks_error(self) -> str | None:
        """Why a changed ``--tasks`` file is not being served (None: it is, or none changed)."""
        return self._live.error if self._live is not None else None

    @property
    def busy(self) -> int:
        """Jobs running in the sandbox's workers now."""
        with self._busy_lock:
            return self._busy

    # ---- running blocking work ---------------------------------------------------------
    def bound(self, deadline_s: float | None) -> float:
        """A request's deadline: the one it asked for, capped by the server's."""
        if deadline_s is None:
            return self.deadline_cap_s
        return min(max(deadline_s, 0.0), self.deadline_cap_s)

    def _count(self, delta: int) -> None:
        with self._busy_lock:
            self._busy += delta
            busy = self._busy
        if self._on_busy is not None:
            self._on_busy(busy)

    async def run(self, fn: Callable[..., T], *args: Any, until: float) -> T:
        """``fn(*args)`` in the engine's pool, every sandbox run in it killed at ``until`` (a
        :func:`time.monotonic` time: the request's one deadline, however long the job waited
        for a worker). A job whose deadline passed while it waited does not run.

        Raises :class:`TimeoutError` when the job has not come back ``GRACE_S`` after the
        deadline (a fault outside the sandbox's control, reported as such)."""

        def job() -> T:
            self._count(+1)
            try:
                with deadline(until - time.monotonic()):
                    return fn(*args)
            finally:
                self._count(-1)

        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._pool, ctx.run, job)
        return await asyncio.wait_for(future, timeout=until - time.monotonic() + GRACE_S)

    # ---- verification --------------------------------------------------------------------
    def resolve(self, samples: Sequence[tuple[str, str]]) -> list[tuple[Task, str]]:
        """(task, completion) pairs; :class:`UnknownTasks` naming every unknown id."""
        tasks = self.tasks
        unknown = sorted({tid for tid, _ in samples if tid not in tasks})
        if unknown:
            err = UnknownTasks(unknown)
            err.args = (str(err).replace("{n}", str(len(tasks))),)
            raise err
        pairs = [(tasks[tid], completion) for tid, completion in samples]
        for task, _ in pairs:  # a kind nobody judges is refused before any work starts
            self.verifiers.verifier(task.kind)
        return pairs

    def with_language(self, task_id: str, completion: str, language: str | None) -> str:
        """The completion of a sample of ``task_id`` that names its ``language``: a program
        task's code fenced with that tag (:func:`~referee.verify.program.answer.with_language`,
        as ``referee verify`` reads a sample's ``language``); as it is otherwise."""
        if language is None:  # most samples: no look-up (each one stats the --tasks files)
            return completion
        task = self.tasks.get(task_id)
        if task is None or task.kind != TaskKind.PROGRAM:
            return completion
        from referee.verify.program.answer import with_language

        return with_language(completion, language)

    async def verify(
        self,
        samples: Sequence[tuple[str, str]],
        *,
        deadline_s: float | None = None,
        resolved: Sequence[tuple[Task, str]] | None = None,
    ) -> list[Verdict]:
        """Verdicts in the samples' order. Work past the deadline is killed and its verdict is
        an infrastructure error. ``resolved``: what :meth:`resolve` gave for these samples,
        where the caller has it already (a request resolves its ids before admission; each
        resolution looks at the ``--tasks`` files once more)."""
        pairs = resolved if resolved is not None else self.resolve(samples)
        limit = self.bound(deadline_s)
        if self.remote is not None:
            # The request's one deadline, counted from now as in-process: a sample still queued
            # (in the pool or its actor) when it passes is not run; one running is killed.
            return await self.remote.verify(samples, deadline_s=limit, within_s=limit)
        until = time.monotonic() + limit
        results = await asyncio.gather(
            *(self._verify_one(task, completion, limit, until) for task, completion in pairs)
        )
        return list(results)

    async def _verify_one(
        self, task: Task, completion: str, deadline_s: float, until: float
    ) -> Verdict:
        try:
            return await self.run(self._judge, task, completion, deadline_s, until=until)
        except TimeoutError:
            return Verdict.infra(
                task.id,
                f"no verdict {GRACE_S:g} s after the request's deadline of {deadline_s:g} s",
                VERIFIER,
            )

    def _judge(self, task: Task, completion: str, deadline_s: float) -> Verdict:
        verdict: Verdict | None = None
        for attempt in range(1 + LOST_WORKER_RETRIES):
            with watch_lost_workers() as lost:
                try:
                    verdict = self.verifiers.verify(task, completion)
                except DeadlineExceeded:
                    verdict = None
            if not lost.count:
                break
            if self._on_lost_worker is not None:
                for _ in range(lost.count):
                    self._on_lost_worker()
            # The worker died under this sample (it has been replaced): the verdict says
            # nothing about the candidate, so judge it again, or report that it was not judged.
            verdict = Verdict.infra(
                task.id,
                f"the sandbox worker died during the run, {attempt + 1} time(s); the sample "
                "was not judged",
                VERIFIER,
            )
            if deadline_passed():
                return verdict
        # A run the deadline killed (or never started) leaves the candidate unjudged: its
        # verdict would read as the model's failure, so it becomes an infrastructure error.
        if verdict is None or (deadline_passed() and not verdict.passed):
            return Verdict.infra(
                task.id,
                f"the request's deadline of {deadline_s:g} s passed; the work was killed",
                VERIFIER,
            )
        return verdict

    # ---- programs ------------------------------------------------------------------------
    async def exec(self, request: ExecRequest, *, deadline_s: float | None = None) -> ExecResult:
        """Run one program; its timeout is capped by the request's deadline."""
        if request.language not in LANGUAGES:
            raise ConfigError(
                f"language {request.language!r} is not supported; use one of "
                + ", ".join(LANGUAGES)
            )
        limit = self.bound(deadline_s if deadline_s is not None else request.timeout_s + 1.0)
        limits = Limits(timeout_s=min(request.timeout_s, limit), memory_mb=request.memory_mb)
        return await self.run(self._exec, request, limits, until=time.monotonic() + limit)

    def _exec(self, request: ExecRequest, limits: Limits) -> ExecResult:
        files = dict(request.files)
        if request.language == "python":
            return self.sandbox.run_python(
                request.code, files=files, stdin=request.stdin, limits=limits
            )
        files["main.sh"] = request.code.encode()
        return self.sandbox.run(
            [request.language, "main.sh"], files=files, stdin=request.stdin, limits=limits
        )

    # ---- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.remote is not None:
            self.remote.close()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.runtime.close()
        self.verifiers.close()
        self.sandbox.close()
