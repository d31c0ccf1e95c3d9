"""``RolloutRunner``: many episodes of a policy in fresh environments, concurrently, as data.

Each rollout runs the loop of :mod:`referee.envs.base` in an environment of its own
(``env_factory()``), and becomes a :class:`~referee.rollout.trajectory.Trajectory` with every
turn's message, token ids, log-probabilities and timings, the verdict, and what went wrong::

    runner = RolloutRunner(lambda: CodeEnv(sandbox), policy, concurrency=16, group_size=8)
    groups = await runner.run_groups(tasks)         # 8 trajectories per task, one group id
    rewards = [[t.reward for t in g] for g in groups]

A bad rollout is data, never a crash of the batch. Faults are sorted by whose they are:

* **infra**: the policy failed (:class:`~referee.errors.PolicyError`: server down, timeout),
  the environment raised in ``reset``/``step``/``verify``, a call outlived its watchdog, or the
  verdict carries ``infra_error``. The rollout is retried from a fresh environment, up to
  ``max_infra_retries`` times (``Trajectory.attempts`` counts them); the last attempt is kept.
* **model**: the policy answered with nothing usable as an assistant message
  (:class:`~referee.policy.base.PolicyOutputError`, no content and no tool calls). Not retried.

What the model does wrong *inside* the environment's rules (bad code, a malformed tool call) is
an observation, not an error. Reaching a limit of :class:`~referee.envs.base.EpisodeLimits`
(turns, tokens, episode time) ends the episode normally (``end_reason``) and it is verified.
Results come back in the order of the input; with a ``store`` (a
:class:`~referee.rollout.sink.TrajectorySink`, usually the run's ``TrackStore``), each
trajectory is written as soon as it is finished.

Every trajectory carries its :class:`~referee.rollout.cost.Cost` (the sandbox runs of its
steps and verification, metered; wall time; tokens; the attempts after infrastructure faults
included), and the runner's :class:`~referee.rollout.cost.CostLedger` (``runner.ledger``) sums
them. With a ``budget``, no rollout starts once it is spent: the rollouts in flight finish and
are stored whole, and the batch raises :class:`~referee.rollout.cost.BudgetExhausted` with the
:class:`~referee.rollout.cost.BudgetStop` and the trajectories that did finish.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.shift.base import shift_record
from referee.policy.base import Generation, Policy, PolicyOutputError, Sampling
from referee.rollout.cost import BudgetExhausted, BudgetStop, Cost, CostLedger, RunBudget
from referee.rollout.sink import TrajectorySink
from referee.rollout.trajectory import ErrorKind, Trajectory, TrajectoryError, Turn
from referee.sandbox.metering import metering
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["EnvFactory", "RolloutRunner"]

EnvFactory = Callable[[], Environment]
T = TypeVar("T")
_log = logging.getLogger(__name__)


class _Fault(Exception):
    """A rollout's fault, classified; caught in :meth:`RolloutRunner._episode`."""

    def __init__(self, kind: ErrorKind, where: str, message: str) -> None:
        super().__init__(message)
        self.error = TrajectoryError(kind=kind, where=where, message=message)


class _Deadline(Exception):
    """The episode's time ran out during a call: the ``timeout`` limit, not a fault."""


@dataclass
class _Clock:
    """Per-phase seconds of one episode."""

    reset_s: float = 0.0
    policy_s: float = 0.0
    env_s: float = 0.0
    verify_s: float = 0.0


