"""The function-level verifier: HumanEval-style tasks, hardened against reward hacking.

How a solution is judged (nothing here trusts the solution's process):

1. The task carries, in ``hidden``, the inputs its own tests call the function with and the
   reference's outcome for each (recorded once, at import, by running the task's test against a
   recorder around the reference). Expected outcomes never enter the solution's sandbox.
2. The candidate runs in the sandbox with the grader's harness: it is called on every input,
   in a shuffled order, each call on a fresh copy, and each outcome is reported as tagged plain
   data of exact builtin types. A final repeated call catches order-dependent answers.
3. On the host, code that never ran the candidate compares outcomes with the reference's. Exit
   codes, stdout text and objects made by the candidate play no part; a missing, timed-out or
   unreportable outcome is a failure.
4. Where outcomes differ, the task's *own* test runs again in a separate sandbox with no
   candidate code at all, against the recorded outcomes, so that a test which accepts several
   right answers (a root of a polynomial, say) still accepts them.

A static guard adds flags (exit calls, frame inspection, patched builtins, always-true ``__eq__``)
as evidence. ``reward`` is the share of tests passed; ``passed`` requires all of them.
"""

from __future__ import annotations

import contextvars
import functools
import json
import random
import secrets
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from referee.errors import RefereeError, VerifierError
from referee.sandbox import ExecResult, Sandbox
from referee.sandbox.cputime import cpu_limits, judged_run, stalls_outcome
from referee.verify import harness as H
from referee.verify.guard import scan
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict, metered_verdict

if TYPE_CHECKING:  # `referee verify` starts its sandbox before the task model is imported
    from referee.tasks.model import Task

__all__ = [
    "HARNESS_MODULE",
    "HARNESS_SOURCE",
    "FunctionTask",
    "FunctionVerifier",
    "harness_program",
    "harness_sandbox",
]

HARNESS_MODULE = "referee_harness"
HARNESS_SOURCE = resources.files("referee.verify").joinpath("harness.py").read_text()
VERSION = "function@1"


class FunctionTask(Protocol):
    """What :class:`FunctionVerifier` reads of a task: a :class:`~referee.tasks.model.Task`,
    or the first sample's task read from the raw file (:mod:`referee.verify.first`)."""

    @property
    def id(self) -> str: ...

    @property
    def payload(self) -> dict[str, Any]: ...

    @property
    def hidden(self) -> dict[str, Any]: ...


def harness_sandbox(**kwargs: Any) -> Sandbox:
    """A sandbox whose fast-path workers have the grader's harness preloaded."""
    preload = dict(kwargs.pop("preload", None) or {})
    preload[HARNESS_MODULE] = HARNESS_SOURCE
    return Sandbox(preload=preload, **kwargs)


def harness_program(call: str, **args: Any) -> str:
    """A program calling ``referee_harness.<call>(**args)``, every value passed as JSON."""
    # Every value crosses as a JSON string literal: nothing of it is evaluated as code.
    lines = [f"import json, {HARNESS_MODULE} as H"]
    lines.append(
        f"H.{call}("
        + ", ".join(f"{k}=json.loads({json.dumps(json.dumps(v))})" for k, v in args.items())
        + ")"
    )
    return "\n".join(lines) + "\n"


def _check_program(
    source: str, spec: dict[str, Any], order: list[int], nonce: str, timeout: float
) -> str:
    """The program that checks ``source``.

    Normally the candidate's code *is* the program, between the harness's prologue and its calls,
    so that the fork server compiles it before forking (compiling in the child costs extra
    copy-on-write faults). Code with ``from __future__`` imports, which must come first in a
    module, is compiled inside the run instead.
    """
    args = {"inputs": spec["inputs"], "order": order, "timeout": timeout}
    if "__future__" in source:
        return harness_program(
            "run", source=source, entry_point=spec["entry_point"], nonce=nonce, **args
        )
    literal = json.dumps(json.dumps(args))
    return (
        f"import {HARNESS_MODULE} as __referee_h, json as __referee_json\n"
        f"__referee_h.begin({nonce!r})\n"
        f"{source}\n"
        f"__referee_h.run_loaded(globals(), {spec['entry_point']!r}, "
        f"**__referee_json.loads({literal}))\n"
    )


