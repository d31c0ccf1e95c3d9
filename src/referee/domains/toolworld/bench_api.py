"""Tasks of kind ``bench-api``: a public benchmark's own simulated API (BFCL multi-turn's
classes, tau2's airline and retail tools), run in the sandbox, judged by the state the
benchmark's own judge compares.

The benchmark's classes are its package's code (pinned in ``requirements-bench.lock``); they
still run only in the sandbox, never on the host: tau2's ``calculate`` tool ``eval``s the
model's expression, BFCL's file system imports ``subprocess``, and a model's arguments can make
either spin (``calculate("9**9**9")``). The model's calls stay data: the host parses them, the
sandboxed runner (:mod:`.bfcl`'s, :mod:`.tau2`'s) calls the named public method with them and
writes what the judge compares (each call's result, hashes of the state) as JSON, which the
host reads as data and compares with what the gold answer left, recorded at import.

An answer is JSON: ``{"turns": [[call, ...], ...], "messages": ["...", ...]}`` with one list
of calls per user turn (BFCL has several turns, tau2 one) and, for tau2, what the agent said to
the customer; a list of turns, or one list of calls (one turn), is taken too, and so is the
last ```json block of a model's text. A call is ``{"name": ..., "arguments": {...}}``.

>>> parse_answer('[{"name": "cd", "arguments": {"folder": "docs"}}]').turns
[[{'name': 'cd', 'arguments': {'folder': 'docs'}}]]
>>> parse_answer('{"turns": [[], []], "messages": ["Your refund is 100."]}').messages
['Your refund is 100.']
>>> parse_answer("I did it all.").turns
[]
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.errors import RefereeError, SandboxError, TaskError
from referee.tasks.model import Task
from referee.verify.verdict import TestOutcome, Verdict

__all__ = [
    "KIND",
    "MAX_CALLS",
    "Answer",
    "BenchApiVerifier",
    "count_tests",
    "make_verifier",
    "parse_answer",
    "register_bench",
    "run_runner",
]

#: The task kind (registered by the toolworld domain).
KIND = "bench-api"
VERIFIER_NAME = "bench-api@1"
#: Calls one answer may make in all; the rest are dropped (a runaway plan, not a verdict).
MAX_CALLS = 400
_MAX_ANSWER = 400_000
_JSON_BLOCK = re.compile(r"^```json[ \t]*\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Answer:
    """An answer read as data: calls per turn, and what the agent said."""

    turns: list[list[dict[str, Any]]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    #: Why a part could not be read (empty: all of it could).
    errors: list[str] = field(default_factory=list)


def _call(item: Any) -> dict[str, Any] | str:
    """``{"name", "arguments"}`` of one call (the OpenAI ``function`` shape is taken), or why
    it is not one."""
    if not isinstance(item, dict):
        return 'a call is an object {"name": ..., "arguments": {...}}'
    inner = item.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else item
    name, args = fn.get("name"), fn.get("arguments", {})
    if not isinstance(name, str) or not name:
        return 'a call needs a "name"'
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            return f"{name}: arguments are not valid JSON ({e.msg})"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f"{name}: arguments must be an object"
    return {"name": name, "arguments": args}


def parse_answer(text: str) -> Answer:
    """The answer in ``text`` (see the module docstring); what cannot be read is left out and
    named in ``errors`` (text with no JSON is an empty answer: nothing done)."""
    text = text[:_MAX_ANSWER]
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        blocks = _JSON_BLOCK.findall(text)
        try:
            data = json.loads(blocks[-1]) if blocks else None
        except json.JSONDecodeError:
            data = None
    if data is None:
        return Answer(errors=["no JSON answer found"] if text.strip() else [])
    messages: list[str] = []
    if isinstance(data, dict):
        raw_messages = data.get("messages") or []
        messages = (
            [m for m in raw_messages if isinstance(m, str)]
            if isinstance(raw_messages, list)
            else []
        )
        data = data.get("turns") or []
    if not isinstance(data, list):
        return Answer(messages=messages, errors=["turns must be a list"])
    if data and all(isinstance(t, dict) for t in data):
        data = [data]  # one list of calls: one turn
    turns: list[list[dict[str, Any]]] = []
    errors: list[str] = []
    total = 0
    for i, turn in enumerate(data):
        calls: list[dict[str, Any]] = []
        for item in turn if isinstance(turn, list) else [turn]:
            call = _call(item)
            if isinstance(call, str):
                errors.append(f"turn {i}: {call}")
            elif total < MAX_CALLS:
                calls.append(call)
                total += 1
        turns.append(calls)
    if total >= MAX_CALLS:
        errors.append(f"more than {MAX_CALLS} calls: the rest were not made")
    return Answer(turns=turns, messages=messages, errors=errors)


@dataclass(frozen=True)
class Bench:
    """What one benchmark brings: the packages its runner imports, the runner, its judge."""

    name: str
    packages: tuple[str, ...]
    runner: str
    #: ``judge(task, answer, out) -> tests``: ``out`` is the runner's JSON for the answer.
    judge: Callable[[Task, Answer, Any], list[TestOutcome]]
    #: ``count(task) -> tests``: how many tests its verdicts have.
    count: Callable[[Task], int]


_BENCHES: dict[str, Callable[[], Bench]] = {}


def register_bench(name: str, factory: Callable[[], Bench]) -> None:
    """Register a benchmark's :class:`Bench` (made on first use)."""
    _BENCHES[name] = factory


def _bench(task: Task) -> Bench:
    name = str(task.payload.get("bench", ""))
    if name not in _BENCHES:
        import importlib

        try:  # the benchmarks' modules register themselves when imported
            importlib.import_module(f"referee.domains.toolworld.{name}")
        except ImportError:
            pass
    if name not in _BENCHES:
        raise TaskError(f"task {task.id!r}: unknown benchmark {name!r} (payload['bench'])")
    return _BENCHES[name]()


