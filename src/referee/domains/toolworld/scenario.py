"""From a seeded scenario to a finished task: the reference plan run, the goal state recorded.

A family writes a :class:`Scenario` (the seeded store, what the world knows, the instruction,
the reference plan and the goal's checks); :func:`build_task` runs the reference against a
fresh world and keeps the task only if it is sound: every reference call succeeds and breaks
no policy, the reference changes the store (so doing nothing fails) and at least one goal
assertion reads differently before and after. The change it made becomes
``hidden["expected_diff"]`` and each check's rows on the goal store its ``expect``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from referee.domains.toolworld.calls import calls_json
from referee.domains.toolworld.judge import normalize_rows
from referee.domains.toolworld.session import world_class
from referee.domains.toolworld.store import store_diff
from referee.errors import TaskError
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = ["GENERATOR", "Scenario", "build_task", "dump_sql", "family_generator", "system_prompt"]

GENERATOR = "referee.domains.toolworld@1"


@dataclass(frozen=True)
class Scenario:
    """One seeded task before its goal state is computed."""

    family: str
    world: str
    sql: str  # the seeded store: schema and rows
    instruction: str
    reference: list[dict[str, Any]]  # [{"name", "arguments"}]
    checks: list[tuple[str, str]]  # (name, SQL) read on the final store
    context: dict[str, Any] = field(default_factory=dict)  # visible: today, me
    user: dict[str, Any] = field(default_factory=dict)  # hidden: the simulated user's answers
    structure: str = ""  # the family structure (provenance.unit)
    features: dict[str, float] = field(default_factory=dict)


def dump_sql(schema: str, inserts: Iterable[tuple[str, tuple[Any, ...]]]) -> str:
    """The SQL of a store: ``schema`` and the rows of ``inserts`` ((sql, params) pairs)."""
    db = sqlite3.connect(":memory:")
    db.executescript(schema)
    for sql, params in inserts:
        db.execute(sql, params)
    db.commit()
    text = "\n".join(db.iterdump())
    db.close()
    return text


def system_prompt(world: str, tools: list[dict[str, Any]]) -> str:
    """The task's system message: the role, the world's policy, the tools' names."""
    names = ", ".join(t["function"]["name"] for t in tools)
    return (
        f"You are a support agent working in the {world} application through its tools "
        f"({names}). Act only through tool calls; nothing you say is taken as done. "
        f"{world_class(world).policy}"
    )


def build_task(s: Scenario, *, difficulty: float, seed: int) -> Task:
    """The task of scenario ``s``; a :class:`TaskError` if the scenario is unsound."""
    cls = world_class(s.world)
    context = {**s.context, **s.user}
    world = cls.from_sql(s.sql, context)
    try:
        initial = world.dump()
        before = {
            name: normalize_rows([list(r) for r in world.db.execute(sql).fetchall()])
            for name, sql in s.checks
        }
        for c in s.reference:
            record = world.call(c["name"], c["arguments"])
            if not record.ok or record.violations:
                raise TaskError(
                    f"{s.family} seed {seed}: reference call {c} gives "
                    f"{record.error or record.violations}"
                )
        diff = store_diff(initial, world.dump(), free_text=cls.free_text)
        assertions: list[dict[str, Any]] = [
            {
                "name": name,
                "sql": sql,
                "expect": normalize_rows([list(r) for r in world.db.execute(sql).fetchall()]),
            }
            for name, sql in s.checks
        ]
    finally:
        world.close()
    if not diff or all(a["expect"] == before[a["name"]] for a in assertions):
        raise TaskError(f"{s.family} seed {seed}: the reference changes nothing the checks see")
    prompt = [
        {"role": "system", "content": system_prompt(s.world, cls.tool_schemas())},
        {"role": "user", "content": s.instruction},
    ]
    return Task.create(
        # Named as the code domain's procedural tasks are: family, difficulty, seed, version.
        name=f"toolworld/{s.family}-d{round(difficulty * 100)}-s{seed}-v1",
        prompt=prompt,
        domain="toolworld",
        kind="toolworld",
        answer_format="tool-state",
        payload={"world": s.world, "init_sql": s.sql, "context": s.context},
        hidden={
            "reference": calls_json(s.reference),
            "user": s.user,
            "expected_diff": json.loads(json.dumps(diff)),
            "assertions": assertions,
            "free_text": cls.free_text,
        },
        difficulty=Difficulty(
            estimate=round(difficulty, 3),
            features={"steps": float(len(s.reference)), **s.features},
        ),
        provenance=Provenance(
            source="toolworld",
            generator=GENERATOR,
            seed=seed,
            unit=f"toolworld:{s.family}:{s.structure}",
        ),
    )


def family_generator(
    family: str, make: Callable[[int, float], Scenario]
) -> Callable[[int, float | None, int], list[Task]]:
    """A :data:`~referee.domains.FamilyGenerator` from ``make(seed, difficulty)``: task ``i``
    uses seed ``seed + i`` and difficulty ``difficulty`` (None: spread over 0, 0.1, ..., 1)."""

    def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
        tasks = []
        for i in range(count):
            d = difficulty if difficulty is not None else (i % 11) / 10
            tasks.append(build_task(make(seed + i, d), difficulty=d, seed=seed + i))
        return tasks

    generate.__name__ = f"generate_{family.replace('-', '_')}"
    return generate
