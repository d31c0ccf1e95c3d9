"""Building an answer once per sample, in the sandbox: compile (or syntax-check) it.

A :class:`Build` holds what every case's run needs (a binary, class files, a script) as plain
bytes, so each case starts from the same files in a fresh workspace. A failed build is a
:class:`CompileFailure` with a short reason ("compile error: ...", time and memory limits of the
compiler included), which the verifier gives every case. Compilers run in the sandbox like any
candidate program (a ``#include "/etc/passwd"`` sees the sandbox's own files only), under their
toolchain's own time, memory, process and file-size limits.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from referee.errors import ConfigError, RefereeError
from referee.sandbox import ExecResult, Sandbox
from referee.sandbox.cputime import cpu_limits, judged_run
from referee.sandbox.toolchains import PROGRAM, Toolchain

__all__ = ["Build", "CompileFailure", "build_program", "java_names"]

_PY_CHECK = """\
import sys
try:
    compile(open("main.py", "rb").read(), "main.py", "exec")
except (SyntaxError, ValueError) as e:
    sys.stderr.write(f"{type(e).__name__}: {e}\\n")
    sys.exit(3)
"""
_JAVA_PUBLIC = re.compile(r"\bpublic\s+(?:(?:final|abstract|static)\s+)*class\s+([A-Za-z_$][\w$]*)")
_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
_JAVA_CLASS = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)")
_MAIN = re.compile(r"\bstatic\s+(?:public\s+)?void\s+main\s*\(")


@dataclass(frozen=True)
class Build:
    toolchain: Toolchain
    files: dict[str, bytes] = field(repr=False)
    main: str = "Main"  # Java's class to run
    source: str = field(default="", repr=False)  # Python's program
    compile_s: float = 0.0


@dataclass(frozen=True)
class CompileFailure:
    detail: str
    compile_s: float = 0.0


def java_names(code: str) -> tuple[str, str]:
    """(file name, class to run) of a Java answer: the public class names the file; the class
    to run is the one declaring ``main`` (the last class opened before it), package-qualified."""
    public = _JAVA_PUBLIC.search(code)
    file = f"{public.group(1)}.java" if public else "Main.java"
    main = public.group(1) if public else "Main"
    m = _MAIN.search(code)
    if m is not None:
        before = _JAVA_CLASS.findall(code[: m.start()])
        if before:
            main = before[-1]
    package = _JAVA_PACKAGE.search(code)
    return file, (f"{package.group(1)}.{main}" if package else main)


def _failure(r: ExecResult, tc: Toolchain, seconds: float) -> CompileFailure:
    if r.timed_out or "cpu-limit" in r.violations:
        why = f"compilation exceeded {tc.compile_timeout_s:g}s"
    elif r.memory_exceeded:
        why = f"compilation exceeded {tc.compile_memory_mb} MB"
    elif "file-size-limit" in r.violations:
        why = "compiled output too large"
    else:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        why = " | ".join(lines[:6])[:600] or r.summary()
    return CompileFailure(detail=f"compile error: {why}", compile_s=seconds)


def _judged(run: Callable[[], ExecResult], tc: Toolchain) -> ExecResult:
    """A compile run judged on CPU time; one that used more CPU than the limit is marked as
    having hit it, even if it finished (MachineStarved, an infra error, if the machine was too
    busy to compile at all)."""
    r, spent = judged_run(run, tc.compile_timeout_s)
    if spent in ("time-limit", "idle") and "cpu-limit" not in r.violations:
        r = r.model_copy(update={"violations": [*r.violations, "cpu-limit"], "exit_code": None})
    return r


def build_program(sandbox: Sandbox, language: str, code: str) -> Build | CompileFailure:
    """Build ``code`` with the sandbox's toolchain for ``language`` (a ``ConfigError`` if the
    sandbox has none: an infrastructure problem, not the answer's)."""
    tc = sandbox.toolchains.get(language)
    if tc is None:
        raise ConfigError(f"the sandbox has no {language} toolchain (Sandbox(toolchains=...))")
    # On CPU time, with the wall clock as a backstop: a loaded machine slows a compiler down,
    # it does not make the answer's compilation fail (referee.sandbox.cputime).
    limits = cpu_limits(
        tc.compile_timeout_s,
        memory_mb=tc.compile_memory_mb,
        max_processes=tc.compile_processes,
        max_file_mb=64,
        stdout_bytes=1 << 16,
        stderr_bytes=1 << 16,
    )
    t0 = time.perf_counter()
    if language == "python":
        r = _judged(
            functools.partial(
                sandbox.run_python,
                _PY_CHECK,
                name="check.py",
                files={"main.py": code},
                limits=limits,
            ),
            tc,
        )
        if not r.ok:
            return _failure(r, tc, time.perf_counter() - t0)
        return Build(tc, files={}, source=code, compile_s=time.perf_counter() - t0)
    if language == "javascript":
        node = tc.run_command(tc.compile_memory_mb)[0]
        r = _judged(
            functools.partial(
                sandbox.run, [node, "--check", tc.source], files={tc.source: code}, limits=limits
            ),
            tc,
        )
        if not r.ok:
            return _failure(r, tc, time.perf_counter() - t0)
        return Build(tc, files={tc.source: code.encode()}, compile_s=time.perf_counter() - t0)
    source, main = java_names(code) if language == "java" else (tc.source, "Main")
    with sandbox.workspace() as ws:
        r = _judged(
            functools.partial(
                sandbox.run,
                tc.compile_command(source),
                files={source: code},
                limits=limits,
                workspace=ws,
                env=dict(tc.env),
            ),
            tc,
        )
        seconds = time.perf_counter() - t0
        if not r.ok:
            return _failure(r, tc, seconds)
        try:
            if language == "java":
                made = ws.read_all(max_files=4096, max_bytes=64 << 20)
                files = {name: data for name, data in made.items() if name.endswith(".class")}
            else:
                files = {PROGRAM: ws.read(PROGRAM, max_bytes=64 << 20)}
        except (OSError, RefereeError) as e:
            return CompileFailure(f"compile error: no usable program ({e})", seconds)
    if not files:
        return CompileFailure("compile error: no class was compiled", seconds)
    return Build(tc, files=files, main=main, compile_s=seconds)
