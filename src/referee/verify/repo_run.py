"""One pytest run of a repository state in the sandbox, read back as plain data.

Shared by the pytest verifier and by task synthesis (baseline runs, validation of mutants):
write the files into a fresh workspace, start the grader's runner (``_pytest_runner``) with the
repository's source roots and dependencies on ``sys.path``, and turn its frames into a
:class:`TestRun`. ``RepoSandboxes`` keeps one sandbox per dependency environment, since the
environment is bound into the sandbox when it starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from referee.sandbox import ExecResult, Lease, Limits, Sandbox, Workspace
from referee.verify import harness as H

__all__ = [
    "GRADER_PACKAGES",
    "PYTEST_WARM_IMPORTS",
    "RUNNER_SOURCE",
    "WARM_ENV",
    "CoverageMap",
    "RepoSandboxes",
    "TestResult",
    "TestRun",
    "Variant",
    "VariantRun",
    "parse_frames",
    "repo_workspace",
    "run_pytest",
    "run_variants",
    "status_of",
    "warm_capable",
    "warm_enabled",
]

#: What the grader's runner imports: pytest, its dependencies and coverage.py.
GRADER_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments")
COVERAGE_PACKAGES = ("coverage",)
RUNNER_SOURCE = resources.files("referee.verify").joinpath("_pytest_runner.py").read_text()

#: What a fast-path worker of a repository sandbox imports once at start: pytest and the plugins
#: the runner keeps (not those it switches off with ``-p no:``), never the project under test.
PYTEST_WARM_IMPORTS = (
    "pytest",
    *(
        f"_pytest.{name}"
        for name in (
            "mark", "main", "runner", "fixtures", "helpconfig", "python", "terminal",
            "debugging", "unittest", "capture", "skipping", "legacypath", "tmpdir",
            "monkeypatch", "recwarn", "assertion", "assertion.rewrite", "warnings", "logging",
            "reports", "subtests", "python_path",
        )
    ),
)  # fmt: skip
#: ``0`` sends every :func:`run_pytest` to a fresh interpreter (the path before issue 19).
WARM_ENV = "REFEREE_PYTEST_WARM"
# The fork server's child starts with "/workspace" in place of sys.path[0] (the standard
# library's zip entry, absent on disk), a __file__, and no PWD in its environment (bwrap's
# --chdir sets it). This makes sys.path, __main__ and os.environ what the fresh `python3 -I -c`
# has (tests/verify/test_repo_run.py compares them). One line: the runner's own line numbers
# move by one only.
_WARM_PRELUDE = (
    "import sys, os; del __file__; sys.path[0] = os.path.join(sys.prefix, 'lib', "
    "'python%d%d.zip' % sys.version_info[:2]); os.environ['PWD'] = os.getcwd(); "
    "del sys, os  # as `python3 -I -c`\n"
)

Status = Literal["passed", "failed", "error", "skipped", "timeout", "missing"]


def status_of(phases: Mapping[str, str] | None) -> Status:
    """One test's outcome from its phases: skipped and xfailed count as not passed."""
    if phases is None:
        return "missing"
    values = set(phases.values())
    if "xfail" in values or "skipped" in values:
        return "skipped"
    if phases.get("setup") == "failed" or phases.get("teardown") == "failed":
        return "error"
    if phases.get("call") == "passed" and values <= {"passed"}:
        return "passed"
    return "failed"


@dataclass(frozen=True)
class TestResult:
    status: Status
    duration_s: float = 0.0
    report: str = ""


@dataclass
class TestRun:
    """What one run reported. ``ready`` is false when pytest never started (an infra fault)."""

    results: dict[str, TestResult]
    ready: bool
    exec: ExecResult
    collected: list[str] | None = None
    coverage: CoverageMap | None = None
    canaries: list[str] = field(default_factory=list)
    #: Seconds from pytest's start to the end of collection (imports included).
    collect_s: float = 0.0

    @property
    def wall_s(self) -> float:
        return self.exec.wall_s

    def status(self, nodeid: str) -> Status:
        r = self.results.get(nodeid)
        if r is None:
            return "timeout" if self.exec.timed_out else "missing"
        return r.status

    def passed(self) -> set[str]:
        return {k for k, v in self.results.items() if v.status == "passed"}


