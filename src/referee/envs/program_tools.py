"""The tools of a program episode (stdin/stdout problems in seven languages), in the sandbox.

=============  ===========================================================================
list_files     the workspace's files
read_file      one file's text, optionally a range of lines
write_file     create or replace one file (the program goes in ``solution.<ext>``)
run_program    build a file of the workspace and run it on a given input
run_tests      build the solution and run it on the problem's visible examples
submit         end the episode; the solution file is the answer
=============  ===========================================================================

The language of a file is its extension's (``.py``, ``.c``, ``.cpp``, ``.java``, ``.js``,
``.go``, ``.rs``). Programs are built and run by the program verifier's own steps
(:func:`~referee.verify.program.build.build_program`,
:func:`~referee.verify.program.execute.run_build`), with the task's time and memory limits, in
the runtime's program sandbox: what the model sees of a run is what the judge would see of the
same run. ``run_tests`` uses only the examples the problem shows (``payload.examples``), never a
hidden case; their outputs are compared token by token, which a task judged by a checker or
with a float tolerance may accept more loosely.

>>> solution_language("solution.cpp"), solution_language("notes.txt")
('cpp', None)
"""

from __future__ import annotations

import os
from typing import Any

from referee.envs.code_tasks import PreparedTask
from referee.envs.code_tools import (
    TOOL_SCHEMAS,
    CodeTools,
    ToolOutcome,
    clip,
    describe_run,
    workspace_path,
)
from referee.envs.tools import ToolCall, function_tool
from referee.errors import ConfigError, UnsafePathError
from referee.sandbox import Limits, Workspace
from referee.sandbox.cputime import time_outcome
from referee.verify.program.answer import with_language
from referee.verify.program.build import CompileFailure, build_program
from referee.verify.program.compare import compare
from referee.verify.program.execute import (
    case_cpu_limit,
    case_limits,
    classify,
    memory_by_address_space,
    run_build,
)
from referee.verify.program.spec import ProgramSpec, program_spec

__all__ = [
    "EXTENSIONS",
    "PROGRAM_TOOL_SCHEMAS",
    "ProgramTools",
    "solution_answer",
    "solution_language",
]

#: A file's extension -> the language it is built as.
EXTENSIONS = {
    ".py": "python",
    ".c": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".java": "java",
    ".js": "javascript",
    ".go": "go",
    ".rs": "rust",
}
_SOLUTION_STEM = "solution"
_MAX_EXAMPLES = 10

PROGRAM_TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "list_files": TOOL_SCHEMAS["list_files"],
    "read_file": TOOL_SCHEMAS["read_file"],
    "write_file": TOOL_SCHEMAS["write_file"],
    "run_program": function_tool(
        "run_program",
        "Build a program file of the workspace (its language from its extension: .py .c .cpp "
        ".java .js .go .rs) and run it with the given stdin, under the task's time and memory "
        "limits. Returns the compile errors, or the exit status, stdout and stderr (truncated).",
        {"path": {"type": "string"}, "stdin": {"type": "string"}},
        required=["path"],
    ),
    "run_tests": function_tool(
        "run_tests",
        "Build the solution file (solution.<ext>) and run it on the problem's visible examples; "
        "says which examples it passes. Hidden cases judge it after submit.",
    ),
    "submit": function_tool(
        "submit", "Submit the solution file (solution.<ext>) as your answer and end the episode."
    ),
}


def solution_language(path: str) -> str | None:
    """The language a file is built as, from its extension (None: not a program file)."""
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def _solution_files(ws: Workspace) -> list[tuple[float, str]]:
    found = []
    for ext in EXTENSIONS:
        path = os.path.join(ws.root, _SOLUTION_STEM + ext)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if os.path.isfile(path) and not os.path.islink(path):
            found.append((st.st_mtime, _SOLUTION_STEM + ext))
    return sorted(found)


def solution_answer(ws: Workspace) -> str:
    """The workspace's solution as an answer: the newest ``solution.<ext>``, fenced with its
    language (what the program verifier reads); "" when there is none."""
    files = _solution_files(ws)
    if not files:
        return ""
    name = files[-1][1]
    try:
        code = ws.read(name, max_bytes=1 << 20).decode("utf-8", "replace")
    except (OSError, UnsafePathError, ConfigError):
        return ""
    language = solution_language(name)
    return with_language(code, language) if code.strip() and language else ""


