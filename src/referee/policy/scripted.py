"""``ScriptedPolicy``: replies written in advance, for tests, benchmarks and gold runs.

A list gives the reply for each turn of an episode: the reply for turn *k* is ``replies[k]``,
where *k* is the number of assistant messages already in the conversation. So one scripted
policy can drive many concurrent episodes and each gets the same script. A callable
``(messages, tools) -> reply`` decides from the conversation instead (sync or async, so it may
keep its own state). A reply is a ``str`` (the assistant's text), a message ``dict`` (for tool
calls), a whole :class:`Generation` (with token ids, logprobs, counts), or an exception, which
is raised instead of answering::

    >>> import asyncio
    >>> p = ScriptedPolicy(["first", {"role": "assistant", "content": "second"}])
    >>> asyncio.run(p.generate([{"role": "user", "content": "hi"}])).message["content"]
    'first'
    >>> faulty = ScriptedPolicy([PolicyError("server down")])
    >>> asyncio.run(faulty.generate([]))
    Traceback (most recent call last):
    ...
    referee.errors.PolicyError: server down

``delay_s`` (a number, or a callable of the call's index) makes it slow like a real server.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from referee.errors import PolicyError
from referee.policy.base import Generation, Sampling

__all__ = ["Reply", "ScriptedPolicy"]

#: What a script may answer with.
Reply: TypeAlias = str | dict[str, Any] | Generation | BaseException
ReplyFn: TypeAlias = Callable[
    [list[dict[str, Any]], list[dict[str, Any]] | None], Reply | Awaitable[Reply]
]


class ScriptedPolicy:
    """A policy that plays back a script; see the module docstring.

    Args:
        replies: one reply per turn, or a callable ``(messages, tools) -> reply``.
        name: recorded on trajectories.
        delay_s: seconds to wait before each reply, or ``f(call_index) -> seconds``.

    ``calls`` counts the calls made so far (over all episodes).
    """

    def __init__(
        self,
        replies: Sequence[Reply] | ReplyFn,
        *,
        name: str = "scripted",
        delay_s: float | Callable[[int], float] = 0.0,
    ) -> None:
        if not callable(replies) and not replies:
            raise PolicyError("ScriptedPolicy needs at least one reply (or a callable)")
        self.name = name
        self._replies = replies
        self._delay = delay_s
        self._lock = threading.Lock()  # callers may share one policy across threads
        self.calls = 0

    async def generate(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling = Sampling(),
    ) -> Generation:
        start = time.perf_counter()
        with self._lock:
            index = self.calls
            self.calls += 1
        delay = self._delay(index) if callable(self._delay) else self._delay
        if delay > 0:
            await asyncio.sleep(delay)
        reply = await self._reply(messages, tools)
        if isinstance(reply, BaseException):
            raise reply
        generation = _as_generation(reply)
        if generation.latency_s:
            return generation
        return replace(generation, latency_s=time.perf_counter() - start)

    async def _reply(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Reply:
        if callable(self._replies):
            out = self._replies(messages, tools)
            return await out if inspect.isawaitable(out) else out
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn >= len(self._replies):
            raise PolicyError(
                f"the script has {len(self._replies)} replies and the episode asked for reply "
                f"{turn + 1}; add replies or pass a callable"
            )
        return self._replies[turn]


def _as_generation(reply: str | dict[str, Any] | Generation) -> Generation:
    if isinstance(reply, Generation):
        return reply
    if isinstance(reply, str):
        return Generation(message={"role": "assistant", "content": reply}, finish_reason="stop")
    message = {"role": "assistant", **reply}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return Generation(message=message, finish_reason=finish)
