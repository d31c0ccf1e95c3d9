"""Test-suite guard rails.

The whole pytest process moves into a pids and memory cgroup of its own before any test runs, so
that a sandbox bug lets a hostile program fail a test instead of taking the machine down (as root,
RLIMIT_NPROC does not stop a fork bomb; only a pids cgroup does). Sandboxes the tests create nest
their own groups inside this one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_GUARD_PIDS = 4096
_GUARD_MEMORY = 12 << 30


def _own(controller: str) -> str | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            return path
    return None


def _remove_stale_guards(base: Path) -> None:
    """Guard groups of test runs whose process is gone (killed runs cannot clean up)."""
    for group in base.glob("referee-tests-*"):
        pid = group.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        for child in sorted(group.rglob("*/"), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                child.rmdir()
        with contextlib.suppress(OSError):
            group.rmdir()


def _enter_guard_cgroup() -> list[Path]:
    made: list[Path] = []
    if os.geteuid() != 0:
        return made
    for ctrl, limit_file, value in (
        ("pids", "pids.max", _GUARD_PIDS),
        ("memory", "memory.limit_in_bytes", _GUARD_MEMORY),
    ):
        own = _own(ctrl)
        base = Path("/sys/fs/cgroup") / ctrl
        if own is None or not (base / "cgroup.procs").exists():
            continue
        _remove_stale_guards(base / own.lstrip("/"))
        group = base / own.lstrip("/") / f"referee-tests-{os.getpid()}"
        try:
            group.mkdir(exist_ok=True)
            (group / limit_file).write_text(str(value))
            (group / "cgroup.procs").write_text(str(os.getpid()))
            made.append(group)
        except OSError:
            continue
    return made


_GUARDS: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    _GUARDS.extend(_enter_guard_cgroup())


def pytest_unconfigure(config: pytest.Config) -> None:
    for group in _GUARDS:
        parent = group.parent
        with contextlib.suppress(OSError):
            (parent / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()


@pytest.fixture(scope="session")
def sandbox() -> Iterator[object]:
    """One real sandbox (bubblewrap + fork server) shared by the tests of a session."""
    from referee.sandbox import Sandbox

    sb = Sandbox(python_workers=2)
    yield sb
    sb.close()


@pytest.fixture(params=["fresh", "fork"])
def run_py(request: pytest.FixtureRequest, sandbox: object):  # type: ignore[no-untyped-def]
    """Run Python source on either path: a fresh bubblewrap process, or the fork server."""
    from referee.sandbox import Sandbox

    sb: Sandbox = sandbox  # type: ignore[assignment]

    def run(source: str, **kwargs):  # type: ignore[no-untyped-def]
        if request.param == "fork":
            return sb.run_python(source, **kwargs)
        files = dict(kwargs.pop("files", None) or {})
        files["main.py"] = source
        return sb.run(["python3", "main.py"], files=files, **kwargs)

    run.path = request.param  # type: ignore[attr-defined]
    return run


# ---- verifier fixtures, shared by tests/verify, tests/tasks and tests/redteam ----------------


@pytest.fixture(scope="session")
def harness_sb():
    from referee.verify.function import harness_sandbox

    sb = harness_sandbox(python_workers=3)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def program_sb():
    """A sandbox with every toolchain of this machine (the program verifier's), shared."""
    from referee.verify.program import program_sandbox

    sb = program_sandbox(python_workers=2)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def humaneval(harness_sb):
    """All 164 HumanEval tasks with their tests recorded (in the sandbox)."""
    from referee.tasks.humaneval import humaneval_tasks
    from referee.verify.record import record_function_tasks

    return {t.id: t for t in record_function_tasks(harness_sb, humaneval_tasks())}


@pytest.fixture(scope="session")
def verifier(harness_sb):
    from referee.verify.function import FunctionVerifier

    return FunctionVerifier(harness_sb, call_timeout_s=1.0, run_timeout_s=10.0)


@pytest.fixture(scope="session")
def repo_sandbox():
    """A sandbox with the grader's pytest and coverage (for repository runs)."""
    from referee.verify.repo_run import RepoSandboxes

    boxes = RepoSandboxes()
    yield boxes.get(None)
    boxes.close()


# ---- object storage: an S3-compatible server on 127.0.0.1 (tests/s3.py) ---------------------


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server for the session; the tests that need it skip, saying why, only where
    moto or s3fs is not installed (requirements.lock pins both: CI runs them)."""
    from tests.s3 import MISSING, MotoServer

    if MISSING:
        pytest.skip(
            f"object-storage tests need {', '.join(MISSING)} (pip install -r requirements.lock)"
        )
    server = MotoServer()
    yield server
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch):
    """The environment pointed at the server (AWS_ENDPOINT_URL and credentials, as a user sets
    them) and a bucket of the test's own: yields ``(bucket, env)``."""
    import s3fs

    from tests.s3 import new_bucket, s3_env

    for key in [k for k in os.environ if k.startswith(("AWS_", "FSSPEC_S3"))]:
        monkeypatch.delenv(key)
    env = s3_env(s3_server.endpoint)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if getattr(s3_server, "env", None) != env:  # the cached file system talks to another server
        s3fs.S3FileSystem.clear_instance_cache()
    yield new_bucket(), env
    # A test that pointed the environment elsewhere (a proxy, a dead port, no credentials) leaves
    # file systems made for it in fsspec's cache: forget them, so no later test uses them.
    now = {k: v for k, v in os.environ.items() if k.startswith(("AWS_", "FSSPEC_S3"))}
    s3_server.env = env if now == env else None
    if now != env:
        s3fs.S3FileSystem.clear_instance_cache()
