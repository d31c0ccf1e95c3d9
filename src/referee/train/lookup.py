"""What every in-process trainer adapter shares: finding a row's task, one runtime per process,
and judging a model's raw text with retries.

The trainers' data rows (``referee export``, :func:`referee.train.skyrl.skyrl_row`, ...) carry a
task **id**, never the task's hidden tests; the adapter finds the task in a task file:

* passed to the adapter (``tasks=`` of its constructor or registration), or
* named by the environment variable ``REFEREE_TASKS`` (inherited by the trainers' worker
  processes and threads, so it reaches a reward function running in AReaL's process pool).

:func:`resolve_task` reads the id from the first of ``task_id``, ``extra_info.task_id``,
``reward_spec.ground_truth`` (SkyRL), ``reward_model.ground_truth`` (veRL) or ``ground_truth``
(rLLM); a row may instead carry the whole task as ``task`` (a task's JSON object). A task that is
not found is a :class:`~referee.errors.ConfigError` naming the file, never a reward of 0. The
file is re-read when it changes on disk (:mod:`referee.tasks.watched`: a stat per lookup), so a
long-lived worker sees tasks written to it after it started.

One :class:`~referee.envs.runtime.CodeRuntime` per process (:func:`shared_runtime`) holds the
sandbox and verifiers; it is made on first use (so a forked worker makes its own rather than
inheriting its parent's fork servers), is thread-safe, and is closed at exit. Its function
verifier's whole run is bounded by ``REFEREE_REWARD_DEADLINE_S`` (default 10 s): a candidate that
hangs earns 0 within that deadline, before a trainer's own timeout (AReaL: 15 s) gives up on it
and leaves its worker busy.

:func:`score_text` is the one route from a model's raw text to a verdict: the answer by
:func:`referee.envs.answers.text_answer` (end-of-turn tokens stripped), judged by the task
kind's verifier, an infrastructure failure retried and, if it persists, raised as
:class:`~referee.errors.VerifierError`: never a silent 0 in a trainer's batch.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from referee.envs.answers import strip_end_tokens, text_answer
from referee.envs.base import Environment, EpisodeLimits
from referee.envs.runtime import CodeRuntime
from referee.errors import ConfigError, VerifierError
from referee.tasks.kinds import TaskKind
from referee.tasks.labels import (
    CODE_KINDS,
    TASKS_ENV,
    label_task_id,
    label_task_id_or_none,
    task_id_of,
)
from referee.tasks.model import Task
from referee.tasks.watched import task_index
from referee.verify.verdict import Verdict

__all__ = [
    "CODE_KINDS",
    "DEADLINE_ENV",
    "TASKS_ENV",
    "TaskSource",
    "check_split",
    "label_task_id",
    "label_task_id_or_none",
    "resolve_task",
    "run_sync",
    "score_text",
    "shared_runtime",
    "task_env",
    "task_id_of",
    "text_answer_of",
    "verify_answer",
]

DEADLINE_ENV = "REFEREE_REWARD_DEADLINE_S"
DEFAULT_DEADLINE_S = 10.0

#: Where an adapter finds tasks: a task file (path or fsspec URL), tasks, or None (the
#: ``REFEREE_TASKS`` variable).
TaskSource = str | os.PathLike[str] | Sequence[Task] | Mapping[str, Task] | None

T = TypeVar("T")
_lock = threading.Lock()


def _by_id(tasks: TaskSource) -> tuple[Mapping[str, Task], str]:
    if isinstance(tasks, Mapping):
        return tasks, "the given tasks"
    if isinstance(tasks, Sequence) and not isinstance(tasks, str):
        return {t.id: t for t in tasks}, "the given tasks"
    path = tasks if tasks is not None else os.environ.get(TASKS_ENV)
    if not path:
        raise ConfigError(
            f"no task file: pass tasks=PATH to the adapter or set {TASKS_ENV}=PATH (the task "
            "file the rows were exported from)"
        )
    return task_index(path), os.fspath(path)


def resolve_task(row: Mapping[str, Any], tasks: TaskSource = None) -> Task:
    """The task a trainer's row stands for; a :class:`ConfigError` if there is none."""
    inline = row.get("task")
    if isinstance(inline, Mapping):
        return Task.model_validate(dict(inline))
    tid = task_id_of(row)
    by_id, where = _by_id(tasks)
    task = by_id.get(tid)
    if task is None:
        raise ConfigError(f"task {tid!r} is not in {where} ({len(by_id)} tasks)")
    return task


def check_split(task: Task, *, allow_heldout: bool) -> None:
    """Refuse a held-out task where the trainer trains (``allow_heldout`` for evaluation)."""
    if task.split != "train" and not allow_heldout:
        raise ConfigError(
            f"task {task.id!r} is held out ({task.split}) and must never reach training; "
            "evaluate it through the adapter's evaluation entry (allow_heldout=True)"
        )


# ---- one runtime per process ------------------------------------------------------------------
class _Shared:
    def __init__(self) -> None:
        self.pid = -1
        self.runtime: CodeRuntime | None = None
        self.owned: list[Any] = []


_shared = _Shared()


