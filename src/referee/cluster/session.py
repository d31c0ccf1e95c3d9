"""``PoolSession``: an environment session held by one sandbox actor, and the one way the
cluster awaits an actor's answer (:func:`call_remote`).

A session's state (its environment, workspace and snapshots) lives in the actor that opened it,
so every call of a session goes to that actor; if the actor dies, the session is lost and says
so (:class:`~referee.errors.SandboxError`) rather than failing with Ray's error.

>>> session = pool.open_session("code", "HumanEval/0")                    # doctest: +SKIP
>>> step = await session.step({"role": "assistant", "content": "..."})  # doctest: +SKIP
>>> verdict = await session.verify(); await session.close()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from referee.errors import RefereeError, SandboxError
from referee.verify.verdict import Verdict

__all__ = ["PoolSession", "call_remote"]

T = TypeVar("T")


def _unwrap(exc: BaseException) -> BaseException:
    """The referee error a remote call raised (Ray wraps it in a ``RayTaskError``)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, RefereeError) else exc


async def call_remote(ref: Awaitable[T]) -> T:
    """Await a remote call; a referee error raised in the actor is raised here as itself (Ray
    wraps it), every other error as Ray raised it."""
    try:
        return await ref
    except Exception as e:
        cause = _unwrap(e)
        if cause is e:
            raise
        raise cause from None


async def _session_call(ref: Awaitable[T]) -> T:
    """A session's call: an actor that died takes the session with it (its state lived there)."""
    import ray

    try:
        return await call_remote(ref)
    except ray.exceptions.RayActorError as e:
        raise SandboxError(
            f"the actor holding this session died ({type(e).__name__}); the session is lost: "
            "open a new one with pool.open_session()"
        ) from None


class PoolSession:
    """An environment session pinned to one actor (see :meth:`SandboxPool.open_session`);
    async methods, awaited from any event loop."""

    def __init__(self, actor: Any, opened: Mapping[str, Any], on_close: Callable[[], None]):
        self.actor = actor
        self.id: str = opened["session_id"]
        self.messages: list[dict[str, Any]] = list(opened["messages"])
        self.tools: list[dict[str, Any]] = list(opened["tools"])
        self._on_close = on_close
        self._closed = False

    async def step(
        self, message: Mapping[str, Any], deadline_s: float | None = None
    ) -> dict[str, Any]:
        """``{"observations", "done", "metrics", "reason"}`` for one assistant message."""
        return await _session_call(self.actor.step.remote(self.id, dict(message), deadline_s))

    async def snapshot(self) -> str:
        return await _session_call(self.actor.snapshot.remote(self.id))

    async def restore(self, snapshot_id: str) -> bool:
        """Back to the state ``snapshot_id`` captured; whether the episode had ended there."""
        return bool(await _session_call(self.actor.restore.remote(self.id, snapshot_id)))

    async def verify(self, deadline_s: float | None = None) -> Verdict:
        return await _session_call(self.actor.verify_session.remote(self.id, deadline_s))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._on_close()
        await _session_call(self.actor.close_session.remote(self.id))
