"""A world opened for one episode: the built-in worlds by name, and what an episode needs of
any world (call tools, list them, dump and query the store).

Every episode starts from a fresh copy of the task's seeded store (``payload["init_sql"]``):
:func:`open_session` builds it anew each time, so nothing of one episode reaches the next.
Built-in worlds run in this process (our own code working on data); a world imported as a
Python module is untrusted code and runs in the sandbox (:mod:`.sandboxed`), behind the same
:class:`Session` interface.

>>> from referee.domains.toolworld.session import world_names
>>> world_names()
['office', 'shop', 'tickets']
"""

from __future__ import annotations

from typing import Any, Protocol

from referee.domains.toolworld.calls import PlannedCall
from referee.domains.toolworld.office import OfficeWorld
from referee.domains.toolworld.shop import ShopWorld
from referee.domains.toolworld.store import StoreDump
from referee.domains.toolworld.tickets import TicketWorld
from referee.domains.toolworld.world import CallRecord, World
from referee.errors import TaskError
from referee.tasks.model import Task

__all__ = [
    "BuiltinSession",
    "Session",
    "open_session",
    "task_context",
    "world_class",
    "world_names",
]

_WORLDS: dict[str, type[World]] = {w.name: w for w in (ShopWorld, OfficeWorld, TicketWorld)}


def world_names() -> list[str]:
    """The built-in worlds, sorted."""
    return sorted(_WORLDS)


def world_class(name: str) -> type[World]:
    """The built-in world ``name``; a :class:`TaskError` naming the worlds otherwise."""
    try:
        return _WORLDS[name]
    except KeyError:
        raise TaskError(
            f"unknown tool world {name!r}; the built-in worlds are {', '.join(world_names())} "
            "(an imported world carries its module: payload['module'])"
        ) from None


class Session(Protocol):
    """One episode's world: its tools, its calls (logged) and its store."""

    #: The store as the episode found it.
    initial: StoreDump

    @property
    def log(self) -> list[CallRecord]: ...

    def tool_schemas(self) -> list[dict[str, Any]]: ...

    def call(self, name: str, arguments: Any) -> CallRecord: ...

    def run_plan(self, plan: list[PlannedCall]) -> list[CallRecord]: ...

    def dump(self) -> StoreDump: ...

    def query(self, sql: str) -> list[list[Any]]: ...

    def close(self) -> None: ...


class BuiltinSession:
    """A built-in world in this process (see the module docstring)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.initial = world.dump()

    @property
    def log(self) -> list[CallRecord]:
        return self.world.log

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.world.tool_schemas()

    def call(self, name: str, arguments: Any) -> CallRecord:
        return self.world.call(name, arguments)

    def run_plan(self, plan: list[PlannedCall]) -> list[CallRecord]:
        records = []
        for c in plan:
            if c.error:
                record = CallRecord(c.name, {}, False, error=c.error)
                self.world.log.append(record)
            else:
                record = self.world.call(c.name, c.arguments)
            records.append(record)
        return records

    def dump(self) -> StoreDump:
        return self.world.dump()

    def query(self, sql: str) -> list[list[Any]]:
        return [list(r) for r in self.world.db.execute(sql).fetchall()]

    def close(self) -> None:
        self.world.close()


def task_context(task: Task) -> dict[str, Any]:
    """What the world knows beyond its store: the visible context and the simulated user's
    hidden answers (``hidden["user"]``)."""
    context = dict(task.payload.get("context") or {})
    context.update(task.hidden.get("user") or {})
    return context


def open_session(task: Task, sandbox: Any = None) -> Session:
    """A fresh world for an episode of ``task`` (an imported world runs in ``sandbox``)."""
    payload = task.payload
    sql = payload.get("init_sql")
    if not isinstance(sql, str):
        raise TaskError(
            f"task {task.id!r}: payload['init_sql'] (the seeded store as SQL) is missing"
        )
    if "module" in payload:
        from referee.domains.toolworld.sandboxed import SandboxSession

        if sandbox is None:
            raise TaskError(f"task {task.id!r}: an imported world runs in a sandbox; give one")
        return SandboxSession(task, sandbox)
    world = world_class(str(payload.get("world", ""))).from_sql(sql, task_context(task))
    return BuiltinSession(world)