def deadline_s() -> float:
    raw = os.environ.get(DEADLINE_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_DEADLINE_S
    except ValueError:
        raise ConfigError(f"{DEADLINE_ENV} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{DEADLINE_ENV} must be positive, got {raw!r}")
    return value


def shared_runtime() -> CodeRuntime:
    """This process's runtime (sandbox and verifiers), made on first use; see the module."""
    from referee.verify.function import FunctionVerifier, harness_sandbox

    with _lock:
        if _shared.runtime is not None and _shared.pid == os.getpid():
            return _shared.runtime
        # First use, or a forked child: the parent's fork servers are not this process's.
        sandbox = harness_sandbox()
        verifier = FunctionVerifier(sandbox, run_timeout_s=deadline_s())
        _shared.runtime = CodeRuntime(sandbox=sandbox, function_verifier=verifier)
        _shared.owned = [_shared.runtime, verifier, sandbox]
        if _shared.pid == -1:
            atexit.register(_close_shared)
        _shared.pid = os.getpid()
        return _shared.runtime


def _close_shared() -> None:
    with _lock:
        owned, _shared.owned, _shared.runtime = _shared.owned, [], None
        mine = _shared.pid == os.getpid()
    if mine:
        for obj in owned:
            try:
                obj.close()
            except Exception:  # at exit: nothing left to report to
                pass


# ---- the environment a task's episode runs in --------------------------------------------------
def task_env(
    task: Task,
    *,
    limits: EpisodeLimits | None = None,
    runtime: CodeRuntime | None = None,
    single_turn: bool | None = None,
    tools: Sequence[str] | None = None,
) -> Environment:
    """A new environment for an episode of ``task``: the one rule every trainer adapter's
    multi-turn episode follows (veRL's agent loop, AReaL's workflow, SkyRL/OpenRLHF's
    :class:`~referee.train.skyrl.TextEpisode`).

    * a code kind (:data:`CODE_KINDS`): ``CodeEnv(runtime, single_turn=, limits=, tools=)`` on
      ``runtime`` (default: :func:`shared_runtime`); ``single_turn=None`` picks per task kind;
    * any other kind: ``make_env(task.kind.value, ...)`` with those of ``limits`` and
      ``single_turn`` (each when not None) its constructor takes
      (:func:`referee.envs.env_keywords`), and, where it takes a ``verifier``, the runtime's
      verifier of the kind (made once per runtime and shared by its episodes, rather than a
      sandbox per episode). ``tools`` names CodeEnv's tools and is not given to a domain's
      environment: it brings its own (a tool world's are known after ``reset``)."""
    if task.kind in CODE_KINDS:
        from referee.envs.code import CodeEnv

        return CodeEnv(
            runtime or shared_runtime(), single_turn=single_turn, limits=limits, tools=tools
        )
    from referee.envs.registry import env_keywords, make_env

    name = task.kind.value
    takes = env_keywords(name)
    kwargs: dict[str, Any] = {}
    if limits is not None:  # None: the environment's own (some take no None)
        kwargs["limits"] = limits
    if single_turn is not None:
        kwargs["single_turn"] = single_turn
    if takes is not None:
        kwargs = {k: v for k, v in kwargs.items() if k in takes}
        if "verifier" in takes:
            kwargs["verifier"] = (runtime or shared_runtime()).verifiers.verifier(task.kind)
    return make_env(name, **kwargs)


# ---- one event loop per process, for synchronous trainer calls into async environments --------
class _Loop:
    def __init__(self) -> None:
        self.pid = -1
        self.loop: asyncio.AbstractEventLoop | None = None


_loop = _Loop()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this process's background event loop and wait for it, from any thread
    (SkyRL calls environments from a pool of 32 threads; they share one loop, and sandbox runs
    go to worker threads, so the loop is never blocked by one episode)."""
    with _lock:
        if _loop.loop is None or _loop.pid != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="referee-adapter-loop", daemon=True
            ).start()
            _loop.loop, _loop.pid = loop, os.getpid()
        loop = _loop.loop
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


# ---- judging raw text ---------------------------------------------------------------------------
def text_answer_of(task: Task, text: str) -> str:
    """The answer ``text`` gives to ``task`` by :func:`text_answer`'s rule ("" for none)."""
    answer = text_answer(
        text,
        kind=task.kind.value,
        code_prompt=str(task.payload.get("code_prompt", "")),
        entry_point=str(task.payload.get("entry_point", "")),
    )
    return answer or ""


def verify_answer(
    task: Task, answer: str, *, retries: int = 2, runtime: CodeRuntime | None = None
) -> Verdict:
    """The verdict on ``answer``; an infrastructure failure is retried ``retries`` times and
    then raised as :class:`VerifierError`."""
    rt = runtime or shared_runtime()
    verdict = rt.verify(task, answer)
    for _ in range(retries):
        if not verdict.infra_error:
            break
        verdict = rt.verify(task, answer)
    if verdict.infra_error:
        raise VerifierError(
            f"verifying task {task.id!r} failed {retries + 1} times for a reason other than the "
            f"answer: {verdict.infra_error}"
        )
    return verdict


def score_text(task: Task, text: str, *, retries: int = 2) -> Verdict:
    """The verdict on a model's raw single-turn text (see the module docstring)."""
    if task.kind not in (
        TaskKind.FUNCTION,
        TaskKind.REPO_PATCH,
        TaskKind.TEST_WRITING,
        TaskKind.PROGRAM,
    ):
        # Other kinds (the domains': sql, shell, toolworld, ...) are judged by their registered
        # verifier on the text as it is, less the end-of-turn tokens a decode left (AReaL's
        # completions keep them; a raw query or JSON plan followed by <|im_end|> scored 0).
        return verify_answer(task, strip_end_tokens(text), retries=retries)
    return verify_answer(task, text_answer_of(task, text), retries=retries)
