"""The ``numeric`` environment: a scientist's loop of trying code, checking it, submitting it.

Tools (OpenAI format):

* ``run_python(code)``: run a script in the numeric sandbox (numpy and scipy; no network);
  its exit status and its output, truncated;
* ``check(code)``: call the program's function on the task's *visible* parameter set and
  report its output, whether it is within the tolerance of the visible expected output, and
  the invariants on it (the visible set is in the prompt anyway; it is never judged);
* ``submit(code)``: the final answer; the episode ends.

An assistant message without tool calls is the final answer too (its last ```python block).
``verify()`` judges the answer with :class:`~.verifier.NumericVerifier` on the hidden sets.

>>> env = make_env("numeric")                                          # doctest: +SKIP
>>> messages = await env.reset(task)                                   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from referee.domains.kit import tool_call_error, tool_schemas
from referee.domains.numeric.execute import run_function
from referee.domains.numeric.sandbox import numeric_sandbox
from referee.domains.numeric.spec import NumericSpec
from referee.domains.numeric.verifier import NumericVerifier, judge_outcome
from referee.envs.answers import extract_code, message_text
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.tools import (
    ToolCall,
    function_tool,
    parse_tool_calls,
    tool_message,
)
from referee.errors import ConfigError
from referee.sandbox import Limits, Sandbox
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["NumericEnv"]

_CODE = {"code": {"type": "string", "description": "A whole Python program."}}
_TOOLS = [
    function_tool(
        "run_python",
        "Run a Python script (numpy and scipy available, no network); returns its output.",
        _CODE,
    ),
    function_tool(
        "check",
        "Call the program's function on the visible parameter set and compare its output "
        "with the expected one (tolerance and invariants).",
        _CODE,
    ),
    function_tool("submit", "Submit the program as the final answer; ends the episode.", _CODE),
]
_SCHEMAS = tool_schemas(_TOOLS)


@dataclass(frozen=True)
class _State:
    turns: int
    answer: str | None
    done: bool
    reason: str


class NumericEnv(Environment):
    """Multi-turn environment for ``numeric`` tasks; see the module docstring.

    ``sandbox``: a numeric sandbox to share (default: one made at the first reset, closed with
    the environment); ``output_chars``: how much of a script's output a tool shows.
    """

    name = "numeric"

    def __init__(
        self,
        *,
        sandbox: Sandbox | None = None,
        limits: EpisodeLimits | None = None,
        output_chars: int = 4000,
    ) -> None:
        self.limits = limits or EpisodeLimits()
        self.output_chars = output_chars
        self._sandbox = sandbox
        self._own = sandbox is None
        self._verifier: NumericVerifier | None = None
        self.task: Task | None = None
        self._state = _State(0, None, False, "")
        self._started = 0.0

    # ---- episode ------------------------------------------------------------------------
    async def reset(self, task: Task) -> list[ChatMessage]:
        if task.kind != TaskKind.NUMERIC:
            raise ConfigError(f"the numeric environment takes numeric tasks, not {task.kind}")
        self.task = task
        self._spec = NumericSpec.of(task)
        if self._sandbox is None:
            self._sandbox = await asyncio.to_thread(numeric_sandbox, python_workers=2)
        self._state = _State(0, None, False, "")
        self._started = time.monotonic()
        return [m.model_dump() for m in task.prompt]

    def tools(self) -> list[dict[str, Any]]:
        return list(_TOOLS)

    @property
    def done(self) -> bool:
        return self._state.done

    async def step(self, message: ChatMessage) -> StepResult:
        if self.task is None:
            raise ConfigError("call reset(task) before step()")
        t0 = time.perf_counter()
        s = self._state
        turns, answer = s.turns + 1, s.answer
        observations: list[ChatMessage] = []
        calls = parse_tool_calls(message)
        reason = ""
        if not calls:
            answer, reason = extract_code(message_text(message)) or "", "answered"
        for call in calls:
            if reason:  # nothing after a submit runs
                observations.append(tool_message(call, "ignored: the answer was submitted"))
                continue
            why = tool_call_error(call, _SCHEMAS)
            if why:
                observations.append(tool_message(call, f"error: {why}"))
                continue
            code = str(call.arguments["code"])
            if call.name == "submit":
                answer, reason = code, "submitted"
                observations.append(tool_message(call, "submitted"))
            else:
                text = await asyncio.to_thread(self._tool, call, code)
                observations.append(tool_message(call, text))
        if not reason and turns >= self.limits.max_turns:
            reason = "max_turns"
        if not reason and time.monotonic() - self._started > self.limits.episode_timeout_s:
            reason = "timeout"
        self._state = _State(turns, answer, bool(reason), reason)
        return StepResult(
            observations,
            done=bool(reason),
            reason=reason,
            metrics={"tool_calls": float(len(calls)), "env_s": time.perf_counter() - t0},
        )

    async def verify(self) -> Verdict:
        if self.task is None:
            raise ConfigError("call reset(task) before verify()")
        if self._verifier is None:
            self._verifier = NumericVerifier(self._sandbox)
        return await asyncio.to_thread(self._verifier.verify, self.task, self._state.answer or "")

    async def snapshot(self) -> Any:
        return self._state

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, _State):
            raise ConfigError("not a snapshot of a numeric environment")
        self._state = snapshot

    async def close(self) -> None:
        if self._own and self._sandbox is not None:
            box, self._sandbox = self._sandbox, None
            await asyncio.to_thread(box.close)

    # ---- tools --------------------------------------------------------------------------
    def _tool(self, call: ToolCall, code: str) -> str:
        assert self._sandbox is not None
        timeout = min(self.limits.step_timeout_s, 60.0)
        if call.name == "run_python":
            r = self._sandbox.run_python(
                code, limits=Limits(timeout_s=timeout, memory_mb=self._spec.memory_mb)
            )
            status = "timed out" if r.timed_out else f"exit status {r.exit_code}"
            return self._cut(f"{status}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        visible = self._spec.visible
        run = run_function(
            self._sandbox,
            code,
            self._spec.entry_point,
            [visible["params"]],
            time_limit_s=min(self._spec.time_limit_s, timeout),
            memory_mb=self._spec.memory_mb,
        )
        outcome = run.outcomes[0]
        status, detail = judge_outcome(self._spec, visible["params"], visible["expected"], outcome)
        shown = json.dumps(outcome.value) if outcome.status == "ok" else outcome.detail
        verdict = "matches the expected output" if status == "passed" else f"{status}: {detail}"
        return self._cut(f"{verdict}\noutput: {shown}")

    def _cut(self, text: str) -> str:
        if len(text) <= self.output_chars:
            return text
        return text[: self.output_chars] + f"\n... ({len(text) - self.output_chars} more chars)"