class ProgramTools(CodeTools):
    """The tools above for one program episode; file tools are :class:`CodeTools`'s."""

    def __init__(
        self, prepared: PreparedTask, workspace: Workspace, *, limits: Limits, max_chars: int
    ) -> None:
        super().__init__(prepared, workspace, limits=limits, max_chars=max_chars)
        self.spec: ProgramSpec = program_spec(prepared.task)

    def call(self, call: ToolCall, timeout_s: float) -> ToolOutcome:
        try:
            if call.name == "run_program":
                stdin = call.arguments.get("stdin")
                return self.run_program(
                    str(call.arguments["path"]), stdin if isinstance(stdin, str) else "", timeout_s
                )
            if call.name == "run_tests":
                return self.run_examples(timeout_s)
        except (UnsafePathError, ConfigError) as e:
            return ToolOutcome(f"error: {e}", error=True)
        except OSError as e:
            return ToolOutcome(f"error: {e.strerror or e}", error=True)
        if call.name in ("run_python",):
            return ToolOutcome(f"error: {call.name} is not a tool here", error=True)
        return super().call(call, timeout_s)

    # ---- building and running ---------------------------------------------------------
    def _source(self, raw: str) -> tuple[str, str] | ToolOutcome:
        path = workspace_path(raw)
        language = solution_language(path)
        if language is None:
            known = " ".join(EXTENSIONS)
            return ToolOutcome(f"error: {path!r} is not a program file ({known})", error=True)
        if language not in self.spec.languages:
            allowed = ", ".join(self.spec.languages)
            return ToolOutcome(f"error: this task accepts {allowed}, not {language}", error=True)
        try:
            code = self.ws.read(path, max_bytes=1 << 20).decode("utf-8", "replace")
        except FileNotFoundError:
            return ToolOutcome(f"error: no file {path!r} in the workspace", error=True)
        return language, code

    def _build_and_run(
        self, language: str, code: str, stdins: list[str], timeout_s: float
    ) -> tuple[list[Any], float] | ToolOutcome:
        sandbox = self.prepared.sandbox
        if language not in sandbox.toolchains:
            return ToolOutcome(f"error: no {language} toolchain on this machine", error=True)
        built = build_program(sandbox, language, code)
        if isinstance(built, CompileFailure):
            return ToolOutcome(clip(built.detail, self.max_chars), exec_s=built.compile_s)
        runs, spent = [], built.compile_s
        time_limit = min(self.spec.cases[0].time_limit_s if self.spec.cases else 2.0, timeout_s)
        memory = self.spec.cases[0].memory_mb if self.spec.cases else 256
        limits = case_limits(
            built,
            time_limit,
            memory,
            1 << 16,
            address_space=memory_by_address_space(sandbox),
        )
        for stdin in stdins:
            r = run_build(sandbox, built, stdin.encode(), limits, memory_mb=memory)
            spent += r.wall_s
            spent_cpu = time_outcome(r, case_cpu_limit(built, time_limit))
            runs.append((r, classify(r, time_limit, spent_cpu)))
        return runs, spent

    def run_program(self, raw: str, stdin: str, timeout_s: float) -> ToolOutcome:
        source = self._source(raw)
        if isinstance(source, ToolOutcome):
            return source
        done = self._build_and_run(*source, [stdin], timeout_s)
        if isinstance(done, ToolOutcome):
            return done
        (r, problem), spent = done[0][0], done[1]
        head = f"{problem[1]}\n" if problem else ""
        return ToolOutcome(head + describe_run(r, self.max_chars), exec_s=spent)

    def run_examples(self, timeout_s: float) -> ToolOutcome:
        files = _solution_files(self.ws)
        if not files:
            exts = ", ".join(EXTENSIONS)
            return ToolOutcome(f"error: write your program to solution.<ext> ({exts})", error=True)
        examples = [
            e
            for e in self.prepared.task.payload.get("examples") or []
            if isinstance(e, dict)
            and isinstance(e.get("input"), str)
            and isinstance(e.get("output"), str)
        ][:_MAX_EXAMPLES]
        if self.spec.io != "stdin" or not examples:
            return ToolOutcome(
                "this task has no visible examples to run; try your program with run_program "
                "(the hidden cases judge it after submit)"
            )
        source = self._source(files[-1][1])
        if isinstance(source, ToolOutcome):
            return source
        done = self._build_and_run(*source, [e["input"] for e in examples], timeout_s)
        if isinstance(done, ToolOutcome):
            return done
        lines, passed = [], 0
        for i, (example, (r, problem)) in enumerate(zip(examples, done[0], strict=True), 1):
            if problem is not None:
                lines.append(f"FAILED example {i}: {problem[1]}")
                continue
            ok, detail = compare("tokens", r.stdout, example["output"])
            passed += ok
            lines.append(
                f"{'PASSED' if ok else 'FAILED'} example {i}" + ("" if ok else f": {detail}")
            )
        head = f"{files[-1][1]}: {passed} of {len(examples)} visible examples passed"
        return ToolOutcome(clip("\n".join([head, *lines]), self.max_chars), exec_s=done[1])
