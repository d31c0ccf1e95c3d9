"""Compile a design with the grader's testbench and simulate it, in the sandbox.

Both steps run in one workspace of their own (a leased warm fork-server worker's, emptied
afterwards) holding only the testbench, the design and the stimulus (never the reference, nor
any other task's data), each under its own limits: the compiler's
time and memory (a generate loop of a billion instances is killed), and the simulation's time,
CPU, memory and output (an ``always`` block without a delay spins until the deadline kills it).
``iverilog -s`` names the testbench as the only root, so a stray module of the design never
runs on its own. What comes back is plain data: the records read by
:func:`~referee.domains.verilog.testbench.parse_records`, and why a step failed.

>>> with verilog_sandbox() as sb:                                    # doctest: +SKIP
...     sim = simulate(sb, spec, design, nonce="n1", vectors=[0, 1])
...     sim.records
[['1'], ['0']]
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from referee.domains.verilog.spec import VerilogSpec
from referee.domains.verilog.testbench import (
    STIMULUS_FILE,
    parse_records,
    record_phases,
    stimulus_hex,
    testbench,
)
from referee.errors import ConfigError
from referee.sandbox import ExecResult, Limits, Sandbox
from referee.sandbox.cputime import TimeOutcome, cpu_limits, judged_run, stretched

__all__ = ["SimResult", "compile_limits", "run_limits", "simulate", "verilog_sandbox"]

TB_FILE = "tb.v"
DESIGN_FILE = "design.v"
PROGRAM = "sim.vvp"
COMPILE_TIMEOUT_S = 10.0
COMPILE_MEMORY_MB = 512


def verilog_sandbox(**kwargs: Any) -> Sandbox:
    """A sandbox that sees Icarus Verilog (a :class:`ConfigError` saying how to install it
    where it is missing). Its fork-server workers (one more than cores by default) run the
    simulations: each sample leases one for its two steps, so samples judged in parallel
    threads each get one."""
    kwargs.setdefault("toolchains", ("verilog",))
    kwargs.setdefault("scratch_mb", 1024)
    return Sandbox(**kwargs)


def compile_limits() -> Limits:
    """On CPU time, with a wall-clock backstop (referee.sandbox.cputime), as the run's."""
    return cpu_limits(
        COMPILE_TIMEOUT_S,
        memory_mb=COMPILE_MEMORY_MB,
        max_processes=8,
        max_file_mb=64,
        stdout_bytes=1 << 16,
        stderr_bytes=1 << 16,
    )


def run_limits(spec: VerilogSpec, cycles: int) -> Limits:
    """The simulation's limits: generous time for the testbench's own work, and an output cap
    of a few times what its records need (a design cannot print, so more is never needed)."""
    record = 24 + len("".join(p.name for p in spec.outputs)) + sum(p.width for p in spec.outputs)
    record *= record_phases(spec)
    return cpu_limits(
        run_cpu_s(cycles),
        memory_mb=512,
        max_processes=4,
        max_file_mb=16,
        stdout_bytes=4 * cycles * (record + 16) + (1 << 16),
        stderr_bytes=1 << 16,
    )


def run_cpu_s(cycles: int) -> float:
    """The CPU seconds a simulation of ``cycles`` cycles may use."""
    return 2.0 + cycles / 400


@dataclass(frozen=True)
class SimResult:
    """What one simulation gave: a record per cycle (None: missing), whether the testbench's
    end record came, and why it failed (``compile error: ...``, ``time limit ...``), if it
    did. ``compile_s`` and ``run_s`` are the two steps' wall seconds."""

    records: list[list[str] | None]
    ended: bool
    failure: str = ""
    timed_out: bool = False
    compile_s: float = 0.0
    run_s: float = 0.0
    log: str = field(default="", repr=False)


def _lines(text: str, limit: int = 6) -> str:
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(kept[:limit])[:600]


