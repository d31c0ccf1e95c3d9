"""``SandboxActor``: one warm :class:`~referee.service.engine.ServiceEngine` in a Ray actor.

A plain class: :class:`referee.cluster.SandboxPool` makes it a Ray actor with
``ray.remote(SandboxActor).options(max_concurrency=..., max_restarts=..., max_task_retries=0)``
(a trainer that manages its own actors may do the same). Everything it holds is built in
``__init__`` from plain data (task dicts or :class:`~referee.tasks.model.Task` objects, or a task
file path or URL), so a restart after a crash (``max_restarts``) builds the same actor again:
nothing outside the process is touched by initialisation.

Verification runs on the engine's warm fork-server workers. ``deadline_s`` bounds each sample
from the moment a sandbox worker takes it (not from when the batch arrived): the run is killed
by the sandbox when it passes (:func:`referee.sandbox.deadline.deadline`, as the engine does for
``referee serve``) and the verdict is an infrastructure error, so a hung candidate costs its
worker at most the deadline. ``expires_at`` (epoch seconds, set by the caller when the sample
was submitted) is an absolute deadline that counts queue time: a sample still waiting for a
worker when it passes is not run (an infrastructure verdict saying so), and one that starts
runs for what is left of it at most. Environment sessions live in the actor that opened them; their
snapshots stay there too (only ids cross the wire).

Exceptions raised to callers are referee errors whose messages name the fix; they pickle, so
Ray hands the caller the same type and message.

>>> actor = SandboxActor([t.model_dump(mode="json") for t in tasks], workers=2)  # doctest: +SKIP
>>> await actor.verify_batch([("HumanEval/0", "    return True\\n")], 10.0)       # doctest: +SKIP
[Verdict(task_id='HumanEval/0', reward=0.2..., passed=False, ...)]
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any

from referee.envs.base import ChatMessage
from referee.envs.registry import env_names, make_env
from referee.errors import ConfigError, NotFoundError
from referee.sandbox.deadline import deadline
from referee.service.engine import GRACE_S, ServiceEngine
from referee.service.schemas import SessionOptions
from referee.service.sessions import Session, SessionStore, session_env_kwargs
from referee.tasks.model import Task, read_tasks
from referee.verify.verdict import Verdict

__all__ = ["SandboxActor", "TaskSource", "expired_reason", "load_tasks"]

#: Tasks as an actor takes them: Task objects, their JSON dicts, or a task file path or URL.
TaskSource = str | Sequence[Task | Mapping[str, Any]]
OWNER = "cluster"
VERIFIER = "cluster"


def expired_reason(expires_at: float) -> str:
    """The infrastructure error of a sample whose absolute deadline passed before it ran."""
    return (
        "the sample's deadline (counted from its submission, queue time included) passed "
        f"{max(0.0, time.time() - expires_at):.1f} s before a sandbox worker was free for it; "
        "it was not run"
    )


def load_tasks(source: TaskSource) -> list[Task]:
    """The tasks of ``source`` (a path or URL is read with :func:`read_tasks`).

    >>> load_tasks([{"id": "t/1", "domain": "code", "prompt": [], "payload": {}}])  # doctest: +SKIP
    """
    if isinstance(source, str | os.PathLike):
        return read_tasks(source)
    return [t if isinstance(t, Task) else Task.model_validate(t) for t in source]


class SandboxActor:
    """Warm sandboxes, verifiers and environment sessions of one node; see the module docstring.

    ``workers`` sizes the sandbox's fork-server pool (default: the node's CPUs + 1);
    ``deadline_cap_s`` bounds every sample and step; ``call_timeout_s`` and ``run_timeout_s``
    are the function verifier's own limits.
    """

    def __init__(
        self,
        tasks: TaskSource,
        *,
        workers: int | None = None,
        deadline_cap_s: float = 60.0,
        call_timeout_s: float = 5.0,
        run_timeout_s: float = 30.0,
        backend: str = "bwrap",
        max_sessions: int = 256,
        session_ttl_s: float = 3600.0,
    ) -> None:
        self.engine = ServiceEngine(
            load_tasks(tasks),
            workers=workers,
            deadline_cap_s=deadline_cap_s,
            backend=backend,
            call_timeout_s=call_timeout_s,
            run_timeout_s=run_timeout_s,
        )
        self.sessions = SessionStore(ttl_s=session_ttl_s, max_sessions=max_sessions)
        self.started = time.time()
        self.verified = 0
        #: Samples whose absolute deadline passed in this actor's queue (not run).
        self.expired = 0
        self.sessions_opened = 0
        self._slots: asyncio.Semaphore | None = None  # made on the actor's own event loop

    # ---- verification ----------------------------------------------------------------------
    async def verify_batch(
        self,
        samples: Sequence[tuple[str, str]],
        deadline_s: float | None = None,
        expires_at: float | None = None,
    ) -> list[Verdict]:
        """Verdicts on ``(task_id, completion)`` samples, in their order; see the module
        docstring for the deadlines. Unknown task ids raise before any work starts."""
        self.engine.resolve(samples)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.engine.workers)
        slots = self._slots

        async def one(sample: tuple[str, str]) -> Verdict:
            # ``deadline_s`` starts when a worker is free for the sample; ``expires_at`` was
            # set when it was submitted, so its queue time counts.
            async with slots:
                limit = deadline_s
                if expires_at is not None:
                    left = expires_at - time.time()
                    if left <= 0:
                        self.expired += 1
                        return Verdict.infra(sample[0], expired_reason(expires_at), VERIFIER)
                    limit = left if limit is None else min(limit, left)
                [verdict] = await self.engine.verify([sample], deadline_s=limit)
                self.verified += 1
            return verdict

        verdicts = await asyncio.gather(*(one((tid, c)) for tid, c in samples))
        return list(verdicts)

    # ---- environment sessions --------------------------------------------------------------
    async def open_session(
        self, env_name: str, task_id: str, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A new episode of environment ``env_name`` on ``task_id``: ``{"session_id",
        "messages", "tools"}``. ``options`` as ``referee serve`` takes them (``single_turn``,
        ``tools``, ``max_turns``)."""
        if env_name not in env_names():
            raise ConfigError(
                f"unknown environment {env_name!r}; available: {', '.join(env_names())}"
            )
        [(task, _)] = self.engine.resolve([(task_id, "")])
        for idle in self.sessions.expired():  # idle past session_ttl_s: their room is freed
            idle.closed = True
            await idle.env.close()
        self.sessions.check_room()
        opts = SessionOptions.model_validate(dict(options or {}))
        engine = self.engine
        kwargs = session_env_kwargs(
            env_name,
            opts,
            engine.runtime,
            engine.deadline_cap_s,
            verifier=lambda: engine.verifiers.verifier(task.kind),
        )
        env = make_env(env_name, **kwargs)
        try:
            messages = await self._bounded(env.reset(task), None)
            session = self.sessions.add(OWNER, env_name, task.id, env)
        except BaseException:
            await env.close()
            raise
        self.sessions_opened += 1
        return {"session_id": session.id, "messages": messages, "tools": env.tools()}

    async def step(
        self, session_id: str, message: ChatMessage, deadline_s: float | None = None
    ) -> dict[str, Any]:
        """One assistant message acted on: ``{"observations", "done", "metrics", "reason"}``."""
        session = self._session(session_id)
        async with session.lock:
            result = await self._bounded(session.env.step(message), deadline_s)
        return {
            "observations": result.observations,
            "done": result.done,
            "metrics": result.metrics,
            "reason": result.reason,
        }

    async def snapshot(self, session_id: str) -> str:
        """An id for the session's current state (the state stays in this actor)."""
        session = self._session(session_id)
        async with session.lock:
            return session.add_snapshot(await session.env.snapshot())

    async def restore(self, session_id: str, snapshot_id: str) -> bool:
        """Return the session to the state ``snapshot_id`` captured; whether the episode had
        ended in that state."""
        session = self._session(session_id)
        async with session.lock:
            try:
                state = session.snapshot(snapshot_id)
            except NotFoundError:
                raise NotFoundError(
                    f"no snapshot {snapshot_id[:80]!r} in session {session_id[:80]!r}; take one "
                    "with snapshot() (a session keeps its most recent ones)"
                ) from None
            await session.env.restore(state)
            return session.env.done

    async def verify_session(self, session_id: str, deadline_s: float | None = None) -> Verdict:
        """The episode's verdict, from the task's verifier."""
        session = self._session(session_id)
        async with session.lock:
            verdict: Verdict = await self._bounded(session.env.verify(), deadline_s)
        return verdict

    async def close_session(self, session_id: str) -> None:
        """Free the session's environment; closing an unknown or closed session does nothing."""
        session = self.sessions.pop(session_id)
        if session is None:
            return
        session.closed = True
        async with session.lock:
            await session.env.close()

    def _session(self, session_id: str) -> Session:
        try:
            return self.sessions.get(session_id, OWNER)
        except NotFoundError:
            raise NotFoundError(
                f"no session {session_id[:80]!r} in this actor (closed, expired, or its actor "
                "restarted); open a new one with open_session()"
            ) from None

    async def _bounded(self, work: Any, deadline_s: float | None) -> Any:
        seconds = self.engine.bound(deadline_s)
        with deadline(seconds):
            return await asyncio.wait_for(work, timeout=seconds + GRACE_S)

    # ---- lifecycle -------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """Where this actor runs and how busy it is (plain data)."""
        node_id = ""
        try:
            import ray

            if ray.is_initialized():
                node_id = ray.get_runtime_context().get_node_id()
        except ImportError:
            pass
        busy = self.engine.busy
        return {
            "node_id": node_id,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "workers": self.engine.workers,
            "busy": busy,
            "idle": max(0, self.engine.workers - busy),
            "sessions": len(self.sessions),
            "tasks": len(self.engine.tasks),
            "verified": self.verified,
            "expired": self.expired,
            "sessions_opened": self.sessions_opened,
            "uptime_s": round(time.time() - self.started, 3),
        }

    async def shutdown(self) -> None:
        """Close every session and the sandbox; the actor can be killed afterwards."""
        for session in self.sessions.all():
            session.closed = True
            try:
                await session.env.close()
            except Exception:  # one failing close must not keep the others open
                pass
        self.engine.close()
