"""Repository tasks beside their floor (issue 32), for ``make bench-floor``.

The tasks: ``referee synth tests/fixtures/minirepo`` (37 tasks from the fixture repository: 33
``repo-patch``, 4 ``test-writing``), made once per fixture version into a cache folder under the
system's temporary directory with its own artifact store, and shared by both trees of a run
(each tree's verifier judges the same file). The samples are the ``repo-patch`` tasks' reference
patches.

* **cost**: ``VerifierSet.verify`` of the reference patch, as ``referee verify`` makes the set
  (``harness_sandbox`` with the grader's packages), one sample at a time, after a first
  untimed pass (workers started, bytecode cached).
* **floor**: the tests' own time, with no sandbox and no isolation: on a copy of the repository
  already patched (written and ``git apply``-ed before the clock starts), the task's
  FAIL_TO_PASS and PASS_TO_PASS tests run by ``pytest.main`` (with the arguments referee's
  runner gives) in a fork of a process that has already imported pytest and run an empty
  session (what referee's warm worker does before it forks); timed from the fork to the reap.
  The tests run once untimed first, so that their bytecode (and pytest's rewritten test
  modules) are cached, as referee's host-side bytecode cache gives its runs.

    PYTHONPATH=src .venv/bin/python bench/floor_repo.py [--quick] [--tasks FILE [--label NAME]]

``--tasks FILE`` measures another file's ``repo-patch`` tasks the same way (e.g. ``referee synth
pypi:cachetools==8.0.2 --out FILE``: a project whose tests import nothing beyond the standard
library and the grader's packages, as the floor's interpreter sees only those).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minirepo"


def _fixture_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(FIXTURE.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(FIXTURE)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def task_file() -> Path:
    """The synthesized task file, made on first use (about two minutes) and cached."""
    cache = Path(tempfile.gettempdir()) / f"referee-floor-repo-{_fixture_digest()}"
    out = cache / "tasks.jsonl"
    if out.is_file():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f"tasks.{os.getpid()}.jsonl"
    subprocess.run(
        [sys.executable, "-m", "referee.cli", "synth", str(FIXTURE), "--out", str(tmp),
         "--store", str(cache / "store")],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    tmp.replace(out)  # atomic: a concurrent run sees the whole file or none
    return out


def _key(v: Any) -> list[Any]:
    return [v.reward, v.passed, v.infra_error is not None,
            [(t.name, str(t.status)) for t in v.tests]]  # fmt: skip


#: The pytest arguments referee's runner gives (src/referee/verify/_pytest_runner.py): plugins
#: that cannot change an outcome are off, so the floor pays no more than the runner does.
PYTEST_ARGS = (
    "-q", "-c", "/dev/null", "-p", "no:cacheprovider", "-p", "no:stepwise",
    "-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:doctest", "-p", "no:setuponly",
    "-p", "no:setupplan", "-p", "no:faulthandler", "-p", "no:unraisableexception",
    "-p", "no:threadexception", "-o", "addopts=", "-o", "python_files=test_*.py *_test.py",
    "--import-mode=prepend", "--tb=auto",
)  # fmt: skip


def _shallow_tmp() -> str | None:
    """Where the floor's copies go: pytest lists every directory from ``/`` down to the rootdir
    while it collects (a busy ``/tmp`` with 600 entries cost a small run 1-2 s here), and
    referee's sandbox has ``/workspace`` under a root of a few entries; ``/var/tmp`` is usually
    as shallow. None (the default temporary folder) where it is not writable."""
    return "/var/tmp" if os.access("/var/tmp", os.W_OK) else None


_SERVER = r"""
import json, os, sys, time
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
args = json.loads(sys.argv[1])
import pytest
for name in json.loads(sys.argv[2]):
    try:
        __import__(name)
    except ImportError:
        pass
null = os.open(os.devnull, os.O_WRONLY)
saved = os.dup(1)
os.dup2(null, 1)
pytest.main([*args, "--rootdir", sys.argv[3], "--collect-only", sys.argv[3]])
os.dup2(saved, 1)
out = os.fdopen(saved, "w")
for line in sys.stdin:
    req = json.loads(line)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.chdir(req["root"])
        sys.path.insert(0, req["root"])
        for extra in reversed(req.get("paths", [])):  # source roots first, as referee's runner
            sys.path.insert(0, extra)
        os._exit(int(pytest.main([*args, "--rootdir", req["root"], *req["tests"]])))
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out.write(json.dumps({"s": time.perf_counter() - t0, "code": code}) + "\n")
    out.flush()
