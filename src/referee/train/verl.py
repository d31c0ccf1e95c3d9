"""referee inside veRL: the reward function, one sample at a time or a batch under deadlines.

veRL (0.9) calls a *custom reward function* for each sample from its reward workers
(``RewardLoopWorker`` Ray actors, one asyncio task per sample, a synchronous function in the
worker's thread pool). A user points it here::

    reward.custom_reward_function.path=pkg://referee.train.verl
    reward.custom_reward_function.name=compute_score
    reward.reward_manager.name=naive

and trains on rows that ``referee tasks export TASKS.jsonl --format verl --out train.parquet``
wrote (or ``referee export --format verl``): nothing else is needed, because a training row
carries its task (:mod:`referee.tasks.trainer_rows`). :func:`compute_score` returns a dict:
``score`` (the verifier's reward: the share of tests passed, or 0/1 with ``binary``), and
``passed``, ``tests_passed``, ``tests_total``, ``hack_flags``, which veRL logs as reward extra
info. Options go in as ``+reward.custom_reward_function.reward_kwargs.NAME=VALUE``: ``tasks``
(a task file, path or URL, for rows that carry only a task id; or set ``REFEREE_TASKS``),
``deadline_s`` (default 60), ``binary``.

Where the task comes from, in order: ``extra_info.referee_task`` (the task's JSON), a
``ground_truth`` that is a task's JSON, else the task id (``extra_info.task_id`` or
``ground_truth``) looked up in the task file named by ``tasks=``, by ``extra_info.referee_tasks``
or by ``REFEREE_TASKS`` (re-read when it changes on disk: :mod:`referee.tasks.watched`). A row
whose task cannot be found raises :class:`TaskNotFound`, naming the fix: never a 0.

Held-out tasks. veRL does not tell a reward function whether it is training or validating, so
the row says: ``extra_info.split`` is ``heldout`` in evaluation files (``referee tasks export
--split heldout``) and ``train`` in training files. A held-out task in any other row is refused
(:class:`HeldOutTask`), as the TRL adapter refuses it.

Infrastructure errors. A verdict the verifier could not reach (the sandbox failed, the deadline
killed the work) is retried once (not after a deadline), then raised as :class:`InfraError`:
veRL's ``naive`` manager lets the exception through and the step fails loudly rather than
train on a 0 the model did not earn. Do **not** use ``reward_manager.name=rate_limited``: it
turns every exception of the reward function, these included, into a reward of 0.

Deadlines. At most as many samples are judged at once as the sandbox has workers, and each
sample's deadline starts when its work starts. Every sandbox run of one sample is killed when
its deadline passes (:func:`referee.sandbox.deadline.deadline`; it works off the main thread,
unlike veRL's SIGALRM ``compute_score_timeout``). Keep ``deadline_s`` above the verifier's own
limits (a function task's program gets 30 s): a hung candidate then fails its tests (a 0 it
earned), and the deadline only catches what is not the model's doing.

:func:`compute_score_batch` is the batched form (veRL's ``batch`` manager signature): samples
judged concurrently, each under its own deadline, so one hung candidate never holds the batch
past its deadline.

Each process (each reward worker) makes one :class:`~referee.verify.dispatch.VerifierSet`,
with its sandbox, on first use, shares it between threads and closes it at exit.
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from pydantic import ValidationError

from referee.envs.answers import answer_for
from referee.errors import ConfigError, TaskError, VerifierError
from referee.sandbox.deadline import DeadlineExceeded, deadline, deadline_passed
from referee.tasks.model import Task
from referee.tasks.trainer_rows import TASK_KEY, TASKS_KEY
from referee.tasks.watched import task_index
from referee.verify.dispatch import VerifierSet
from referee.verify.verdict import Verdict

__all__ = [
    "DEFAULT_DEADLINE_S",
    "TASKS_ENV",
    "HeldOutTask",
    "InfraError",
    "TaskNotFound",
    "close",
    "compute_score",
    "compute_score_batch",
    "row_task",
    "scores_of",
    "set_verifiers",
    "verifier_set",
]

#: Seconds one sample's verification may take before its sandbox runs are killed.
DEFAULT_DEADLINE_S = 60.0
#: The environment variable naming a task file (path or URL) for rows that carry only an id.
TASKS_ENV = "REFEREE_TASKS"
#: Seconds past its deadline a sample may take to come back before it is given up on.
GRACE_S = 2.0
_VERIFIER = "referee.train.verl"
_DEADLINE_ERROR = "the deadline of {s:g} s passed; the work was killed"

_lock = threading.Lock()
_verifiers: VerifierSet | None = None
_own_verifiers = False
_slot_sem: tuple[int, threading.BoundedSemaphore] | None = None


class TaskNotFound(ConfigError):
    """A row's task cannot be found: the message says where referee looked and what to do."""