def _run_failure(
    r: ExecResult, limits: Limits, spent: TimeOutcome, cpu_s: float
) -> tuple[str, bool]:
    if spent == "time-limit":
        return f"time limit: the simulation used more than {cpu_s:g}s of CPU", True
    if spent == "idle" or r.timed_out or "cpu-limit" in r.violations:
        return f"time limit: the simulation stalled past {limits.timeout_s:g}s", True
    if r.memory_exceeded:
        return f"memory limit: the simulation exceeded {limits.memory_mb} MB", False
    if r.stdout_truncated:
        return "output limit: the simulation printed more than its records", False
    return "", False


Step = Callable[[list[str], Limits], ExecResult]


@contextlib.contextmanager
def _steps(sandbox: Sandbox, files: dict[str, str]) -> Iterator[Step]:
    """Runs of the sample's steps (compile, then simulate) on one workspace holding ``files``.

    On the bubblewrap backend both steps are forks of one leased warm fork-server worker
    (:meth:`Sandbox.lease`) that ``exec`` the tool in the worker's workspace: every isolation
    layer of a sandbox run, without a new bubblewrap sandbox per step (two per sample before,
    the larger part of a sample's cost, bench/RESULTS.md section 39). Elsewhere (the local
    backend has no workers) each step is a :meth:`Sandbox.run` on a workspace of its own."""
    if sandbox.backend == "bwrap":
        with sandbox.lease() as lease:
            lease.workspace.write(files)

            def leased(argv: list[str], limits: Limits) -> ExecResult:
                # A retry of a starved run stretches its backstop (Sandbox.run does this too).
                limits, env = stretched(limits, None)
                return lease.exec(argv, limits=limits, env=env)

            yield leased
        return
    with sandbox.workspace() as ws:
        ws.write(files)

        def fresh(argv: list[str], limits: Limits) -> ExecResult:
            return sandbox.run(argv, limits=limits, workspace=ws)

        yield fresh


def simulate(
    sandbox: Sandbox,
    spec: VerilogSpec,
    design: str,
    *,
    nonce: str,
    vectors: list[int],
) -> SimResult:
    """Compile ``design`` (the module ``spec.top`` and its helpers) with a testbench of
    ``len(vectors)`` cycles framed by ``nonce``, run it, and read its records."""
    if "verilog" not in sandbox.toolchains:
        raise ConfigError("the sandbox has no verilog toolchain (verilog_sandbox())")
    cycles = len(vectors)
    tb_name, tb = testbench(spec, nonce, cycles)
    files = {TB_FILE: tb, DESIGN_FILE: design, STIMULUS_FILE: stimulus_hex(spec, vectors)}
    argv = ["iverilog", "-g2012", "-s", tb_name, "-o", PROGRAM, TB_FILE, DESIGN_FILE]
    t0 = time.perf_counter()
    with _steps(sandbox, files) as step:
        built, built_time = judged_run(
            functools.partial(step, argv, compile_limits()), COMPILE_TIMEOUT_S
        )
        compile_s = time.perf_counter() - t0
        if not built.ok or built_time != "ok":
            if built_time != "ok" or built.timed_out or "cpu-limit" in built.violations:
                why = f"compilation ran past {COMPILE_TIMEOUT_S:g}s"
            elif built.memory_exceeded:
                why = f"compilation exceeded {COMPILE_MEMORY_MB} MB"
            else:
                why = _lines(built.stderr + built.stdout) or built.summary()
            return SimResult([None] * cycles, False, f"compile error: {why}", compile_s=compile_s)
        limits = run_limits(spec, cycles)
        t1 = time.perf_counter()
        ran, spent = judged_run(
            functools.partial(step, ["vvp", "-n", PROGRAM], limits), run_cpu_s(cycles)
        )
        run_s = time.perf_counter() - t1
    records, ended = parse_records(
        ran.stdout, nonce, cycles, len(spec.outputs), phases=record_phases(spec)
    )
    failure, timed_out = _run_failure(ran, limits, spent, run_cpu_s(cycles))
    if not failure and not ended:
        failure = "the simulation ended before the testbench finished"
    return SimResult(
        records,
        ended,
        failure,
        timed_out=timed_out,
        compile_s=compile_s,
        run_s=run_s,
        log=_lines(built.stderr + ran.stderr, 12),
    )
