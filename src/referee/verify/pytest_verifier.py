"""The pytest verifier: repository tasks whose solution is a patch, judged by their test suite.

Steps, each in the sandbox:

1. The repository's files go into a fresh workspace; the candidate's unified diff is applied with
   ``git apply``. A diff that does not apply is the candidate's failure.
2. Every test file is restored from the task's pristine copy (so edits to tests count for
   nothing); a task's ``hidden.test_patch`` (SWE-bench's tests, which the model never saw) is
   applied on top; and the grader adds *canary* tests under random names that fail on any code.
3. pytest runs under the grader's own runner (``_pytest_runner``): no repository config, no
   ``conftest.py``, no plugin autoloading, no cache, empty ``addopts``. The grader's plugin reports
   each test's setup, call and teardown.
4. On the host: each FAIL_TO_PASS and PASS_TO_PASS test must have run and passed in every phase.
   Skipped, xfailed, missing and timed-out tests fail; the exit code is ignored. The reward is the
   share of FAIL_TO_PASS tests fixed, scaled by the share of PASS_TO_PASS tests kept: a patch
   that fixes nothing scores 0, however many old tests still pass.

A refactoring task (``hidden.structure``, from ``referee synth --kinds refactor``) has no
FAIL_TO_PASS tests: its tests pass before and after. After step 2, before any test runs, the
patched module is read on the host and its structural predicate checked
(:mod:`referee.verify.structure`: pure syntax-tree checks, nothing executed); each rule becomes
an outcome of group ``STRUCTURE``. Such a task is all or nothing: reward 1 only if every rule
holds and every test passes, so a patch that breaks the behaviour to reach the structure (or
keeps the behaviour and leaves the structure) scores 0.

The test process also runs the candidate's code, so a report written from inside it could in
principle be forged. The canaries are the check on that: a report in which a canary passed was
forged, and the verdict is zero with a ``forged-report`` flag. Patches that touch test files,
``conftest.py`` or pytest configuration are flagged as evidence.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.errors import ConfigError, RefereeError, StoreError, VerifierError
from referee.sandbox import Lease, Limits, Sandbox, Workspace
from referee.tasks.model import Task
from referee.tasks.venv import RepoVenv
from referee.verify.bytecode import DISK as BYTECODE_DISK
from referee.verify.bytecode import BytecodeCache, is_test_module
from referee.verify.repo_run import (
    GRADER_PACKAGES,
    PYTEST_WARM_IMPORTS,
    RepoSandboxes,
    repo_workspace,
    run_pytest,
    warm_capable,
    warm_enabled,
)
from referee.verify.structure import RuleResult, check_structure
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict

if TYPE_CHECKING:
    from referee.tasks.artifacts import ArtifactStore

__all__ = [
    "PYTEST_PACKAGES",
    "PytestVerifier",
    "RepoState",
    "apply_patch",
    "pytest_sandbox",
    "repo_state",
    "strip_bytecode",
    "touched_paths",
]

VERSION = "pytest@1"
#: The group (``TestOutcome.detail``) of a structural rule's outcome.
STRUCTURE = "STRUCTURE"
_MAX_SOURCE_BYTES = 1 << 20  # a refactored module this large fails every rule
PYTEST_PACKAGES = GRADER_PACKAGES
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
    kwargs.setdefault("warm_imports", PYTEST_WARM_IMPORTS)
    return Sandbox(python_packages=PYTEST_PACKAGES, **kwargs)


def touched_paths(patch: str) -> list[str]:
    """Paths a unified diff changes (from its ``---``/``+++`` headers)."""
    out = []
    for m in re.finditer(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", patch, flags=re.M):
        if m.group(1) != "/dev/null" and m.group(1) not in out:
            out.append(m.group(1))
    return out


class PytestVerifier:
    """Verifies patches for repository tasks.

    Two task shapes: files inline (``payload.files``, ``hidden.tests``; small hand-made tasks)
    or a repository snapshot (``payload.repo``: snapshot digest, artifact store, source roots,
    dependency environment; ``payload.overrides``: the starting state's changed files), as
    ``referee synth`` writes them. Both list ``hidden.fail_to_pass`` and ``pass_to_pass``.
    """

    name = "pytest"

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        timeout_s: float = 120.0,
        store: ArtifactStore | None = None,
    ) -> None:
        self._own = sandbox is None
        self.sandbox = sandbox or pytest_sandbox()
        self.limits = Limits(timeout_s=timeout_s, memory_mb=2048, max_processes=256)
        self.store = store
        self._repo_boxes = RepoSandboxes()
        self._bytecode = BytecodeCache(directory=BYTECODE_DISK)

    def verify(self, task: Task, patch: str) -> Verdict:
        """Judge ``patch`` for ``task``. Never raises: a verifier fault is an infra error."""
        try:
            return self._verify(task, patch)
        except Exception as e:  # a bug here must cost a retry, never hand out a reward
            return Verdict.infra(task.id, f"verifier crashed: {type(e).__name__}: {e}", VERSION)

    def _verify(self, task: Task, patch: str) -> Verdict:
        t0 = time.perf_counter()
        try:
            state = repo_state(task, self.store)
        except (VerifierError, StoreError, ConfigError) as e:
            return Verdict.infra(task.id, str(e), VERSION)
        f2p, p2p = state.f2p, state.p2p
        flags = [
            Flag(kind="touches-tests-or-config", evidence=path)
            for path in touched_paths(patch)
            if path in state.tests or path.rsplit("/", 1)[-1] in _CONFIG_FILES
        ]
        try:
            if state.environment is not None:
                sandbox = self._repo_boxes.get(state.environment.ensure())
            elif (
                warm_enabled()
                and not warm_capable(self.sandbox)
                and "pytest" in self.sandbox.python_packages
                and self.sandbox.backend == "bwrap"
            ):
                # The given sandbox's workers do not import pytest (they serve other kinds'
                # runs, which a pytest import would slow): the repository sandbox's do. One
                # without the grader's pytest stays as given (its runs fail as infra errors).
                sandbox = self._repo_boxes.get(None)
            else:
                sandbox = self.sandbox
            with repo_workspace(sandbox) as (ws, lease):
                ws.write(state.files)
                applied = apply_patch(sandbox, ws, patch, lease=lease)
                if applied is not None:
                    return self._all(
                        task, f2p, p2p, "failed", f"patch does not apply: {applied}", flags, t0
                    )
                flags += [
                    Flag(kind="ships-bytecode", evidence=path) for path in strip_bytecode(ws)[:3]
                ]
                ws.write(state.tests)  # pristine test files, whatever the patch did to them
                # Read before any of the candidate's code runs: the test process could rewrite it.
                shape = _check_shape(ws, task.hidden.get("structure"))
                if state.test_patch:
                    why = self._apply_test_patch(sandbox, ws, state, lease)
                    if why is not None:
                        return Verdict.infra(
                            task.id, f"the task's test_patch does not apply: {why}", VERSION
                        )
                canaries = self._plant_canaries(ws, state.tests)
                if lease is not None:
                    ws.write(self._own_bytecode(state))
                run = run_pytest(
                    sandbox,
                    ws,
                    [*f2p, *p2p, *canaries],
                    source_roots=state.source_roots,
                    conftests=state.conftests,
                    limits=self.limits,
                    # A verdict keeps each test's status, never its failure report: pytest's
                    # formatting of one was most of a failing patch's time (RESULTS.md §24).
                    traceback="no",
                    lease=lease,
                )
        except RefereeError as e:
            return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
        r = run.exec
        if not run.ready:
            return Verdict.infra(
                task.id,
                f"the grader's pytest runner did not start ({r.summary()}): "
                + r.stderr.strip()[-500:],
                VERSION,
            )
        if any(run.status(c) == "passed" for c in canaries):
            flags.append(
                Flag(
                    kind="forged-report",
                    evidence="a canary test that fails on any code was reported passed",
                )
            )
            return self._all(task, f2p, p2p, "failed", "report forged", flags, t0)
        tests_out = [
            TestOutcome(name=nodeid, status=run.status(nodeid), detail=group)
            for group, ids in (("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p))
            for nodeid in ids
        ]
        tests_out += [
            TestOutcome(
                name=f"structure: {r.rule}",
                status="passed" if r.ok else "failed",
                detail=STRUCTURE if r.ok else f"{STRUCTURE}: {r.why}",
            )
            for r in shape or []
        ]
        passed_n = sum(t.status == "passed" for t in tests_out)
        all_passed = bool(tests_out) and passed_n == len(tests_out)
        return Verdict(
            task_id=task.id,
            reward=(1.0 if all_passed else 0.0) if shape is not None else _reward(tests_out),
            passed=all_passed,
            tests=tests_out,
            flags=flags,
            timings={"run_s": r.wall_s, "total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def _own_bytecode(self, state: RepoState) -> dict[str, bytes]:
        """The pycs of the repository's own files, compiled once per content on the host (a
        patched module's hash no longer matches, so it compiles from source). Test modules
        only where the run collects them: rewriting their asserts is the cost."""
        collected = {nodeid.split("::")[0] for nodeid in [*state.f2p, *state.p2p]}
        collected |= set(state.conftests or ())
        own = {**state.files, **state.tests}
        return self._bytecode.pycs(
            {p: data for p, data in own.items() if p in collected or not is_test_module(p)}
        )

    @staticmethod
    def _apply_test_patch(
        sandbox: Sandbox, ws: Workspace, state: RepoState, lease: Lease | None
    ) -> str | None:
        # Files the test patch creates go first: a candidate that wrote one would otherwise
        # make the patch fail to apply (and its version would be the one tested).
        for path in touched_paths(state.test_patch):
            if path not in state.files and path not in state.tests:
                (ws.root / path).unlink(missing_ok=True)
        return apply_patch(sandbox, ws, state.test_patch, lease=lease)

    @staticmethod
    def canary_file(near: str) -> tuple[str, str, list[str]]:
        """A test file of two tests that fail on any code, next to ``near``, random names."""
        folder = near.rsplit("/", 1)[0] if "/" in near else ""
        token = secrets.token_hex(4)
        path = f"{folder}/test_{token}.py" if folder else f"test_{token}.py"
        body = "\n".join(
            f"def test_{token}_{i}():\n    assert {secrets.randbelow(10**9)} == {10**9 + i}\n"
            for i in range(2)
        )
        return path, body, [f"{path}::test_{token}_{i}" for i in range(2)]

    @staticmethod
    def _plant_canaries(ws: Workspace, tests: dict[str, Any]) -> list[str]:
        path, body, ids = PytestVerifier.canary_file(sorted(tests)[0])
        ws.write({path: body})
        return ids

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
        self._repo_boxes.close()
        if self._own:
            self.sandbox.close()

    def __enter__(self) -> PytestVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def apply_patch(
    sandbox: Sandbox, ws: Workspace, patch: str, *, lease: Lease | None = None
) -> str | None:
    """``git apply`` ``patch`` in the sandbox; None if it applied, else why not.

    With a ``lease`` (``ws`` is then its workspace), ``git`` runs as a fork of the held worker
    instead of in a fresh sandbox: the same command, isolation and limits, without a bubblewrap
    start."""
    if not patch.strip():
        return None
    name = f".referee-{secrets.token_hex(4)}.diff"
    ws.write({name: patch})
    argv, limits = ["git", "apply", "--whitespace=nowarn", name], Limits(timeout_s=30)
    if lease is not None:
        r = lease.exec(argv, limits=limits)
    else:
        r = sandbox.run(argv, workspace=ws, limits=limits)
    (ws.root / name).unlink(missing_ok=True)
    return None if r.exit_code == 0 else (r.stderr.strip()[-300:] or r.summary())


def strip_bytecode(ws: Workspace) -> list[str]:
    """Remove every ``__pycache__`` folder and ``.pyc`` file from ``ws``; return their paths.

    Run after a candidate's patch applies: a binary diff can add bytecode, and pytest loads a
    test module's cached, assertion-rewritten form whenever its header carries the hash of the
    source (a hash anyone can compute for the pristine tests). A patch that shipped
    ``tests/__pycache__/test_x.<tag>-pytest-<version>.pyc`` with the asserts compiled out
    passed every test it could not fix (``ship-rewritten-test-bytecode`` in
    :mod:`referee.verify.redteam_pytest`)."""
    return ws.prune(
        lambda path: path.endswith((".pyc", ".pyo")) or path.rsplit("/", 1)[-1] == "__pycache__"
    )


@dataclass(frozen=True)
class RepoState:
    """Everything needed to rebuild a repository task's starting state and judge it."""

    files: dict[str, bytes | str]
    tests: dict[str, bytes | str]
    f2p: list[str]
    p2p: list[str]
    source_roots: tuple[str, ...] = ("",)
    conftests: list[str] | None = None
    environment: RepoVenv | None = None
    #: A diff adding the hidden tests (SWE-bench's ``test_patch``), applied after the
    #: candidate's patch and the restore of the pristine tests.
    test_patch: str = ""


def repo_state(task: Task, store: ArtifactStore | None = None) -> RepoState:
    """The starting state of a repository task, in either of its two shapes."""
    f2p = list(task.hidden.get("fail_to_pass", []))
    p2p = list(task.hidden.get("pass_to_pass", []))
    if not f2p and not p2p:
        raise VerifierError(f"task {task.id!r} lists no FAIL_TO_PASS or PASS_TO_PASS tests")
    repo = task.payload.get("repo")
    if isinstance(repo, dict):
        from referee.tasks.artifacts import task_snapshot  # fsspec: only when needed

        recorded = repo.get("store")
        snapshot: dict[str, bytes | str] = dict(
            task_snapshot(
                None if recorded is None else str(recorded), str(repo.get("snapshot")), store
            )
        )
        overrides = task.payload.get("overrides", {})
        if not isinstance(overrides, dict):
            raise VerifierError(f"task {task.id!r}: payload.overrides must map paths to text")
        pristine = [*repo.get("test_files", []), *repo.get("conftests", [])]
        tests = {p: snapshot[p] for p in pristine if p in snapshot}
        env = repo.get("environment") or {}
        return RepoState(
            files={**snapshot, **overrides},
            tests=tests,
            f2p=f2p,
            p2p=p2p,
            source_roots=tuple(repo.get("source_roots", [""])),
            conftests=list(repo.get("conftests", [])),
            environment=RepoVenv(tuple(env.get("requirements", []))),
            test_patch=str(task.hidden.get("test_patch") or ""),
        )
    files = task.payload.get("files")
    tests_inline = task.hidden.get("tests")
    if not isinstance(files, dict) or not isinstance(tests_inline, dict) or not tests_inline:
        raise VerifierError(
            f"task {task.id!r} is not a repository task (payload.repo or payload.files, "
            "hidden.tests)"
        )
    return RepoState(files=files, tests=tests_inline, f2p=f2p, p2p=p2p)


def _check_shape(ws: Workspace, spec: object) -> list[RuleResult] | None:
    """The task's structural predicate checked on the patched module (None: the task has none).

    The module is read as plain bytes, refusing links (a patch can make the path a symlink to a
    file outside the workspace) and anything too large; a missing file fails every rule.
    """
    if spec is None:
        return None
    if not isinstance(spec, dict) or not isinstance(spec.get("rules"), list):
        raise VerifierError("hidden.structure must be {'path': ..., 'rules': [...]}")
    root = ws.root.resolve()
    path = root / str(spec.get("path", ""))
    text: str | None = None
    try:
        inside = path.resolve().is_relative_to(root)
        linked = any(p.is_symlink() for p in (path, *path.parents) if p.is_relative_to(root))
        if inside and not linked and path.is_file() and path.stat().st_size <= _MAX_SOURCE_BYTES:
            text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        text = None
    return check_structure(text, spec["rules"])


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
