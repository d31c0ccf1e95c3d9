"""``ToolworldEnv``: a multi-turn episode in a tool world, the world's tools as the
environment's tools, judged by the final state of the store at the end.

Every episode starts from a fresh copy of the task's seeded store. Each assistant message's
tool calls go to the world (its real errors come back as tool messages); a message without a
tool call ends the episode ("answered"): its text is never taken as proof of anything, only
the store and the action log are judged (:func:`~.judge.judge_session`). A limit of
:class:`~referee.envs.base.EpisodeLimits` ends it too.

>>> import asyncio
>>> from referee.domains import generate_family                            # doctest: +SKIP
>>> task = generate_family("shop-refund", count=1, seed=0)[0]             # doctest: +SKIP
>>> env = ToolworldEnv()                                                  # doctest: +SKIP
>>> messages = asyncio.run(env.reset(task))                               # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from referee.domains.toolworld.judge import judge_session
from referee.domains.toolworld.session import BuiltinSession, Session, open_session
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.budget import Budget, BudgetState
from referee.envs.tools import parse_tool_calls, tool_message
from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["ToolworldEnv", "ToolworldSnapshot"]


@dataclass(frozen=True)
class ToolworldSnapshot:
    """A whole episode state of a built-in world: its store as SQL, its log, the counters."""

    task: Task
    sql: str
    log: tuple[Any, ...]
    budget: BudgetState
    done: bool
    reason: str


class ToolworldEnv(Environment):
    """See the module docstring. ``sandbox`` runs imported worlds (made on first need)."""

    name = "toolworld"

    def __init__(self, *, limits: EpisodeLimits | None = None, sandbox: Any = None) -> None:
        self.limits = limits or EpisodeLimits(max_turns=24)
        self.budget = Budget(self.limits)
        self._sandbox = sandbox
        self._own_sandbox = False
        self._task: Task | None = None
        self._session: Session | None = None
        self._done = False
        self._reason = ""

    def _box(self) -> Any:
        if self._sandbox is None:
            from referee.sandbox import Sandbox

            self._sandbox, self._own_sandbox = Sandbox(python_workers=1), True
        return self._sandbox

    async def reset(self, task: Task) -> list[ChatMessage]:
        await self._end_episode()
        box = self._box() if "module" in task.payload else None
        self._session = await asyncio.to_thread(open_session, task, box)
        self._task, self._done, self._reason = task, False, ""
        self.budget.start()
        return [m.model_dump() for m in task.prompt]

    def tools(self) -> list[dict[str, Any]]:
        return self._session.tool_schemas() if self._session is not None else []

    @property
    def done(self) -> bool:
        return self._done

    @property
    def reason(self) -> str:
        return self._reason

    def _require(self) -> Session:
        if self._session is None or self._task is None:
            raise ConfigError("no episode is running; call reset(task) first")
        return self._session

    async def step(self, message: ChatMessage) -> StepResult:
        session = self._require()
        if self._done:
            raise ConfigError(
                f"the episode is over ({self._reason}); call reset(task) to start another"
            )
        t0 = time.perf_counter()
        self.budget.charge(message)
        calls = parse_tool_calls(message)
        observations: list[ChatMessage] = []
        errors = 0
        for call in calls:
            if call.error:
                content = f"error: {call.error}"
                errors += 1
            else:
                record = await asyncio.to_thread(session.call, call.name, call.arguments)
                content = record.observation()
                errors += not record.ok
            observations.append(tool_message(call, content))
        if not calls:
            self._done, self._reason = True, "answered"
        elif limit := self.budget.exceeded():
            self._done, self._reason = True, limit
        return StepResult(
            observations=observations,
            done=self._done,
            reason=self._reason,
            metrics={
                "tool_calls": float(len(calls)),
                "tool_errors": float(errors),
                "env_s": time.perf_counter() - t0,
                "turn": float(self.budget.turns),
            },
        )

    async def verify(self) -> Verdict:
        session = self._require()
        assert self._task is not None
        return await asyncio.to_thread(judge_session, self._task, session)

    async def snapshot(self) -> ToolworldSnapshot:
        session = self._require()
        if not isinstance(session, BuiltinSession):
            raise NotImplementedError("snapshots are supported for built-in worlds only")
        assert self._task is not None
        sql = "\n".join(session.world.db.iterdump())
        return ToolworldSnapshot(
            self._task, sql, tuple(session.log), self.budget.state(), self._done, self._reason
        )

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, ToolworldSnapshot):
            raise ConfigError("ToolworldEnv.restore takes what ToolworldEnv.snapshot returned")
        await self.reset(snapshot.task)  # a fresh world: its store is replaced below
        session = self._require()
        assert isinstance(session, BuiltinSession)
        initial = session.initial
        session.close()
        fresh = type(session.world).from_sql(snapshot.sql, session.world.context)
        restored = BuiltinSession(fresh)
        restored.initial = initial  # judged against the episode's start, not the snapshot's
        fresh.log.extend(snapshot.log)
        self._session = restored
        self.budget.restore(snapshot.budget)
        self._done, self._reason = snapshot.done, snapshot.reason

    async def _end_episode(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await asyncio.to_thread(session.close)

    async def close(self) -> None:
        """Release the episode's world, and the sandbox this environment made for imported
        worlds (a later episode makes another; pass ``sandbox=`` to share one)."""
        await self._end_episode()
        if self._own_sandbox and self._sandbox is not None:
            box, self._sandbox, self._own_sandbox = self._sandbox, None, False
            await asyncio.to_thread(box.close)
