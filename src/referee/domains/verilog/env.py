"""The ``verilog`` environment: design a module over several turns, with a compiler and a
simulator at hand, then submit it.

Tools (every run in the sandbox, none sees the reference or the hidden stimulus):

* ``interface()``: the module's header, ports, clock and reset, and the rules of the grader;
* ``compile(source)``: Icarus Verilog's messages for the module, and what the grader would
  reject in it (a system task, a hierarchical reference...);
* ``simulate(source, testbench)``: the module compiled with a testbench the model writes
  (any Verilog, ``$display`` and ``$finish`` included: it is the model's own) and run; the
  output comes back, truncated;
* ``submit(source)``: the answer; the episode ends and :meth:`verify` judges it with
  :class:`~referee.domains.verilog.verifier.VerilogVerifier`.

A message without tool calls that holds a fenced ```verilog block submits that block.

>>> env = make_env("verilog")                                           # doctest: +SKIP
>>> messages = await env.reset(task)                                   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from referee.domains.kit import tool_call_error, tool_schemas
from referee.domains.verilog.simulate import compile_limits
from referee.domains.verilog.source import check_source, extract_verilog
from referee.domains.verilog.task import RULES
from referee.domains.verilog.verifier import VerilogVerifier
from referee.envs.answers import message_text
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.budget import Budget, BudgetState
from referee.envs.tools import (
    ToolCall,
    function_tool,
    parse_tool_calls,
    tool_message,
)
from referee.errors import ConfigError
from referee.sandbox import ExecResult, Limits
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["VerilogEnv", "VerilogSnapshot"]

#: What a tool answer may hold of a program's output.
OUTPUT_CHARS = 4000
SYSTEM = (
    "You design Verilog modules. Tools: interface() shows the module to write; "
    "compile(source) checks it; simulate(source, testbench) runs it with a testbench you write "
    "(print with $display, end with $finish); submit(source) hands in the final module. You "
    "have {turns} turns."
)
NUDGE = "Use the tools, or answer with the final module in a ```verilog block."

_TOOLS = [
    function_tool("interface", "The module's header, ports, clock, reset and the rules."),
    function_tool(
        "compile",
        "Compile a module (and its helpers) with Icarus Verilog; shows errors and what the "
        "grader would reject.",
        {"source": {"type": "string", "description": "Verilog source"}},
    ),
    function_tool(
        "simulate",
        "Compile the module with your own testbench module and run the simulation.",
        {
            "source": {"type": "string", "description": "the module's Verilog source"},
            "testbench": {"type": "string", "description": "a testbench module of yours"},
        },
    ),
    function_tool(
        "submit",
        "Submit the final module; the episode ends and it is graded.",
        {"source": {"type": "string", "description": "the module's Verilog source"}},
    ),
]
_SCHEMAS = tool_schemas(_TOOLS)


@dataclass(frozen=True)
class VerilogSnapshot:
    """An episode's whole state (:meth:`VerilogEnv.snapshot`)."""

    task: Task
    budget: BudgetState
    answer: str | None
    reason: str


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    return text[:OUTPUT_CHARS] + f"\n... ({len(text) - OUTPUT_CHARS} more characters)"


def _report(r: ExecResult, what: str) -> str:
    if r.timed_out or "cpu-limit" in r.violations:
        return f"{what}: time limit reached (killed)\n{_clip(r.stdout + r.stderr)}"
    if r.memory_exceeded:
        return f"{what}: memory limit reached (killed)"
    return _clip(r.stdout + r.stderr)


