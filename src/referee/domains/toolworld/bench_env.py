"""``BenchApiEnv``: a multi-turn episode of a ``bench-api`` task (BFCL multi-turn, tau2), the
benchmark's tools as the environment's, judged at the end as the verifier judges a whole
answer (:mod:`.bench_api`).

The benchmark's API runs in the sandbox, and keeps no state between runs: each batch of calls
replays every call of the episode so far from the benchmark's initial state (BFCL's classes
load in milliseconds; tau2's database in about a second), and the replies to the new calls are
the tool messages. An assistant message without a tool call ends the user's turn: BFCL's next
question comes as the next user message (with the functions held out until then, for
miss_func), and after the last turn, or for tau2's single one, the episode ends ("answered").
What the assistant says is kept: tau2 judges it (``COMMUNICATE``).

>>> import asyncio                                                         # doctest: +SKIP
>>> env = BenchApiEnv()                                                    # doctest: +SKIP
>>> messages = asyncio.run(env.reset(task))                                # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from referee.domains.toolworld.bench_api import Answer, BenchApiVerifier
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.budget import Budget
from referee.envs.tools import parse_tool_calls, tool_message
from referee.errors import ConfigError, SandboxError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["BenchApiEnv"]


class BenchApiEnv(Environment):
    """See the module docstring. ``verifier`` (its sandboxes) may be shared; else one is made
    and closed with the environment."""

    name = "bench-api"

    def __init__(
        self, *, limits: EpisodeLimits | None = None, verifier: BenchApiVerifier | None = None
    ) -> None:
        self.limits = limits or EpisodeLimits(max_turns=40)
        self.budget = Budget(self.limits)
        self._verifier = verifier
        self._own = verifier is None
        self._task: Task | None = None
        self._turns: list[list[dict[str, Any]]] = []
        self._said: list[str] = []
        self._done = False
        self._reason = ""

    @property
    def verifier(self) -> BenchApiVerifier:
        if self._verifier is None:
            self._verifier = BenchApiVerifier()
        return self._verifier

    async def reset(self, task: Task) -> list[ChatMessage]:
        if task.kind.value != "bench-api":
            raise ConfigError(f"BenchApiEnv runs bench-api tasks, not {task.kind.value!r}")
        self._task, self._turns, self._said = task, [[]], []
        self._done, self._reason = False, ""
        self.budget.start()
        return [m.model_dump() for m in task.prompt]

    def _require(self) -> Task:
        if self._task is None:
            raise ConfigError("no episode is running; call reset(task) first")
        return self._task

    def tools(self) -> list[dict[str, Any]]:
        if self._task is None:
            return []
        tools = list(self._task.payload.get("tools") or [])
        for turn in self._task.payload.get("turns", [])[: len(self._turns)]:
            tools += turn.get("added_tools") or []
        return tools

    @property
    def done(self) -> bool:
        return self._done

    @property
    def reason(self) -> str:
        return self._reason

    async def step(self, message: ChatMessage) -> StepResult:
        task = self._require()
        if self._done:
            raise ConfigError(
                f"the episode is over ({self._reason}); call reset(task) to start another"
            )
        t0 = time.perf_counter()
        self.budget.charge(message)
        text = message.get("content")
        if isinstance(text, str) and text.strip():
            self._said.append(text)
        calls = parse_tool_calls(message)
        observations: list[ChatMessage] = []
        good = [c for c in calls if not c.error]
        replies: list[str] = []
        if good:
            self._turns[-1] += [{"name": c.name, "arguments": c.arguments} for c in good]
            replies = await asyncio.to_thread(self._replay, task, len(good))
        answers = iter(replies)
        for call in calls:
            content = f"error: {call.error}" if call.error else next(answers)
            observations.append(tool_message(call, content))
        if not calls:
            user_turns = task.payload.get("turns") or []
            if len(self._turns) < len(user_turns):  # BFCL: the user's next question
                nxt = user_turns[len(self._turns)]
                self._turns.append([])
                observations.append({"role": "user", "content": nxt.get("user") or ""})
            else:
                self._done, self._reason = True, "answered"
        if not self._done and (limit := self.budget.exceeded()):
            self._done, self._reason = True, limit
        return StepResult(
            observations=observations,
            done=self._done,
            reason=self._reason,
            metrics={
                "tool_calls": float(len(calls)),
                "env_s": time.perf_counter() - t0,
                "turn": float(self.budget.turns),
            },
        )

    def _replay(self, task: Task, new: int) -> list[str]:
        """Every call so far replayed; the replies to the last ``new`` ones, as text."""
        try:
            out = self.verifier.run(task, Answer(turns=self._turns))
        except SandboxError as e:  # what these calls did made the API fail (or the sandbox)
            del self._turns[-1][-new:]
            return [f"error: the calls could not run ({str(e)[:200]})"] * new
        results = out["turns"][-1]["results"][-new:]
        return [r if isinstance(r, str) else str(r.get("content")) for r in results]

    def answer(self) -> str:
        """The episode so far as a ``bench-api`` answer (JSON), as the verifier reads one."""
        turns = list(self._turns)
        expected = len(self._require().payload.get("turns") or [])
        turns += [[] for _ in range(expected - len(turns))]
        return json.dumps({"turns": turns, "messages": self._said})

    async def verify(self) -> Verdict:
        task = self._require()
        return await asyncio.to_thread(self.verifier.verify, task, self.answer())

    async def close(self) -> None:
        """Release the sandboxes this environment made (pass ``verifier=`` to share them)."""
        if self._own and self._verifier is not None:
            verifier, self._verifier = self._verifier, None
            await asyncio.to_thread(verifier.close)