class HeldOutTask(ConfigError):
    """A held-out task reached a row that is not an evaluation row."""


class InfraError(VerifierError):
    """The verifier could not judge a sample (not the model's failure); retrying may help."""


# ---- the process's verifiers -------------------------------------------------------------------
def verifier_set() -> VerifierSet:
    """This process's verifiers (made on first use, closed at exit)."""
    global _verifiers, _own_verifiers
    with _lock:
        if _verifiers is None:
            _verifiers, _own_verifiers = VerifierSet(), True
            atexit.register(close)
        return _verifiers


def set_verifiers(verifiers: VerifierSet | None) -> None:
    """Judge with ``verifiers`` from now on (not closed here; None: make one on next use)."""
    global _verifiers, _own_verifiers
    close()
    with _lock:
        _verifiers, _own_verifiers = verifiers, False


def close() -> None:
    """Close the verifiers this module made (a later call makes new ones)."""
    global _verifiers, _own_verifiers
    with _lock:
        made = _verifiers if _own_verifiers else None
        _verifiers, _own_verifiers = None, False
    if made is not None:
        made.close()


# ---- finding a row's task ----------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _task_from_json(text: str) -> Task:
    try:
        task = Task.model_validate(json.loads(text))
    except (ValueError, ValidationError) as e:  # JSONDecodeError is a ValueError
        raise TaskError(f"the row's task is not a valid referee task: {e}") from e
    task.verify_hash()
    return task


def _file_tasks(source: str) -> Mapping[str, Task]:
    # Re-read when the file changes on disk; a TaskError naming the file otherwise.
    return task_index(source)


def _as_json(value: Any) -> str | None:
    """``value`` as a task's JSON text, if it looks like one (a mapping, or text of one)."""
    if isinstance(value, Mapping):
        return json.dumps(dict(value))
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return value
    return None


def row_task(
    ground_truth: Any, extra_info: Mapping[str, Any] | None = None, *, tasks: str | None = None
) -> Task:
    """The task of one veRL row (see the module for the order); :class:`TaskNotFound` if none."""
    extra = extra_info or {}
    text = _as_json(extra.get(TASK_KEY)) or _as_json(ground_truth)
    if text is not None:
        task = _task_from_json(text)
        named = ground_truth if isinstance(ground_truth, str) and not _as_json(ground_truth) else ""
        if named and named != task.id:
            raise TaskError(
                f"the row's ground_truth {named!r} is not the id of the task it carries "
                f"({task.id!r}); re-export the rows"
            )
        return task
    task_id = extra.get("task_id") or ground_truth
    if not isinstance(task_id, str) or not task_id:
        raise TaskNotFound(
            "the row names no referee task (no extra_info.referee_task, no task id in "
            f"extra_info.task_id or reward_model.ground_truth: got {ground_truth!r}); write the "
            "rows with `referee tasks export TASKS.jsonl --format verl --out FILE.parquet`"
        )
    sources = [s for s in (tasks, extra.get(TASKS_KEY), os.environ.get(TASKS_ENV)) if s]
    if not sources:
        raise TaskNotFound(
            f"the row of task {task_id!r} carries no task (extra_info.{TASK_KEY}) and names no "
            "task file: export it with `referee tasks export TASKS.jsonl --format verl`, or "
            "name the task file with +reward.custom_reward_function.reward_kwargs.tasks=PATH "
            f"(or the {TASKS_ENV} environment variable)"
        )
    for source in sources:
        found = _file_tasks(str(source)).get(task_id)
        if found is not None:
            return found
    raise TaskNotFound(
        f"no task {task_id!r} in {', '.join(map(str, sources))}; `referee tasks list FILE` shows "
        "the ids a file holds"
    )


