"""Running a program's function on parameter sets in the sandbox; outcomes back as plain data.

One sandboxed run calls the function on every parameter set, in a shuffled order, each on a
fresh decoded copy, through the function verifier's harness (:mod:`referee.verify.harness`):
each outcome travels as tagged plain data of exact builtin types, on a channel marked with a
fresh nonce, and the first set is called again to catch answers that depend on call order. A
short trailer after the program turns numpy arrays and scalars into lists and floats before
they are reported (whatever it produces is only numbers the program chose; an object that
cannot become plain data is not reported at all). On the host the outcomes are decoded into
fresh builtins: the comparison (:mod:`.compare`) and the invariants (:mod:`.invariants`) work
on those, in code that never ran the program.

The same run records a reference's outputs (families and imports: a reference is code too,
imported ones untrusted) and checks a candidate (the verifier, the environment's tool).
"""

from __future__ import annotations

import functools
import random
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from referee.sandbox import ExecResult, Sandbox
from referee.sandbox.cputime import cpu_limits, judged_run, stalls_outcome
from referee.verify import harness as H
from referee.verify.function import harness_program

__all__ = ["Outcome", "Run", "run_function"]

_ENTRY = "__referee_numeric_entry"
_TRAILER = """

def __referee_numeric_plain(x, depth=0):
    if depth > 16:
        raise ValueError("nested too deeply")
    if x is None or type(x) in (bool, int, float, str):
        return x
    if isinstance(x, dict):
        return {{str(k): __referee_numeric_plain(v, depth + 1) for k, v in dict(x).items()}}
    if isinstance(x, (list, tuple)):
        return [__referee_numeric_plain(v, depth + 1) for v in x]
    tolist = getattr(x, "tolist", None)
    if callable(tolist):
        return __referee_numeric_plain(tolist(), depth + 1)
    return float(x)


def __referee_numeric_entry(params):
    return __referee_numeric_plain({name}(params))
"""

Status = Literal["ok", "raised", "timeout", "missing", "unreportable", "load-error"]


@dataclass(frozen=True)
class Outcome:
    """One parameter set's outcome: ``value`` (plain JSON data) when ``status`` is ``ok``."""

    status: Status
    value: Any = None
    detail: str = ""


@dataclass(frozen=True)
class Run:
    """Every set's outcome, in the sets' order, and what the run cost and reported."""

    outcomes: list[Outcome]
    result: ExecResult
    #: The first set called again gave another answer (the program depends on call order).
    inconsistent: bool = False


def run_function(
    sandbox: Sandbox,
    code: str,
    entry_point: str,
    params: list[dict[str, Any]],
    *,
    time_limit_s: float,
    memory_mb: int,
    seed: int | None = None,
) -> Run:
    """Call ``entry_point`` of ``code`` on each of ``params`` in one sandboxed run.

    ``time_limit_s`` bounds each call's CPU time (the run's own limit is their sum plus a margin,
    enforced by killing it; both have a wall-clock backstop, :mod:`referee.sandbox.cputime`);
    raises :class:`~referee.errors.RefereeError` when the sandbox fails.
    """
    if not entry_point.isidentifier():
        raise ValueError(f"entry point {entry_point!r} is not a Python name")
    inputs = [[H.encode([p]), H.encode({})] for p in params]
    order = list(range(len(params)))
    random.Random(seed if seed is not None else secrets.randbits(32)).shuffle(order)
    nonce = secrets.token_hex(8)
    program = harness_program(
        "run",
        source=code + _TRAILER.format(name=entry_point),
        entry_point=_ENTRY,
        inputs=inputs,
        order=order,
        nonce=nonce,
        timeout=time_limit_s,
    )
    budget = time_limit_s * (len(params) + 1) + 2.0
    limits = cpu_limits(budget, memory_mb=memory_mb, stdout_bytes=32 << 20)
    r, spent = judged_run(
        functools.partial(sandbox.run_python, program, name="check.py", limits=limits),
        budget,
        stalled=lambda r: stalls_outcome(H.stalls(H.frames(r.stdout, nonce))),
    )
    if spent in ("time-limit", "idle") and not r.timed_out:
        # Over its CPU time (or idle) yet ended: judged as a run the wall clock ended.
        r = r.model_copy(update={"timed_out": True})
    return _read(r, nonce, len(params), order)


def _read(r: ExecResult, nonce: str, n: int, order: list[int]) -> Run:
    got: dict[int, Any] = {}
    recheck: tuple[int, Any] | None = None
    load_error: str | None = None
    duplicated: set[int] = set()
    for fr in H.frames(r.stdout, nonce):
        if "load_error" in fr:
            load_error = str(fr["load_error"])[:200]
        elif isinstance(fr.get("i"), int) and 0 <= fr["i"] < n:
            if fr["i"] in got:
                duplicated.add(fr["i"])
            got[fr["i"]] = H.settled(fr.get("out"))
        elif "recheck" in fr and recheck is None:
            recheck = (fr["recheck"], H.settled(fr.get("out")))
    outcomes = [_outcome(got.get(i), r, load_error, duplicated=i in duplicated) for i in range(n)]
    inconsistent = False
    if order and load_error is None and got.get(order[0]) is not None and not r.timed_out:
        first = order[0]
        inconsistent = recheck is None or recheck[0] != first or recheck[1] != got[first]
    return Run(outcomes=outcomes, result=r, inconsistent=inconsistent)


def _outcome(out: Any, r: ExecResult, load_error: str | None, *, duplicated: bool) -> Outcome:
    if load_error is not None:
        return Outcome("load-error", detail=f"the program failed to load: {load_error}")
    if duplicated:
        return Outcome("unreportable", detail="reported twice")
    if out is None:
        if r.timed_out:
            return Outcome("timeout", detail="the run's time limit was exceeded")
        if r.memory_exceeded:
            return Outcome("missing", detail="memory limit exceeded")
        return Outcome("missing", detail=f"no outcome reported ({r.summary()})")
    if not isinstance(out, list) or not out or not isinstance(out[0], str):
        return Outcome("unreportable", detail="malformed outcome")
    if out[0] == "timeout":
        return Outcome("timeout", detail="the call exceeded its time limit")
    if out[0] == "stalled":  # idle (a starved call was retried, then an infra error)
        return Outcome("timeout", detail="the call was idle or blocked past its time limit")
    if out[0] == "raise":
        return Outcome("raised", detail=f"raised {str(out[1:2])[:120]}")
    if out[0] == "ok" and len(out) == 2:
        try:
            return Outcome("ok", value=_plain(H.decode(out[1])))
        except (ValueError, TypeError, RecursionError, OverflowError, KeyError):
            return Outcome("unreportable", detail="returned a value that is not plain data")
    return Outcome("unreportable", detail="returned a value that is not plain data")


def _plain(x: Any, depth: int = 0) -> Any:
    """Decoded builtins as JSON-shaped data: tuples become lists; sets, bytes and complex
    numbers are refused (ValueError)."""
    if depth > 32:
        raise ValueError("nested too deeply")
    if x is None or isinstance(x, bool | int | float | str):
        return x
    if isinstance(x, list | tuple):
        return [_plain(v, depth + 1) for v in x]
    if isinstance(x, dict):
        return {str(k): _plain(v, depth + 1) for k, v in x.items()}
    raise ValueError(f"{type(x).__name__} is not JSON data")
