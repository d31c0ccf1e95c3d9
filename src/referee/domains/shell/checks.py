"""The grader's checks of a system's final state, decided on the host from plain data.

A task's ``hidden["checks"]`` is a list of checks, each a small dict with a ``type``. They run
after the episode, once every process of the session is dead (:meth:`ShellSession.stop`), so
nothing the agent left behind can change the state while it is read or answer in the service's
place. Files are read by the host without following any link (a link where a file should be is
a failure, never a read of the link's target). Checks that must run code (the service probe,
the idempotence re-runs, an imported row's check script) run the *grader's* code in a fresh
sandbox over the final files; what comes back is an exit status or one JSON line of that grader
code, which no process of the agent is alive to write.

========================  ==============================================================
type                      passes when
========================  ==============================================================
``sha256``                ``path`` is a regular file whose bytes hash to ``sha256``
``gzip_sha256``           ``path`` is a gzip file whose decompressed bytes hash to ``sha256``
``absent``                nothing is at ``path``
``mode``                  ``path`` is a regular file or directory with permission bits ``mode``
``max_size``              ``path`` is absent, or a regular file of at most ``bytes`` bytes
``can_read``              simulated ``user`` can (``expect`` true) or cannot read ``path``
``process``               the process tracked by ``marker`` is alive (``alive`` true) or dead
``running``               a process whose command line matches the regex ``pattern`` was
                          running when the episode ended (``expect`` true) or none was
``service``               the grader's server, run with ``config``, answers ``expect``
                          (on ``socket`` when given)
``idempotent``            ``script`` run twice on the original system gives ``expect`` twice
``script``                the grader's shell ``source`` exits 0 within ``timeout_s``
                          (imported rows; it runs in a fresh session with the task's users
                          and the same ``$HOME`` as the agent)
``output``                what the answer printed (the single-turn script's stdout, or the
                          last ``run`` command's) matches ``expect`` under ``mode``:
                          ``exact``, ``lines``, ``sorted`` or ``words`` (:mod:`.compare`)
``tree``                  every path under /workspace but the top-level names in
                          ``exclude`` (kinds, file contents, link targets) hashes to
                          ``sha256`` (:func:`.compare.tree_digest`): nothing more, nothing
                          less changed than the reference changed
========================  ==============================================================

``running`` is read on the host from the session's process table *before* the kill (see
:meth:`.episode.Episode.finish`); it trusts the command line, which a process can rewrite, so
it is sound for "nothing like X is left" and weak for "X still runs" (``process`` tells the
original from an impostor, by host pid and start time).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import os
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.sandbox.core import Sandbox
from referee.sandbox.cputime import RETRY_STRETCH, cpu_limits, judged_run
from referee.sandbox.paths import safe_relpath
from referee.sandbox.workspace import Workspace
from referee.verify.verdict import TestOutcome

from .accounts import accounts_of
from .compare import output_matches, tree_digest
from .lines import last_line
from .permissions import can_read
from .service import PROBE_SOURCE, SERVER_SOURCE
from .session import ShellSession, SystemFile

__all__ = ["CHECK_TYPES", "CheckContext", "entry", "file_state", "ordered", "run_check", "state_of"]

_GRADER_DIR = ".grader"
#: On CPU time, with a wall-clock backstop (referee.sandbox.cputime): a loaded machine slows a
#: check, never fails it.
_CHECK_CPU_S = 15.0
_CHECK_LIMITS = cpu_limits(_CHECK_CPU_S, memory_mb=512, max_processes=64)


@dataclass
class CheckContext:
    """What the checks of one episode see: the final workspace (no process alive in it), a
    sandbox for the grader's code, the original system, and the tracked processes' fates."""

    workspace: Workspace
    sandbox: Sandbox
    original: Sequence[SystemFile]
    hidden: Mapping[str, Any]
    #: marker -> whether the process tracked by it was alive at the episode's end.
    alive: Mapping[str, bool] = field(default_factory=dict)
    #: pattern -> whether a process matching it was running at the episode's end.
    running: Mapping[str, bool] = field(default_factory=dict)
    #: What the answer printed (None: nothing was captured); the ``output`` check reads it.
    output: str | None = None
    #: Whether that output was cut at the sandbox's cap.
    output_truncated: bool = False


def entry(root: Path, rel: str) -> tuple[str, os.stat_result | None]:
    """("file" | "dir" | "link" | "other" | "absent", lstat) of ``rel``, no link followed on
    the way (a link in a parent makes the path count as a link)."""
    path = root
    parts = safe_relpath(rel)
    for i, part in enumerate(parts):
        path = path / part
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return "absent", None
        if stat.S_ISLNK(st.st_mode):
            return "link", st
        if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            return "absent", None
    kind = "file" if stat.S_ISREG(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "other"
    return kind, st


def file_state(root: Path, rel: str, *, max_bytes: int = 64 << 20) -> list[Any]:
    """One path's state as plain data: ``["file", mode, sha256]``, ``["dir", mode]``,
    ``["link", target]``, ``["absent"]`` or ``["other"]`` (a FIFO, a socket, ...)."""
    kind, st = entry(root, rel)
    if kind == "file" and st is not None:
        data = Workspace(root).read(rel, max_bytes=max_bytes)
        return ["file", stat.S_IMODE(st.st_mode), hashlib.sha256(data).hexdigest()]
    if kind == "dir" and st is not None:
        return ["dir", stat.S_IMODE(st.st_mode)]
    if kind == "link":
        return ["link", os.readlink(root.joinpath(*safe_relpath(rel)))]
    return [kind]


def _all_paths(root: Path) -> list[str]:
    """Every path under ``root`` (links listed, never followed)."""
    out = []
    for top, dirs, files in os.walk(root):  # os.walk does not follow links to directories
        rel = os.path.relpath(top, root)
        for name in dirs + files:
            out.append(name if rel == "." else f"{rel}/{name}")
    return out


def state_of(root: Path, paths: Sequence[str]) -> dict[str, list[Any]]:
    """The state of each of ``paths`` (see :func:`file_state`)."""
    return {p: file_state(root, p) for p in paths}


def _outcome(check: Mapping[str, Any], ok: bool, detail: str = "") -> TestOutcome:
    name = str(check.get("name") or f"{check['type']}:{check.get('path', check.get('marker', ''))}")
    return TestOutcome(name=name, status="passed" if ok else "failed", detail=detail[:300])


def _sha256(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    state = file_state(ctx.workspace.root, check["path"])
    ok = state[0] == "file" and state[2] == check["sha256"]
    return _outcome(check, ok, "" if ok else f"found {state[0]}")


def _gzip_sha256(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    kind, _ = entry(ctx.workspace.root, check["path"])
    if kind != "file":
        return _outcome(check, False, f"found {kind}")
    raw = ctx.workspace.read(check["path"])
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            data = f.read(64 << 20)
    except (OSError, EOFError) as e:
        return _outcome(check, False, f"not gzip: {e}")
    ok = hashlib.sha256(data).hexdigest() == check["sha256"]
    return _outcome(check, ok, "" if ok else "decompressed content differs")


def _absent(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    kind, _ = entry(ctx.workspace.root, check["path"])
    return _outcome(check, kind == "absent", "" if kind == "absent" else f"found {kind}")


def _mode(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    kind, st = entry(ctx.workspace.root, check["path"])
    if kind not in ("file", "dir") or st is None:
        return _outcome(check, False, f"found {kind}")
    mode = stat.S_IMODE(st.st_mode)
    return _outcome(check, mode == int(check["mode"]), f"mode {mode:o}")


def _max_size(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    kind, st = entry(ctx.workspace.root, check["path"])
    if kind == "absent":
        return _outcome(check, True)
    ok = kind == "file" and st is not None and st.st_size <= int(check["bytes"])
    return _outcome(check, ok, f"{kind}, {st.st_size if st else 0} bytes")


def _can_read(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    users = ctx.hidden["users"]
    owners = ctx.hidden.get("owners", {})
    modes: dict[str, int | None] = {}
    parts = safe_relpath(check["path"])
    for i in range(len(parts)):
        rel = "/".join(parts[: i + 1])
        kind, st = entry(ctx.workspace.root, rel)
        ok_kind = kind == "dir" if i < len(parts) - 1 else kind == "file"
        modes[rel] = stat.S_IMODE(st.st_mode) if ok_kind and st is not None else None
    got = can_read(check["user"], check["path"], users=users, owners=owners, modes=modes)
    return _outcome(check, got == bool(check["expect"]), f"{check['user']} can read: {got}")


def _process(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    alive = ctx.alive.get(check["marker"])
    ok = alive is not None and alive == bool(check["alive"])
    return _outcome(check, ok, f"alive: {alive}")


def _running(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    running = ctx.running.get(check["pattern"])
    ok = running is not None and running == bool(check["expect"])
    name = str(check.get("name") or f"running:{check['pattern']}")
    return TestOutcome(
        name=name, status="passed" if ok else "failed", detail=f"running at the end: {running}"
    )


def _run_grader(
    ctx: CheckContext, argv: list[str], files: Mapping[str, str] | None = None
) -> tuple[int | None, str]:
    _clear_grader_dir(ctx.workspace.root)
    run = functools.partial(
        ctx.sandbox.run, argv, files=files, workspace=ctx.workspace, limits=_CHECK_LIMITS
    )
    result, spent = judged_run(run, _CHECK_CPU_S)
    if spent != "ok":
        return None, result.stdout
    return result.exit_code, result.stdout


def _clear_grader_dir(root: Path) -> None:
    """Remove whatever the agent left where the grader's files go (a link, a read-only
    directory, a file), without following links, so the grader's copies are what runs."""
    kind, _ = entry(root, _GRADER_DIR)
    path = root / _GRADER_DIR
    if kind == "dir":
        shutil.rmtree(path)
    elif kind != "absent":
        path.unlink()


