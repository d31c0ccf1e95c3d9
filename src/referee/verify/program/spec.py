"""A program task's data (``TaskKind.PROGRAM``), read and checked once per verification.

The schema is the one the importers write (``payload``: ``io``, ``fn_name``, ``examples``,
``languages``, ``time_limit_s``, ``memory_mb``; ``hidden``: ``cases``, ``compare``,
``float_tolerance``, ``checker``, ``reference``). A hidden case whose input is a visible
example's (compared by :func:`input_key`) is marked ``example``: a program that looks the
examples up must not earn reward for them, so such cases count only when every case is one. A
task that breaks it is a
:class:`~referee.errors.VerifierError` naming the field: the verifier reports an infra error,
never a model failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from referee.errors import VerifierError
from referee.sandbox.toolchains import LANGUAGES
from referee.tasks.model import Task
from referee.verify.program.compare import COMPARE_MODES

__all__ = ["Case", "Checker", "ProgramSpec", "input_key", "program_spec"]

DEFAULT_TIME_LIMIT_S = 2.0
DEFAULT_MEMORY_MB = 256
DEFAULT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Case:
    input: str
    output: str
    time_limit_s: float
    memory_mb: int
    #: Its input is a visible example's (``payload.examples``): run and reported, but it
    #: counts towards the reward only when every case is an example.
    example: bool = False


@dataclass(frozen=True)
class Checker:
    language: str  # "python" or "cpp"
    source: str


@dataclass(frozen=True)
class ProgramSpec:
    io: str  # "stdin" or "function"
    fn_name: str | None
    languages: tuple[str, ...]
    cases: tuple[Case, ...]
    compare: str
    tolerance: float
    checker: Checker | None

    @property
    def scored(self) -> tuple[bool, ...]:
        """Which cases count towards the reward: those that are not visible examples, or all
        of them when every case is one."""
        if all(c.example for c in self.cases):
            return tuple(True for _ in self.cases)
        return tuple(not c.example for c in self.cases)


def input_key(text: str, io: str = "stdin") -> str:
    """A case input as compared with the examples' inputs: its whitespace-separated tokens (a
    program reading with ``cin >>``, ``scanf`` or ``split()`` cannot tell inputs with the same
    tokens apart, so a lookup keyed on them must not earn on a re-spaced copy of an example);
    a function task's JSON arguments in canonical form.

    Two inputs with the same tokens and other line breaks count as the same: the safe side,
    since a hidden case taken for an example only stops counting.

    >>> input_key("3\\r\\n1 2 3  \\r\\n\\r\\n") == input_key("  3 1\\t2\\n3")
    True
    """
    if io == "function":
        try:
            return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
        except (ValueError, RecursionError):
            pass
    return " ".join(text.split())


def _example_keys(examples: Any, io: str) -> set[str]:
    """The inputs of the visible examples (entries that are not ``{"input": str}`` are
    ignored: the examples are the prompt's, and decide nothing else)."""
    if not isinstance(examples, list):
        return set()
    return {
        input_key(e["input"], io)
        for e in examples
        if isinstance(e, dict) and isinstance(e.get("input"), str)
    }


def _number(value: Any, what: str, task_id: str, *, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise VerifierError(f"task {task_id!r}: {what} must be a positive number, got {value!r}")
    if integer and int(value) != value:
        raise VerifierError(f"task {task_id!r}: {what} must be a whole number, got {value!r}")
    return value


def program_spec(task: Task) -> ProgramSpec:
    """The verifier's view of ``task``; a :class:`VerifierError` for a malformed task."""
    p, h, tid = task.payload, task.hidden, task.id
    io = p.get("io", "stdin")
    if io not in ("stdin", "function"):
        raise VerifierError(f"task {tid!r}: payload.io must be 'stdin' or 'function', got {io!r}")
    fn_name = p.get("fn_name")
    if io == "function" and (not isinstance(fn_name, str) or not fn_name.isidentifier()):
        raise VerifierError(f"task {tid!r}: io 'function' needs payload.fn_name (an identifier)")
    langs = p.get("languages") or list(LANGUAGES)
    if not isinstance(langs, list) or any(x not in LANGUAGES for x in langs):
        raise VerifierError(
            f"task {tid!r}: payload.languages must list names among {', '.join(LANGUAGES)}"
        )
    if io == "function":
        langs = ["python"]
    time_limit = _number(p.get("time_limit_s", DEFAULT_TIME_LIMIT_S), "time_limit_s", tid)
    memory = _number(p.get("memory_mb", DEFAULT_MEMORY_MB), "memory_mb", tid, integer=True)
    raw_cases = h.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise VerifierError(f"task {tid!r}: hidden.cases must be a non-empty list")
    shown = _example_keys(p.get("examples"), io)
    cases = []
    for i, c in enumerate(raw_cases):
        if not isinstance(c, dict) or not isinstance(c.get("input"), str):
            raise VerifierError(f"task {tid!r}: case {i} needs 'input' (a string)")
        if not isinstance(c.get("output"), str):
            raise VerifierError(f"task {tid!r}: case {i} needs 'output' (a string)")
        cases.append(
            Case(
                input=c["input"],
                output=c["output"],
                time_limit_s=float(_number(c.get("time_limit_s", time_limit), "time_limit_s", tid)),
                memory_mb=int(_number(c.get("memory_mb", memory), "memory_mb", tid, integer=True)),
                example=bool(shown) and input_key(c["input"], io) in shown,
            )
        )
    mode = h.get("compare", "tokens")
    if mode not in COMPARE_MODES:
        raise VerifierError(
            f"task {tid!r}: hidden.compare must be one of {', '.join(COMPARE_MODES)}, got {mode!r}"
        )
    tolerance = float(_number(h.get("float_tolerance", DEFAULT_TOLERANCE), "float_tolerance", tid))
    checker = None
    if mode == "checker":
        c = h.get("checker")
        if (
            not isinstance(c, dict)
            or c.get("language") not in ("python", "cpp")
            or not isinstance(c.get("source"), str)
        ):
            raise VerifierError(
                f"task {tid!r}: compare 'checker' needs hidden.checker = "
                "{'language': 'python'|'cpp', 'source': ...}"
            )
        checker = Checker(language=c["language"], source=c["source"])
    if io == "function" and mode == "checker":
        raise VerifierError(f"task {tid!r}: io 'function' cannot use a checker")
    return ProgramSpec(
        io=io,
        fn_name=fn_name if io == "function" else None,
        languages=tuple(langs),
        cases=tuple(cases),
        compare=mode,
        tolerance=tolerance,
        checker=checker,
    )