def check_split(task: Task, extra_info: Mapping[str, Any] | None) -> None:
    """Refuse a held-out task in a row that is not an evaluation row (see the module)."""
    row_split = (extra_info or {}).get("split")
    if task.split != "train" and row_split != "heldout":
        raise HeldOutTask(
            f"task {task.id!r} is held out and must never reach training, but its row says "
            f"split={row_split!r}; put held-out tasks in an evaluation file only "
            "(`referee tasks export TASKS.jsonl --format verl --split heldout`, veRL's "
            "data.val_files)"
        )


# ---- judging -----------------------------------------------------------------------------------
def _judge_once(task: Task, answer: str, deadline_s: float) -> Verdict:
    verifiers = verifier_set()
    with deadline(deadline_s):
        try:
            verdict: Verdict | None = verifiers.verify(task, answer)
        except DeadlineExceeded:
            verdict = None
        # A run the deadline killed leaves the candidate unjudged: not the model's failure.
        if verdict is None or (deadline_passed() and not verdict.passed):
            return Verdict.infra(task.id, _DEADLINE_ERROR.format(s=deadline_s), _VERIFIER)
    return verdict


def _slots() -> threading.BoundedSemaphore:
    """As many samples judged at once as the sandbox has workers: a sample's deadline starts
    when its work does, not while it waits behind others (veRL may call from 30 threads)."""
    global _slot_sem
    workers = _workers(verifier_set())
    with _lock:
        if _slot_sem is None or _slot_sem[0] != workers:
            _slot_sem = (workers, threading.BoundedSemaphore(workers))
        return _slot_sem[1]


def _judge(
    task: Task, solution_str: str, deadline_s: float, on_start: Callable[[], None] | None = None
) -> Verdict:
    answer = answer_for(task, solution_str)
    with _slots():
        if on_start is not None:
            on_start()
        verdict = _judge_once(task, answer, deadline_s)
        if verdict.infra_error and verdict.verifier != _VERIFIER:  # once more, unless a deadline
            verdict = _judge_once(task, answer, deadline_s)
    return verdict


def scores_of(verdict: Verdict, binary: bool = False) -> dict[str, Any]:
    """The reward dict of a verdict: ``score`` (the reward, or 0/1 with ``binary``) and the
    extra info veRL logs; every key is always there (veRL logs them as columns)."""
    return {
        "score": float(verdict.passed) if binary else float(verdict.reward),
        "passed": float(verdict.passed),
        "tests_passed": sum(1 for t in verdict.tests if t.status == "passed"),
        "tests_total": len(verdict.tests),
        "hack_flags": len(verdict.flags),
    }


