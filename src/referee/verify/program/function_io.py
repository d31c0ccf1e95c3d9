"""``io == "function"`` tasks (Python only): call ``fn_name`` with each case's JSON arguments.

The candidate runs in the sandbox with the function verifier's harness
(:mod:`referee.verify.harness`): every case is called in a shuffled order, each outcome is
reported as tagged plain data of exact builtin types (an object whose ``__eq__`` always says
True cannot even be reported), and the first case is called again to catch answers that depend
on call order. On the host, code that never ran the candidate decodes each outcome into fresh
builtins and compares it with the expected JSON value. ``fn_name`` is a top-level function or a
method of class ``Solution`` (a fresh instance per call), as LeetCode writes them.
"""

from __future__ import annotations

import functools
import json
import math
import random
import secrets
from typing import Any

from referee.errors import VerifierError
from referee.sandbox import Sandbox
from referee.sandbox.cputime import cpu_limits, judged_run, stalls_outcome
from referee.verify import harness as H
from referee.verify.function import harness_program
from referee.verify.program.spec import Case
from referee.verify.verdict import Flag, TestOutcome

__all__ = ["run_function_cases"]

_ENTRY = "__referee_entry"
_TRAILER = """

def __referee_entry(*args, **kwargs):
    fn = globals().get({name!r})
    if fn is None or isinstance(fn, type):
        fn = getattr(globals()["Solution"](), {name!r})
    return fn(*args, **kwargs)
"""


def _json_same(got: Any, want: Any, tol: float, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, int | float) and isinstance(got, int | float):
        if isinstance(want, int) and isinstance(got, int):
            return got == want
        g, w = float(got), float(want)
        if math.isnan(g) or math.isnan(w):
            return math.isnan(g) and math.isnan(w)
        return math.isclose(g, w, rel_tol=tol, abs_tol=tol)
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(_json_same(g, w, tol, depth + 1) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(_json_same(got[k], want[k], tol, depth + 1) for k in want)
        )
    return type(got) is type(want) and got == want


def _value(encoded: Any) -> Any:
    """The candidate's reported value as fresh JSON data made on the host; ValueError if not."""
    try:
        return json.loads(json.dumps(H.decode(encoded)))
    except (TypeError, ValueError, RecursionError, OverflowError) as e:
        raise ValueError(str(e)) from e


def _arguments(case: Case, i: int) -> list[Any]:
    try:
        args = json.loads(case.input)
    except ValueError as e:
        raise VerifierError(f"case {i}: input is not JSON ({e})") from e
    if not isinstance(args, list):
        raise VerifierError(f"case {i}: input must be a JSON list of arguments")
    return args


def run_function_cases(
    sandbox: Sandbox, code: str, fn_name: str, cases: tuple[Case, ...], tolerance: float
) -> tuple[list[TestOutcome], list[Flag]]:
    """Per-case outcomes and flags for a function-io answer."""
    inputs = [[H.encode(_arguments(c, i)), H.encode({})] for i, c in enumerate(cases)]
    try:
        expected = [json.loads(c.output) for c in cases]
    except ValueError as e:
        raise VerifierError(f"a case's output is not JSON ({e})") from e
    order = list(range(len(cases)))
    random.Random(secrets.randbits(32)).shuffle(order)
    nonce = secrets.token_hex(8)
    per_call = max(c.time_limit_s for c in cases)
    program = harness_program(
        "run",
        source=code + _TRAILER.format(name=fn_name),
        entry_point=_ENTRY,
        inputs=inputs,
        order=order,
        nonce=nonce,
        timeout=per_call,
        timeouts=[c.time_limit_s for c in cases],
    )
    # Each call's limit is on CPU time (the harness's ITIMER_PROF, with a wall-clock backstop of
    # its own); the run's, their sum and a margin, is too (referee.sandbox.cputime).
    budget = sum(c.time_limit_s for c in cases) + per_call + 2.0
    limits = cpu_limits(
        budget,
        memory_mb=max(c.memory_mb for c in cases) + 32,
        stdout_bytes=16 << 20,
    )
    r, spent = judged_run(
        functools.partial(sandbox.run_python, program, name="check.py", limits=limits),
        budget,
        stalled=lambda r: stalls_outcome(H.stalls(H.frames(r.stdout, nonce))),
    )
    run_timed_out = spent in ("time-limit", "idle") or r.timed_out
    got: dict[int, Any] = {}
    recheck: tuple[int, Any] | None = None
    load_error: str | None = None
    flags: list[Flag] = []
    for fr in H.frames(r.stdout, nonce):
        if "load_error" in fr:
            load_error = str(fr["load_error"])[:200]
        elif isinstance(fr.get("i"), int) and fr["i"] in range(len(cases)):
            if fr["i"] in got:
                flags.append(Flag(kind="duplicate-results", evidence=f"case {fr['i']} twice"))
                got[fr["i"]] = ["duplicate"]
            else:
                got[fr["i"]] = H.settled(fr.get("out"))
        elif "recheck" in fr and recheck is None:
            recheck = (fr["recheck"], H.settled(fr.get("out")))
    tests: list[TestOutcome] = []
    for i, want in enumerate(expected):
        name = f"case-{i}"
        out = got.get(i)
        if load_error is not None:
            tests.append(
                TestOutcome(name=name, status="error", detail=f"runtime error: {load_error}")
            )
        elif out is None:
            if run_timed_out:
                tests.append(TestOutcome(name=name, status="timeout", detail="time limit exceeded"))
            elif r.memory_exceeded:
                tests.append(TestOutcome(name=name, status="error", detail="memory limit exceeded"))
            else:
                tests.append(
                    TestOutcome(name=name, status="missing", detail=f"no result ({r.summary()})")
                )
        elif not isinstance(out, list) or not out:
            tests.append(TestOutcome(name=name, status="failed", detail="malformed result"))
        elif out[0] == "timeout":
            tests.append(
                TestOutcome(
                    name=name,
                    status="timeout",
                    detail=f"time limit exceeded ({cases[i].time_limit_s:g}s)",
                )
            )
        elif out[0] == "stalled":  # idle: a starved call was retried or raised MachineStarved
            tests.append(
                TestOutcome(name=name, status="timeout", detail="time limit exceeded (idle)")
            )
        elif out[0] == "raise":
            tests.append(
                TestOutcome(
                    name=name, status="error", detail=f"runtime error: raised {str(out[1:2])[:120]}"
                )
            )
        elif out[0] == "ok" and len(out) == 2:
            try:
                value = _value(out[1])
            except ValueError:
                tests.append(
                    TestOutcome(
                        name=name, status="failed", detail="returned a value that is not JSON data"
                    )
                )
                continue
            if _json_same(value, want, tolerance):
                tests.append(TestOutcome(name=name, status="passed"))
            else:
                tests.append(TestOutcome(name=name, status="failed", detail="wrong answer"))
        else:
            tests.append(
                TestOutcome(
                    name=name, status="failed", detail="returned a value that is not plain data"
                )
            )
    if order and load_error is None and got.get(order[0]) is not None and not run_timed_out:
        first = order[0]
        if recheck is None or recheck[0] != first or recheck[1] != got[first]:
            flags.append(Flag(kind="inconsistent-outputs", evidence=f"case {first} repeated"))
            tests[first] = TestOutcome(
                name=f"case-{first}", status="failed", detail="a repeated call gave another answer"
            )
    return tests, flags
