"""An imported world: untrusted Python, so its tools run in the sandbox.

The world's module and its store (``state.db``) live in a sandbox workspace for the episode;
each batch of calls is one sandboxed run of :data:`~.world_runner.RUNNER_SOURCE` (a fork of a
warm interpreter, about 20 ms), which changes ``state.db`` there and writes the results. The
host checks every call against the tool schemas recorded at import (unknown tools, missing or
mistyped arguments are refused before anything runs), and reads the state by copying
``state.db`` out and opening the copy read-only (:func:`~.store.open_read_only`): the world's
code never runs on the host, and what it wrote is only read as data.

A run that fails (the world crashed, ran past its time) answers its calls with an error: it may
be what the agent's arguments did to the world. The sandbox failing to start is an infra error
(:class:`~referee.errors.SandboxError`, raised).
"""

from __future__ import annotations

import functools
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from referee.domains.toolworld.calls import PlannedCall
from referee.domains.toolworld.store import StoreDump, dump_store, open_read_only
from referee.domains.toolworld.world import MAX_ARGUMENT_BYTES, MAX_CALLS, CallRecord
from referee.domains.toolworld.world_runner import RUNNER_SOURCE
from referee.envs.tools import ToolCall, check_arguments
from referee.errors import TaskError
from referee.sandbox import Limits, Sandbox
from referee.tasks.model import Task

__all__ = ["RUN_LIMITS", "SandboxSession", "describe_world", "run_world"]

#: Names an admin back door goes by: a call to one is logged as a violation.
_ADMIN_NAMES = ("sql_exec", "exec_sql", "execute_sql", "admin")
#: One batch of calls: a world that needs more is broken (or was made to loop by the agent).
RUN_LIMITS = Limits(timeout_s=10.0, memory_mb=512, max_processes=8, workspace_mb=64)