class RolloutRunner:
    """Run rollouts with bounded concurrency, groups, retries and fault isolation.

    Args:
        env_factory: makes a fresh environment for each rollout (and each retry).
        policy: produces the assistant messages.
        concurrency: rollouts in flight at once (over all ``run`` calls on one event loop).
        group_size: rollouts per task in :meth:`run` (GRPO's G).
        sampling: the policy's sampling; with a ``seed``, sample *i* of a group uses
            ``seed + i`` so that a group does not repeat one sample G times.
        limits: turns, completion tokens and episode time; ``step_timeout_s`` also bounds
            ``reset`` and ``step`` (plus ``grace_s``), as a watchdog over the environment's own.
        max_infra_retries: extra attempts after an infrastructure fault.
        store: where finished trajectories are written, if anywhere: a
            :class:`~referee.rollout.sink.TrajectorySink` such as the run's
            :class:`~referee.track.store.TrackStore` or a :class:`~referee.rollout.sink.JsonlSink`.
        run_id: recorded on every trajectory.
        verify_timeout_s: watchdog over ``env.verify`` (a repository's tests take a while).
        grace_s: added to the policy's and the environment's own timeouts before the runner's
            watchdog fires, so that a component honouring its limit reports it first.
        retry_backoff_s: wait before retry *k* is ``k * retry_backoff_s``.
        log_faults: log infrastructure faults (each distinct one once per batch, then how often
            it recurred); False for a caller that reports them itself (``referee eval``).
        budget: the run's limits (sandbox CPU-hours, tokens, wall time from the runner's
            creation); checked before each rollout starts, so the rollouts already in flight
            may overshoot it by what they cost.
    """

    def __init__(
        self,
        env_factory: EnvFactory,
        policy: Policy,
        *,
        concurrency: int = 8,
        group_size: int = 1,
        sampling: Sampling = Sampling(),
        limits: EpisodeLimits = EpisodeLimits(),
        max_infra_retries: int = 2,
        store: TrajectorySink | None = None,
        run_id: str | None = None,
        verify_timeout_s: float = 600.0,
        grace_s: float = 5.0,
        retry_backoff_s: float = 0.1,
        log_faults: bool = True,
        budget: RunBudget | None = None,
    ) -> None:
        if concurrency < 1 or group_size < 1 or max_infra_retries < 0:
            raise ValueError("concurrency and group_size must be >= 1, max_infra_retries >= 0")
        self.env_factory = env_factory
        self.policy = policy
        self.concurrency = concurrency
        self.group_size = group_size
        self.sampling = sampling
        self.limits = limits
        self.max_infra_retries = max_infra_retries
        self.store = store
        self.run_id = run_id
        self.verify_timeout_s = verify_timeout_s
        self.grace_s = grace_s
        self.retry_backoff_s = retry_backoff_s
        self.log_faults = log_faults
        self.ledger = CostLedger(budget)
        # Infrastructure faults logged in the current batch: (where, message) -> how often,
        # and the task whose rollout logged it first.
        self._faults: dict[tuple[str, str], int] = {}
        self._first_task: dict[tuple[str, str], str] = {}
        # A semaphore belongs to one event loop; successive asyncio.run calls get their own.
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    # ---- batches ------------------------------------------------------------------------------

    async def run(self, tasks: Sequence[Task], *, step: int | None = None) -> list[Trajectory]:
        """``group_size`` rollouts of each task, task by task in input order.

        >>> runner.run_sync([task_a, task_b])     # doctest: +SKIP
        [<a, sample 0>, <a, sample 1>, ..., <b, sample 0>, ...]
        """
        groups = await self.run_groups(tasks, self.group_size, step=step)
        return [t for g in groups for t in g]

    async def run_groups(
        self, tasks: Sequence[Task], group_size: int | None = None, *, step: int | None = None
    ) -> list[list[Trajectory]]:
        """G rollouts per task sharing a ``group_id``, one list per task, in input order.

        Raises :class:`~referee.rollout.cost.BudgetExhausted` when the budget stopped rollouts
        from starting (after those in flight have finished and been stored)."""
        g = group_size or self.group_size
        group_ids = [uuid.uuid4().hex for _ in tasks]
        jobs = [
            self._rollout(task, group_id=gid, sample_index=i, step=step)
            for task, gid in zip(tasks, group_ids, strict=True)
            for i in range(g)
        ]
        try:
            flat = await _gather_or_cancel(jobs)
        finally:
            self._summarize_faults()
        done = [t for t in flat if t is not None]
        if len(done) < len(flat):
            raise BudgetExhausted(self._stop(), done)
        return [done[k * g : (k + 1) * g] for k in range(len(tasks))]

    def run_sync(self, tasks: Sequence[Task], *, step: int | None = None) -> list[Trajectory]:
        """:meth:`run` from synchronous code (also where a loop already runs in this thread)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(tasks, step=step))
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self.run(tasks, step=step)).result()

    # ---- one rollout --------------------------------------------------------------------------

    async def rollout(
        self,
        task: Task,
        *,
        group_id: str | None = None,
        sample_index: int = 0,
        step: int | None = None,
    ) -> Trajectory:
        """One rollout of ``task``, retried after infrastructure faults; never raises for them.
        Raises :class:`~referee.rollout.cost.BudgetExhausted` if the budget is spent."""
        traj = await self._rollout(task, group_id=group_id, sample_index=sample_index, step=step)
        if traj is None:
            raise BudgetExhausted(self._stop())
        return traj

    def _stop(self) -> BudgetStop:
        stop = self.ledger.exhausted()
        assert stop is not None  # a rollout is skipped only once the budget is spent
        return stop

    async def _rollout(
        self, task: Task, *, group_id: str | None, sample_index: int, step: int | None
    ) -> Trajectory | None:
        """:meth:`rollout`, or None when the budget was spent before it could start."""
        async with self._slot():
            if self.ledger.exhausted() is not None:
                return None
            attempt = 0
            spent = Cost()
            while True:
                attempt += 1
                traj = await self._episode(task, group_id, sample_index, step)
                traj.attempts = attempt
                # The retried attempts were paid for too: a rollout's cost includes them.
                spent = spent + traj.cost
                if traj.error is None or traj.error.kind != "infra":
                    break
                self._warn_fault(task, attempt, traj.error)
                if attempt > self.max_infra_retries:
                    break
                await asyncio.sleep(self.retry_backoff_s * attempt)
            # Counted before the slot is let go, so that the rollout waiting for it sees it.
            traj.cost = spent
            self.ledger.add(spent)
        if self.store is not None:
            # Off the loop: a sink syncs every record to disk before it returns.
            await asyncio.to_thread(self.store.log_trajectory, traj)
        return traj

    def _warn_fault(self, task: Task, attempt: int, error: TrajectoryError) -> None:
        """Log an infrastructure fault once: a server that is down fails every rollout and
        every retry with the same message, which said nine times buries everything else. The
        repeats are counted and told once at the end of the batch (:meth:`_summarize_faults`);
        every trajectory still records its own."""
        if not self.log_faults:
            return
        key = (error.where, error.message)
        self._faults[key] = self._faults.get(key, 0) + 1
        if self._faults[key] == 1:
            self._first_task[key] = task.id
            _log.warning(
                "rollout of %s failed (attempt %d, %s): %s",
                task.id, attempt, error.where, error.message,
            )  # fmt: skip
        else:
            _log.debug("rollout of %s failed again (attempt %d)", task.id, attempt)

    def _summarize_faults(self) -> None:
        # The message was logged whole with the first occurrence; it is not repeated (or cut).
        for key, n in self._faults.items():
            if n > 1:
                _log.warning(
                    "the same %s fault %d more times in this batch (logged above for %s)",
                    key[0], n - 1, self._first_task.get(key, "a rollout"),
                )  # fmt: skip
        self._faults.clear()
        self._first_task.clear()

    def _slot(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self._slots:
            self._slots[loop] = asyncio.Semaphore(self.concurrency)
        return self._slots[loop]

    async def _episode(
        self, task: Task, group_id: str | None, sample_index: int, step: int | None
    ) -> Trajectory:
        """One attempt at an episode, with its cost. Every sandbox run of the episode (its
        steps' tools, its verification) is metered: the threads that the environment starts
        with ``asyncio.to_thread`` carry this task's meter."""
        with metering() as meter:
            traj = await self._attempt(task, group_id, sample_index, step)
        traj.cost = Cost.of(
            meter.usage(),
            wall_s=traj.timings.get("total_s", 0.0),
            prompt_tokens=traj.prompt_tokens,
            completion_tokens=traj.completion_tokens,
        )
        return traj

    async def _attempt(
        self, task: Task, group_id: str | None, sample_index: int, step: int | None
    ) -> Trajectory:
        traj = Trajectory(
            task_id=task.id,
            split=task.split,
            policy=getattr(self.policy, "name", type(self.policy).__name__),
            env="",
            run_id=self.run_id,
            group_id=group_id,
            sample_index=sample_index,
            step=step,
            started_at=time.time(),
        )
        clock = _Clock()
        start = time.perf_counter()
        env: Environment | None = None
        try:
            try:
                env = self.env_factory()
                traj.env = getattr(env, "name", type(env).__name__)
            except Exception as e:
                raise _Fault("infra", "env.factory", f"{type(e).__name__}: {e}") from e
            t0 = time.perf_counter()
            first = await self._call(
                "env.reset", env.reset(task), self.limits.step_timeout_s + self.grace_s
            )
            clock.reset_s = time.perf_counter() - t0
            traj.messages = list(first)
            traj.end_reason = await self._turns(env, traj, list(first), sample_index, clock, start)
            t0 = time.perf_counter()
            verdict = await self._call("env.verify", env.verify(), self.verify_timeout_s)
            clock.verify_s = time.perf_counter() - t0
            if not isinstance(verdict, Verdict):
                raise _Fault("infra", "env.verify", f"verify returned {type(verdict).__name__}")
            traj.verdict = verdict
            if verdict.infra_error:
                raise _Fault("infra", "verifier", verdict.infra_error)
        except _Fault as fault:
            traj.error = fault.error
        except Exception as e:
            # Outside the guarded calls only the environment's own attributes run (done,
            # tools()): a bug there is the environment's, and must not take the batch down.
            traj.error = TrajectoryError(
                kind="infra", where="env", message=f"{type(e).__name__}: {e}"
            )
        finally:
            if env is not None:
                traj.shift = shift_record(env)  # before close: what the wrappers did
                await self._close(env, task)
            traj.timings = {
                "reset_s": clock.reset_s,
                "policy_s": clock.policy_s,
                "env_s": clock.env_s,
                "verify_s": clock.verify_s,
                "total_s": time.perf_counter() - start,
            }
            traj.finished_at = time.time()
        return traj

    async def _turns(
        self,
        env: Environment,
        traj: Trajectory,
        messages: list[ChatMessage],
        sample_index: int,
        clock: _Clock,
        start: float,
    ) -> str:
        """Policy, then environment, until the episode is done; returns why it ended."""
        limits = self.limits
        deadline = start + limits.episode_timeout_s
        tokens = 0
        while not env.done:
            if len(traj.turns) >= limits.max_turns:
                return "max_turns"
            if tokens >= limits.max_tokens:
                return "max_tokens"
            sampling = self._sampling(sample_index, limits.max_tokens - tokens)
            t0 = time.perf_counter()
            try:
                gen = await self._call(
                    "policy",
                    self.policy.generate(list(messages), tools=env.tools(), sampling=sampling),
                    sampling.timeout_s + self.grace_s,
                    deadline,
                )
            except _Deadline:
                return "timeout"
            policy_s = time.perf_counter() - t0
            clock.policy_s += policy_s
            message = _usable(gen)
            t0 = time.perf_counter()
            try:
                result = await self._call(
                    "env.step",
                    env.step(message),
                    limits.step_timeout_s + self.grace_s,
                    deadline,
                )
            except (_Fault, _Deadline) as stop:
                # The assistant message that the environment choked on is worth keeping.
                traj.turns.append(_turn(len(traj.turns), gen, [], {}, policy_s, 0.0))
                if isinstance(stop, _Deadline):
                    return "timeout"
                raise
            env_s = time.perf_counter() - t0
            clock.env_s += env_s
            if not isinstance(result, StepResult):
                raise _Fault("infra", "env.step", f"step returned {type(result).__name__}")
            traj.turns.append(
                _turn(len(traj.turns), gen, result.observations, result.metrics, policy_s, env_s)
            )
            messages += [message, *result.observations]
            tokens += gen.completion_tokens
            if result.done:
                return result.reason or "done"
        return "done"

    def _sampling(self, sample_index: int, tokens_left: int) -> Sampling:
        s = self.sampling
        changes: dict[str, Any] = {}
        if tokens_left < s.max_tokens:
            changes["max_tokens"] = max(1, tokens_left)  # the episode's budget binds
        if s.seed is not None and sample_index:
            changes["seed"] = s.seed + sample_index
        return replace(s, **changes) if changes else s

    async def _call(
        self, where: str, aw: Awaitable[T], timeout_s: float, deadline: float | None = None
    ) -> T:
        """Await one call of the policy or environment, its faults turned into ``_Fault``."""
        budget = timeout_s
        if deadline is not None:
            budget = min(budget, deadline - time.perf_counter())
        try:
            async with asyncio.timeout(max(budget, 0.0)):
                return await aw
        except PolicyOutputError as e:
            raise _Fault("model", where, str(e)) from e
        except TimeoutError as e:
            if deadline is not None and budget < timeout_s:
                raise _Deadline() from e
            raise _Fault(
                "infra", where, f"{where} did not finish within the watchdog's {timeout_s:g}s"
            ) from e
        except Exception as e:
            raise _Fault("infra", where, f"{type(e).__name__}: {e}") from e

    async def _close(self, env: Environment, task: Task) -> None:
        try:
            async with asyncio.timeout(self.limits.step_timeout_s + self.grace_s):
                await env.close()
        except Exception as e:
            # The episode's result stands; what the environment failed to release is logged.
            _log.warning("closing the environment of %s failed: %s: %s", task.id, type(e), e)


def _usable(gen: Any) -> ChatMessage:
    """The assistant message of a generation, or a fault saying why there is none."""
    if not isinstance(gen, Generation):
        raise _Fault("infra", "policy", f"generate returned {type(gen).__name__}, not Generation")
    m = gen.message
    if not isinstance(m, dict) or m.get("role") != "assistant":
        raise _Fault("model", "policy", f"the policy produced no assistant message: {m!r:.200}")
    content, calls = m.get("content"), m.get("tool_calls")
    if not isinstance(content, str | None) or not isinstance(calls, list | None):
        raise _Fault("model", "policy", f"the policy produced a malformed message: {m!r:.200}")
    if content is None and not calls:
        raise _Fault(
            "model", "policy", "the policy produced no usable message (no content, no calls)"
        )
    return m


def _turn(
    index: int,
    gen: Generation,
    observations: list[ChatMessage],
    metrics: dict[str, float],
    policy_s: float,
    env_s: float,
) -> Turn:
    return Turn(
        index=index,
        assistant=gen.message,
        observations=observations,
        prompt_token_ids=gen.prompt_token_ids,
        token_ids=gen.token_ids,
        logprobs=gen.logprobs,
        prompt_tokens=gen.prompt_tokens,
        completion_tokens=gen.completion_tokens,
        finish_reason=gen.finish_reason,
        policy_s=policy_s,
        env_s=env_s,
        metrics=dict(metrics),
    )


async def _gather_or_cancel(jobs: Sequence[Awaitable[T]]) -> list[T]:
    """Like ``gather``, but an exception (a store that cannot write) cancels the rest."""
    tasks = [asyncio.ensure_future(j) for j in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
