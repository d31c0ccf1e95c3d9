"""``VerilogVerifier``: judges a candidate module (``TaskKind.VERILOG``) by simulation.

1. The answer's Verilog (:func:`~.source.extract_verilog`) is checked statically
   (:func:`~.source.check_source`): a module that prints, finishes the simulation, opens files,
   reaches into the testbench by a hierarchical name, or brings directives or packages, is
   rejected before it runs: every test ``error``, and a ``forbidden-construct`` flag.
2. The reference is simulated alone under the task's hidden stimulus, in the sandbox, once per
   task (cached by content hash): its records are the expected trace.
3. The candidate is compiled with a fresh testbench (names and record frame carry a new random
   nonce each time) and simulated under the same stimulus, in the sandbox, under limits.
4. On the host, each cycle's records of each output (a clocked design's twice: before the
   rising edge and while the clock is high) are compared bit by bit with the reference's:
   where the reference has 0 or 1 the candidate must have the same (an ``x`` or ``z`` there is
   a mismatch); where the reference has ``x`` any value is accepted; a ``z`` must be ``z``.

5. With ``formal`` on (the task's ``hidden.formal``, or the verifier's own setting, which wins:
   ``true`` or ``"bmc:N"``), a candidate that passed every segment is also proved equivalent
   to the reference by Yosys in the sandbox (:mod:`.formal`): test ``formal``, failed with the
   counterexample (inputs per step, the outputs that differ) as its detail; ``skipped`` where
   the simulation already failed or the proof was not decided (a construct Yosys cannot read,
   its time limit). A skipped test decides nothing: it counts neither for nor against.

Each stimulus segment (a reset, then its cycles) is one test, ``segment-K``, passed when every
cycle of it matches; its detail names the first mismatches (output, cycle, expected, got), and
a cycle with no record is ``missing`` (``timeout`` where the time limit cut it short). The
reward is the share of tests passed, skipped ones left out. Exit codes and stdout text decide
nothing: only the nonce-framed records, counted and checked per cycle on the host.

>>> with VerilogVerifier() as v:                                    # doctest: +SKIP
...     v.verify(task, "```verilog\\nmodule counter(...); ... endmodule\\n```").reward
1.0
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

from referee.domains.kit import SandboxedVerifier
from referee.domains.verilog.formal import parse_setting, prove
from referee.domains.verilog.simulate import SimResult, simulate, verilog_sandbox
from referee.domains.verilog.source import check_source, extract_verilog
from referee.domains.verilog.spec import VerilogSpec, verilog_spec
from referee.domains.verilog.testbench import record_phases, stimulus_vectors
from referee.errors import RefereeError
from referee.sandbox import Sandbox
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSetup
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict, metered_verdict

__all__ = [
    "VERSION",
    "VerilogVerifier",
    "compare_cycle",
    "count_segments",
    "judge_segments",
    "make_verifier",
    "reference_trace",
]

VERSION = "verilog@1"
#: Mismatches named in one segment's detail.
SHOWN = 3
_CACHE_SIZE = 512


def compare_cycle(expected: str, got: str) -> bool:
    """Whether one output's bits match: 0/1 must be equal, ``x`` in the reference is a
    don't-care, ``z`` must be ``z``.

    >>> compare_cycle("01x1", "0101"), compare_cycle("0101", "01x1"), compare_cycle("1", "z")
    (True, False, False)
    """
    if len(expected) != len(got):
        return False
    for e, g in zip(expected.lower(), got.lower(), strict=True):
        if e in "x?":
            continue
        if e != g:
            return False
    return True


def reference_trace(sandbox: Sandbox, spec: VerilogSpec) -> list[list[str]]:
    """The reference's records under the task's stimulus; a :class:`RefereeError` if the
    reference does not compile or run to the end (the task is broken, not the answer)."""
    vectors = stimulus_vectors(spec)
    sim = simulate(sandbox, spec, spec.reference, nonce=_nonce(), vectors=vectors)
    if sim.failure or any(r is None for r in sim.records):
        why = sim.failure or "records missing"
        raise RefereeError(
            f"task {spec.task_id!r}: its reference does not simulate ({why}); fix hidden.reference"
        )
    return [r for r in sim.records if r is not None]


def _nonce() -> str:
    return "R" + secrets.token_hex(12)


class VerilogVerifier(SandboxedVerifier):
    """Judges verilog tasks; ``sandbox`` is one made by
    :func:`~referee.domains.verilog.simulate.verilog_sandbox` (default: made here, owned)."""

    name = "verilog"

    def __init__(self, sandbox: Sandbox | None = None, *, formal: bool | str | None = None) -> None:
        #: None: each task's ``hidden.formal`` decides; else this setting for every task.
        self.formal = formal
        if formal is not None:
            parse_setting(formal, "VerilogVerifier(formal=...)")
        super().__init__(sandbox, verilog_sandbox)
        self._traces: OrderedDict[str, list[list[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def expected(self, task: Task, spec: VerilogSpec) -> list[list[str]]:
        """The reference's trace for ``task`` (simulated once, then cached)."""
        key = task.content_hash or task.id
        with self._lock:
            if key in self._traces:
                self._traces.move_to_end(key)
                return self._traces[key]
        trace = reference_trace(self.sandbox, spec)
        with self._lock:
            self._traces[key] = trace
            while len(self._traces) > _CACHE_SIZE:
                self._traces.popitem(last=False)
        return trace

    def verify(self, task: Task, answer: str, /) -> Verdict:
        """The verdict on ``answer`` for ``task``; never raises (faults are infra errors)."""
        return metered_verdict(
            task.id, VERSION, lambda: self._verify(task, answer), infra=(RefereeError,)
        )

    def _verify(self, task: Task, answer: str) -> Verdict:
        t0 = time.perf_counter()
        spec = verilog_spec(task)
        depth = self._depth(task)
        expected = self.expected(task, spec)
        timings: dict[str, float] = {"reference_s": time.perf_counter() - t0}
        checked = check_source(extract_verilog(answer), spec.top)
        if checked.problems:
            detail = "rejected: " + "; ".join(checked.problems)
            flags = [Flag(kind="forbidden-construct", evidence=p) for p in checked.problems]
            tests = _all(spec, "error", detail)
            if depth is not None:
                tests.append(TestOutcome(name="formal", status="error", detail=detail))
            return _verdict(task, tests, flags, timings, t0)
        sim = simulate(
            self.sandbox, spec, checked.code, nonce=_nonce(), vectors=stimulus_vectors(spec)
        )
        timings.update(compile_s=sim.compile_s, run_s=sim.run_s)
        formal: list[TestOutcome] = []
        if sim.failure.startswith("compile error"):
            tests = _all(spec, "error", sim.failure)
        else:
            tests = judge_segments(spec, expected, sim)
        if depth is not None:
            if all(t.status == "passed" for t in tests):
                result = prove(self.sandbox, spec, checked.code, depth)
                timings["formal_s"] = result.seconds
                status: TestStatus = {"proved": "passed", "counterexample": "failed"}.get(
                    result.status, "skipped"
                )  # type: ignore[assignment]
                formal.append(TestOutcome(name="formal", status=status, detail=result.detail))
            else:
                formal.append(
                    TestOutcome(
                        name="formal", status="skipped", detail="not run: the simulation failed"
                    )
                )
        return _verdict(task, tests + formal, [], timings, t0)

    def _depth(self, task: Task) -> int | None:
        """The formal check's depth for ``task`` (None: off)."""
        if self.formal is not None:
            return parse_setting(self.formal)
        return parse_setting(task.hidden.get("formal"), f"task {task.id!r}: hidden.formal")