class RepoSandboxes:
    """One sandbox per dependency environment (its ``site-packages``), made on first use."""

    def __init__(self, **sandbox_kwargs: Any) -> None:
        self._kwargs = sandbox_kwargs
        self._boxes: dict[str, Sandbox] = {}
        self._lock = threading.Lock()

    def get(self, site_packages: Path | None) -> Sandbox:
        key = str(site_packages or "")
        with self._lock:
            if key not in self._boxes:
                self._boxes[key] = Sandbox(
                    python_packages=GRADER_PACKAGES + COVERAGE_PACKAGES,
                    python_paths=(site_packages,) if site_packages else (),
                    warm_imports=PYTEST_WARM_IMPORTS,
                    **self._kwargs,
                )
            return self._boxes[key]

    def close(self) -> None:
        with self._lock:
            for box in self._boxes.values():
                box.close()
            self._boxes.clear()


def run_pytest(
    sandbox: Sandbox,
    files: Mapping[str, bytes | str] | Workspace,
    ids: list[str],
    *,
    source_roots: tuple[str, ...] | list[str] = ("",),
    conftests: list[str] | None = None,
    coverage: list[str] | None = None,
    limits: Limits | None = None,
    traceback: str = "auto",
    warm: bool | None = None,
    lease: Lease | None = None,
) -> TestRun:
    """Run ``ids`` (node ids or test files) on ``files`` with the grader's runner.

    Where the sandbox's fast-path workers import pytest at start (``warm_imports`` with
    ``"pytest"``, as :class:`RepoSandboxes` makes them), the runner runs in a fork of one of them
    (:meth:`Sandbox.run_python`) instead of a fresh ``python3 -I -c``: the same source, argv,
    ``sys.path``, cwd, environment and limits, without an interpreter start and pytest import
    per run. ``warm=False`` (or ``REFEREE_PYTEST_WARM=0`` in the environment) forces the fresh
    interpreter; ``warm=True`` asks for the fork where the sandbox allows it.
    ``files`` may be a prepared :class:`Workspace` (the verifier applies a patch first); it is
    left for the caller to close. ``traceback`` is pytest's ``--tb`` style for the failure
    reports. ``lease``: the run is a fork of that held worker, on the files already in its
    workspace (``files`` must be ``lease.workspace``), as the pytest verifier does after applying
    the patch there. Raises :class:`~referee.errors.RefereeError` only for faults
    before the run (the sandbox could not start).
    """
    nonce = secrets.token_hex(8)
    paths = [f"/workspace/{r}" for r in source_roots if r] + list(sandbox.python_paths)
    args: dict[str, Any] = {"nonce": nonce, "ids": ids, "paths": paths, "tb": traceback}
    if conftests is not None:
        args["conftests"] = conftests
    if coverage is not None:
        args["coverage"] = coverage
    # The coverage frame of a large suite runs to megabytes; the default cap would cut it.
    limits = limits or Limits(
        timeout_s=300, memory_mb=2048, max_processes=256, stdout_bytes=64 << 20
    )
    if lease is not None:
        if files is not lease.workspace:
            raise ValueError("run_pytest with a lease runs on the lease's own workspace")
        r = lease.run_python(
            _WARM_PRELUDE + RUNNER_SOURCE, name="-c", argv=["-c", json.dumps(args)], limits=limits
        )
        return parse_frames(r, nonce)
    if _use_warm(sandbox, warm):
        ws_kw: dict[str, Any] = (
            {"workspace": files} if isinstance(files, Workspace) else {"files": files}
        )
        r = sandbox.run_python(
            _WARM_PRELUDE + RUNNER_SOURCE,
            name="-c",
            argv=["-c", json.dumps(args)],
            limits=limits,
            **ws_kw,
        )
        return parse_frames(r, nonce)
    argv = ["python3", "-I", "-c", RUNNER_SOURCE, json.dumps(args)]
    if isinstance(files, Workspace):
        r = sandbox.run(argv, workspace=files, limits=limits)
    else:
        r = sandbox.run(argv, files=files, limits=limits)
    return parse_frames(r, nonce)


