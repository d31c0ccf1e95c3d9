"""The ``dataframe`` environment: explore the sample tables with tools, then submit a pipeline.

Tools (OpenAI format): ``list_tables`` (names, columns and types, row counts),
``preview_table(name, rows)`` (the first rows as CSV), ``run_python(code)`` (a script run in the
sandbox on the *visible* tables, with ``tables`` and ``pd`` ready; its printed output comes back,
truncated) and ``submit(code)`` (the final program, ends the episode). A reply without tool calls
that holds a ```python block is a submission too. The verdict is the dataframe verifier's on the
submitted program (hidden tables, never in the episode's reach).

>>> env = make_env("dataframe")                                            # doctest: +SKIP
>>> messages = await env.reset(task)                                       # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from referee.domains.dataframe.execute import script_program
from referee.domains.dataframe.verifier import DataframeVerifier, answer_code
from referee.domains.kit import tool_call_error, tool_schemas
from referee.envs.answers import message_text
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.tools import function_tool, parse_tool_calls, tool_message
from referee.errors import RefereeError
from referee.sandbox import Limits
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["TOOLS", "DataframeEnv"]

TOOLS = [
    function_tool("list_tables", "List the input tables: columns with types, and row counts."),
    function_tool(
        "preview_table",
        "Show one input table's column types and its first rows as CSV.",
        {"name": {"type": "string"}, "rows": {"type": "integer"}},
        required=["name"],
    ),
    function_tool(
        "run_python",
        "Run a Python script on the sample tables: `tables` (name -> DataFrame, loaded as "
        "transform will get them) and `pd` are ready. Returns what it prints (truncated).",
        {"code": {"type": "string"}},
    ),
    function_tool(
        "submit",
        "Submit the final program (it must define transform(tables) -> DataFrame). Ends the "
        "episode.",
        {"code": {"type": "string"}},
    ),
]
_SCHEMAS = tool_schemas(TOOLS)


class DataframeEnv(Environment):
    """A multi-turn episode on one dataframe task (see the module docstring).

    ``verifier`` judges the submission and its sandbox runs the scripts; one is made (and
    closed with the environment) when none is given.
    """

    name = "dataframe"

    def __init__(
        self,
        verifier: DataframeVerifier | None = None,
        *,
        limits: EpisodeLimits = EpisodeLimits(max_turns=8),
        script_limits: Limits = Limits(timeout_s=10.0, memory_mb=1024),
        output_chars: int = 4000,
    ) -> None:
        self._own = verifier is None
        self._verifier = verifier
        self.limits = limits
        self.script_limits = script_limits
        self.output_chars = output_chars
        self.task: Task | None = None
        self.turns = 0
        self.submitted: str | None = None
        self._started = 0.0

    @property
    def verifier(self) -> DataframeVerifier:
        if self._verifier is None:
            self._verifier = DataframeVerifier()
        return self._verifier

    async def reset(self, task: Task) -> list[ChatMessage]:
        self.task, self.turns, self.submitted = task, 0, None
        self._started = time.monotonic()
        note = (
            "\n\nYou may use the tools list_tables, preview_table and run_python on the sample "
            "tables first; then call submit with your program (or reply with it in a "
            "```python block)."
        )
        messages = [m.model_dump() for m in task.prompt]
        messages[-1] = {**messages[-1], "content": messages[-1]["content"] + note}
        return messages

    def tools(self) -> list[dict[str, Any]]:
        return list(TOOLS)

    @property
    def done(self) -> bool:
        return bool(
            self.submitted is not None
            or self.turns >= self.limits.max_turns
            or (self._started and time.monotonic() - self._started > self.limits.episode_timeout_s)
        )

    async def step(self, message: ChatMessage) -> StepResult:
        if self.task is None:
            raise RuntimeError("call reset(task) before step()")
        self.turns += 1
        t0 = time.perf_counter()
        calls = parse_tool_calls(message)
        observations: list[ChatMessage] = []
        exec_s = 0.0
        if not calls:
            code = answer_code(message_text(message)) if "```" in message_text(message) else ""
            if code.strip():
                self.submitted = code
            else:
                observations.append(
                    {
                        "role": "user",
                        "content": "Call a tool, or answer with your program in a ```python block.",
                    }
                )
        for call in calls:
            if self.submitted is not None:
                observations.append(tool_message(call, "error: already submitted"))
                continue
            error = tool_call_error(call, _SCHEMAS)
            if error:
                observations.append(tool_message(call, f"error: {error}"))
                continue
            answer, seconds = await self._call(call.name, call.arguments)
            exec_s += seconds
            observations.append(tool_message(call, answer))
        reason = ""
        if self.submitted is not None:
            reason = "submitted"
        elif self.turns >= self.limits.max_turns:
            reason = "max_turns"
        elif time.monotonic() - self._started > self.limits.episode_timeout_s:
            reason = "timeout"
        return StepResult(
            observations,
            done=bool(reason),
            reason=reason,
            metrics={
                "tool_calls": float(len(calls)),
                "exec_s": exec_s,
                "env_s": time.perf_counter() - t0,
            },
        )

    async def _call(self, name: str, args: dict[str, Any]) -> tuple[str, float]:
        assert self.task is not None
        schema: dict[str, dict[str, str]] = self.task.payload["schema"]
        visible: dict[str, str] = self.task.payload["visible"]
        if name == "list_tables":
            lines = []
            for table, cols in schema.items():
                n = max(0, len(visible[table].strip("\n").split("\n")) - 1)
                typed = ", ".join(f"{c} ({t})" for c, t in cols.items())
                lines.append(f"{table}: {n} rows; {typed}")
            return "\n".join(lines), 0.0
        if name == "preview_table":
            table = str(args["name"])
            if table not in visible:
                return f"error: no table {table!r}; tables: {', '.join(visible)}", 0.0
            rows = max(1, min(int(args.get("rows", 10)), 50))
            lines = visible[table].strip("\n").split("\n")
            typed = ", ".join(f"{c} ({t})" for c, t in schema[table].items())
            return f"types: {typed}\n" + "\n".join(lines[: rows + 1]), 0.0
        if name == "submit":
            self.submitted = answer_code(str(args["code"]))
            return "submitted", 0.0
        return await asyncio.to_thread(self._run_script, str(args["code"]), schema, visible)

    def _run_script(
        self, code: str, schema: dict[str, dict[str, str]], visible: dict[str, str]
    ) -> tuple[str, float]:
        files = {f"inputs/{t}.csv": text for t, text in visible.items()}
        try:
            r = self.verifier.sandbox.run_python(
                script_program(code, schema),
                name="script.py",
                files=files,
                limits=self.script_limits,
            )
        except RefereeError as e:
            raise RuntimeError(f"the sandbox failed running a script: {e}") from e
        text = r.stdout + (f"\n[stderr]\n{r.stderr}" if r.stderr.strip() else "")
        if r.timed_out:
            text += f"\n[killed: time limit of {self.script_limits.timeout_s:g}s]"
        elif r.memory_exceeded:
            text += f"\n[killed: memory limit of {self.script_limits.memory_mb} MB]"
        elif r.exit_code:
            text += f"\n[exit code {r.exit_code}]"
        if len(text) > self.output_chars:
            text = text[: self.output_chars] + f"\n... [truncated, {len(text)} characters]"
        return text or "(no output)", r.wall_s

    async def verify(self) -> Verdict:
        if self.task is None:
            raise RuntimeError("call reset(task) before verify()")
        return await asyncio.to_thread(self.verifier.verify, self.task, self.submitted or "")

    async def snapshot(self) -> Any:
        return (self.task, self.turns, self.submitted, self._started)

    async def restore(self, snapshot: Any) -> None:
        self.task, self.turns, self.submitted, self._started = snapshot

    async def close(self) -> None:
        if self._own and self._verifier is not None:
            self._verifier.close()
            self._verifier = None
