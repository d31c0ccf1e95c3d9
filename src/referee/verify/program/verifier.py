"""``ProgramVerifier``: judges answers to program tasks (``TaskKind.PROGRAM``).

An answer is built once (compiled, or syntax-checked) in the sandbox, then run on every hidden
case with that case's time and memory limits, its input on stdin. Each case's output is
compared on the host, as plain text, in the task's mode (tokens, exact, float) or by the task's
checker in a sandbox of its own; ``io == "function"`` tasks call a Python function instead
(:mod:`.function_io`). Exit codes and stdout claims decide nothing beyond "the run ended
cleanly": a case passes only when its output is right. ``reward`` is the share of cases passed,
``passed`` means all of them, where "cases" leaves out those whose input is a visible example's
(``payload.examples``, line ends and trailing whitespace normalised) whenever another case
exists: those still run and are reported (detail ``example``), but a program that looks up the
examples' outputs earns nothing for them. Each case is a
:class:`~referee.verify.verdict.TestOutcome` named ``case-N`` whose detail gives the judge's
reason (wrong answer, time limit, memory limit, runtime error, compile error, output limit).

>>> with ProgramVerifier() as v:                                          # doctest: +SKIP
...     v.verify(task, "```c\\nint main(){...}\\n```").reward
1.0
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

from referee.errors import RefereeError, VerifierError
from referee.sandbox import Sandbox
from referee.sandbox.cputime import judged_run
from referee.sandbox.toolchains import available_toolchains
from referee.tasks.model import Task
from referee.verify.guard import scan
from referee.verify.program.answer import AnswerError, parse_answer
from referee.verify.program.build import Build, CompileFailure, build_program
from referee.verify.program.checker import CheckerCache, run_checker
from referee.verify.program.compare import compare
from referee.verify.program.execute import (
    case_cpu_limit,
    case_limits,
    classify,
    memory_by_address_space,
    run_build,
)
from referee.verify.program.function_io import run_function_cases
from referee.verify.program.spec import ProgramSpec, program_spec
from referee.verify.verdict import Flag, TestOutcome, Verdict, metered_verdict

__all__ = ["VERSION", "ProgramVerifier", "program_sandbox"]

VERSION = "program@1"
#: The smallest output cap of a case; larger where the expected output is large.
MIN_OUTPUT_BYTES = 1 << 20


def program_sandbox(**kwargs: Any) -> Sandbox:
    """A sandbox with every toolchain this machine has and the function harness preloaded."""
    from referee.verify.function import harness_sandbox

    kwargs.setdefault("toolchains", tuple(available_toolchains()))
    return harness_sandbox(**kwargs)


class ProgramVerifier:
    """Verifies answers to program tasks in any of the seven languages.

    ``sandbox``: one made with :func:`program_sandbox` (default: made here and owned).
    ``warm``: run cases on the fork server's warm path (default) or in a fresh sandbox each.
    ``stop_on_first_failure``: cases after the first that fails are ``skipped`` (a failure).
    """

    name = "program"

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        warm: bool = True,
        stop_on_first_failure: bool = False,
    ) -> None:
        self._own = sandbox is None
        self.sandbox = sandbox or program_sandbox()
        self.warm = warm
        self.stop_on_first_failure = stop_on_first_failure
        self._checkers = CheckerCache()
        self._checker_sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        self._rlimit_as = memory_by_address_space(self.sandbox)

    @property
    def checker_sandbox(self) -> Sandbox:
        """Where checkers are built and run: a sandbox of their own (made on first use), so
        that no candidate ever runs in a process forked from one that held a checker."""
        with self._lock:
            if self._checker_sandbox is None:
                have = available_toolchains()
                self._checker_sandbox = Sandbox(
                    toolchains=tuple(x for x in ("python", "cpp") if x in have),
                    python_workers=1,
                    scratch_mb=1024,
                )
            return self._checker_sandbox

    def verify(self, task: Task, answer: str, /, *, language: str | None = None) -> Verdict:
        """Judge ``answer`` for ``task``; ``language`` overrides the fenced block's tag. Never
        raises: a verifier or sandbox fault is an infra error."""
        return metered_verdict(
            task.id,
            VERSION,
            lambda: self._verify(task, answer, language),
            infra=(VerifierError, RefereeError),
        )

    def _verify(self, task: Task, answer: str, language: str | None) -> Verdict:
        t0 = time.perf_counter()
        spec = program_spec(task)
        timings: dict[str, float] = {}
        flags: list[Flag] = []
        try:
            ans = parse_answer(answer, language=language, allowed=spec.languages)
        except AnswerError as e:
            tests = _all(spec, "error", f"answer: {e}")
            return _verdict(task, spec, tests, flags, timings, t0)
        if spec.io == "function":
            assert spec.fn_name is not None
            # The guard's evidence (exit calls, patched builtins) is about code that is called;
            # a whole program may exit as it likes.
            flags += scan(ans.code)
            tests, more = run_function_cases(
                self.sandbox, ans.code, spec.fn_name, spec.cases, spec.tolerance
            )
            return _verdict(task, spec, tests, flags + more, timings, t0)
        built = build_program(self.sandbox, ans.language, ans.code)
        timings["compile_s"] = built.compile_s
        if isinstance(built, CompileFailure):
            return _verdict(task, spec, _all(spec, "error", built.detail), flags, timings, t0)
        t1 = time.perf_counter()
        tests = self._run_cases(spec, built, flags)
        timings["run_s"] = time.perf_counter() - t1
        return _verdict(task, spec, tests, flags, timings, t0)

    def _run_cases(self, spec: ProgramSpec, built: Build, flags: list[Flag]) -> list[TestOutcome]:
        judge = self.checker_sandbox if spec.checker else self.sandbox
        checker = self._checkers.get(judge, spec.checker) if spec.checker else None
        tests: list[TestOutcome] = []
        for i, case in enumerate(spec.cases):
            name = f"case-{i}"
            if self.stop_on_first_failure and tests and tests[-1].status != "passed":
                tests.append(
                    TestOutcome(
                        name=name, status="skipped", detail="not run: an earlier case failed"
                    )
                )
                continue
            cap = max(MIN_OUTPUT_BYTES, 4 * len(case.output))
            limits = case_limits(
                built, case.time_limit_s, case.memory_mb, cap, address_space=self._rlimit_as
            )
            run = functools.partial(
                run_build,
                self.sandbox,
                built,
                case.input.encode(),
                limits,
                memory_mb=case.memory_mb,
                warm=self.warm,
            )
            r, spent = judged_run(run, case_cpu_limit(built, case.time_limit_s))
            bad = classify(r, case.time_limit_s, spent)
            if bad is not None:
                tests.append(TestOutcome(name=name, status=bad[0], detail=bad[1]))
                continue
            if checker is not None:
                ok, why = run_checker(
                    judge, checker, case.input, r.stdout, case.output, warm=self.warm
                )
                if why.startswith("checker failed"):
                    flags.append(Flag(kind="checker-failed", evidence=f"{name}: {why}"))
            else:
                ok, why = compare(spec.compare, r.stdout, case.output, tolerance=spec.tolerance)
                why = f"wrong answer ({why})" if why else "wrong answer"
            tests.append(
                TestOutcome(
                    name=name, status="passed" if ok else "failed", detail="" if ok else why
                )
            )
        return tests

    def close(self) -> None:
        with self._lock:
            checker_sandbox, self._checker_sandbox = self._checker_sandbox, None
        if checker_sandbox is not None:
            checker_sandbox.close()
        if self._own:
            self.sandbox.close()

    def __enter__(self) -> ProgramVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _all(spec: ProgramSpec, status: Any, detail: str) -> list[TestOutcome]:
    return [
        TestOutcome(name=f"case-{i}", status=status, detail=detail) for i in range(len(spec.cases))
    ]


def _example(t: TestOutcome) -> TestOutcome:
    detail = f"example; {t.detail}" if t.detail else "example"
    return t.model_copy(update={"detail": detail})


def _verdict(
    task: Task,
    spec: ProgramSpec,
    tests: list[TestOutcome],
    flags: list[Flag],
    timings: dict[str, float],
    t0: float,
) -> Verdict:
    # Cases that repeat a visible example are reported but not scored (unless every case is
    # one): a program that looks up the examples' outputs must earn nothing for them.
    if len(tests) == len(spec.cases):
        tests = [_example(t) if c.example else t for t, c in zip(tests, spec.cases, strict=True)]
        scored = [t for t, keep in zip(tests, spec.scored, strict=True) if keep]
    else:  # not one outcome per case: score them all
        scored = tests
    passed_n = sum(t.status == "passed" for t in scored)
    timings["total_s"] = time.perf_counter() - t0
    return Verdict(
        task_id=task.id,
        reward=passed_n / len(scored) if scored else 0.0,
        passed=bool(scored) and passed_n == len(scored),
        tests=tests,
        flags=flags,
        timings=timings,
        verifier=VERSION,
    )