@contextlib.contextmanager
def repo_workspace(sandbox: Sandbox) -> Iterator[tuple[Workspace, Lease | None]]:
    """Where one verification builds its repository state, and the lease to run it with.

    Where the sandbox's workers import pytest (:func:`warm_capable`, and ``REFEREE_PYTEST_WARM``
    is not ``0``): a held worker's own workspace, so that the patch is applied by a fork of the
    worker and the tests run on those very files, with nothing copied in or out. Otherwise a
    workspace of its own and no lease (each step is then a fresh sandbox, as before issue 19).
    Emptied and released when the block ends.
    """
    if warm_enabled() and warm_capable(sandbox):
        with sandbox.lease() as lease:
            yield lease.workspace, lease
    else:
        with sandbox.workspace() as ws:
            yield ws, None


def warm_enabled() -> bool:
    """Whether :func:`run_pytest` forks a warm worker by default (``REFEREE_PYTEST_WARM``)."""
    return os.environ.get(WARM_ENV, "1") != "0"


def warm_capable(sandbox: Sandbox) -> bool:
    """Whether ``sandbox``'s fast-path workers import pytest at start."""
    return sandbox.backend == "bwrap" and "pytest" in sandbox.warm_imports


def _use_warm(sandbox: Sandbox, warm: bool | None) -> bool:
    return (warm_enabled() if warm is None else warm) and warm_capable(sandbox)


def _test_result(frame: dict[str, Any], phases: dict[str, str]) -> TestResult:
    """One test frame as a result; malformed fields read as absent, never as a crash."""
    duration, report = frame.get("duration"), frame.get("report")
    return TestResult(
        status=status_of(phases),
        duration_s=float(duration) if isinstance(duration, int | float) else 0.0,
        report=report if isinstance(report, str) else "",
    )


def parse_frames(r: ExecResult, nonce: str) -> TestRun:
    frames = H.frames(r.stdout, nonce)
    results: dict[str, TestResult] = {}
    collected: list[str] | None = None
    coverage: CoverageMap | None = None
    collect_s = 0.0
    for f in frames:
        test, phases = f.get("test"), f.get("phases")
        if isinstance(test, str) and isinstance(phases, dict):
            if not all(isinstance(v, str) for v in phases.values()):
                continue
            results[test] = _test_result(f, phases)
        elif isinstance(f.get("collected"), list):
            collected = [c for c in f["collected"] if isinstance(c, str)]
            if isinstance(f.get("collect_s"), int | float):
                collect_s = float(f["collect_s"])
        elif isinstance(f.get("coverage"), dict):
            coverage = _coverage_map(f["coverage"])
    ready = any(f.get("ready") is True for f in frames)
    return TestRun(
        results=results,
        ready=ready,
        exec=r,
        collected=collected,
        coverage=coverage,
        collect_s=collect_s,
    )


@dataclass
class CoverageMap:
    """Which tests ran which function (``path::Qualified.name``), and which ran each line.

    A line in ``import_lines`` also ran outside any test (at import or collection): every test
    that imports its module may depend on it, so selection by line is not sound for it.
    """

    functions: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    import_lines: dict[str, set[int]] = field(default_factory=dict)


def _coverage_map(frame: dict[str, Any]) -> CoverageMap:
    contexts = frame.get("contexts", [])
    functions = frame.get("functions", {})
    lines = frame.get("lines", {})
    out = CoverageMap()
    if not isinstance(contexts, list) or not isinstance(functions, dict):
        return out

    def names(idxs: Any) -> list[str]:
        if not isinstance(idxs, list):
            return []
        return [contexts[i] for i in idxs if isinstance(i, int) and 0 <= i < len(contexts)]

    for key, idxs in functions.items():
        if isinstance(key, str):
            out.functions[key] = names(idxs)
    if isinstance(lines, dict):
        for key, by_line in lines.items():
            if not isinstance(key, str) or not isinstance(by_line, dict):
                continue
            for ln, idxs in by_line.items():
                if not str(ln).isdigit():
                    continue
                out.lines.setdefault(key, {})[int(ln)] = names(idxs)
                if isinstance(idxs, list) and -1 in idxs:
                    out.import_lines.setdefault(key, set()).add(int(ln))
    return out


