"""``PoolEnvironment``: an :class:`~referee.envs.base.Environment` whose episodes run on a
:class:`~referee.cluster.SandboxPool`, each pinned to one actor.

Whatever drives environments drives this one unchanged: the rollout runner, the TRL adapters,
:class:`~referee.envs.base.SyncEnvironment`. Only ``task.id`` crosses the wire at ``reset``; the
pool's actors hold the tasks (make the pool from the same task file or objects), and their copy
is the one shown and judged. Every step, snapshot and verdict runs on the actor that opened the
episode (its workspace lives there); a snapshot is an id that only this episode can restore.

The policy stays where the caller is (a GPU node, an inference server); only sandbox work moves.

>>> from referee.cluster import PoolEnvironment, SandboxPool            # doctest: +SKIP
>>> from referee.rollout.runner import RolloutRunner                    # doctest: +SKIP
>>> pool = SandboxPool(tasks, actors=4)                                  # doctest: +SKIP
>>> runner = RolloutRunner(lambda: PoolEnvironment(pool, "code"), policy)  # doctest: +SKIP
>>> [t.reward for t in runner.run_sync(tasks)]                          # doctest: +SKIP
[1.0, 0.0, ...]

If an episode's actor dies, its next call raises :class:`~referee.errors.SandboxError` (the
rollout runner records that as an infrastructure fault and retries the rollout from a fresh
environment, hence a new session on a live actor).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

if TYPE_CHECKING:
    from referee.cluster.pool import SandboxPool
    from referee.cluster.session import PoolSession

__all__ = ["PoolEnvironment"]


class PoolEnvironment(Environment):
    """The pool's environment ``env`` (``"code"``, ``"code-single"``, any registered one).

    ``options``: how the actor makes the environment, as ``referee serve`` takes them
    (``single_turn``, ``tools``, ``max_turns``). ``deadline_s`` bounds each step and the
    verdict (killed in the actor when it passes). After an episode, ``verdict`` holds the
    verdict and ``session_id`` the session it ran in.
    """

    def __init__(
        self,
        pool: SandboxPool,
        env: str = "code",
        *,
        options: Mapping[str, Any] | None = None,
        deadline_s: float | None = None,
    ) -> None:
        self.name = env
        self.env = env
        self.pool = pool
        self.options = dict(options or {})
        self.deadline_s = deadline_s
        self.session: PoolSession | None = None
        self.verdict: Verdict | None = None
        self._tools: list[dict[str, Any]] = []
        self._done = False

    @property
    def session_id(self) -> str | None:
        return None if self.session is None else self.session.id

    async def reset(self, task: Task) -> list[ChatMessage]:
        """Open a session for ``task.id`` on the actor holding the fewest (closing this
        environment's previous one); returns the episode's first messages."""
        await self._close_session()
        # open_session blocks on the pool's own loop: keep this loop free meanwhile.
        self.session = await asyncio.to_thread(
            self.pool.open_session, self.env, task.id, self.options
        )
        self._tools = self.session.tools
        self._done, self.verdict = False, None
        return list(self.session.messages)

    def tools(self) -> list[dict[str, Any]]:
        """The tools of the open episode (empty before the first ``reset``)."""
        return list(self._tools)

    async def step(self, message: ChatMessage) -> StepResult:
        got = await self._session().step(message, self.deadline_s)
        self._done = bool(got["done"])
        return StepResult(
            observations=list(got["observations"]),
            done=self._done,
            metrics=dict(got.get("metrics") or {}),
            reason=str(got.get("reason") or ""),
        )

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        """The episode's verdict from the task's verifier, judged on the episode's actor."""
        self.verdict = await self._session().verify(self.deadline_s)
        return self.verdict

    async def snapshot(self) -> str:
        """The id of a snapshot kept by the episode's actor, for :meth:`restore`."""
        return await self._session().snapshot()

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, str):
            raise ConfigError(
                f"a PoolEnvironment restores a snapshot id (str), got {type(snapshot).__name__}"
            )
        self._done = await self._session().restore(snapshot)
        self.verdict = None

    async def close(self) -> None:
        """Close the episode's session (safe twice; an actor already gone is not an error:
        there is nothing left to release)."""
        await self._close_session()

    async def _close_session(self) -> None:
        session, self.session = self.session, None
        if session is None:
            return
        try:
            await session.close()
        except Exception:  # the actor died: its session died with it
            pass

    def _session(self) -> PoolSession:
        if self.session is None:
            raise ConfigError("no episode is open; call reset(task) first")
        return self.session
