"""A whole custom environment: guess a hidden number with one tool, ``guess(n)``.

Run it: ``python examples/custom_env.py``. A scripted binary-search policy plays one episode
and the verdict is printed. Copy this file to start an environment of your own: subclass
``Environment``, describe the tools, answer tool calls with tool messages, judge in ``verify``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from referee.envs import (
    Environment,
    EpisodeLimits,
    StepResult,
    function_tool,
    parse_tool_calls,
    tool_message,
)
from referee.tasks import Task
from referee.verify import TestOutcome, Verdict


class GuessEnv(Environment):
    name = "guess"

    def __init__(self, limits: EpisodeLimits = EpisodeLimits(max_turns=10)) -> None:
        self.limits = limits

    async def reset(self, task: Task) -> list[dict[str, Any]]:
        self.task, self.secret = task, int(task.hidden["number"])
        self.turns, self.found = 0, False
        return [m.model_dump() for m in task.prompt]

    def tools(self) -> list[dict[str, Any]]:
        return [function_tool("guess", "Guess the number.", {"n": {"type": "integer"}})]

    async def step(self, message: dict[str, Any]) -> StepResult:
        self.turns += 1
        observations = []
        for call in parse_tool_calls(message):
            n = call.arguments.get("n")
            if call.error or call.name != "guess" or not isinstance(n, int):
                answer = "error: call guess with an integer n"
            else:
                self.found = self.found or n == self.secret
                answer = (
                    "correct" if n == self.secret else ("higher" if n < self.secret else "lower")
                )
            observations.append(tool_message(call, answer))
        reason = (
            "found" if self.found else "max_turns" if self.turns >= self.limits.max_turns else ""
        )
        return StepResult(
            observations, done=bool(reason), reason=reason, metrics={"turn": self.turns}
        )

    @property
    def done(self) -> bool:
        return self.found or self.turns >= self.limits.max_turns

    async def verify(self) -> Verdict:
        return Verdict(
            task_id=self.task.id,
            reward=1.0 if self.found else 0.0,
            passed=self.found,
            tests=[TestOutcome(name="found it", status="passed" if self.found else "failed")],
            verifier="guess@1",
        )


async def main(secret: int = 37, max_turns: int = 10) -> Verdict:
    task = Task.create(
        name="demo/guess-v1",
        prompt="I think of a number from 1 to 100. Find it with the guess tool.",
        domain="games",
        kind="custom",  # judged by this environment, not by a registered verifier
        answer_format="tool-state",
        hidden={"number": secret},
    )
    env = GuessEnv(EpisodeLimits(max_turns=max_turns))
    await env.reset(task)
    lo, hi = 1, 100
    while not env.done:  # a scripted policy: binary search on the tool's answers
        n = (lo + hi) // 2
        call = {
            "id": "1",
            "type": "function",
            "function": {"name": "guess", "arguments": json.dumps({"n": n})},
        }
        result = await env.step({"role": "assistant", "content": "", "tool_calls": [call]})
        answer = result.observations[0]["content"]
        print(f"guess {n}: {answer}")
        lo, hi = (n + 1, hi) if answer == "higher" else (lo, n - 1) if answer == "lower" else (n, n)
    verdict = await env.verify()
    print(verdict.model_dump_json())
    return verdict


if __name__ == "__main__":
    asyncio.run(main())