#: One sandboxed run: the benchmark's state loads and every call of an answer replays in it.
RUN_TIMEOUT_S = 60.0


def run_runner(sandbox: Any, runner: str, spec: dict[str, Any]) -> Any:
    """One sandboxed run of ``runner`` on ``spec`` (``spec.json``); its ``out.json`` read as
    data. The run failing (past its time, out of memory, the package broken) is a
    :class:`SandboxError`: the machinery's fault, or the answer's (an argument that made the
    API spin); :class:`BenchApiVerifier` tells them apart by the gold, which ran at import."""
    from referee.sandbox import Limits

    workspace = sandbox.workspace()
    try:
        workspace.write({"spec.json": json.dumps(spec), "out.json": ""})
        result = sandbox.run_python(
            runner,
            name="runner.py",
            workspace=workspace,
            limits=Limits(timeout_s=RUN_TIMEOUT_S, memory_mb=2048, max_processes=8),
        )
        try:
            out = json.loads(workspace.read("out.json", max_bytes=32 << 20) or b"null")
        except Exception:  # missing, too big, not JSON
            out = None
        if out is None:
            raise SandboxError(f"the benchmark's runner failed: {result.summary()}")
        return out
    finally:
        workspace.close()


class BenchApiVerifier:
    """Judges ``bench-api`` tasks: the answer's calls replayed by the benchmark's runner in a
    sandbox (one per benchmark, made on first use, with its package visible read-only), then
    the benchmark's judge on what the runner wrote."""

    def __init__(self) -> None:
        self._sandboxes: dict[str, Any] = {}
        self._lock = threading.Lock()

    def sandbox(self, bench: Bench) -> Any:
        with self._lock:
            if bench.name not in self._sandboxes:
                from referee.sandbox import Sandbox

                self._sandboxes[bench.name] = Sandbox(
                    python_workers=1, python_packages=bench.packages
                )
            return self._sandboxes[bench.name]

    def run(self, task: Task, answer: Answer) -> Any:
        """The runner's output for ``answer`` on ``task`` (a :class:`SandboxError` if it fails)."""
        bench = _bench(task)
        spec = {"task": task.payload["setup"], "turns": answer.turns}
        return run_runner(self.sandbox(bench), bench.runner, spec)

    def judge_many(self, task: Task, answers: list[Answer]) -> list[tuple[Verdict, Any]]:
        """Each answer's verdict and runner output, all from one sandboxed run (the state
        loaded once, each answer replayed from a fresh copy of it): for judging many answers
        to one task (an agreement study, a batch of rollouts). A run that fails falls back to
        :meth:`judge`, one answer at a time."""
        bench = _bench(task)
        spec = {"task": task.payload["setup"], "answers": [a.turns for a in answers]}
        try:
            outs = run_runner(self.sandbox(bench), bench.runner, spec)["answers"]
        except (SandboxError, KeyError, TypeError):
            return [self.judge(task, a) for a in answers]
        results = []
        for answer, out in zip(answers, outs, strict=True):
            tests = bench.judge(task, answer, out)
            passed = bool(tests) and all(t.status == "passed" for t in tests)
            verdict = Verdict(
                task_id=task.id,
                reward=1.0 if passed else 0.0,
                passed=passed,
                tests=tests,
                verifier=VERIFIER_NAME,
            )
            results.append((verdict, out))
        return results

    def verify(self, task: Task, answer: str, /) -> Verdict:
        return self.judge(task, parse_answer(answer))[0]

    def judge(self, task: Task, parsed: Answer) -> tuple[Verdict, Any]:
        """The verdict on an answer already read, and the runner's output it was judged on
        (None when the runner failed)."""
        started = time.perf_counter()
        try:
            bench = _bench(task)
        except RefereeError as e:
            return Verdict.infra(task.id, str(e), VERIFIER_NAME), None
        try:
            out = self.run(task, parsed)
        except SandboxError as e:
            # The gold ran at import: a runner that fails now on this answer failed on what the
            # answer made it do (an argument that spun), or the sandbox broke. Only the second
            # is the machinery's: the answer is retried with no calls to tell them apart.
            try:
                self.run(task, Answer(turns=[[] for _ in parsed.turns]))
            except SandboxError:
                error = f"the benchmark's runner failed: {e}"
                return Verdict.infra(task.id, error, VERIFIER_NAME), None
            test = TestOutcome(name="the calls ran", status="failed", detail=str(e)[:300])
            verdict = Verdict(
                task_id=task.id, reward=0.0, passed=False, tests=[test], verifier=VERIFIER_NAME
            )
            return verdict, None
        tests = bench.judge(task, parsed, out)
        passed = bool(tests) and all(t.status == "passed" for t in tests)
        verdict = Verdict(
            task_id=task.id,
            reward=1.0 if passed else 0.0,
            passed=passed,
            tests=tests,
            verifier=VERIFIER_NAME,
            timings={"verify_s": time.perf_counter() - started},
        )
        return verdict, out

    def close(self) -> None:
        with self._lock:
            boxes, self._sandboxes = list(self._sandboxes.values()), {}
        for box in boxes:
            box.close()

    def __enter__(self) -> BenchApiVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_verifier(setup: Any) -> BenchApiVerifier:
    """The factory :func:`referee.verify.dispatch.register_kind` is given (its own sandboxes:
    each benchmark's sees its package)."""
    return BenchApiVerifier()


def count_tests(task: Task) -> int:
    """The number of tests a verdict on ``task`` has."""
    try:
        return _bench(task).count(task)
    except RefereeError:
        return 1