@dataclass(frozen=True)
class Variant:
    """A state of the repository for :func:`run_variants`: files written over the base."""

    id: str
    files: dict[str, str]
    ids: list[str]
    timeout_s: float = 60.0
    #: Stop at the first failing test (``--maxfail=1``): enough where the question is only
    #: "does any of these fail?", as for a stub patch.
    first_failure: bool = False
    #: Seconds per test (node id) after which the variant ends as timed out.
    budgets: dict[str, float] = field(default_factory=dict)
    #: Seconds from the child's start to the end of collection (imports of the changed code
    #: included) after which the variant ends as timed out; None: only ``timeout_s`` applies.
    collect_budget_s: float | None = None


@dataclass
class VariantRun:
    results: dict[str, TestResult]
    timed_out: bool
    wall_s: float
    finished: bool
    #: Where a timed-out variant was: "collection" (before any test ran), a test's node id
    #: (its budget ran out) or "" (the variant's own deadline).
    timed_out_in: str = ""

    def status(self, nodeid: str) -> Status:
        r = self.results.get(nodeid)
        if r is None:
            return "timeout" if self.timed_out else "missing"
        return r.status


def run_variants(
    sandbox: Sandbox,
    files: Mapping[str, bytes | str],
    variants: list[Variant],
    *,
    source_roots: tuple[str, ...] | list[str] = ("",),
    conftests: list[str] | None = None,
    traceback: str = "native",
) -> tuple[dict[str, VariantRun], TestRun]:
    """Run each variant's tests in one sandbox run (pytest imported once, a fork per variant).

    For synthesis' own states (mutants, stubs), never for candidate solutions. A variant missing
    from the result (the run died before it) is absent from the mapping: the caller records an
    infrastructure failure for it rather than a verdict. Failure reports use Python's native
    traceback style by default (pytest's long style costs most of a failing state's time).
    """
    nonce = secrets.token_hex(8)
    paths = [f"/workspace/{r}" for r in source_roots if r] + list(sandbox.python_paths)
    args: dict[str, Any] = {
        "nonce": nonce,
        "ids": [],
        "paths": paths,
        "tb": traceback,
        "variants": [
            {
                "id": v.id,
                "files": v.files,
                "ids": v.ids,
                "timeout_s": v.timeout_s,
                "maxfail": 1 if v.first_failure else 0,
                "budgets": v.budgets,
                "collect_budget_s": v.collect_budget_s,
            }
            for v in variants
        ],
    }
    if conftests is not None:
        args["conftests"] = conftests
    total = sum(v.timeout_s for v in variants) + 60
    limits = Limits(timeout_s=total, memory_mb=2048, max_processes=256, stdout_bytes=64 << 20)
    r = sandbox.run(
        ["python3", "-I", "-c", RUNNER_SOURCE, "-"],
        files=files,
        limits=limits,
        stdin=json.dumps(args).encode(),
    )
    frames = H.frames(r.stdout, nonce)
    out: dict[str, VariantRun] = {}
    for f in frames:
        vid = f.get("variant")
        if not isinstance(vid, str):
            continue
        run = out.setdefault(vid, VariantRun({}, False, 0.0, False))
        test, phases = f.get("test"), f.get("phases")
        if (
            isinstance(test, str)
            and isinstance(phases, dict)
            and all(isinstance(v, str) for v in phases.values())
        ):
            run.results[test] = _test_result(f, phases)
        if f.get("variant_timeout") is True:
            run.timed_out = True
            slow = f.get("slow_test")
            if isinstance(slow, str):
                run.timed_out_in = "collection" if slow == "<collection>" else slow
        if isinstance(f.get("variant_wall_s"), int | float):
            run.wall_s = float(f["variant_wall_s"])
            run.finished = True
    base = parse_frames(r, nonce)
    return {k: v for k, v in out.items() if v.finished}, base
