"""``ToolworldVerifier``: a single-turn answer (a plan of tool calls) replayed against a fresh
world, then judged by :func:`~.judge.judge_session`.

The answer is a JSON list of calls or a model's text with ``<tool_call>`` blocks
(:mod:`.calls`). Built-in worlds run in this process; an imported world runs in the sandbox
(made on first need, or the one given). A fault of the machinery (the sandbox failed) is an
``infra_error`` verdict, never a 0.

>>> from referee.domains import generate_family                            # doctest: +SKIP
>>> task = generate_family("shop-refund", count=1, seed=0)[0]             # doctest: +SKIP
>>> ToolworldVerifier().verify(task, task.hidden["reference"]).passed     # doctest: +SKIP
True
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any

from referee.domains.toolworld.calls import parse_calls
from referee.domains.toolworld.judge import VERIFIER_NAME, judge_session
from referee.domains.toolworld.session import open_session
from referee.errors import RefereeError, SandboxError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["ToolworldVerifier", "count_tests", "make_verifier"]


class ToolworldVerifier:
    """Judges toolworld tasks; see the module docstring. ``sandbox`` runs imported worlds: a
    sandbox, a callable giving one when the first imported task comes (neither is closed
    here), or None for one of its own, made then and closed by :meth:`close`."""

    def __init__(self, sandbox: Any = None) -> None:
        self._given = sandbox
        self._sandbox: Any = None if callable(sandbox) else sandbox
        self._own = sandbox is None
        self._lock = threading.Lock()

    def sandbox(self) -> Any:
        """The sandbox imported worlds run in (made or asked for on first need)."""
        with self._lock:
            if self._sandbox is None:
                if callable(self._given):
                    self._sandbox = self._given()
                else:
                    from referee.sandbox import Sandbox

                    self._sandbox = Sandbox(python_workers=2)
            return self._sandbox

    def verify(self, task: Task, answer: str, /) -> Verdict:
        started = time.perf_counter()
        try:
            box = self.sandbox() if "module" in task.payload else None
            session = open_session(task, box)
        except SandboxError as e:
            return Verdict.infra(task.id, f"the world could not be started: {e}", VERIFIER_NAME)
        except RefereeError as e:
            return Verdict.infra(task.id, f"task {task.id!r} cannot be judged: {e}", VERIFIER_NAME)
        try:
            session.run_plan(parse_calls(answer))
            return judge_session(task, session, started=started)
        except (RefereeError, OSError, sqlite3.Error) as e:
            # The sandbox failed, or an imported world broke its own store (replaced state.db
            # with a link, wrote what is not SQLite): the world's fault, not the answer's.
            return Verdict.infra(task.id, f"the world failed: {e}", VERIFIER_NAME)
        finally:
            session.close()

    def close(self) -> None:
        with self._lock:
            box, self._sandbox = self._sandbox, None
        if box is not None and self._own:
            box.close()


def make_verifier(setup: Any) -> ToolworldVerifier:
    """The factory :func:`referee.verify.dispatch.register_kind` is given: built-in worlds
    need no sandbox; imported ones run in the set's sandbox, asked for when the first comes."""
    return ToolworldVerifier(setup.sandbox)


def count_tests(task: Task) -> int:
    """The store test, the goal assertions and the policy test."""
    store = 1 if "expected_diff" in task.hidden else 0
    return store + 1 + len(task.hidden.get("assertions") or [])
