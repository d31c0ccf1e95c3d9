"""``Budget``: one episode's turns, tokens and time, against its :class:`EpisodeLimits`.

Tokens are what the policy reports where it reports them: an assistant message carrying
``completion_tokens`` (top level, or in a ``usage`` dict as the OpenAI API writes it). Otherwise
they are estimated as a quarter of the characters of the text and tool-call arguments, the usual
rule of thumb for English and code with BPE tokenizers; good enough for a budget, not for
accounting.

>>> b = Budget(EpisodeLimits(max_turns=2))
>>> b.charge({"role": "assistant", "content": "x" * 40})
10
>>> b.charge({"role": "assistant", "content": "", "usage": {"completion_tokens": 7}})
7
>>> b.turns, b.tokens, b.exceeded()
(2, 17, 'max_turns')
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from referee.envs.base import ChatMessage, EpisodeLimits

__all__ = ["Budget", "BudgetState", "completion_tokens"]


def completion_tokens(message: ChatMessage) -> int:
    """The completion tokens of an assistant message: reported, or estimated (see the module)."""
    for holder in (message, message.get("usage")):
        if isinstance(holder, dict):
            n = holder.get("completion_tokens")
            if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
                return n
    chars = 0
    content = message.get("content")
    if isinstance(content, str):
        chars += len(content)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for c in calls:
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict):
                chars += len(str(fn.get("name", ""))) + len(str(fn.get("arguments", "")))
    return (chars + 3) // 4


@dataclass(frozen=True)
class BudgetState:
    """What :meth:`Budget.state` captures, for snapshots."""

    turns: int
    tokens: int
    elapsed_s: float


class Budget:
    """Counts an episode's assistant turns, tokens and wall time; says which limit was hit."""

    def __init__(self, limits: EpisodeLimits) -> None:
        self.limits = limits
        self.turns = 0
        self.tokens = 0
        self._t0 = time.perf_counter()

    def start(self) -> None:
        self.turns = self.tokens = 0
        self._t0 = time.perf_counter()

    def charge(self, message: ChatMessage) -> int:
        """Count one assistant message; returns its tokens."""
        n = completion_tokens(message)
        self.turns += 1
        self.tokens += n
        return n

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self._t0

    @property
    def remaining_s(self) -> float:
        return self.limits.episode_timeout_s - self.elapsed_s

    def call_timeout_s(self, step_started: float) -> float:
        """The time a tool run may take now: what is left of the step (``step_timeout_s``
        bounds a whole assistant message, however many calls it makes, as the rollout
        runner's watchdog does) or of the episode, whichever is less; <= 0 when none is."""
        step_left = self.limits.step_timeout_s - (time.perf_counter() - step_started)
        return min(step_left, self.remaining_s)

    def exceeded(self) -> str:
        """The reason the episode must end ("timeout", "max_turns", "max_tokens"), or ""."""
        if self.remaining_s <= 0:
            return "timeout"
        if self.turns >= self.limits.max_turns:
            return "max_turns"
        if self.tokens >= self.limits.max_tokens:
            return "max_tokens"
        return ""

    def state(self) -> BudgetState:
        return BudgetState(self.turns, self.tokens, self.elapsed_s)

    def restore(self, state: BudgetState) -> None:
        """Continue from ``state``: the clock resumes where the snapshot stopped it."""
        self.turns, self.tokens = state.turns, state.tokens
        self._t0 = time.perf_counter() - state.elapsed_s