@functools.lru_cache(maxsize=64)
def _db_bytes(init_sql: str) -> bytes:
    """The SQLite file ``init_sql`` makes (built in memory: no disk syncs)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(init_sql)
        return db.serialize()
    finally:
        db.close()


def run_world(
    sandbox: Sandbox, workspace: Any, mode: str, calls: list[Any] | None = None
) -> tuple[Any, str]:
    """One sandboxed run of the world's runner in ``workspace``; its ``out.json``, or None
    if the run failed (with the reason in the second item)."""
    files: dict[str, str] = {"runner.py": RUNNER_SOURCE}
    if calls is not None:
        files["calls.json"] = json.dumps(calls)
    workspace.write(files)
    try:
        workspace.write({"out.json": ""})
    except Exception:  # the world replaced it with something unwritable
        pass
    result = sandbox.run_python(
        RUNNER_SOURCE,
        name="runner.py",
        argv=["runner.py", mode],
        workspace=workspace,
        limits=RUN_LIMITS,
    )
    try:
        out = json.loads(workspace.read("out.json", max_bytes=4 << 20) or b"null")
    except Exception:  # missing, too big, not JSON: the run failed
        out = None
    return out, result.summary() if out is None else ""


def describe_world(sandbox: Sandbox, module: str) -> list[dict[str, Any]]:
    """The tool schemas (OpenAI format) of a world module, read in the sandbox; a
    :class:`TaskError` if it defines none that can be offered."""
    ws = sandbox.workspace()
    try:
        ws.write({"world.py": module})
        out, why = run_world(sandbox, ws, "describe")
    finally:
        ws.close()
    if not isinstance(out, list) or not out:
        raise TaskError(
            f"the world module defines no tools in TOOLS (or failed: {why or 'no tools'})"
        )
    schemas = []
    for t in out:
        name = t.get("name") if isinstance(t, dict) else None
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise TaskError(f"the world module's tool name {name!r} is not a public identifier")
        props = {
            k: v
            for k, v in (t.get("properties") or {}).items()
            if isinstance(k, str) and k.isidentifier()
        }
        schemas.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": str(t.get("description", ""))[:500],
                    "parameters": {
                        "type": "object",
                        "properties": props,
                        "required": [r for r in t.get("required") or [] if r in props],
                        "additionalProperties": False,
                    },
                },
            }
        )
    return schemas


class SandboxSession:
    """An imported world's episode in the sandbox; the :class:`~.session.Session` interface."""

    def __init__(self, task: Task, sandbox: Sandbox) -> None:
        self.task = task
        self.sandbox = sandbox
        self._schemas = {s["function"]["name"]: s for s in task.payload.get("tools") or []}
        if not self._schemas:
            raise TaskError(
                f"task {task.id!r}: an imported world needs payload['tools'] (made at import)"
            )
        self.log: list[CallRecord] = []
        self._ws = sandbox.workspace()
        try:
            self._ws.write({"world.py": task.payload["module"]})
            self._ws.write({"state.db": _db_bytes(task.payload["init_sql"])})
        except BaseException:
            self._ws.close()
            raise
        self._tmp = tempfile.TemporaryDirectory(prefix="toolworld-")
        self._cache: tuple[bytes, Path] | None = None
        self.initial = self.dump()

    def tool_schemas(self) -> list[dict[str, Any]]:
        return list(self._schemas.values())

    def _refusal(self, c: PlannedCall, made: int) -> CallRecord | None:
        """Why call ``c`` (the episode's call number ``made``) is not sent to the world."""
        if made >= MAX_CALLS:
            return CallRecord(
                c.name,
                {},
                False,
                error=f"call limit reached ({MAX_CALLS} calls)",
                violations=("call-limit",),
            )
        if c.error:
            return CallRecord(c.name, {}, False, error=c.error)
        if len(json.dumps(c.arguments, default=str)) > MAX_ARGUMENT_BYTES:
            return CallRecord(
                c.name, {}, False, error=f"arguments too long (at most {MAX_ARGUMENT_BYTES} bytes)"
            )
        schema = self._schemas.get(c.name)
        if schema is None:
            hidden = c.name.startswith("_") or c.name in _ADMIN_NAMES
            return CallRecord(
                c.name,
                {},
                False,
                error=f"unknown tool {c.name!r}; the tools are {', '.join(self._schemas)}",
                violations=("hidden-tool",) if hidden else (),
            )
        problem = check_arguments(ToolCall(id="", name=c.name, arguments=c.arguments), schema)
        return CallRecord(c.name, c.arguments, False, error=problem) if problem else None

    def run_plan(self, plan: list[PlannedCall]) -> list[CallRecord]:
        refusals = [self._refusal(c, len(self.log) + i) for i, c in enumerate(plan)]
        batch = [
            None if r is not None else {"name": c.name, "arguments": c.arguments}
            for c, r in zip(plan, refusals, strict=True)
        ]
        out: Any = [None] * len(plan)
        why = ""
        if any(b is not None for b in batch):
            out, why = run_world(self.sandbox, self._ws, "call", batch)
            if not isinstance(out, list) or len(out) != len(plan):
                out = [None] * len(plan)
        records = []
        for c, refused, res in zip(plan, refusals, out, strict=True):
            if refused is not None:
                record = refused
            elif not isinstance(res, dict):
                record = CallRecord(
                    c.name,
                    c.arguments,
                    False,
                    error=f"the world did not answer ({why or 'no result'})",
                )
            else:
                violations = tuple(str(v)[:100] for v in res.get("violations") or [])[:10]
                record = CallRecord(
                    c.name,
                    c.arguments,
                    bool(res.get("ok")),
                    result=res.get("result"),
                    error=str(res.get("error") or "")[:500],
                    violations=violations,
                )
            self.log.append(record)
            records.append(record)
        return records

    def call(self, name: str, arguments: Any) -> CallRecord:
        args = arguments if isinstance(arguments, dict) else {}
        error = "" if isinstance(arguments, dict) else "arguments must be a JSON object"
        return self.run_plan([PlannedCall(name, args, error)])[0]

    def _copy(self) -> Path:
        data = self._ws.read("state.db")
        if self._cache is not None and self._cache[0] == data:
            return self._cache[1]
        path = Path(self._tmp.name) / f"state-{len(self.log)}-{len(data)}.db"
        path.write_bytes(data)
        self._cache = (data, path)
        return path

    def dump(self) -> StoreDump:
        db = open_read_only(self._copy())
        try:
            return dump_store(db)
        finally:
            db.close()

    def query(self, sql: str) -> list[list[Any]]:
        db = open_read_only(self._copy())
        try:
            return [list(r) for r in db.execute(sql).fetchall()]
        finally:
            db.close()

    def close(self) -> None:
        self._ws.close()
        self._tmp.cleanup()