def _raise_infra(failed: Sequence[Verdict], total: int) -> None:
    first = failed[0]
    raise InfraError(
        f"{len(failed)} of {total} sample(s) could not be judged (an infrastructure error, not "
        f"the model's failure; first: {first.task_id}: {first.infra_error}); no reward is "
        "given for them rather than a 0 the model did not earn"
    )


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    tasks: str | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    binary: bool = False,
    ray_actors: int = 0,
    **_veRL: Any,
) -> dict[str, Any]:
    """veRL's reward function for referee rows (see the module). ``data_source`` is not
    needed: the row's task decides the verifier. Other keyword arguments veRL passes
    (``reward_router_address``...) are ignored. ``ray_actors=N`` (with ``tasks=FILE``): judged
    on the job's shared pool of N sandbox actors on veRL's Ray cluster, one pool for all its
    reward workers (:func:`referee.cluster.shared_pool`), instead of in this reward worker."""
    task = row_task(ground_truth, extra_info, tasks=tasks)
    check_split(task, extra_info)
    if ray_actors:
        [verdict] = _judge_on_pool([task], [solution_str], tasks, ray_actors, float(deadline_s))
        return scores_of(verdict, binary)
    verdict = _judge(task, solution_str, float(deadline_s))
    if verdict.infra_error:
        _raise_infra([verdict], 1)
    return scores_of(verdict, binary)


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    tasks: str | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    binary: bool = False,
    workers: int | None = None,
    ray_actors: int = 0,
    **_veRL: Any,
) -> list[dict[str, Any]]:
    """:func:`compute_score` of many samples, judged concurrently (``workers`` at a time;
    default: the sandbox's worker count), each killed ``deadline_s`` after it starts.

    Every row's task is found and checked before any work starts. If a sample could not be
    judged, :class:`InfraError` names it once the others are done."""
    n = len(solution_strs)
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    if not len(data_sources) == len(ground_truths) == len(extras) == n:
        raise ConfigError(
            f"compute_score_batch got {len(data_sources)} data sources, {n} solutions, "
            f"{len(ground_truths)} ground truths and {len(extras)} extra infos; one each per sample"
        )
    chosen = []
    for gt, extra in zip(ground_truths, extras, strict=True):
        task = row_task(gt, extra, tasks=tasks)
        check_split(task, extra)
        chosen.append(task)
    if ray_actors:  # the batch spread over the pool's actors (see compute_score)
        verdicts = _judge_on_pool(chosen, list(solution_strs), tasks, ray_actors, deadline_s)
        return [scores_of(v, binary) for v in verdicts]
    verifiers = verifier_set()
    for task in chosen:  # a kind nobody judges is refused before any work starts
        verifiers.verifier(task.kind)
    limit = float(deadline_s)
    verdicts = _judge_all(chosen, list(solution_strs), limit, workers or _workers(verifiers))
    failed = [v for v in verdicts if v.infra_error]
    if failed:
        _raise_infra(failed, n)
    return [scores_of(v, binary) for v in verdicts]


def _judge_on_pool(
    chosen: Sequence[Task], texts: Sequence[str], tasks: str | None, actors: int, deadline_s: float
) -> list[Verdict]:
    from referee.cluster.shared import judge_texts, shared_pool

    pool = shared_pool(tasks, int(actors))
    try:
        return judge_texts(pool, list(zip(chosen, texts, strict=True)), deadline_s=deadline_s)
    except VerifierError as e:
        raise InfraError(str(e)) from e


def _workers(verifiers: VerifierSet) -> int:
    return max(1, verifiers.sandbox.python_workers)


def _judge_all(
    tasks: Sequence[Task], texts: Sequence[str], deadline_s: float, workers: int
) -> list[Verdict]:
    """Verdicts in order; a sample not back ``GRACE_S`` after its deadline is given up on."""
    started: dict[int, float] = {}

    def job(i: int) -> Verdict:
        return _judge(
            tasks[i], texts[i], deadline_s, lambda: started.__setitem__(i, time.monotonic())
        )

    results: dict[int, Verdict] = {}
    pool = ThreadPoolExecutor(max(1, min(workers, len(tasks))), thread_name_prefix="referee-verl")
    try:
        futures: dict[Future[Verdict], int] = {
            pool.submit(contextvars.copy_context().run, job, i): i for i in range(len(tasks))
        }
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                results[futures[f]] = f.result()
            now = time.monotonic()
            for f in list(pending):
                i = futures[f]
                if i in started and now > started[i] + deadline_s + GRACE_S:
                    pending.discard(f)
                    results[i] = Verdict.infra(
                        tasks[i].id,
                        f"no verdict {GRACE_S:g} s after the deadline of {deadline_s:g} s",
                        _VERIFIER,
                    )
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return [results[i] for i in range(len(tasks))]
