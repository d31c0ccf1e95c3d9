"""The SQL task families: seeded, reproducible tasks with a difficulty knob.

``generate(family, count, difficulty, seed)`` makes ``count`` tasks; task ``i`` uses seed
``seed + i`` and, with ``difficulty`` None, the difficulties 0, 0.1, ..., 1 in turn. The
difficulty picks the shape (a family's shapes go from one filter to nested aggregates and
windows) and scales the databases; the seed picks the shape's parameters, the engine (even
seeds SQLite, odd seeds DuckDB) and every database's contents. ``provenance.unit`` is
``sql:<family>/<shape>``, so a held-out split keeps a query structure whole.

Each task has a visible sample database (in the prompt and the environment's ``run_query``) and
four hidden instances of the same schema, one per data profile (plain, NULL-heavy,
duplicate-heavy, small). The reference runs on the host (it is the grader's own query); a draw
whose reference returns no rows on every hidden instance is never kept; of the others, the one
kept is the first whose reference returns rows on the sample and on most instances, and no hidden
instance gives the sample's answer (a query hard-coding what the sample shows then fails
everywhere).

>>> tasks = generate("sql-join", count=2, difficulty=0.0, seed=0)      # doctest: +SKIP
>>> tasks[0].provenance.unit                                         # doctest: +SKIP
'sql:sql-join/shipped-orders'
"""

from __future__ import annotations

import random
from typing import Any

from referee.domains.sql.compare import same_result
from referee.domains.sql.database import ENGINES, Database, Engine, run_trusted_typed
from referee.domains.sql.datagen import PROFILES, generate_database
from referee.domains.sql.prompt import task_prompt
from referee.domains.sql.shapes import SHAPES, Query
from referee.domains.sql.spec import DEFAULT_TIME_LIMIT_S
from referee.domains.sql.values import plain_rows
from referee.errors import TaskError
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = ["FAMILY_NAMES", "HIDDEN_INSTANCES", "generate", "reference_result"]

FAMILY_NAMES = tuple(SHAPES)
HIDDEN_INSTANCES = 4
GENERATOR = "referee.domains.sql@1"
_ATTEMPTS = 12
#: Draws whose reference returns no rows on every hidden database are never kept (any empty
#: result with the right columns would pass them); past ``_ATTEMPTS``, drawing goes on until one
#: is not, up to this many draws.
_MAX_ATTEMPTS = 60


def reference_result(sql: str, db: Database, engine: Engine) -> dict[str, Any]:
    """The trusted reference's result on ``db``, run on the host: columns (and their types,
    where the engine reports them: DuckDB) and plain rows."""
    columns, types, rows = run_trusted_typed(sql, db, engine)
    result: dict[str, Any] = {"columns": columns, "rows": plain_rows(rows)}
    if types is not None:
        result["types"] = types
    return result


def generate(family: str, count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of ``family`` (see the module docstring)."""
    if family not in SHAPES:
        raise TaskError(f"unknown SQL family {family!r}; the families: {', '.join(SHAPES)}")
    tasks = []
    for i in range(count):
        d = difficulty if difficulty is not None else round((i % 11) / 10, 1)
        tasks.append(make_task(family, d, seed + i))
    return tasks


def make_task(family: str, difficulty: float, seed: int) -> Task:
    """One task of ``family`` at ``difficulty`` from ``seed``."""
    shapes = SHAPES[family]
    shape = shapes[min(len(shapes) - 1, round(difficulty * (len(shapes) - 1)))]
    engine: Engine = ENGINES[seed % 2]
    rng = random.Random(f"{family}:{seed}:{difficulty:.3f}")
    best: tuple[int, Query, Database, list[Database], list[dict[str, Any]]] | None = None
    for attempt in range(_MAX_ATTEMPTS):
        if best is not None and attempt >= _ATTEMPTS:
            break
        query = shape.make(rng, engine)
        sample = generate_database(rng.randrange(1 << 31), difficulty, "plain")
        # Hidden rows are stored out of id order, with rows on the question's bounds.
        instances = [
            generate_database(
                rng.randrange(1 << 31),
                difficulty,
                PROFILES[k % len(PROFILES)],
                shuffle=True,
                anchors=query.anchors,
            )
            for k in range(HIDDEN_INSTANCES)
        ]
        seen = reference_result(query.sql, sample, engine)
        expected = [reference_result(query.sql, db, engine) for db in instances]
        if not any(e["rows"] for e in expected):
            continue  # empty on every hidden database: any empty result would pass; never kept
        score = _score(seen, expected, query.order_matters)
        if best is None or score > best[0]:
            best = (score, query, sample, instances, expected)
        if score == _PERFECT:
            break
    if best is None:
        raise TaskError(
            f"SQL family {family!r} ({shape.name}, seed {seed}): the reference returned no rows "
            f"on any hidden database in {_MAX_ATTEMPTS} draws; try another seed"
        )
    _, query, sample, instances, expected = best
    features = {**query.features, "size": difficulty}
    return Task.create(
        name=f"sql/{family}-{shape.name}-{engine}-s{seed}-v1",
        prompt=task_prompt(query.question, sample, engine, query.order_matters),
        domain="sql",
        kind="sql",
        answer_format="code",
        payload={
            "engine": engine,
            "tables": sample.table_names,
            "sample": sample.to_json(),
            "order_matters": query.order_matters,
            "time_limit_s": DEFAULT_TIME_LIMIT_S,
            "question": query.question,
        },
        hidden={
            "reference": query.sql,
            "instances": [db.to_json() for db in instances],
            "expected": expected,
        },
        difficulty=Difficulty(estimate=_estimate(features), features=features),
        provenance=Provenance(
            source="generated",
            generator=GENERATOR,
            seed=seed,
            unit=f"sql:{family}/{shape.name}",
            versions={"engine": engine},
        ),
    )


_PERFECT = 3


def _score(seen: dict[str, Any], expected: list[dict[str, Any]], ordered: bool) -> int:
    """How well a draw separates right from wrong: rows on the sample, rows on most instances,
    no instance answering as the sample does."""
    nonempty = sum(bool(e["rows"]) for e in expected)
    differs = all(not same_result(e["rows"], seen["rows"], ordered=ordered)[0] for e in expected)
    return int(bool(seen["rows"])) + int(nonempty >= len(expected) - 1) + int(differs)


def _estimate(features: dict[str, float]) -> float:
    raw = (
        0.1
        + 0.08 * features.get("joins", 0)
        + 0.15 * features.get("nesting", 0)
        + 0.2 * features.get("windows", 0)
        + 0.08 * features.get("aggregation", 0)
        + 0.05 * features.get("nulls", 0)
        + 0.15 * features.get("size", 0)
    )
    return round(min(1.0, raw), 3)
