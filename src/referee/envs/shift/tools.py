"""Shifts of how tools behave: calls that fail transiently, calls that are slow.

``FailToolsTransiently`` answers a call with a transient error (a 503, a reset connection, no
free sandbox) *without running it*: the call never reaches the inner environment, so it has no
effect on the workspace, exactly like a request lost before it reached the tool. The policy can
retry it. A turn whose every call failed is not passed to the inner environment at all (there
is nothing left to run), so it does not advance that environment's turn counter; the rollout
runner's own ``max_turns`` still bounds the episode.

``SlowTools`` sleeps before the turn's calls run (real time, bounded per turn by
``max_step_s``), so the inner environment's episode clock sees the delay as it would see a slow
tool: an episode can run out of time.

>>> FailToolsTransiently(GuessEnv(), p=0.3).spec          # doctest: +SKIP
'FailToolsTransiently(p=0.3,tools=*,seed=0)'
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.envs.shift.base import ShiftWrapper, probability
from referee.errors import ConfigError

__all__ = ["TRANSIENT_ERRORS", "FailToolsTransiently", "SlowTools"]

#: What a transient failure says (``{tool}`` is the call's name): the wording of the faults a
#: tool server or a sandbox pool really produces.
TRANSIENT_ERRORS = (
    "error: {tool} is temporarily unavailable (503 Service Unavailable); the call was not run, "
    "retry it",
    "error: connection reset by peer while calling {tool}; the call was not run",
    "error: timed out waiting for a free sandbox after 30 s; {tool} was not run, try again",
    "error: rate limit exceeded (429 Too Many Requests) for {tool}; retry in a moment",
)


def _calls(message: ChatMessage) -> list[dict[str, Any]]:
    raw = message.get("tool_calls")
    return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def _name(call: dict[str, Any]) -> str:
    fn = call.get("function")
    return str(fn.get("name", "")) if isinstance(fn, dict) else ""


def _matches(tools: tuple[str, ...], name: str) -> bool:
    return "*" in tools or name in tools


class FailToolsTransiently(ShiftWrapper):
    """Each call to one of ``tools`` (``*``: all, ``submit`` included) fails with probability
    ``p`` with one of :data:`TRANSIENT_ERRORS`, and is not run (see the module). Counts
    ``failed_calls``."""

    def __init__(
        self, env: Environment, *, p: float = 0.1, tools: Sequence[str] = ("*",), **kw: Any
    ) -> None:
        super().__init__(env, **kw)
        if not tools:
            raise ConfigError("tools must name at least one tool (or * for every tool)")
        self.p, self.tool_names = probability("p", p), tuple(tools)

    def params(self) -> dict[str, Any]:
        return {"p": self.p, "tools": self.tool_names}

    async def shift_step(self, message: ChatMessage, counts: Counter[str]) -> StepResult:
        raw = message.get("tool_calls")
        if not isinstance(raw, list) or not raw or self.env.done:
            return await self.env.step(message)
        rng = self.rng("calls")
        failed: dict[int, ChatMessage] = {}
        kept: list[Any] = []
        for i, call in enumerate(raw):
            name = _name(call) if isinstance(call, dict) else ""
            fails = rng.random() < self.p  # drawn for every call: the schedule is positional
            if isinstance(call, dict) and name and _matches(self.tool_names, name) and fails:
                call_id = str(call.get("id") or f"call_{i}")
                text = rng.choice(TRANSIENT_ERRORS).format(tool=name)
                failed[i] = {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}
                continue
            if isinstance(call, dict) and not call.get("id"):
                call = {**call, "id": f"call_{i}"}  # the id it would have had, for the merge
            kept.append(call)
        if not failed:
            return await self.env.step(message)
        counts["failed_calls"] += len(failed)
        if kept:
            result = await self.env.step({**message, "tool_calls": kept})
        else:
            result = StepResult(observations=[], done=self.env.done, metrics={"tool_calls": 0.0})
        return _merged(result, raw, failed)


def _merged(result: StepResult, raw: list[Any], failed: dict[int, ChatMessage]) -> StepResult:
    """The inner step's observations with the failed calls' errors in the calls' order; inner
    observations that answer no call (feedback) follow."""
    answers = {
        m.get("tool_call_id"): m for m in result.observations if m.get("role") == "tool"
    }  # fmt: skip
    observations: list[ChatMessage] = []
    used: set[int] = set()
    for i, call in enumerate(raw):
        if i in failed:
            observations.append(failed[i])
            continue
        call_id = call.get("id") or f"call_{i}" if isinstance(call, dict) else f"call_{i}"
        answer = answers.get(call_id)
        if answer is not None:
            observations.append(answer)
            used.add(id(answer))
    observations += [m for m in result.observations if id(m) not in used]
    metrics = dict(result.metrics)
    metrics["tool_calls"] = float(len(raw))
    metrics["tool_errors"] = metrics.get("tool_errors", 0.0) + len(failed)
    return StepResult(observations, result.done, metrics, result.reason)


class SlowTools(ShiftWrapper):
    """Each call to one of ``tools`` is delayed, with probability ``p``, by ``delay_s`` give or
    take ``jitter`` (a fraction of it); the turn's delays are summed, capped at ``max_step_s``,
    and slept (really) before the calls run. Counts ``slowed_calls`` and ``delay_ms``."""

    def __init__(
        self,
        env: Environment,
        *,
        delay_s: float = 0.2,
        jitter: float = 0.5,
        p: float = 1.0,
        max_step_s: float = 2.0,
        tools: Sequence[str] = ("*",),
        **kw: Any,
    ) -> None:
        super().__init__(env, **kw)
        if delay_s < 0 or not 0 <= jitter <= 1:
            raise ConfigError(f"delay_s must be >= 0 and jitter in [0, 1]; got {delay_s}, {jitter}")
        # Bounded well under the rollout runner's step watchdog (step_timeout_s, 30 s by
        # default): a slower step would be recorded as an infrastructure fault, not a shift.
        if not 0 <= max_step_s <= 10:
            raise ConfigError(f"max_step_s must be from 0 to 10 seconds, got {max_step_s}")
        if not tools:
            raise ConfigError("tools must name at least one tool (or * for every tool)")
        self.delay_s, self.jitter, self.p = delay_s, jitter, probability("p", p)
        self.max_step_s, self.tool_names = max_step_s, tuple(tools)

    def params(self) -> dict[str, Any]:
        return {
            "delay_s": self.delay_s,
            "jitter": self.jitter,
            "p": self.p,
            "max_step_s": self.max_step_s,
            "tools": self.tool_names,
        }

    async def shift_step(self, message: ChatMessage, counts: Counter[str]) -> StepResult:
        rng = self.rng("delays")
        total, slowed = 0.0, 0
        for call in _calls(message):
            spread, hit = rng.uniform(-1.0, 1.0), rng.random() < self.p
            if hit and _matches(self.tool_names, _name(call)):
                total += self.delay_s * (1.0 + self.jitter * spread)
                slowed += 1
        total = min(total, self.max_step_s)
        if slowed and not self.env.done:
            await asyncio.sleep(total)
            counts["slowed_calls"] += slowed
            counts["delay_ms"] += round(total * 1000)
        return await self.env.step(message)
