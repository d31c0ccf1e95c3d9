"""The ``sql`` environment: try queries on the sample database, then submit one.

Tools: ``run_query(query)`` runs a query on the task's *visible* sample database, in the
sandbox under the same rules as the verifier (read-only, one SELECT, the task's tables, a time
limit), and shows at most 20 rows; ``show_schema()`` gives the tables and their row counts;
``submit(query)`` ends the episode with that query as the answer. A message without tool calls
is the final answer too (its last ``sql`` block). The verdict is the SQL verifier's, on the
hidden databases, which no tool ever touches.

>>> from referee.envs import make_env                                   # doctest: +SKIP
>>> env = make_env("sql")                                               # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from referee.domains.kit import tool_call_error, tool_schemas
from referee.domains.sql.answer import MAX_QUERY_CHARS, query_of
from referee.domains.sql.compare import describe_rows
from referee.domains.sql.database import database_file
from referee.domains.sql.spec import SqlSpec
from referee.domains.sql.verifier import SqlVerifier, run_query
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.tools import function_tool, parse_tool_calls, tool_message
from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["SqlEnv"]

_SHOWN_ROWS = 20
_MAX_OBSERVATION = 4000
_SYSTEM = (
    "You answer questions about a database with one SQL query. Use run_query to try queries "
    "on the sample database, show_schema to see the tables, and submit to give your final "
    "query (it is judged on other databases with the same schema)."
)
_TOOLS = [
    function_tool(
        "run_query",
        "Run one SELECT query on the sample database and see its first rows.",
        {"query": {"type": "string", "description": "the SQL query"}},
    ),
    function_tool("show_schema", "Show the tables, their columns and row counts.", {}),
    function_tool(
        "submit",
        "Submit the final query; this ends the episode.",
        {"query": {"type": "string", "description": "the SQL query"}},
    ),
]
_SCHEMAS = tool_schemas(_TOOLS)


class SqlEnv(Environment):
    """A multi-turn episode on one SQL task; see the module docstring.

    ``verifier`` (shared by many environments, its sandbox too) is made on first use and
    closed with the environment when not given.
    """

    name = "sql"

    def __init__(
        self, verifier: SqlVerifier | None = None, *, limits: EpisodeLimits | None = None
    ) -> None:
        self._verifier = verifier
        self._own = verifier is None
        self.limits = limits or EpisodeLimits()
        self._task: Task | None = None
        self._spec: SqlSpec | None = None
        self._answer: str | None = None
        self._turns = 0
        self._done = False

    @property
    def verifier(self) -> SqlVerifier:
        if self._verifier is None:
            self._verifier = SqlVerifier()
        return self._verifier

    async def reset(self, task: Task) -> list[ChatMessage]:
        if task.kind.value != "sql":
            raise ConfigError(f"the sql environment runs SQL tasks, not {task.kind.value!r} ones")
        self._task, self._spec = task, SqlSpec.of_task(task)
        self._answer, self._turns, self._done = None, 0, False
        return [{"role": "system", "content": _SYSTEM}, *(m.model_dump() for m in task.prompt)]

    def tools(self) -> list[dict[str, Any]]:
        return list(_TOOLS)

    async def step(self, message: ChatMessage) -> StepResult:
        if self._task is None or self._spec is None:
            raise ConfigError("call reset(task) before step()")
        t0 = time.perf_counter()
        self._turns += 1
        calls = parse_tool_calls(message)
        observations: list[ChatMessage] = []
        exec_s = 0.0
        if not calls:
            self._answer = str(message.get("content") or "")
            self._done = True
            return StepResult([], done=True, reason="answered", metrics={"tool_calls": 0})
        for call in calls:
            error = tool_call_error(call, _SCHEMAS)
            if error:
                observations.append(tool_message(call, f"error: {error}"))
            elif self._done:
                observations.append(tool_message(call, "error: the query was submitted already"))
            elif call.name == "submit":
                self._answer = str(call.arguments["query"])
                self._done = True
                observations.append(tool_message(call, "submitted"))
            elif call.name == "show_schema":
                observations.append(tool_message(call, self._schema_text()))
            else:
                started = time.perf_counter()
                text = await asyncio.to_thread(self._run_on_sample, str(call.arguments["query"]))
                exec_s += time.perf_counter() - started
                observations.append(tool_message(call, text))
        reason = "submitted" if self._done else ""
        if not self._done and self._turns >= self.limits.max_turns:
            self._done, reason = True, "max_turns"
        metrics = {
            "tool_calls": float(len(calls)),
            "exec_s": exec_s,
            "env_s": time.perf_counter() - t0,
        }
        return StepResult(observations, done=self._done, reason=reason, metrics=metrics)

    def _schema_text(self) -> str:
        assert self._spec is not None
        sample = self._spec.sample
        counts = "\n".join(f"{t.name}: {len(t.rows)} rows in the sample" for t in sample.tables)
        return f"{sample.ddl(self._spec.engine)}\n\n{counts}"

    def _run_on_sample(self, text: str) -> str:
        assert self._spec is not None
        query = query_of(text)
        if not query:
            return "error: empty query"
        if len(query) > MAX_QUERY_CHARS:
            return f"error: the query is longer than {MAX_QUERY_CHARS} characters"
        spec = self._spec
        outcomes, _ = run_query(
            self.verifier.sandbox,
            spec.engine,
            query,
            [database_file(spec.sample, spec.engine)],
            spec.tables,
            time_limit_s=spec.time_limit_s,
            memory_mb=self.verifier.memory_mb,
        )
        out = outcomes[0]
        if out is None:
            return "error: the query was stopped (time or memory limit)"
        if "infra" in out:
            raise RuntimeError(f"query runner: {out['infra']}")  # the environment's fault
        if out.get("timeout"):
            return f"error: the query ran past {spec.time_limit_s:g}s"
        if "error" in out:
            return f"error: {str(out['error'])[:500]}"
        text = describe_rows([str(c) for c in out.get("columns", [])], out["rows"], _SHOWN_ROWS)
        return text[:_MAX_OBSERVATION]

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        if self._task is None:
            raise ConfigError("call reset(task) before verify()")
        task, answer = self._task, self._answer or ""
        return await asyncio.to_thread(self.verifier.verify, task, answer)

    async def snapshot(self) -> Any:
        return (self._task, self._spec, self._answer, self._turns, self._done)

    async def restore(self, snapshot: Any) -> None:
        self._task, self._spec, self._answer, self._turns, self._done = snapshot

    async def close(self) -> None:
        if self._own and self._verifier is not None:
            self._verifier.close()
            self._verifier = None
