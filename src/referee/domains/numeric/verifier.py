"""The numeric verifier: a candidate's function on hidden parameter sets, judged on the host.

1. The answer is a Python program, or a model's text holding one: the last ```python block
   (:func:`referee.envs.answers.extract_code`).
2. It runs once in the numeric sandbox (numpy and scipy, nothing of the grader's): its function
   is called on every hidden parameter set, in a shuffled order, each outcome reported as plain
   data (:mod:`.execute`). Expected outputs and the reference never enter the sandbox.
3. On the host each set passes when every number is within the task's tolerance of the
   reference (:mod:`.compare`) *and* every invariant holds on the returned numbers
   (:mod:`.invariants`). NaN and infinities never pass; a timeout, a crash, a missing or
   unreportable result is a failure; a repeated call that answers otherwise fails its set.
4. ``reward`` is the share of hidden sets passed; ``passed`` needs all. The static guard's flags
   ride along as evidence. A sandbox failure or a malformed task is an ``infra_error``.

>>> with NumericVerifier() as v:                                    # doctest: +SKIP
...     v.verify(task, "```python\\ndef solve(params): ...\\n```").reward
"""

from __future__ import annotations

import math
import os
import struct
import threading
import time
from typing import Any

from referee.domains.numeric.compare import floats_of, within
from referee.domains.numeric.execute import Outcome, run_function
from referee.domains.numeric.invariants import check_invariants
from referee.domains.numeric.sandbox import numeric_sandbox
from referee.domains.numeric.spec import NumericSpec
from referee.envs.answers import extract_code
from referee.errors import RefereeError, VerifierError
from referee.sandbox import Sandbox
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSetup
from referee.verify.guard import scan
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict, metered_verdict

__all__ = ["VERSION", "NumericVerifier", "judge_outcome", "make_verifier"]

VERSION = "numeric@1"
_STATUS: dict[str, TestStatus] = {
    "timeout": "timeout",
    "missing": "missing",
    "raised": "error",
    "load-error": "error",
    "unreportable": "failed",
}


def judge_outcome(
    spec: NumericSpec, params: dict[str, Any], expected: Any, outcome: Outcome
) -> tuple[TestStatus, str]:
    """The status of one set and why: tolerance first, then the invariants."""
    if outcome.status != "ok":
        return _STATUS.get(outcome.status, "failed"), outcome.detail
    tol = spec.tolerance
    why = within(expected, outcome.value, rtol=tol["rtol"], atol=tol["atol"])
    if why:
        return "failed", why[:300]
    broken = check_invariants(spec.invariants, params, outcome.value, expected)
    if broken:
        return "failed", "; ".join(broken)[:300]
    return "passed", ""


def _precision_flags(outcomes: list[Outcome]) -> list[Flag]:
    """Evidence, not a verdict: every returned float is exactly a float32 (a computation in
    double precision almost never lands on one). Within the tolerance such an answer passes;
    the flag lets an auditor see that it was computed, or rounded, in single precision."""
    values = [f for o in outcomes if o.status == "ok" for f in floats_of(o.value)]
    # Beyond float32's range nothing is a float32 (and struct would refuse to pack it).
    nontrivial = [f for f in values if math.isfinite(f) and abs(f) < 3.4e38 and f != round(f)]
    if len(nontrivial) < 8:
        return []
    if all(float(struct.unpack("f", struct.pack("f", f))[0]) == f for f in nontrivial):
        return [
            Flag(
                kind="single-precision-output",
                evidence=f"all {len(nontrivial)} returned floats are exactly float32 values",
            )
        ]
    return []


class NumericVerifier:
    """Judges answers to numeric tasks; see the module docstring.

    ``sandbox``: a numeric sandbox (:func:`~referee.domains.numeric.sandbox.numeric_sandbox`)
    to use; default: one made on first use and closed with the verifier, with one warm
    worker per core (each worker holds numpy and scipy: about 1.7 CPU seconds to warm).
    """

    name = "numeric"

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self._sandbox = sandbox
        self._own = sandbox is None
        self._lock = threading.Lock()

    @property
    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = numeric_sandbox(python_workers=os.cpu_count() or 1)
            return self._sandbox

    def verify(self, task: Task, answer: str, /) -> Verdict:
        """The verdict on ``answer``; never raises (a fault of ours is an ``infra_error``)."""
        return metered_verdict(task.id, VERSION, lambda: self._verify(task, answer))

    def _verify(self, task: Task, answer: str) -> Verdict:
        t0 = time.perf_counter()
        try:
            spec = NumericSpec.of(task)
        except VerifierError as e:
            return Verdict.infra(task.id, str(e), VERSION)
        code = extract_code(answer or "") or ""
        if not code.strip():
            tests = [
                TestOutcome(name=f"set-{i}", status="error", detail="the answer holds no code")
                for i in range(len(spec.params))
            ]
            return Verdict(task_id=task.id, reward=0.0, passed=False, tests=tests, verifier=VERSION)
        flags = scan(code)
        try:
            run = run_function(
                self.sandbox,
                code,
                spec.entry_point,
                spec.params,
                time_limit_s=spec.time_limit_s,
                memory_mb=spec.memory_mb,
            )
        except RefereeError as e:
            return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
        tests = []
        for i, (params, expected, outcome) in enumerate(
            zip(spec.params, spec.expected, run.outcomes, strict=True)
        ):
            status, detail = judge_outcome(spec, params, expected, outcome)
            tests.append(TestOutcome(name=f"set-{i}", status=status, detail=detail))
        if run.inconsistent:
            # An answer that depends on call order is not an answer: no set passes.
            flags.append(Flag(kind="inconsistent-outputs", evidence="a repeated call differed"))
            tests = [
                TestOutcome(name=t.name, status="failed", detail="a repeated call differed")
                if t.status == "passed"
                else t
                for t in tests
            ]
        flags += _precision_flags(run.outcomes)
        passed_n = sum(t.status == "passed" for t in tests)
        return Verdict(
            task_id=task.id,
            reward=passed_n / len(tests),
            passed=passed_n == len(tests),
            tests=tests,
            flags=flags,
            timings={"run_s": run.result.wall_s, "total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def close(self) -> None:
        if self._own and self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def __enter__(self) -> NumericVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_verifier(setup: VerifierSetup) -> NumericVerifier:
    """The dispatch registry's factory: numeric tasks need numpy and scipy in the sandbox's
    view, so a verifier with a sandbox of its own."""
    return NumericVerifier()
