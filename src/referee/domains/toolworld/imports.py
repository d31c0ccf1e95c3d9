"""Import source ``toolworld-rows``: tool worlds of your own, as a Python module and a SQLite
file, with tasks as JSONL rows (``referee tasks import toolworld-rows FILE --out T``).

One row per task; paths are relative to the JSONL file::

    {"id": "acme/refund-1",                      # optional: the task id
     "world": "shop_world.py",                   # the module: TOOLS = [fn, ...]
     "db": "shop.db",                            # the seeded store (or "init_sql": "...")
     "instruction": "Refund order 3 in full.",
     "assertions": [{"name": "refunded", "sql": "SELECT status FROM orders WHERE id = 3",
                     "expect": [["refunded"]]}],
     "reference": [{"name": "refund", "arguments": {"order_id": 3}}],   # optional
     "policy": "Never refund more than was paid.",                       # optional
     "free_text": {"notes": ["body"]},                                   # optional
     "difficulty": 0.3}                                                  # optional

A tool is a function ``fn(db, **arguments)`` (``db`` a ``sqlite3.Connection``) with annotated
arguments (int, str, float, bool, list[...]) and a docstring; it raises to refuse a call and may
call ``violation("name")`` to log a policy violation. The module is untrusted code: it runs only
in the sandbox, at import (to read its tools' schemas, to run the reference and the empty
episode) and at every verification. The store is read on the host read-only, as data.

At import, a row is checked: the empty episode must fail (some assertion does not hold on the
seeded store), and the reference, when given, must pass; the change it makes to the whole store
then becomes the expected change, so over-action (other rows changed) fails. Without a reference
only the assertions and the policy judge. A malformed row stops the import with an error naming
the file, the row and the field; nothing is written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.domains.toolworld.calls import calls_json, parse_calls
from referee.domains.toolworld.judge import judge_session
from referee.domains.toolworld.scenario import GENERATOR
from referee.domains.toolworld.store import open_read_only, store_diff
from referee.errors import RefereeError, TaskError
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = ["toolworld_rows"]

_MAX_FILE = 8 << 20


def _read(row: Row, field: str, base: Path) -> Path:
    name = str(row.get(field, str))
    path = (base / name).resolve()
    if not path.is_file():
        raise row.error(field, f"no file {name!r} next to the task file ({path})")
    if path.stat().st_size > _MAX_FILE:
        raise row.error(field, f"{name!r} is larger than {_MAX_FILE >> 20} MB")
    return path


def _init_sql(row: Row, base: Path) -> str:
    if row.data.get("init_sql") is not None:
        sql = row.get("init_sql", str)
        try:
            sqlite3.connect(":memory:").executescript(sql)
        except sqlite3.Error as e:
            raise row.error("init_sql", f"not valid SQLite SQL ({e})") from None
        return str(sql)
    path = _read(row, "db", base)
    try:
        db = open_read_only(path)
        try:
            return "\n".join(db.iterdump())
        finally:
            db.close()
    except sqlite3.Error as e:
        raise row.error("db", f"not a readable SQLite database ({e})") from None


def _assertions(row: Row) -> list[dict[str, Any]]:
    items = row.get("assertions", list)
    if not items:
        raise row.error("assertions", 'give at least one {"sql": ..., "expect": [[...]]}')
    out = []
    for i, a in enumerate(items):
        if (
            not isinstance(a, dict)
            or not isinstance(a.get("sql"), str)
            or not isinstance(a.get("expect"), list)
        ):
            raise row.error(
                "assertions", f"item {i} needs 'sql' (a query) and 'expect' (a list of rows)"
            )
        if not all(isinstance(r, list) for r in a["expect"]):
            raise row.error("assertions", f"item {i}: 'expect' is a list of rows, each a list")
        out.append({"name": str(a.get("name") or i), "sql": a["sql"], "expect": a["expect"]})
    return out


def _task(row: Row, base: Path, split: str, sandbox: Any) -> Task:
    from referee.domains.toolworld.sandboxed import describe_world
    from referee.domains.toolworld.session import open_session

    module = _read(row, "world", base).read_text(encoding="utf-8")
    init_sql = _init_sql(row, base)
    instruction = row.get("instruction", str)
    assertions = _assertions(row)
    reference = row.data.get("reference")
    if reference is not None and not isinstance(reference, list):
        raise row.error("reference", 'a list of calls {"name": ..., "arguments": {...}}')
    free_text = row.get("free_text", dict, {})
    policy = row.get("policy", str, "")
    difficulty = row.get("difficulty", (int, float), None)
    if difficulty is not None and not 0 <= difficulty <= 1:
        raise row.error("difficulty", f"must be in [0, 1], got {difficulty}")
    try:
        tools = describe_world(sandbox, module)
    except TaskError as e:
        raise row.error("world", str(e)) from None
    names = ", ".join(t["function"]["name"] for t in tools)
    system = (
        f"You are an agent working in an application through its tools ({names}). Act only "
        f"through tool calls; nothing you say is taken as done. {policy}"
    ).strip()

    def make(hidden: dict[str, Any]) -> Task:
        return Task.create(
            name=row.get("id", str, None),
            prompt=[
                {"role": "system", "content": system},
                {"role": "user", "content": instruction},
            ],
            domain="toolworld",
            kind="toolworld",
            answer_format="tool-state",
            payload={
                "world": "imported",
                "module": module,
                "init_sql": init_sql,
                "tools": tools,
                "context": {},
            },
            hidden=hidden,
            split=split,
            difficulty=Difficulty(estimate=difficulty),
            provenance=Provenance(
                source="toolworld-rows",
                generator=GENERATOR,
                unit=f"toolworld:imported:{Path(row.path).name}:{row.number}",
            ),
        )

    hidden: dict[str, Any] = {"assertions": assertions, "free_text": free_text}
    draft = make(hidden)
    session = open_session(draft, sandbox)
    try:
        if judge_session(draft, session).passed:
            raise row.error(
                "assertions", "they already hold on the seeded store: an empty episode would pass"
            )
    finally:
        session.close()
    if reference is None:
        return draft
    plan = parse_calls(calls_json(reference)) if all(isinstance(c, dict) for c in reference) else []
    if len(plan) != len(reference) or any(c.error for c in plan):
        raise row.error("reference", 'a list of calls {"name": ..., "arguments": {...}}')
    session = open_session(draft, sandbox)
    try:
        records = session.run_plan(plan)
        failed = next((r for r in records if not r.ok or r.violations), None)
        if failed is not None:
            raise row.error(
                "reference", f"call {failed.tool} fails: {failed.error or failed.violations}"
            )
        hidden["expected_diff"] = store_diff(session.initial, session.dump(), free_text=free_text)
        hidden["reference"] = calls_json(reference)
        task = make(hidden)
        verdict = judge_session(task, session)
    finally:
        session.close()
    if not verdict.passed:
        bad = next(t for t in verdict.tests if t.status != "passed")
        raise row.error("reference", f"the reference does not pass: {bad.name}: {bad.detail}")
    return task


def toolworld_rows(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """The tasks of a ``toolworld-rows`` file (see the module docstring)."""
    from referee.sandbox import Sandbox

    base = Path(path).resolve().parent
    sandbox = None
    try:
        for row in iter_rows(path, on_bad_row):
            if sandbox is None:
                sandbox = Sandbox(python_workers=1)
            with skipping(on_bad_row):
                try:
                    yield _task(row, base, split, sandbox)
                except TaskError:
                    raise
                except RefereeError as e:
                    raise row.error(None, str(e)) from None
    finally:
        if sandbox is not None:
            sandbox.close()