class FunctionVerifier:
    """Verifies completions of function tasks (``payload.entry_point``, ``hidden.inputs``).

    >>> v = FunctionVerifier()                                   # doctest: +SKIP
    >>> v.verify(task, completion).reward                        # doctest: +SKIP
    1.0
    """

    name = "function"

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        call_timeout_s: float = 5.0,
        run_timeout_s: float = 30.0,
        memory_mb: int = 1024,
    ) -> None:
        self._own = sandbox is None
        self.sandbox = sandbox or harness_sandbox()
        if HARNESS_MODULE not in getattr(self.sandbox, "preload", {}):
            raise VerifierError(
                "FunctionVerifier needs a sandbox with its harness preloaded; "
                "make one with referee.verify.function.harness_sandbox()"
            )
        # Limits on CPU time, the wall clock a backstop (referee.sandbox.cputime): each call's
        # (the harness's ITIMER_PROF) and the whole run's.
        self.call_timeout_s = call_timeout_s
        self.run_timeout_s = run_timeout_s
        self.limits = cpu_limits(run_timeout_s, memory_mb=memory_mb)

    # ---- public -------------------------------------------------------------------------
    def verify(self, task: FunctionTask, completion: str, *, seed: int | None = None) -> Verdict:
        """Judge ``completion`` for ``task``. Never raises: a verifier fault is an infra error.
        The verdict's ``sandbox`` is what its sandbox runs cost."""
        return metered_verdict(task.id, VERSION, lambda: self._verify(task, completion, seed))

    def _verify(self, task: FunctionTask, completion: str, seed: int | None) -> Verdict:
        t0 = time.perf_counter()
        try:
            spec = _spec(task)
        except VerifierError as e:
            return Verdict.infra(task.id, str(e), VERSION)
        flags = scan(spec["code_prompt"] + completion)
        source = spec["code_prompt"] + completion
        n = len(spec["inputs"])
        order = list(range(n))
        random.Random(seed if seed is not None else secrets.randbits(32)).shuffle(order)
        nonce = secrets.token_hex(8)
        run = functools.partial(
            self.sandbox.run_python,
            _check_program(source, spec, order, nonce, self.call_timeout_s),
            name="check.py",
            limits=self.limits,
        )
        try:
            r, spent = judged_run(
                run,
                self.run_timeout_s,
                stalled=lambda r: stalls_outcome(H.stalls(H.frames(r.stdout, nonce))),
            )
        except RefereeError as e:
            return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
        if spent in ("time-limit", "idle") and not r.timed_out:
            # Over its CPU time (or idle) yet ended: judged as a run the wall clock ended.
            r = r.model_copy(update={"timed_out": True})
        timings = {"run_s": r.wall_s}
        tests, more_flags, load_error = self._judge(spec, r, H.frames(r.stdout, nonce), order)
        flags += more_flags
        replayable = (
            not load_error
            and spec.get("test")
            and any(
                t.status == "failed" and t.detail == "differs from the reference" for t in tests
            )
            and not any(t.status in ("missing", "timeout", "error") for t in tests)
        )
        if replayable:
            accepted, replay_s = self._replay(spec, r, nonce, order)
            timings["replay_s"] = replay_s
            if accepted is None:
                return Verdict.infra(
                    task.id, "replay of the task's own test failed to run", VERSION
                )
            if accepted:
                # Only the task's own calls can be re-checked by its own test; a generated
                # (augmented) input that differs from the reference stays a failure.
                n_original = spec.get("n_original", len(tests))
                tests = [
                    TestOutcome(
                        name=t.name,
                        status="passed",
                        detail="accepted by the task's own test; differs from the reference",
                    )
                    if t.detail == "differs from the reference" and i < n_original
                    else t
                    for i, t in enumerate(tests)
                ]
        passed_n = sum(t.status == "passed" for t in tests)
        timings["total_s"] = time.perf_counter() - t0
        return Verdict(
            task_id=task.id,
            reward=passed_n / len(tests) if tests else 0.0,
            passed=bool(tests) and passed_n == len(tests),
            tests=tests,
            flags=flags,
            timings=timings,
            verifier=VERSION,
        )

    def verify_many(
        self, items: Iterable[tuple[Task, str]], *, workers: int | None = None
    ) -> list[Verdict]:
        """Verify (task, completion) pairs concurrently; results in input order."""
        items = list(items)
        workers = workers or self.sandbox.python_workers
        with ThreadPoolExecutor(workers) as pool:
            # Each item in a copy of the caller's context: its deadline and meters hold there.
            jobs = [
                pool.submit(contextvars.copy_context().run, self.verify, t, c) for t, c in items
            ]
            return [j.result() for j in jobs]

    def close(self) -> None:
        if self._own:
            self.sandbox.close()

    def __enter__(self) -> FunctionVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- internals ----------------------------------------------------------------------
    def _judge(
        self, spec: dict[str, Any], r: ExecResult, frames: list[dict[str, Any]], order: list[int]
    ) -> tuple[list[TestOutcome], list[Flag], bool]:
        flags: list[Flag] = []
        expected = spec["expected"]
        got: dict[int, Any] = {}
        recheck: tuple[int, Any] | None = None
        load_error = None
        for fr in frames:
            if not isinstance(fr, dict):
                continue
            if "load_error" in fr:
                load_error = str(fr["load_error"])
            elif "i" in fr and isinstance(fr["i"], int) and 0 <= fr["i"] < len(expected):
                if fr["i"] in got:
                    flags.append(
                        Flag(kind="duplicate-results", evidence=f"input {fr['i']} reported twice")
                    )
                    got[fr["i"]] = ["duplicate"]
                else:
                    got[fr["i"]] = H.settled(fr.get("out"))
            elif "recheck" in fr and recheck is None:
                recheck = (fr["recheck"], H.settled(fr.get("out")))
        tests: list[TestOutcome] = []
        n_original = spec.get("n_original", len(expected))
        for i, exp in enumerate(expected):
            name = f"call {i}" if i < n_original else f"augmented call {i - n_original}"
            out = got.get(i)
            if load_error is not None:
                tests.append(
                    TestOutcome(
                        name=name, status="error", detail=f"solution failed to load: {load_error}"
                    )
                )
            elif out is None:
                status: TestStatus = "timeout" if r.timed_out else "missing"
                tests.append(
                    TestOutcome(
                        name=name, status=status, detail=f"no outcome reported ({r.summary()})"
                    )
                )
            elif not isinstance(out, list) or not out:
                tests.append(TestOutcome(name=name, status="failed", detail="malformed outcome"))
            elif out[0] == "timeout":
                tests.append(
                    TestOutcome(
                        name=name,
                        status="timeout",
                        detail=f"call exceeded {self.call_timeout_s:g}s",
                    )
                )
            elif out[0] == "stalled":  # idle (a starved call was retried, then an infra error)
                tests.append(
                    TestOutcome(name=name, status="timeout", detail="call idle or blocked")
                )
            elif out[0] == "unencodable":
                flags.append(Flag(kind="unreportable-result", evidence=str(out[1:])[:200]))
                tests.append(
                    TestOutcome(
                        name=name, status="failed", detail="returned a value that is not plain data"
                    )
                )
            elif _safe_same(out, exp):
                tests.append(TestOutcome(name=name, status="passed"))
            elif out[0] == "raise" or exp[0] == "raise":
                tests.append(
                    TestOutcome(
                        name=name,
                        status="failed",
                        detail=f"outcome {_short(out)}, expected {_short(exp)}",
                    )
                )
            else:
                tests.append(
                    TestOutcome(name=name, status="failed", detail="differs from the reference")
                )
        if order and load_error is None:
            first = order[0]
            if recheck is None or recheck[0] != first:
                if got.get(first) is not None and not r.timed_out:
                    flags.append(
                        Flag(
                            kind="recheck-missing", evidence="the repeated call was never reported"
                        )
                    )
                    tests[first] = TestOutcome(
                        name=tests[first].name, status="failed", detail="repeated call not reported"
                    )
            elif not _same_or_both_raise(recheck[1], got.get(first)):
                flags.append(
                    Flag(
                        kind="inconsistent-outputs",
                        evidence=f"input {first}: {_short(got.get(first))} then "
                        f"{_short(recheck[1])}",
                    )
                )
                tests[first] = TestOutcome(
                    name=tests[first].name,
                    status="failed",
                    detail="a repeated call gave another answer",
                )
        return tests, flags, load_error is not None

    def _replay(
        self, spec: dict[str, Any], r: ExecResult, nonce: str, order: list[int]
    ) -> tuple[bool | None, float]:
        got = {fr["i"]: fr["out"] for fr in H.frames(r.stdout, nonce) if "i" in fr}
        table = [[inp[0], inp[1], got[i]] for i, inp in enumerate(spec["inputs"]) if i in got]
        replay_nonce = secrets.token_hex(8)
        program = harness_program(
            "replay",
            prompt=spec["code_prompt"],
            test=spec["test"],
            entry_point=spec["entry_point"],
            table=table,
            seed=spec.get("seed", 0),
            nonce=replay_nonce,
        )
        try:
            rr = self.sandbox.run_python(program, name="replay.py", limits=self.limits)
        except RefereeError:
            return None, 0.0
        for fr in H.frames(rr.stdout, replay_nonce):
            if "replay" in fr:
                return fr["replay"] == "passed", rr.wall_s
        return None, rr.wall_s


