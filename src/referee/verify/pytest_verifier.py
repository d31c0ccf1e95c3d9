"""The pytest verifier: repository tasks whose solution is a patch, judged by their test suite.

Steps, each in the sandbox:

1. The repository's files go into a fresh workspace; the candidate's unified diff is applied with
   ``git apply``. A diff that does not apply is the candidate's failure.
2. Every test file is restored from the task's pristine copy (so edits to tests count for
   nothing), and the grader adds *canary* tests under random names that fail on any code.
3. pytest runs under the grader's own runner (``_pytest_runner``): no repository config, no
   ``conftest.py``, no plugin autoloading, no cache, empty ``addopts``. The grader's plugin reports
   each test's setup, call and teardown.
4. On the host: each FAIL_TO_PASS and PASS_TO_PASS test must have run and passed in every phase.
   Skipped, xfailed, missing and timed-out tests fail; the exit code is ignored. The reward is the
   share of FAIL_TO_PASS tests fixed, scaled by the share of PASS_TO_PASS tests kept: a patch
   that fixes nothing scores 0, however many old tests still pass.

The test process also runs the candidate's code, so a report written from inside it could in
principle be forged. The canaries are the check on that: a report in which a canary passed was
forged, and the verdict is zero with a ``forged-report`` flag. Patches that touch test files,
``conftest.py`` or pytest configuration are flagged as evidence.
"""

from __future__ import annotations

import re
import secrets
import time
from importlib import resources
from typing import Any

from referee.errors import RefereeError, VerifierError
from referee.sandbox import Limits, Sandbox, Workspace
from referee.tasks.model import Task
from referee.verify import _harness as H
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict

__all__ = ["PYTEST_PACKAGES", "PytestVerifier", "pytest_sandbox", "touched_paths"]

VERSION = "pytest@1"
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments")
RUNNER_SOURCE = resources.files("referee.verify").joinpath("_pytest_runner.py").read_text()
_CONFIG_FILES = {
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "conftest.py",
    "sitecustomize.py",
    "usercustomize.py",
}


def pytest_sandbox(**kwargs: Any) -> Sandbox:
    """A sandbox in which the grader's pytest (and only it) is importable."""
    return Sandbox(python_packages=PYTEST_PACKAGES, **kwargs)