def _service(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    files = {f"{_GRADER_DIR}/server.py": SERVER_SOURCE, f"{_GRADER_DIR}/probe.py": PROBE_SOURCE}
    server, probe = (f"/workspace/{name}" for name in files)
    config = "/workspace/" + "/".join(safe_relpath(check["config"]))
    argv = ["/usr/bin/python3", "-I", probe, server, config]
    if check.get("socket"):
        argv.append(str(check["socket"]))
    _, out = _run_grader(ctx, argv, files)
    try:
        report = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return _outcome(check, False, "the probe gave no report")
    ok = report.get("answer") == check["expect"]
    detail = f"answered {report.get('answer')!r}; log: {report.get('log', '')}"
    return _outcome(check, ok, detail)


def _idempotent(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    script = check["script"]
    kind, _ = entry(ctx.workspace.root, script)
    if kind != "file":
        return _outcome(check, False, f"no script at {script} ({kind})")
    text = ctx.workspace.read(script)
    expect = {k: list(v) for k, v in check["expect"].items()}
    with ctx.sandbox.workspace() as fresh:
        for path, content, mode in ctx.original:
            fresh.write({path: content}, mode=mode)
        fresh.write({script: text}, mode=0o755)
        setup = str(ctx.hidden.get("setup", ""))
        if setup.strip():  # the original system is the one after the grader's setup
            ctx.sandbox.run(["/bin/sh", "-c", setup], workspace=fresh, limits=_CHECK_LIMITS)
        trees = []
        for _ in range(2):
            ctx.sandbox.run(["/bin/sh", script], workspace=fresh, limits=_CHECK_LIMITS)
            trees.append(state_of(fresh.root, sorted(set(_all_paths(fresh.root)) | set(expect))))
    first, second = trees
    wrong = sorted(p for p in expect if first[p] != expect[p])
    if wrong:
        return _outcome(check, False, f"after one run, wrong: {', '.join(wrong)}")
    # The whole tree, not only the required paths: a second run that leaves a stray file or
    # link anywhere (``ln -sf`` into the linked directory) is not idempotent.
    changed = sorted(p for p in set(first) | set(second) if first.get(p) != second.get(p))
    return _outcome(check, not changed, f"a second run changed: {', '.join(changed)[:200]}")


def _script(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    timeout = float(check.get("timeout_s", _CHECK_LIMITS.timeout_s))
    accounts = accounts_of(ctx.hidden) if "accounts" in ctx.hidden else None
    # A fresh session over the final files: the same /etc/passwd, $HOME and cwd the agent had,
    # and none of the agent's processes (they were killed before the checks).
    with ShellSession(ctx.sandbox, (), workspace=ctx.workspace, accounts=accounts) as session:
        r = session.run(check["source"], timeout_s=timeout)
    if r.timed_out:
        # The session's limit is wall-clock (it cannot see the check's CPU time): a check the
        # machine starved must not fail the answer, so a timed-out check (trusted grader code)
        # runs once more with the backstop stretch the CPU-time rule uses (time-limits.md).
        with ShellSession(ctx.sandbox, (), workspace=ctx.workspace, accounts=accounts) as again:
            r = again.run(check["source"], timeout_s=timeout * RETRY_STRETCH)
    if r.exit_code == 0:
        return _outcome(check, True)
    if r.timed_out:
        return _outcome(
            check, False, f"check timed out after {timeout:g} s (and {timeout * RETRY_STRETCH:g} s)"
        )
    if r.lost or r.exit_code is None:
        how = "the session went down" if r.lost else f"killed by signal {r.signal}"
        return _outcome(check, False, f"check {how}")
    err = last_line(r.stderr) or last_line(r.stdout)
    return _outcome(check, False, f"exit {r.exit_code}" + (f": {err}" if err else ""))


def _output(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    if ctx.output is None:
        return _outcome(check, False, "no output was captured (the answer never ran a command)")
    if ctx.output_truncated:
        return _outcome(check, False, "the output was cut at the sandbox's cap")
    ok, detail = output_matches(str(check["expect"]), ctx.output, str(check.get("mode", "lines")))
    return _outcome(check, ok, detail)


def _tree(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    exclude = [str(x) for x in check.get("exclude", [])]
    digest, count = tree_digest(ctx.workspace.root, exclude)
    if digest == check["sha256"]:
        return _outcome(check, True)
    want = check.get("entries")
    expected = f"{want} expected, " if isinstance(want, int) else ""
    detail = f"the files differ from the expected ones ({expected}{count} found)"
    return _outcome(check, False, detail)


CHECK_TYPES: dict[str, Callable[[Mapping[str, Any], CheckContext], TestOutcome]] = {
    "sha256": _sha256,
    "gzip_sha256": _gzip_sha256,
    "absent": _absent,
    "mode": _mode,
    "max_size": _max_size,
    "can_read": _can_read,
    "process": _process,
    "running": _running,
    "service": _service,
    "idempotent": _idempotent,
    "script": _script,
    "output": _output,
    "tree": _tree,
}

#: Checks that run code in a sandbox go last: they write the grader's files into the workspace.
_LAST = ("service", "idempotent", "script")


def run_check(check: Mapping[str, Any], ctx: CheckContext) -> TestOutcome:
    """One check's outcome; a check that cannot be read is an ``error`` outcome."""
    try:
        return CHECK_TYPES[check["type"]](check, ctx)
    except (KeyError, TypeError, ValueError) as e:
        return TestOutcome(name=str(check.get("type")), status="error", detail=repr(e)[:300])
    except (ConfigError, OSError) as e:
        # What the agent left (a link, a FIFO, an unreadable tree) where the check looks:
        # a failed check, never an infrastructure error it could hide behind.
        return _outcome(check, False, f"unreadable state: {e}")


def ordered(checks: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The checks with those that run the grader's code last."""
    return sorted(checks, key=lambda c: c.get("type") in _LAST)
