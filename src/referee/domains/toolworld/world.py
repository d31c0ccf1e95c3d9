"""``World``: a simulated application, its typed tools over a SQLite store, and its action log.

A built-in world is our own code working on data, so it runs in the grader's process: the
agent never runs code, it only sends tool calls (JSON), and each goes through :meth:`World.call`:

* the arguments are validated by the tool's pydantic model (unknown fields, such as a forged
  ``actor``, are refused; wrong types get pydantic's message);
* an unknown tool, an unknown id, a rule of the application broken (cancelling a shipped
  order) are the world's real errors, returned as the observation;
* every call is recorded in :attr:`World.log` with its outcome and the **policy violations**
  it committed. A tool does what it is asked even when a policy forbids it (as a real
  back office would), and notes the violation; the grader fails an episode with any.

Tools are methods marked with :func:`tool`; their first parameter after ``self`` is a pydantic
model of the arguments. A world also has internal (admin) methods no agent may call; they are
never offered, and a call to one (or to any name starting with ``_``) is refused and logged as
a violation (``hidden-tool``).

>>> from referee.domains.toolworld.shop import ShopWorld                    # doctest: +SKIP
>>> w = ShopWorld.from_sql(sql, context)                                 # doctest: +SKIP
>>> w.call("get_order", {"order_id": 17}).ok                             # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from referee.domains.toolworld.store import StoreDump, dump_store

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_CALLS",
    "Args",
    "CallRecord",
    "ToolError",
    "ToolSpec",
    "World",
    "tool",
]

#: One call's arguments, as JSON, may be this long; a longer one is refused unread.
MAX_ARGUMENT_BYTES = 4096
#: Calls an episode may make; the ones after are refused (and the episode flagged).
MAX_CALLS = 64


class Args(BaseModel):
    """Base of every tool's arguments: unknown fields are an error, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolError(Exception):
    """The world's answer to a call it cannot carry out (unknown id, a rule broken)."""


@dataclass(frozen=True)
class CallRecord:
    """One call and what came of it: ``result`` (JSON-able) when ``ok``, else ``error``;
    ``violations`` are the policies it broke."""

    tool: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str = ""
    violations: tuple[str, ...] = ()

    def observation(self) -> str:
        """What the agent is told."""
        if not self.ok:
            return f"error: {self.error}"
        return json.dumps(self.result, sort_keys=True)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "ok": self.ok,
            "result": self.result,
            "error": self.error,
            "violations": list(self.violations),
        }


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, what it does, its argument model and its method."""

    name: str
    description: str
    args: type[Args]
    method: Callable[..., Any]

    def schema(self) -> dict[str, Any]:
        """The tool in the OpenAI ``tools`` format."""
        params = self.args.model_json_schema()
        params.pop("title", None)
        params.setdefault("properties", {})
        params["additionalProperties"] = False
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }


def tool(description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a world method ``(self, args: SomeArgs) -> JSON-able`` as a tool the agent may call."""

    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        method.__tool_description__ = description  # type: ignore[attr-defined]
        return method

    return mark


@dataclass
class _Pending:
    violations: list[str] = field(default_factory=list)


