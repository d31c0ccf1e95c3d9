"""Judging an episode of a tool world by its final store and its action log.

Three kinds of test, all decided on the host from plain data (rows, the log's records):

* ``store``: the change the episode made to the whole store (:func:`~.store.store_diff`) is
  exactly ``hidden["expected_diff"]``, the change the reference plan makes: the target rows
  changed as they should and **no other row** changed (every generated task has it; an
  imported task without a reference has not, and is judged by the next two alone);
* one test per goal assertion (``hidden["assertions"]``: a SQL query and the rows it must
  give on the final store), which say in words what the goal is;
* ``policy``: no call broke a policy of the world (the world notes violations as calls are
  made; calling a hidden or admin tool is one, and so is running into the call limit).

The reward is 1 only when all pass, else 0: partial credit for "nothing else changed" would pay
an agent for doing nothing, and partial credit for the target rows would pay one that also
refunds every other order. The answer's text is never read for a claim of success.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from referee.domains.toolworld.session import Session
from referee.domains.toolworld.store import StoreDiff, store_diff
from referee.tasks.model import Task
from referee.verify.verdict import Flag, TestOutcome, Verdict

__all__ = ["VERIFIER_NAME", "judge_session", "normalize_rows"]

VERIFIER_NAME = "toolworld@1"
_DETAIL_CHARS = 600


def normalize_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Rows as JSON would give them back (tuples as lists, bytes as hex), for comparison."""
    out = json.loads(json.dumps([list(r) for r in rows], default=lambda b: b.hex()))
    return out  # type: ignore[no-any-return]


def _short(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, default=str)
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 3] + "..."


def _diff_detail(got: StoreDiff, want: StoreDiff) -> str:
    unexpected: dict[str, Any] = {}
    missing: dict[str, Any] = {}
    for table in sorted(set(got) | set(want)):
        for side in ("added", "removed"):
            g = [json.dumps(r) for r in got.get(table, {}).get(side, [])]
            w = [json.dumps(r) for r in want.get(table, {}).get(side, [])]
            extra = [json.loads(r) for r in g if r not in w]
            lacking = [json.loads(r) for r in w if r not in g]
            if extra:
                unexpected[f"{table}.{side}"] = extra
            if lacking:
                missing[f"{table}.{side}"] = lacking
    return f"unexpected changes {_short(unexpected)}; missing changes {_short(missing)}"


def judge_session(task: Task, session: Session, *, started: float | None = None) -> Verdict:
    """The verdict on the episode ``session`` holds (its calls made): see the module."""
    t0 = time.perf_counter()
    hidden = task.hidden
    tests: list[TestOutcome] = []
    if "expected_diff" in hidden:  # an imported task without a reference has none
        got = store_diff(session.initial, session.dump(), free_text=hidden.get("free_text") or {})
        want = hidden["expected_diff"]
        same = json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
        tests.append(
            TestOutcome(
                name="store",
                status="passed" if same else "failed",
                detail="" if same else _diff_detail(got, want),
            )
        )
    for i, assertion in enumerate(hidden.get("assertions") or []):
        name = f"assert:{assertion.get('name') or i}"
        try:
            rows = normalize_rows(session.query(str(assertion["sql"])))
        except sqlite3.Error as e:  # an imported world's tools may have changed its schema
            tests.append(TestOutcome(name=name, status="error", detail=f"{type(e).__name__}: {e}"))
            continue
        ok = rows == assertion.get("expect")
        detail = "" if ok else f"got {_short(rows)}, expected {_short(assertion.get('expect'))}"
        tests.append(TestOutcome(name=name, status="passed" if ok else "failed", detail=detail))
    violations = [(i, r.tool, v) for i, r in enumerate(session.log) for v in r.violations]
    tests.append(
        TestOutcome(
            name="policy",
            status="failed" if violations else "passed",
            detail=_short([f"call {i} ({tool}): {v}" for i, tool, v in violations]),
        )
    )
    suspicious: dict[str, list[str]] = {}
    for i, tool, v in violations:
        if v in ("hidden-tool", "call-limit"):  # not a slip: an attempt at the grader
            suspicious.setdefault(v, []).append(f"call {i} ({tool})")
    flags = [
        Flag(
            kind=f"toolworld:{v}",
            evidence=", ".join(where[:5]) + (" ..." if len(where) > 5 else ""),
        )
        for v, where in suspicious.items()
    ]
    passed = all(t.status == "passed" for t in tests)
    timings = {"judge_s": time.perf_counter() - t0}
    if started is not None:
        timings["total_s"] = time.perf_counter() - started
    return Verdict(
        task_id=task.id,
        reward=1.0 if passed else 0.0,
        passed=passed,
        tests=tests,
        flags=flags,
        timings=timings,
        verifier=VERIFIER_NAME,
    )
