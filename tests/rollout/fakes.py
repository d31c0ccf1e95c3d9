"""Small environments for the runner's tests: each one does one thing, right or wrong."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.tasks.model import Task
from referee.verify.verdict import Verdict


def task(name: str, answer: str = "42", **fields: Any) -> Task:
    return Task.create(
        name=name, prompt=f"What is the answer to {name}?", hidden={"answer": answer}, **fields
    )


class Tracker:
    """Counts live environments (the runner's concurrency) and their lifecycles."""

    def __init__(self) -> None:
        self.created = 0
        self.closed = 0
        self.live = 0
        self.max_live = 0

    def opened(self) -> None:
        self.created += 1
        self.live += 1
        self.max_live = max(self.max_live, self.live)

    def released(self) -> None:
        self.closed += 1
        self.live -= 1


class AnswerEnv(Environment):
    """Single turn: asks the task's question, takes the text as the answer, checks it.

    ``task.payload["fault"]`` makes it fail on purpose: ``"reset"``, ``"step"`` and
    ``"verify"`` raise there, ``"infra-verdict"`` returns ``Verdict.infra``, ``"hang"`` never
    finishes its step, ``"once"`` raises in step on the first attempt of each task only,
    ``"tools"`` raises in ``tools()``, ``"close"`` raises in close, ``"endless"`` never ends.
    """

    name = "answer"
    attempts: dict[str, int] = {}  # task id -> resets, for "once"

    def __init__(self, tracker: Tracker | None = None, step_delay_s: float = 0.0) -> None:
        self.tracker = tracker
        self.step_delay_s = step_delay_s
        self.task: Task | None = None
        self.answer: str | None = None
        self._done = False

    @property
    def fault(self) -> str | None:
        return self.task.payload.get("fault") if self.task else None

    async def reset(self, task: Task) -> list[ChatMessage]:
        if self.tracker:
            self.tracker.opened()
        self.task = task
        AnswerEnv.attempts[task.id] = AnswerEnv.attempts.get(task.id, 0) + 1
        if self.fault == "reset":
            raise OSError("no workspace")
        return [{"role": "user", "content": task.user_prompt}]

    def tools(self) -> list[dict[str, Any]]:
        if self.fault == "tools":
            raise KeyError("tools")
        return []

    async def step(self, message: ChatMessage) -> StepResult:
        assert self.task is not None
        if self.step_delay_s:
            await asyncio.sleep(self.step_delay_s)
        if self.fault == "step" or (self.fault == "once" and AnswerEnv.attempts[self.task.id] == 1):
            raise RuntimeError("sandbox died")
        if self.fault == "hang":
            await asyncio.sleep(60)
        self.answer = (message.get("content") or "").strip()
        if self.fault == "endless":
            return StepResult(observations=[{"role": "user", "content": "again"}], done=False)
        self._done = True
        return StepResult(observations=[], done=True, metrics={"env_s": 0.0}, reason="answered")

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        assert self.task is not None
        if self.fault == "verify":
            raise ValueError("verifier crashed")
        if self.fault == "infra-verdict":
            return Verdict.infra(self.task.id, "the sandbox was lost", verifier="exact")
        ok = self.answer == self.task.hidden["answer"]
        return Verdict(task_id=self.task.id, reward=float(ok), passed=ok, verifier="exact")

    async def close(self) -> None:
        if self.tracker and self.task is not None:
            self.tracker.released()
        fault, self.task = self.fault, None
        if fault == "close":
            raise RuntimeError("cannot release")


CALC_TOOL = {
    "type": "function",
    "function": {
        "name": "multiply",
        "description": "Multiply two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


class CalculatorEnv(Environment):
    """Multi-turn with a tool: the model may call ``multiply``, then answers in text."""

    name = "calculator"

    def __init__(self) -> None:
        self.task: Task | None = None
        self.answer: str | None = None
        self.tool_results: list[str] = []

    async def reset(self, task: Task) -> list[ChatMessage]:
        self.task = task
        return [
            {"role": "system", "content": "Use the multiply tool, then give the number."},
            {"role": "user", "content": task.user_prompt},
        ]

    def tools(self) -> list[dict[str, Any]]:
        return [CALC_TOOL]

    async def step(self, message: ChatMessage) -> StepResult:
        calls = message.get("tool_calls") or []
        if not calls:
            self.answer = (message.get("content") or "").strip()
            return StepResult(observations=[], done=True, reason="answered")
        observations = []
        for call in calls:
            try:
                args = json.loads(call["function"]["arguments"])
                out = str(int(args["a"]) * int(args["b"]))
            except (ValueError, KeyError, TypeError) as e:
                out = f"error: {e}"  # the model's mistake is an observation
            self.tool_results.append(out)
            observations.append({"role": "tool", "tool_call_id": call["id"], "content": out})
        return StepResult(observations=observations, done=False, metrics={"tool_calls": len(calls)})

    @property
    def done(self) -> bool:
        return self.answer is not None

    async def verify(self) -> Verdict:
        assert self.task is not None
        ok = self.answer == self.task.hidden["answer"]
        return Verdict(task_id=self.task.id, reward=float(ok), passed=ok, verifier="exact")