"""


def _grader_site() -> Path:
    """A folder holding only the grader's packages (links to this interpreter's copies), as the
    sandbox's view gives its runs: this machine's full site-packages would make every import
    that misses (pytest tries several) scan hundreds of folders."""
    import importlib.util

    from referee.verify.repo_run import GRADER_PACKAGES

    site = Path(tempfile.mkdtemp(prefix="floor-repo-site-", dir=_shallow_tmp()))
    for name in GRADER_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        (site / source.name).symlink_to(source)
    return site


class FloorServer:
    """A process that has imported pytest and run an empty session, and then, per request,
    forks and runs ``pytest.main`` on a folder: referee's warm worker without the sandbox, and
    without anything of this bench's own process (referee, its verifier set) in the fork. Its
    interpreter sees the standard library and the grader's packages only (``-I -S``)."""

    def __init__(self) -> None:
        from referee.verify.repo_run import PYTEST_WARM_IMPORTS

        self.warmup = Path(tempfile.mkdtemp(prefix="floor-repo-warmup-", dir=_shallow_tmp()))
        self.site = _grader_site()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", f"import sys; sys.path.append({str(self.site)!r})\n"
             + _SERVER, json.dumps(PYTEST_ARGS),
             json.dumps(list(PYTEST_WARM_IMPORTS)), str(self.warmup)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, root: Path, tests: list[str], source_roots: tuple[str, ...] = ("",)) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        paths = [str(root / r) for r in source_roots if r]
        self.proc.stdin.write(
            json.dumps({"root": str(root), "tests": tests, "paths": paths}) + "\n"
        )
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if reply["code"] != 0:
            raise RuntimeError(f"the reference patch failed its tests on the host ({reply})")
        return float(reply["s"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.warmup, ignore_errors=True)
        shutil.rmtree(self.site, ignore_errors=True)


def _floor_once(
    server: FloorServer, files: dict[str, Any], patch: str, tests: list[str],
    source_roots: tuple[str, ...] = ("",),
) -> float:  # fmt: skip
    """Seconds of the tests' own run: the patched copy is made first, untimed."""
    root = Path(tempfile.mkdtemp(prefix="floor-repo-", dir=_shallow_tmp()))
    try:
        for rel, data in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data if isinstance(data, bytes) else str(data).encode())
        subprocess.run(["git", "apply", "-"], input=patch.encode(), cwd=root, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        # Once untimed: the modules' bytecode and pytest's rewritten tests land in __pycache__,
        # as referee's host-side bytecode cache gives its runs; then the timed run.
        server.run(root, tests, source_roots)
        return server.run(root, tests, source_roots)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(quick: bool, tasks_file: Path | None = None) -> dict[str, Any]:
    from referee.tasks.model import read_tasks
    from referee.verify.dispatch import VerifierSet
    from referee.verify.function import harness_sandbox
    from referee.verify.pytest_verifier import repo_state
    from referee.verify.repo_run import GRADER_PACKAGES

    tasks = [
        t
        for t in read_tasks(tasks_file or task_file())
        if str(t.kind) in ("repo-patch", "TaskKind.REPO_PATCH")
    ]
    tasks = tasks[:8] if quick else tasks
    rounds = 1 if quick else 3
    samples = [(t, str(t.hidden["reference_patch"])) for t in tasks]
    states = {t.id: repo_state(t) for t in tasks}
    cost: list[float] = []
    floor: list[float] = []
    verdicts: list[Any] = []
    server = FloorServer()
    with (
        harness_sandbox(python_workers=2, python_packages=GRADER_PACKAGES) as sb,
        VerifierSet(sb) as vs,
    ):
        for task, patch in samples:  # untimed: workers, caches, the floor's first import
            vs.verify(task, patch)
            s = states[task.id]
            _floor_once(server, dict(s.files), patch, [*s.f2p, *s.p2p], tuple(s.source_roots))
        for _ in range(rounds):
            for task, patch in samples:
                t0 = time.perf_counter()
                v = vs.verify(task, patch)
                cost.append(time.perf_counter() - t0)
                verdicts.append(_key(v))
                s = states[task.id]
                floor.append(
                    _floor_once(
                        server, dict(s.files), patch, [*s.f2p, *s.p2p], tuple(s.source_roots)
                    )
                )
    server.close()
    digest = hashlib.sha256(json.dumps(verdicts, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "samples": len(cost),
        "tasks": len(tasks),
        "passed": sum(1 for v in verdicts if v[1]),
        "cost_ms": round(1000 * statistics.median(cost), 3),
        "floor_ms": round(1000 * statistics.median(floor), 3),
        "verdicts": digest,
    }


def rows(
    quick: bool, tasks_file: Path | None = None, label: str = "minirepo fixture"
) -> list[dict[str, Any]]:
    """The row of ``make bench-floor``: a repository task's reference patch, per sample."""
    m = measure(quick, tasks_file)
    return [
        {
            "kind": f"repository patch ({label})",
            "unit": "sample",
            "cost_ms": m["cost_ms"],
            "floor_ms": m["floor_ms"],
            "note": (
                "floor: the tests' own time: on a copy already patched on the host, the task's "
                "FAIL_TO_PASS and PASS_TO_PASS tests by pytest.main in a fork of a warmed pytest "
                "process, referee's pytest arguments, fork to reap (no sandbox); cost: "
                "VerifierSet.verify of the reference patch (the patch applied, the tests run, "
                "the verdict); medians"
            ),
            "verdicts": m["verdicts"],
            "extra": {k: m[k] for k in ("samples", "tasks", "passed")},
        }
    ]


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tasks", type=Path, default=None, help="a task file (default: minirepo)")
    ap.add_argument("--label", default=None, help="the row's name for --tasks")
    a = ap.parse_args()
    label = a.label or (a.tasks.stem if a.tasks else "minirepo fixture")
    print(json.dumps(rows(a.quick, a.tasks, label), indent=1))
