"""Turning what the kernel reported about a run into an :class:`ExecResult`.

Both execution paths (fresh process, fork server) end with the same raw facts: a wait status or
exit code, whether the wall clock ran out, cgroup counters, rusage. This module decides, in one
place, which limits the run hit.
"""

from __future__ import annotations

import signal as _signal
from dataclasses import dataclass

from referee.sandbox.cgroups import CgroupStats
from referee.sandbox.limits import Limits
from referee.sandbox.result import ExecResult, decode_output

__all__ = ["RawOutcome", "to_result"]


@dataclass
class RawOutcome:
    exit_code: int | None
    signal: int | None
    timed_out: bool
    wall_s: float
    cpu_s: float
    maxrss_bytes: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    stats: CgroupStats | None = None
    memory_baseline: int = 0
    strays: int = 0
    rlimit_as: bool = False
    extra_violations: tuple[str, ...] = ()
    wait_s: float | None = None


def to_result(raw: RawOutcome, limits: Limits, *, isolation: list[str], backend: str) -> ExecResult:
    violations: list[str] = []
    if raw.timed_out:
        violations.append("timeout")
    sig = raw.signal
    if sig == _signal.SIGXCPU or (
        sig == _signal.SIGKILL and not raw.timed_out and raw.cpu_s >= limits.cpu_seconds - 0.05
    ):
        violations.append("cpu-limit")
    memory_exceeded = False
    peak = raw.maxrss_bytes
    if raw.stats is not None:
        peak = max(0, raw.stats.peak_bytes - raw.memory_baseline) or raw.maxrss_bytes
        failed = raw.exit_code != 0 or sig is not None
        if raw.stats.oom_kills > 0 or (raw.stats.memory_failcnt > 0 and failed):
            memory_exceeded = True
        if raw.stats.pids_refused > 0:
            violations.append("process-limit")
    elif raw.rlimit_as and raw.exit_code not in (0, None) and b"MemoryError" in raw.stderr[-4096:]:
        # Without a memory cgroup the only evidence is the interpreter's own report.
        memory_exceeded = True
    if memory_exceeded:
        violations.append("memory-limit")
    if sig == _signal.SIGXFSZ:
        violations.append("file-size-limit")
    if sig == _signal.SIGSYS:
        violations.append("seccomp-kill")
    if raw.stdout_truncated or raw.stderr_truncated:
        violations.append("output-limit")
    if raw.strays:
        violations.append("stray-processes-killed")
    violations.extend(raw.extra_violations)
    return ExecResult(
        exit_code=None if raw.timed_out and raw.exit_code is None else raw.exit_code,
        signal=sig,
        timed_out=raw.timed_out,
        memory_exceeded=memory_exceeded,
        stdout=decode_output(raw.stdout),
        stderr=decode_output(raw.stderr),
        stdout_truncated=raw.stdout_truncated,
        stderr_truncated=raw.stderr_truncated,
        wall_s=round(raw.wall_s, 6),
        cpu_s=round(raw.cpu_s, 6),
        peak_memory_mb=round(peak / (1 << 20), 3),
        wait_s=None if raw.wait_s is None else round(raw.wait_s, 6),
        violations=violations,
        isolation=isolation,
        backend=backend,
    )