def touched_paths(patch: str) -> list[str]:
    """Paths a unified diff changes (from its ``---``/``+++`` headers)."""
    out = []
    for m in re.finditer(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", patch, flags=re.M):
        if m.group(1) != "/dev/null" and m.group(1) not in out:
            out.append(m.group(1))
    return out


class PytestVerifier:
    """Verifies patches for repository tasks (``payload.files``, ``hidden.tests``, F2P/P2P)."""

    name = "pytest"

    def __init__(self, sandbox: Sandbox | None = None, *, timeout_s: float = 120.0) -> None:
        self._own = sandbox is None
        self.sandbox = sandbox or pytest_sandbox()
        self.limits = Limits(timeout_s=timeout_s, memory_mb=2048, max_processes=256)

    def verify(self, task: Task, patch: str) -> Verdict:
        """Judge ``patch`` for ``task``. Never raises: a verifier fault is an infra error."""
        try:
            return self._verify(task, patch)
        except Exception as e:  # a bug here must cost a retry, never hand out a reward
            return Verdict.infra(task.id, f"verifier crashed: {type(e).__name__}: {e}", VERSION)

    def _verify(self, task: Task, patch: str) -> Verdict:
        t0 = time.perf_counter()
        try:
            files, tests, f2p, p2p = _spec(task)
        except VerifierError as e:
            return Verdict.infra(task.id, str(e), VERSION)
        flags = [
            Flag(kind="touches-tests-or-config", evidence=path)
            for path in touched_paths(patch)
            if path in tests or path.rsplit("/", 1)[-1] in _CONFIG_FILES
        ]
        ws = self.sandbox.workspace()
        try:
            ws.write(files)
            applied = self._apply(ws, patch)
            if applied is not None:
                return self._all(
                    task, f2p, p2p, "failed", f"patch does not apply: {applied}", flags, t0
                )
            ws.write(tests)  # pristine test files, whatever the patch did to them
            canaries = self._plant_canaries(ws, tests)
            nonce = secrets.token_hex(8)
            args = {"nonce": nonce, "ids": [*f2p, *p2p, *canaries]}
            import json

            r = self.sandbox.run(
                ["python3", "-I", "-c", RUNNER_SOURCE, json.dumps(args)],
                workspace=ws,
                limits=self.limits,
            )
        except RefereeError as e:
            return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
        finally:
            ws.close()
        frames = H.frames(r.stdout, nonce)
        if not any(f.get("ready") is True for f in frames):
            return Verdict.infra(
                task.id,
                f"the grader's pytest runner did not start ({r.summary()}): "
                + r.stderr.strip()[-500:],
                VERSION,
            )
        results = {
            f["test"]: f["phases"]
            for f in frames
            if isinstance(f.get("test"), str)
            and isinstance(f.get("phases"), dict)
            and all(isinstance(v, str) for v in f["phases"].values())
        }
        if any(_status(results.get(c)) == "passed" for c in canaries):
            flags.append(
                Flag(
                    kind="forged-report",
                    evidence="a canary test that fails on any code was reported passed",
                )
            )
            return self._all(task, f2p, p2p, "failed", "report forged", flags, t0)
        tests_out = []
        for group, ids in (("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p)):
            for nodeid in ids:
                phases = results.get(nodeid)
                status: TestStatus = _status(phases)
                if phases is None and r.timed_out:
                    status = "timeout"
                tests_out.append(TestOutcome(name=nodeid, status=status, detail=group))
        passed_n = sum(t.status == "passed" for t in tests_out)
        return Verdict(
            task_id=task.id,
            reward=_reward(tests_out),
            passed=bool(tests_out) and passed_n == len(tests_out),
            tests=tests_out,
            flags=flags,
            timings={"run_s": r.wall_s, "total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def _apply(self, ws: Workspace, patch: str) -> str | None:
        if not patch.strip():
            return None
        name = f".referee-{secrets.token_hex(4)}.diff"
        ws.write({name: patch})
        r = self.sandbox.run(
            ["git", "apply", "--whitespace=nowarn", name], workspace=ws, limits=Limits(timeout_s=30)
        )
        (ws.root / name).unlink(missing_ok=True)
        return None if r.exit_code == 0 else (r.stderr.strip()[-300:] or r.summary())

    @staticmethod
    def _plant_canaries(ws: Workspace, tests: dict[str, str]) -> list[str]:
        folder = sorted(tests)[0].rsplit("/", 1)[0] if "/" in sorted(tests)[0] else ""
        token = secrets.token_hex(4)
        path = f"{folder}/test_{token}.py" if folder else f"test_{token}.py"
        body = "\n".join(
            f"def test_{token}_{i}():\n    assert {secrets.randbelow(10**9)} == {10**9 + i}\n"
            for i in range(2)
        )
        ws.write({path: body})
        return [f"{path}::test_{token}_{i}" for i in range(2)]

    def _all(
        self,
        task: Task,
        f2p: list[str],
        p2p: list[str],
        status: TestStatus,
        detail: str,
        flags: list[Flag],
        t0: float,
    ) -> Verdict:
        return Verdict(
            task_id=task.id,
            reward=0.0,
            passed=False,
            tests=[
                TestOutcome(name=i, status=status, detail=f"{group}: {detail}")
                for group, ids in (("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p))
                for i in ids
            ],
            flags=flags,
            timings={"total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def close(self) -> None:
        if self._own:
            self.sandbox.close()

    def __enter__(self) -> PytestVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reward(tests: list[TestOutcome]) -> float:
    """The share of FAIL_TO_PASS tests fixed, scaled by the share of PASS_TO_PASS kept.

    PASS_TO_PASS tests guard against regressions; they earn nothing by themselves, so a patch
    that changes nothing (or only attacks the grader) scores 0 rather than the share of tests
    that were passing anyway. Without FAIL_TO_PASS tests the reward is the PASS_TO_PASS share.
    """
    f2p = [t.status == "passed" for t in tests if t.detail == "FAIL_TO_PASS"]
    p2p = [t.status == "passed" for t in tests if t.detail == "PASS_TO_PASS"]
    kept = sum(p2p) / len(p2p) if p2p else 1.0
    if not f2p:
        return kept
    return sum(f2p) / len(f2p) * kept


def _status(phases: dict[str, str] | None) -> TestStatus:
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


def _spec(task: Task) -> tuple[dict[str, str], dict[str, str], list[str], list[str]]:
    files = task.payload.get("files")
    tests = task.hidden.get("tests")
    f2p = task.hidden.get("fail_to_pass", [])
    p2p = task.hidden.get("pass_to_pass", [])
    if not isinstance(files, dict) or not isinstance(tests, dict) or not tests:
        raise VerifierError(
            f"task {task.id!r} is not a repository task (payload.files, hidden.tests)"
        )
    if not f2p and not p2p:
        raise VerifierError(f"task {task.id!r} lists no FAIL_TO_PASS or PASS_TO_PASS tests")
    return files, tests, list(f2p), list(p2p)