class World:
    """Base of the built-in worlds; see the module docstring.

    ``context`` is what the world knows beyond its store: ``today`` (the world's clock, an ISO
    date) and the simulated user's answers (``confirms``: the actions the user agrees to).
    """

    #: The world's name (``payload["world"]``).
    name: ClassVar[str] = "world"
    #: The tables and their columns, as SQL.
    schema_sql: ClassVar[str] = ""
    #: Columns judged by whether they hold text, not by their words (a mail body).
    free_text: ClassVar[dict[str, list[str]]] = {}
    #: The tools' rules, told to the agent in the system message.
    policy: ClassVar[str] = ""
    _tools: ClassVar[dict[str, ToolSpec]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        specs: dict[str, ToolSpec] = {}
        for attr in dir(cls):
            method = getattr(cls, attr)
            description = getattr(method, "__tool_description__", None)
            if description is None:
                continue
            args = next(iter(method.__annotations__.values()))
            if isinstance(args, str):  # postponed annotations: resolve in the method's module
                args = method.__globals__[args]
            specs[attr] = ToolSpec(attr, description, args, method)
        cls._tools = specs

    def __init__(self, db: sqlite3.Connection, context: dict[str, Any]) -> None:
        self.db = db
        self.context = context
        self.today: str = str(context.get("today", "2026-01-01"))
        self.log: list[CallRecord] = []
        self._pending = _Pending()

    @classmethod
    def from_sql(cls, sql: str, context: dict[str, Any]) -> World:
        """A fresh world whose store is the database ``sql`` makes (schema and rows)."""
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.executescript(sql)
        return cls(db, context)

    @classmethod
    def tool_specs(cls) -> dict[str, ToolSpec]:
        return dict(cls._tools)

    @classmethod
    def tool_schemas(cls) -> list[dict[str, Any]]:
        return [s.schema() for s in cls._tools.values()]

    # ---- calls ---------------------------------------------------------------------------
    def violation(self, policy: str) -> None:
        """Note that the call being made breaks ``policy`` (it is carried out all the same)."""
        self._pending.violations.append(policy)

    def call(self, name: str, arguments: Any) -> CallRecord:
        """Run one tool call and log it; never raises for what the call asked."""
        record = self._call(name, arguments)
        self.log.append(record)
        return record

    def _call(self, name: str, arguments: Any) -> CallRecord:
        args = arguments if isinstance(arguments, dict) else {}
        if len(self.log) >= MAX_CALLS:
            return CallRecord(
                name,
                {},
                False,
                error=f"call limit reached ({MAX_CALLS} calls)",
                violations=("call-limit",),
            )
        if not isinstance(arguments, dict):
            return CallRecord(name, {}, False, error="arguments must be a JSON object")
        size = len(json.dumps(arguments, default=str))
        if size > MAX_ARGUMENT_BYTES:
            return CallRecord(
                name,
                {},
                False,
                error=f"arguments too long ({size} bytes; at most {MAX_ARGUMENT_BYTES})",
            )
        spec = self._tools.get(name)
        if spec is None:
            hidden = name.startswith("_") or callable(getattr(self, name, None))
            return CallRecord(
                name,
                args,
                False,
                error=f"unknown tool {name!r}; the tools are {', '.join(self._tools)}",
                violations=("hidden-tool",) if hidden else (),
            )
        try:
            parsed = spec.args.model_validate(args)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or 'arguments'}: {err['msg']}"
                for err in e.errors()[:3]
            )
            return CallRecord(name, args, False, error=f"invalid arguments for {name}: {problems}")
        self._pending = _Pending()
        try:
            with self.db:  # one transaction: a tool that fails changes nothing
                result = spec.method(self, parsed)
        except ToolError as e:
            return CallRecord(name, args, False, error=str(e))
        return CallRecord(
            name,
            parsed.model_dump(),
            True,
            result=result,
            violations=tuple(self._pending.violations),
        )

    # ---- state ---------------------------------------------------------------------------
    def dump(self) -> StoreDump:
        return dump_store(self.db)

    def one(self, sql: str, params: tuple[Any, ...], what: str) -> sqlite3.Row:
        """The one row ``sql`` finds, or the world's not-found error naming ``what``."""
        cur = self.db.execute(sql, params)
        cur.row_factory = sqlite3.Row
        row = cur.fetchone()
        if row is None:
            raise ToolError(f"{what} not found")
        return row  # type: ignore[no-any-return]

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, params)
        cur.row_factory = sqlite3.Row
        return [dict(r) for r in cur.fetchall()]

    def succeeded(self, tool_name: str, **match: Any) -> list[CallRecord]:
        """The successful earlier calls of ``tool_name`` whose arguments include ``match``."""
        return [
            r
            for r in self.log
            if r.ok
            and r.tool == tool_name
            and all(r.arguments.get(k) == v for k, v in match.items())
        ]

    def close(self) -> None:
        self.db.close()