class VerilogEnv(Environment):
    """The verilog environment (see the module docstring).

    ``verifier``: a :class:`VerilogVerifier` to share (its sandbox runs the tools too);
    default: one made on first use and closed by :meth:`close`."""

    name = "verilog"

    def __init__(
        self,
        *,
        verifier: VerilogVerifier | None = None,
        limits: EpisodeLimits = EpisodeLimits(max_turns=8),
        sim_timeout_s: float = 5.0,
    ) -> None:
        self._verifier = verifier
        self._own = verifier is None
        self.limits = limits
        self.sim_timeout_s = sim_timeout_s
        self.budget = Budget(limits)
        self._task: Task | None = None
        self._answer: str | None = None
        self._reason = ""

    @property
    def verifier(self) -> VerilogVerifier:
        if self._verifier is None:
            self._verifier = VerilogVerifier()
        return self._verifier

    # ---- the episode --------------------------------------------------------------------
    async def reset(self, task: Task) -> list[ChatMessage]:
        if task.kind.value != "verilog":
            raise ConfigError(
                f"the verilog environment takes verilog tasks, not {task.kind.value!r}"
            )
        self._task, self._answer, self._reason = task, None, ""
        self.budget.start()
        system = {"role": "system", "content": SYSTEM.format(turns=self.limits.max_turns)}
        return [system, *(m.model_dump() for m in task.prompt)]

    def tools(self) -> list[dict[str, Any]]:
        return list(_TOOLS)

    @property
    def done(self) -> bool:
        return bool(self._reason)

    def _require(self) -> Task:
        if self._task is None:
            raise ConfigError("call reset(task) before step()")
        if self._reason:
            raise ConfigError(f"the episode is over ({self._reason}); call reset(task) again")
        return self._task

    async def step(self, message: ChatMessage) -> StepResult:
        task = self._require()
        t0 = time.perf_counter()
        self.budget.charge(message)
        calls = parse_tool_calls(message)
        observations: list[ChatMessage] = []
        errors = 0
        if not calls:
            text = message_text(message)
            if "```" in text:
                self._answer, self._reason = text, "answered"
            else:
                observations.append({"role": "user", "content": NUDGE})
        for call in calls:
            if self._reason:
                content = f"not run: the episode ended ({self._reason})"
            else:
                content = await self._call(task, call)
            errors += content.startswith("error:")
            observations.append(tool_message(call, content))
        if not self._reason:
            self._reason = self.budget.exceeded()
        return StepResult(
            observations,
            done=self.done,
            reason=self._reason,
            metrics={
                "tool_calls": float(len(calls)),
                "tool_errors": float(errors),
                "env_s": time.perf_counter() - t0,
                "turn": float(self.budget.turns),
            },
        )

    async def _call(self, task: Task, call: ToolCall) -> str:
        problem = tool_call_error(call, _SCHEMAS)
        if problem:
            return f"error: {problem}"
        args = call.arguments
        if call.name == "interface":
            return self._interface(task)
        if call.name == "submit":
            self._answer, self._reason = str(args["source"]), "submitted"
            return "submitted"
        if call.name == "compile":
            return await asyncio.to_thread(self._compile, task, str(args["source"]))
        return await asyncio.to_thread(self._simulate, str(args["source"]), str(args["testbench"]))

    def _interface(self, task: Task) -> str:
        p = task.payload
        info = {
            "module_header": p["module_header"],
            "ports": p["ports"],
            "clock": p.get("clock"),
            "reset": p.get("reset"),
            "reset_active": p.get("reset_active", 1),
        }
        return f"{json.dumps(info, indent=1)}\n\n{p.get('description', '')}\n\n{RULES}"

    def _compile(self, task: Task, source: str) -> str:
        code = extract_verilog(source)
        checked = check_source(code, task.payload["top"])
        sb = self.verifier.sandbox
        r = sb.run(
            ["iverilog", "-g2012", "-o", "check.vvp", "design.v"],
            files={"design.v": code},
            limits=compile_limits(),
        )
        if r.ok:
            out = _report(r, "compile").strip() or "compiled without errors"
        else:
            out = "compile failed:\n" + _report(r, "compile")
        if checked.problems:
            out += "\nthe grader would reject it: " + "; ".join(checked.problems)
        return out

    def _simulate(self, source: str, testbench: str) -> str:
        sb = self.verifier.sandbox
        files = {"tb.v": extract_verilog(testbench), "design.v": extract_verilog(source)}
        with sb.workspace() as ws:
            built = sb.run(
                ["iverilog", "-g2012", "-o", "sim.vvp", "tb.v", "design.v"],
                files=files,
                limits=compile_limits(),
                workspace=ws,
            )
            if not built.ok:
                return "compile failed:\n" + _report(built, "compile")
            limits = Limits(timeout_s=self.sim_timeout_s, memory_mb=512, max_processes=4,
                            stdout_bytes=1 << 16, stderr_bytes=1 << 16)  # fmt: skip
            ran = sb.run(["vvp", "-n", "sim.vvp"], limits=limits, workspace=ws)
        return _report(ran, "simulation") or "(the simulation printed nothing)"

    async def verify(self) -> Verdict:
        if self._task is None:
            raise ConfigError("call reset(task) before verify()")
        answer = self._answer or ""
        return await asyncio.to_thread(self.verifier.verify, self._task, answer)

    async def snapshot(self) -> VerilogSnapshot:
        if self._task is None:
            raise ConfigError("call reset(task) before snapshot()")
        return VerilogSnapshot(self._task, self.budget.state(), self._answer, self._reason)

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, VerilogSnapshot):
            raise ConfigError("restore() takes a snapshot made by VerilogEnv.snapshot()")
        self._task, self._answer, self._reason = snapshot.task, snapshot.answer, snapshot.reason
        self.budget.restore(snapshot.budget)

    async def close(self) -> None:
        if self._own and self._verifier is not None:
            self._verifier.close()
            self._verifier = None