def _safe_same(a: Any, b: Any) -> bool:
    """Outcome comparison that treats anything malformed (nested too deep, wrong types) as a
    mismatch: what the candidate reports must never be able to crash the verifier into an
    infrastructure error."""
    try:
        return bool(H.same(a, b))
    except (RecursionError, ValueError, TypeError, IndexError, KeyError, OverflowError):
        return False


def _same_or_both_raise(a: Any, b: Any) -> bool:
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    return _safe_same(a, b)


def _short(out: Any) -> str:
    text = json.dumps(out)
    return text if len(text) <= 80 else text[:77] + "..."


def _spec(task: FunctionTask) -> dict[str, Any]:
    payload, hidden = task.payload, task.hidden
    missing = [k for k in ("entry_point", "code_prompt") if k not in payload]
    missing += [k for k in ("inputs", "expected") if k not in hidden]
    if missing:
        raise VerifierError(
            f"task {task.id!r} is not a function task: missing {', '.join(missing)} "
            "(import it with `referee tasks import`)"
        )
    if len(hidden["inputs"]) != len(hidden["expected"]):
        raise VerifierError(f"task {task.id!r}: inputs and expected outcomes differ in number")
    if not hidden["inputs"]:
        raise VerifierError(f"task {task.id!r} has no recorded test inputs")
    return {**payload, **hidden}
