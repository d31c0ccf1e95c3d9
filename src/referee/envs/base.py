"""The ``Environment`` contract: a multi-turn episode in OpenAI message format.

An episode is driven by the rollout runner (or by a trainer's adapter)::

    messages = await env.reset(task)          # the first messages (system, user)
    while not env.done:
        reply = await policy.generate(messages, tools=env.tools())
        step = await env.step(reply.message)  # observations: tool results, feedback
        messages += [reply.message, *step.observations]
    verdict = await env.verify()              # the reward, from the task's verifier

Messages (:data:`ChatMessage`) are plain dicts as the OpenAI chat API writes them:
``{"role": "assistant", "content": ..., "tool_calls": [{"id", "type": "function", "function":
{"name", "arguments"}}]}`` from the policy, ``{"role": "tool", "tool_call_id", "content"}``
back from the environment. ``tools()`` gives the JSON schemas of the tools in the same API's
format.

Environments are asynchronous (sandbox runs are awaited, so one process drives many episodes);
:class:`SyncEnvironment` runs one from synchronous code (a trainer's callback, a notebook).
``snapshot()``/``restore()`` capture the whole episode state, so several continuations can be
sampled from one point (tree search, branching rollouts).

A failure of the environment itself (its sandbox died, a bug) raises; the rollout runner
records it on the trajectory as an infrastructure error and never trains on it. What the
*model* did wrong (a malformed tool call, code that crashes, too many turns) is an observation
or the end of the episode, never an exception.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["ChatMessage", "Environment", "EpisodeLimits", "StepResult", "SyncEnvironment"]

#: One chat message on the wire, as the OpenAI chat API writes it: ``role``, ``content``,
#: ``tool_calls``, ``tool_call_id``, ``name``. A plain dict because it is exchanged as is with
#: policies (OpenAI-compatible servers, chat templates) and trainers, and carries whatever
#: fields they add. Not :class:`referee.tasks.model.Message`, the task's validated prompt
#: message (role and text only); ``Message`` names that one alone.
ChatMessage = dict[str, Any]
T = TypeVar("T")


@dataclass(frozen=True)
class EpisodeLimits:
    """Bounds on one episode. A limit reached ends the episode (``done``), it is not an error."""

    max_turns: int = 8  # assistant messages
    max_tokens: int = 8192  # completion tokens over the episode, where the policy reports them
    step_timeout_s: float = 30.0  # one tool call (a sandbox run)
    episode_timeout_s: float = 300.0  # wall time from reset to the last step


@dataclass(frozen=True)
class StepResult:
    """What one assistant message led to."""

    observations: list[ChatMessage]  # to append after the assistant message
    done: bool
    #: Per-step numbers: ``tool_calls``, ``exec_s`` (time in sandboxed programs),
    #: ``env_s`` (the step's whole time), anything domain-specific.
    metrics: dict[str, float] = field(default_factory=dict)
    #: Why the episode ended, when ``done``: "submitted", "max_turns", "max_tokens",
    #: "timeout", "answered" (single-turn), ...
    reason: str = ""


class Environment(ABC):
    """Base class of every environment; see the module docstring for the loop."""

    #: Short name, recorded on trajectories ("code", "my-env").
    name: str = "env"

    @abstractmethod
    async def reset(self, task: Task) -> list[ChatMessage]:
        """Start an episode on ``task``; returns the first messages for the policy."""

    def tools(self) -> list[dict[str, Any]]:
        """JSON schemas of the tools, in the OpenAI ``tools`` format; none by default."""
        return []

    @abstractmethod
    async def step(self, message: ChatMessage) -> StepResult:
        """Act on one assistant message (its tool calls, or its text)."""

    @property
    @abstractmethod
    def done(self) -> bool:
        """True once the episode has ended (submitted, answered, or a limit was reached)."""

    @abstractmethod
    async def verify(self) -> Verdict:
        """Judge the episode's final state with the task's verifier."""

    async def snapshot(self) -> Any:
        """An opaque copy of the whole episode state, for :meth:`restore`."""
        raise NotImplementedError(f"{type(self).__name__} does not support snapshots")

    async def restore(self, snapshot: Any) -> None:
        """Return to a state captured by :meth:`snapshot` (same environment instance)."""
        raise NotImplementedError(f"{type(self).__name__} does not support snapshots")

    async def close(self) -> None:  # noqa: B027 (optional hook: nothing to release by default)
        """Release what the episode holds (workspaces, sandboxes). Safe to call twice."""


class SyncEnvironment:
    """Drive an :class:`Environment` from synchronous code.

    The coroutines run on a private event loop in a background thread, so this also works where
    a loop is already running in the calling thread (a notebook, a trainer's callback).

    >>> env = SyncEnvironment(MyEnv())        # doctest: +SKIP
    >>> messages = env.reset(task)            # doctest: +SKIP
    >>> env.step({"role": "assistant", "content": "42"}).done  # doctest: +SKIP
    True
    """

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def reset(self, task: Task) -> list[ChatMessage]:
        return self._call(self.env.reset(task))

    def tools(self) -> list[dict[str, Any]]:
        return self.env.tools()

    def step(self, message: ChatMessage) -> StepResult:
        return self._call(self.env.step(message))

    @property
    def done(self) -> bool:
        return self.env.done

    def verify(self) -> Verdict:
        return self._call(self.env.verify())

    def snapshot(self) -> Any:
        return self._call(self.env.snapshot())

    def restore(self, snapshot: Any) -> None:
        self._call(self.env.restore(snapshot))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._call(self.env.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()

    def __enter__(self) -> SyncEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