def judge_segments(
    spec: VerilogSpec, expected: list[list[str]], sim: SimResult
) -> list[TestOutcome]:
    """One outcome per stimulus segment, from the records compared on the host."""
    names = [p.name for p in spec.outputs]
    if record_phases(spec) == 2:
        names += [f"{n} (clock high)" for n in names]
    tests: list[TestOutcome] = []
    for seg, (start, end) in enumerate(spec.stimulus.bounds()):
        per = end - start
        bad: list[str] = []
        missing = 0
        for k in range(start, end):
            got = sim.records[k]
            if got is None:
                missing += 1
                continue
            for name, e, g in zip(names, expected[k], got, strict=True):
                if not compare_cycle(e, g):
                    bad.append(f"cycle {k}: {name} expected {e} got {g}")
        status: TestStatus
        if missing:
            status = "timeout" if sim.timed_out else "missing"
            why = sim.failure or "records missing"
            detail = f"{missing} of {per} cycles have no record ({why})"
        elif bad:
            status = "failed"
            more = f" (+{len(bad) - SHOWN} more)" if len(bad) > SHOWN else ""
            detail = "mismatch: " + "; ".join(bad[:SHOWN]) + more
        else:
            status, detail = "passed", ""
        tests.append(TestOutcome(name=f"segment-{seg}", status=status, detail=detail))
    return tests


def _all(spec: VerilogSpec, status: TestStatus, detail: str) -> list[TestOutcome]:
    return [
        TestOutcome(name=f"segment-{k}", status=status, detail=detail)
        for k in range(len(spec.stimulus.bounds()))
    ]


def _verdict(
    task: Task,
    tests: list[TestOutcome],
    flags: list[Flag],
    timings: dict[str, float],
    t0: float,
) -> Verdict:
    passed_n = sum(t.status == "passed" for t in tests)
    decided = sum(t.status != "skipped" for t in tests)
    timings["total_s"] = time.perf_counter() - t0
    return Verdict(
        task_id=task.id,
        reward=passed_n / decided if decided else 0.0,
        passed=bool(decided) and passed_n == decided,
        tests=tests,
        flags=flags,
        timings=timings,
        verifier=VERSION,
    )


def count_segments(task: Task) -> int:
    """How many tests decide a verilog task (its stimulus segments, and ``formal`` where the
    task asks for the proof)."""
    stim: Any = task.hidden.get("stimulus")
    if not isinstance(stim, dict):
        return 0
    segments = stim.get("segments", 8)
    n = (segments if isinstance(segments, int) else 0) + int(bool(stim.get("long_cycles")))
    return n + int(bool(task.hidden.get("formal")))


def make_verifier(setup: VerifierSetup) -> VerilogVerifier:
    """The dispatch registry's factory: Icarus Verilog must be in the sandbox's view, so a
    verifier with a sandbox of its own."""
    return VerilogVerifier()
