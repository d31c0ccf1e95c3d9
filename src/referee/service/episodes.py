"""What every protocol's episode routes share: environments made as the native routes make them,
sessions opened and closed the same way, and sandbox work bounded by the server's deadline.

The native session routes (:mod:`referee.service.app`) and the trainer protocols that keep
episodes (NeMo Gym's resources server, OpenEnv's WebSocket) all go through here, so a session is
a session whoever opened it: it counts against the server's session cap
(``ServeConfig.max_sessions``, ``referee serve --max-sessions``, 256 by default), expires after
``--session-ttl`` idle, and shows in ``/health`` and ``/metrics``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from referee.envs.base import ChatMessage, Environment
from referee.envs.registry import env_names, make_env
from referee.sandbox.deadline import deadline
from referee.service.engine import GRACE_S
from referee.service.schemas import EnvBody
from referee.service.sessions import Session, check_env_name, session_env_kwargs
from referee.service.state import Service
from referee.tasks.model import Task

__all__ = ["bounded", "close_episode", "make_session_env", "open_episode"]


async def bounded(work: Awaitable[Any], seconds: float) -> Any:
    """Await ``work`` with every sandbox run it starts killed by the deadline; a 504
    (:class:`TimeoutError`) when it has not finished shortly after."""
    with deadline(seconds):
        return await asyncio.wait_for(work, timeout=seconds + GRACE_S)


def make_session_env(service: Service, body: EnvBody, task: Task | None = None) -> Environment:
    """The environment a session body asks for, on the engine's shared runtime; with the
    engine's verifier of ``task``'s kind when the environment takes one (its sandbox shared by
    every session, not one per session)."""
    check_env_name(body.env, env_names())
    engine = service.engine
    kwargs = session_env_kwargs(
        body.env,
        body.options,
        engine.runtime,
        engine.deadline_cap_s,
        verifier=None if task is None else lambda: engine.verifiers.verifier(task.kind),
    )
    return make_env(body.env, **kwargs)


async def open_episode(
    service: Service, owner: str, body: EnvBody, task: Task
) -> tuple[Session, list[ChatMessage]]:
    """A new session of ``owner`` on ``task``: its environment made and reset (under the
    server's deadline and admission), added to the session store. Nothing is left behind when
    any step fails."""
    service.sessions.check_room()
    with service.admission.admit(1):
        env = make_session_env(service, body, task)
        try:
            messages = await bounded(env.reset(task), service.engine.deadline_cap_s)
            session = service.sessions.add(owner, body.env, task.id, env)
        except BaseException:
            await env.close()
            raise
    service.metrics.sessions_open.set(len(service.sessions))
    return session, messages


async def close_episode(service: Service, session: Session) -> None:
    """Remove ``session`` from the store and free its environment, unless the reaper (or
    another request) took it out first: whoever removes a session closes it."""
    if service.sessions.pop(session.id) is None:
        return
    async with session.lock:
        await service.close_session(session)
