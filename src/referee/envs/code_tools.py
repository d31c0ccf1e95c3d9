"""The tools of a code episode, run against its workspace, everything the model wrote in the
sandbox.

=============  ===========================================================================
list_files     the workspace's files (caches left out), optionally under one folder
read_file      one file's text, optionally a range of lines
write_file     create or replace one file
run_python     run Python source in the sandbox with the workspace as its folder
run_tests      the task's visible tests (never the hidden ones) on the workspace as it is
submit         end the episode; the workspace is the answer
=============  ===========================================================================

Each call returns text for the model and the seconds spent in sandboxed programs, so the
environment can tell its own overhead from the program's time. A mistake of the model's (a
missing file, a path outside the workspace) is a result that starts with ``error:``; a fault
of the sandbox itself (:class:`~referee.errors.SandboxError`) propagates, since no observation
could honestly describe it.

Paths are relative to the workspace; ``/workspace/x`` (where the sandbox mounts it) is taken
as ``x``.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Any

from referee.envs.code_tasks import SOLUTION_FILE, PreparedTask
from referee.envs.patch import is_noise
from referee.envs.tools import ToolCall, function_tool
from referee.errors import ConfigError, UnsafePathError
from referee.sandbox import ExecResult, Limits, Workspace
from referee.sandbox.paths import safe_relpath
from referee.tasks.kinds import TaskKind
from referee.verify.repo_run import run_pytest

__all__ = ["TOOL_SCHEMAS", "CodeTools", "ToolOutcome", "clip", "describe_run", "workspace_path"]

_MAX_WRITE_BYTES = 1 << 20
_MAX_LISTED = 400
_RUN_NAME = "_run_python.py"  # __file__ of run_python programs; never written to the workspace

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    s["function"]["name"]: s
    for s in (
        function_tool(
            "list_files",
            "List the files in the workspace (sizes in bytes), or those under one folder.",
            {"path": {"type": "string", "description": "a folder; default: the whole workspace"}},
            required=[],
        ),
        function_tool(
            "read_file",
            "Read a text file of the workspace; optionally only lines start_line..end_line "
            "(1-based, inclusive).",
            {
                "path": {"type": "string"},
                "start_line": {"type": "integer"},
                "end_line": {"type": "integer"},
            },
            required=["path"],
        ),
        function_tool(
            "write_file",
            "Create or replace a file of the workspace with the given content.",
            {"path": {"type": "string"}, "content": {"type": "string"}},
        ),
        function_tool(
            "run_python",
            "Run Python source in the sandbox, with the workspace as the current folder (its "
            "modules import). Returns the exit code, stdout and stderr (truncated).",
            {"code": {"type": "string"}, "stdin": {"type": "string"}},
            required=["code"],
        ),
        function_tool(
            "run_tests",
            "Run the task's visible tests on the workspace as it is now. Repository tasks may "
            "name pytest node ids or test files instead.",
            {"tests": {"type": "array", "items": {"type": "string"}}},
            required=[],
        ),
        function_tool(
            "submit",
            "Submit the workspace as your answer and end the episode.",
        ),
    )
}


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    exec_s: float = 0.0
    error: bool = False


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping its end (where errors are)."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}"


def workspace_path(raw: str) -> str:
    """A path the model gave, relative to the workspace (``/workspace/x`` and ``./x`` are
    ``x``); an :class:`UnsafePathError` for one that leaves it."""
    name = raw.strip()
    for prefix in ("/workspace/", "./"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    return "/".join(safe_relpath(name))


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def describe_run(r: ExecResult, limit: int) -> str:
    """A run as the model is told of it: its summary, then stdout and stderr clipped to
    ``limit`` characters each."""
    lines = [r.summary()]
    if r.stdout or r.stdout_truncated:
        cut = " (cut by the sandbox)" if r.stdout_truncated else ""
        lines.append(f"--- stdout{cut} ---\n{clip(r.stdout, limit)}")
    if r.stderr or r.stderr_truncated:
        cut = " (cut by the sandbox)" if r.stderr_truncated else ""
        lines.append(f"--- stderr{cut} ---\n{clip(r.stderr, limit)}")
    return "\n".join(lines)


class CodeTools:
    """The tools above for one episode: its prepared task, its workspace, its run limits.

    Every method blocks (sandbox runs); the environment calls them off the event loop.
    ``max_chars`` caps each piece of program output shown to the model.
    """

    def __init__(
        self, prepared: PreparedTask, workspace: Workspace, *, limits: Limits, max_chars: int
    ) -> None:
        self.prepared = prepared
        self.ws = workspace
        self.limits = limits
        self.max_chars = max_chars

    def call(self, call: ToolCall, timeout_s: float) -> ToolOutcome:
        """Run one checked call (``submit`` is the environment's own business)."""
        # JSON may carry lone surrogates, which no file or program can hold: replace them.
        args = {k: _clean(v) for k, v in call.arguments.items()}
        try:
            if call.name == "list_files":
                return self.list_files(str(args.get("path", "")))
            if call.name == "read_file":
                return self.read_file(
                    str(args["path"]), args.get("start_line"), args.get("end_line")
                )
            if call.name == "write_file":
                return self.write_file(str(args["path"]), str(args["content"]))
            if call.name == "run_python":
                return self.run_python(str(args["code"]), args.get("stdin"), timeout_s)
            if call.name == "run_tests":
                return self.run_tests(args.get("tests"), timeout_s)
        except (UnsafePathError, ConfigError) as e:
            return ToolOutcome(f"error: {e}", error=True)
        except OSError as e:  # a name too long, a full workspace: the model's doing
            return ToolOutcome(f"error: {e.strerror or e}", error=True)
        return ToolOutcome(f"error: {call.name} is not a tool here", error=True)

    # ---- files --------------------------------------------------------------------------
    def list_files(self, folder: str) -> ToolOutcome:
        prefix = (
            workspace_path(folder) + "/" if folder.strip() not in ("", ".", "/workspace") else ""
        )
        rows = []
        # Names and sizes only, from lstat: no link is followed and no content read.
        for root, dirs, files in os.walk(self.ws.root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not is_noise(f"{d}/x"))
            rel_root = os.path.relpath(root, self.ws.root)
            for name in sorted(files):
                rel = name if rel_root == "." else f"{rel_root}/{name}"
                if is_noise(rel) or not rel.startswith(prefix):
                    continue
                st = os.lstat(os.path.join(root, name))
                if stat.S_ISLNK(st.st_mode):
                    rows.append(f"{rel} (symlink, not followed)")
                elif stat.S_ISREG(st.st_mode):
                    rows.append(f"{rel} ({st.st_size} bytes)")
        if not rows:
            where = f"under {prefix.rstrip('/')!r}" if prefix else "in the workspace"
            return ToolOutcome(f"no files {where}")
        more = len(rows) - _MAX_LISTED
        shown = rows[:_MAX_LISTED] + ([f"... and {more} more"] if more > 0 else [])
        return ToolOutcome("\n".join(shown))

    def read_file(self, raw: str, start: Any = None, end: Any = None) -> ToolOutcome:
        path = workspace_path(raw)
        try:
            data = self.ws.read(path, max_bytes=8 << 20)
        except FileNotFoundError:
            return ToolOutcome(f"error: no file {path!r} in the workspace", error=True)
        except OSError as e:
            if e.errno in (errno.EISDIR, errno.ENOTDIR):
                return ToolOutcome(f"error: {path!r} is not a file", error=True)
            raise
        text = data.decode("utf-8", errors="replace")
        if start is not None or end is not None:
            lines = text.splitlines(keepends=True)
            lo = max(1, int(start or 1))
            hi = min(len(lines), int(end or len(lines)))
            text = "".join(lines[lo - 1 : hi]) if lo <= hi else ""
        if len(text) > self.max_chars * 4:
            cut = len(text) - self.max_chars * 4
            text = text[: self.max_chars * 4] + (
                f"\n[... {cut} more characters; read a range with start_line/end_line]"
            )
        return ToolOutcome(text)

    def write_file(self, raw: str, content: str) -> ToolOutcome:
        path = workspace_path(raw)
        data = content.encode()
        if len(data) > _MAX_WRITE_BYTES:
            return ToolOutcome(
                f"error: {len(data)} bytes is over the {_MAX_WRITE_BYTES}-byte limit per file",
                error=True,
            )
        self.ws.write({path: data})
        return ToolOutcome(f"wrote {len(data)} bytes to {path}")

    # ---- running ------------------------------------------------------------------------
    def _run(self, source: str, timeout_s: float, stdin: bytes | None = None) -> ExecResult:
        p = self.prepared
        if p.python_paths:
            # A repository's source roots and dependencies come first on sys.path, as they do
            # for its tests; the code itself runs under its own name so tracebacks point at it.
            source = (
                "import sys\n"
                f"sys.path[1:1] = {list(p.python_paths)!r}\n"
                f"exec(compile({source!r}, '<run_python>', 'exec'), "
                "{'__name__': '__main__', '__builtins__': __builtins__})\n"
            )
        return p.sandbox.run_python(
            source,
            name=_RUN_NAME,
            workspace=self.ws,
            stdin=stdin,
            limits=self.limits.with_(timeout_s=timeout_s),
        )

    def run_python(self, code: str, stdin: Any, timeout_s: float) -> ToolOutcome:
        data = stdin.encode() if isinstance(stdin, str) and stdin else None
        r = self._run(code, timeout_s, data)
        return ToolOutcome(describe_run(r, self.max_chars), exec_s=r.wall_s)

    def run_tests(self, tests: Any, timeout_s: float) -> ToolOutcome:
        if self.prepared.kind != TaskKind.FUNCTION:
            return self._repo_tests(list(tests or self.prepared.visible_tests), timeout_s)
        if tests:
            return ToolOutcome(
                "error: a function task runs its own visible tests; call run_tests without "
                "arguments",
                error=True,
            )
        return self._function_tests(timeout_s)

    def _function_tests(self, timeout_s: float) -> ToolOutcome:
        visible = self.prepared.visible_tests
        if not visible:
            return ToolOutcome(
                "this task has no visible tests; try your function with run_python on the "
                "examples in the task (the hidden tests judge it after submit)"
            )
        module = SOLUTION_FILE.removesuffix(".py")
        if isinstance(visible, str):
            r = self._run(f"from {module} import *\n{visible}", timeout_s)
            verdict = "passed" if r.ok else "failed"
            return ToolOutcome(
                f"visible tests {verdict}: {describe_run(r, self.max_chars)}", r.wall_s
            )
        nonce = secrets.token_hex(6)
        program = _STATEMENTS_PROGRAM.format(module=module, tests=json.dumps(visible), nonce=nonce)
        r = self._run(program, timeout_s)
        lines, done = [], 0
        for line in r.stdout.splitlines():
            if not line.startswith(nonce):
                continue
            frame = json.loads(line[len(nonce) :])
            if "load_error" in frame:
                return ToolOutcome(
                    f"error: {SOLUTION_FILE} does not import: {frame['load_error']}",
                    exec_s=r.wall_s,
                )
            done += 1
            detail = f": {frame['detail']}" if frame.get("detail") else ""
            lines.append(f"{frame['status'].upper()} {frame['test']}{detail}")
        passed = sum(ln.startswith("PASSED") for ln in lines)
        head = f"{passed} of {len(visible)} visible tests passed"
        if done < len(visible):
            head += f" ({len(visible) - done} did not run: {r.summary()})"
        return ToolOutcome(clip("\n".join([head, *lines]), self.max_chars * 2), exec_s=r.wall_s)

    def _repo_tests(self, ids: list[str], timeout_s: float) -> ToolOutcome:
        if not ids:
            return ToolOutcome(
                "no visible tests are named for this task; pass test files or node ids, "
                "e.g. run_tests(tests=['tests/test_x.py'])"
            )
        p = self.prepared
        files = {k: v for k, v in self.ws.read_all().items() if not is_noise(k)}
        # A copy of the workspace, not the workspace: the grader's runner removes conftest files
        # it does not know, and that must not change the model's files.
        run = run_pytest(
            p.sandbox,
            files,
            ids,
            source_roots=p.source_roots,
            conftests=p.conftests,
            limits=Limits(
                timeout_s=timeout_s, memory_mb=2048, max_processes=256, stdout_bytes=16 << 20
            ),
        )
        if not run.ready:
            return ToolOutcome(
                "error: pytest did not start: " + describe_run(run.exec, self.max_chars),
                exec_s=run.wall_s,
                error=True,
            )
        expanded = [
            k for k in run.results if any(k == i or k.startswith(i.rstrip("/") + "::") for i in ids)
        ]
        names = expanded or ids
        statuses = {n: run.status(n) for n in names}
        for i in ids:
            if i not in statuses and not any(n.startswith(i + "::") for n in names):
                statuses[i] = run.status(i)
        passed = sum(s == "passed" for s in statuses.values())
        lines = [f"{passed} of {len(statuses)} tests passed ({run.exec.summary()})"]
        lines += [f"{s.upper()} {n}" for n, s in statuses.items()]
        reports = [
            f"--- {n} ---\n{run.results[n].report}"
            for n, s in statuses.items()
            if s != "passed" and n in run.results and run.results[n].report
        ]
        text = "\n".join(lines + reports)
        return ToolOutcome(clip(text, self.max_chars * 2), exec_s=run.wall_s)


# Runs each visible statement in the solution's namespace and reports one line per statement.
# Its output is feedback for the model only; nothing is decided from it.
_STATEMENTS_PROGRAM = """\
import json, sys
def _say(**kw):
    print({nonce!r} + json.dumps(kw), flush=True)
try:
    import {module} as _m
except BaseException as e:
    _say(load_error=f"{{type(e).__name__}}: {{e}}")
    sys.exit(0)
_ns = dict(vars(_m))
for _t in json.loads({tests!r}):
    try:
        exec(compile(_t, "<test>", "exec"), _ns)
        _say(test=_t, status="passed")
    except AssertionError as e:
        _say(test=_t, status="failed", detail=str(e)[:300])
    except BaseException as e:
        _say(test=_t, status="error", detail=f"{{type(e).__name__}}: {{e}}"[:300])
"""
