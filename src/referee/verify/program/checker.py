"""Special judges: a task's own checker program, run apart from the candidate.

A checker (Python or C++, supplied by the task in ``hidden.checker``) is built once per checker
source and cached, then run in the sandbox for each case that needs it, with testlib's argument
order: ``checker input.txt output.txt answer.txt`` (the case's input, the candidate's output,
the expected output). Exit code 0 accepts; 1 and 2 (testlib's wrong answer and presentation
error) reject; anything else, or a crash or timeout, is the checker failing, which rejects the
case and raises a flag. The candidate's output reaches the checker only as a file, as data; the
candidate never sees the checker or the expected output, and its own process plays no part here.
"""

from __future__ import annotations

import hashlib
import threading

from referee.errors import VerifierError
from referee.sandbox import Limits, Sandbox
from referee.verify.program.build import Build, CompileFailure, build_program
from referee.verify.program.execute import run_build
from referee.verify.program.spec import Checker

__all__ = ["CheckerCache", "run_checker"]

CHECKER_LIMITS = Limits(
    timeout_s=10.0, memory_mb=512, max_processes=16, stdout_bytes=1 << 14, stderr_bytes=1 << 14
)
_ARGS = ("input.txt", "output.txt", "answer.txt")


class CheckerCache:
    """Built checkers by source hash; a checker that does not build is a task fault."""

    def __init__(self, max_entries: int = 256) -> None:
        self._builds: dict[str, Build] = {}
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(self, sandbox: Sandbox, checker: Checker) -> Build:
        key = hashlib.sha256(f"{checker.language}\0{checker.source}".encode()).hexdigest()
        with self._lock:
            hit = self._builds.get(key)
        if hit is not None:
            return hit
        made = build_program(sandbox, checker.language, checker.source)
        if isinstance(made, CompileFailure):
            raise VerifierError(f"the task's checker does not build: {made.detail}")
        with self._lock:
            if len(self._builds) >= self.max_entries:
                self._builds.pop(next(iter(self._builds)))
            self._builds[key] = made
        return made


def run_checker(
    sandbox: Sandbox, checker: Build, case_input: str, output: str, expected: str, *, warm: bool
) -> tuple[bool, str]:
    """(accepted, reason) from the checker on one case; the reason never quotes expected text."""
    data = {
        "input.txt": case_input.encode(),
        "output.txt": output.encode(),
        "answer.txt": expected.encode(),
    }
    r = run_build(
        sandbox,
        checker,
        b"",
        CHECKER_LIMITS,
        memory_mb=CHECKER_LIMITS.memory_mb,
        args=_ARGS,
        data=data,
        warm=warm,
    )
    if r.exit_code == 0 and not r.timed_out and not r.memory_exceeded:
        return True, ""
    if r.exit_code in (1, 2) and not r.timed_out and not r.memory_exceeded:
        return False, "wrong answer (rejected by the checker)"
    return False, f"checker failed ({r.summary()})"
