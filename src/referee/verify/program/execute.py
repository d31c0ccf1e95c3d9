"""Running a build on one case's input, and what the run's outcome says about the program.

Two paths, both fully sandboxed (bubblewrap, seccomp, cgroups):

* **warm** (default): the run is a fork of one of the sandbox's warm fork-server workers that
  ``exec``s the program, so a case costs a fork, the files' copy and the program's own start
  (a few milliseconds for a C binary) instead of a new bubblewrap sandbox (15-40 ms here).
  The worker gives the run a cleared workspace, its own limits, the child seccomp filter and
  a kill of everything left afterwards, as for any fast-path run.
* **fresh**: a new bubblewrap sandbox per case (the anchor the bench compares against).

Input reaches the program on stdin only; the expected output never enters its sandbox.
"""

from __future__ import annotations

import json

from referee.sandbox import ExecResult, Limits, Sandbox
from referee.sandbox.cputime import TimeOutcome, cpu_limits
from referee.sandbox.toolchains import PROGRAM
from referee.verify.program.build import Build
from referee.verify.verdict import TestStatus

__all__ = ["case_cpu_limit", "case_limits", "classify", "memory_by_address_space", "run_build"]

#: Signs in stderr that a managed runtime ran out of its own heap (the JVM's -Xmx, node's
#: old space, Python's MemoryError): reported as a memory limit rather than a crash.
_OOM_MARKS = ("java.lang.OutOfMemoryError", "JavaScript heap out of memory", "MemoryError")


def case_limits(
    build: Build,
    time_limit_s: float,
    memory_mb: int,
    output_bytes: int,
    *,
    address_space: bool = False,
) -> Limits:
    """The limits of one case's run: the task's, plus the runtime's own start and baseline.

    The time limit is on CPU time (:func:`case_cpu_limit`), with the wall clock as a backstop
    (:mod:`referee.sandbox.cputime`): a loaded machine slows a run, never fails it.
    ``address_space``: the sandbox bounds memory with RLIMIT_AS (it has no memory cgroup), so
    runtimes that reserve more than they use get their reservation on top."""
    tc = build.toolchain
    reserve = tc.reserve_mb if address_space else 0
    return cpu_limits(
        case_cpu_limit(build, time_limit_s),
        memory_mb=memory_mb + tc.run_memory_overhead_mb + reserve,
        max_processes=tc.max_processes,
        max_file_mb=16,
        stdout_bytes=output_bytes,
        stderr_bytes=1 << 14,
    )


def case_cpu_limit(build: Build, time_limit_s: float) -> float:
    """The CPU seconds a case's run may use: the task's limit plus the runtime's own start."""
    return time_limit_s + build.toolchain.startup_s


def _stub(argv: list[str], chmod: bool, stack_bytes: int) -> str:
    """The warm path's program: make the binary executable, give it its stack, become it."""
    lines = ["import os, resource"]
    if chmod:
        lines.append(f"os.chmod({PROGRAM!r}, 0o755)")
    lines.append(f"resource.setrlimit(resource.RLIMIT_STACK, ({stack_bytes}, {stack_bytes}))")
    lines.append(f"os.execv({argv[0]!r}, {json.dumps(argv)})")
    return "\n".join(lines) + "\n"


def memory_by_address_space(sandbox: Sandbox) -> bool:
    """Whether the sandbox bounds memory with RLIMIT_AS rather than a memory cgroup."""
    return not any(layer.startswith("cgroup") for layer in sandbox.isolation())


def run_build(
    sandbox: Sandbox,
    build: Build,
    stdin: bytes,
    limits: Limits,
    *,
    memory_mb: int,
    args: tuple[str, ...] = (),
    data: dict[str, bytes] | None = None,
    warm: bool = True,
) -> ExecResult:
    """Run ``build`` once with ``stdin``; ``args`` follow its argv, ``data`` are extra files
    (a checker's input, output and answer files; never given to a candidate)."""
    tc = build.toolchain
    data = data or {}
    if tc.language == "python":
        if warm:
            return sandbox.run_python(
                build.source,
                name="main.py",
                argv=["main.py", *args],
                files=data or None,
                stdin=stdin,
                limits=limits,
            )
        argv = [sandbox.view.python, "main.py", *args]
        return sandbox.run(
            argv, files={"main.py": build.source, **data}, stdin=stdin, limits=limits
        )
    argv = [*tc.run_command(memory_mb, build.main), *args]
    files = {**build.files, **data}
    # Programs get a stack as large as their memory limit, as judges give them (deep recursion
    # is a right answer's business; node's --stack-size needs it); memory still bounds the total.
    native = PROGRAM in build.files
    stack = limits.memory_bytes
    if warm:
        program = _stub(argv, chmod=native, stack_bytes=stack)
        return sandbox.run_python(
            program, name="_exec.py", files=files, stdin=stdin, limits=limits, env=dict(tc.env)
        )
    argv = ["/bin/sh", "-c", f'ulimit -s {stack >> 10} && exec "$@"', "sh", *argv]
    with sandbox.workspace() as ws:
        ws.write(files, mode=0o755)
        return sandbox.run(argv, stdin=stdin, limits=limits, workspace=ws, env=dict(tc.env))


def classify(
    r: ExecResult, time_limit_s: float, time: TimeOutcome | None = None
) -> tuple[TestStatus, str] | None:
    """The outcome of a run that did not finish cleanly (None: it did; compare its output).

    Output past its cap is ``failed`` (whether or not the flood then ran out of time); a time
    limit is ``timeout``; a crash or exhausted memory is ``error``. The detail starts with the
    judge's words (output limit, time limit, memory limit, runtime error). ``time`` is the
    run's :func:`~referee.sandbox.cputime.judged_run` outcome (None: judge the run's own
    limits, as for a run without a CPU-time judgement).
    """
    if r.stdout_truncated or "output-limit" in r.violations:
        return "failed", "output limit exceeded"
    if time == "time-limit":
        return "timeout", f"time limit exceeded ({time_limit_s:g}s)"
    if time == "idle":
        return "timeout", f"time limit exceeded (idle or blocked for {r.wall_s:.1f}s)"
    if time == "starved":
        return "timeout", f"ended by the wall-clock backstop after {r.wall_s:.1f}s (machine busy)"
    if time is None and (r.timed_out or "cpu-limit" in r.violations):
        return "timeout", f"time limit exceeded ({time_limit_s:g}s)"
    oom_text = r.exit_code != 0 and any(m in r.stderr for m in _OOM_MARKS)
    if r.memory_exceeded or oom_text:
        return "error", f"memory limit exceeded ({r.summary()})"
    if r.exit_code != 0:
        how = f"signal {r.signal}" if r.exit_code is None else f"exit code {r.exit_code}"
        if "seccomp-kill" in r.violations:
            how += ", forbidden system call"
        if "process-limit" in r.violations:
            how += ", process limit"
        tail = r.stderr.strip().splitlines()[-1:] if r.stderr.strip() else []
        return "error", f"runtime error ({how})" + (f": {tail[0][:200]}" if tail else "")
    return None
