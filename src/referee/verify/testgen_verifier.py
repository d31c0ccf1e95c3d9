"""The test-writing verifier: new tests are worth the share of hidden mutants they kill.

Steps, each run in its own sandbox run (the candidate's tests are candidate code):

1. The candidate's patch is applied to the starting state; only its version of the target test
   file is kept, over a pristine repository (edits to source or other files count for nothing).
2. The target file runs on the original code and on the *equivalent variant* (same behaviour,
   other source text): every test in it must pass on both, and it must hold at least one test
   more than the starting state, or the reward is 0.
3. It runs once per hidden mutant; a mutant is killed when any of its tests fails, errors or
   times out. Reward = killed / mutants; passed = every mutant killed.

Canary tests (failing on any code) run alongside each time: a canary reported passing means the
report was forged, and the reward is 0 with a ``forged-report`` flag. The static guard scans the
new tests: reading the function's source or bytecode is flagged as evidence.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from referee.errors import ConfigError, RefereeError, StoreError, VerifierError
from referee.sandbox import Limits
from referee.tasks.model import Task
from referee.tasks.venv import RepoVenv
from referee.verify.pytest_verifier import PytestVerifier, apply_patch
from referee.verify.repo_run import RepoSandboxes, TestRun, repo_workspace, run_pytest
from referee.verify.verdict import Flag, TestOutcome, Verdict

if TYPE_CHECKING:
    from referee.tasks.artifacts import ArtifactStore

__all__ = ["TestgenVerifier"]

VERSION = "testgen@1"
_FINGERPRINTS = re.compile(r"getsource|__code__|co_code|getsourcelines|\.py['\"]|dis\.|marshal")


class TestgenVerifier:
    """Verifies test-writing patches (tasks of kind :attr:`TaskKind.TEST_WRITING`)."""

    __test__ = False  # not a pytest class, whatever its name
    name = "testgen"

    def __init__(self, *, timeout_s: float = 120.0, store: ArtifactStore | None = None) -> None:
        self.limits = Limits(timeout_s=timeout_s, memory_mb=2048, max_processes=256)
        self.store = store
        self._boxes = RepoSandboxes()

    def verify(self, task: Task, patch: str) -> Verdict:
        try:
            return self._verify(task, patch)
        except Exception as e:  # never a reward from a verifier fault
            return Verdict.infra(task.id, f"verifier crashed: {type(e).__name__}: {e}", VERSION)

    def _verify(self, task: Task, patch: str) -> Verdict:
        t0 = time.perf_counter()
        h, repo = task.hidden, task.payload.get("repo")
        if not isinstance(repo, dict) or task.kind != "test-writing":
            return Verdict.infra(task.id, f"task {task.id!r} is not a test-writing task", VERSION)
        try:
            from referee.tasks.artifacts import task_snapshot  # fsspec: only when needed

            recorded = repo.get("store")
            snapshot = task_snapshot(
                None if recorded is None else str(recorded), str(repo["snapshot"]), self.store
            )
            env = RepoVenv(tuple(repo.get("environment", {}).get("requirements", [])))
            sandbox = self._boxes.get(env.ensure())
        except (StoreError, ConfigError, KeyError, VerifierError, RefereeError) as e:
            return Verdict.infra(task.id, f"cannot rebuild the task: {e}", VERSION)
        target = str(h["target_test_file"])
        start = {**snapshot, **task.payload.get("overrides", {})}
        try:
            with repo_workspace(sandbox) as (ws, lease):
                ws.write(start)
                problem = apply_patch(sandbox, ws, patch, lease=lease)
                if problem is not None:
                    return self._zero(task, f"patch does not apply: {problem}", [], t0)
                tests_text = ws.read(target).decode("utf-8", "replace")
        except RefereeError as e:
            return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
        flags = [
            Flag(kind="fingerprints-source", evidence=m.group(0))
            for m in _FINGERPRINTS.finditer(tests_text)
        ][:3]
        before = task.payload["overrides"].get(target, "")
        ignored = set(h.get("ignored_tests", []))
        base: dict[str, bytes | str] = {**snapshot, target: tests_text}

        def run(extra: dict[str, str]) -> tuple[TestRun, list[str]]:
            files: dict[str, bytes | str] = {**base, **extra}
            canary_path, body, canaries = PytestVerifier.canary_file(target)
            files[canary_path] = body
            r = run_pytest(
                sandbox,
                files,
                [target, canary_path],
                source_roots=tuple(repo.get("source_roots", [""])),
                conftests=list(repo.get("conftests", [])),
                limits=self.limits,
                # A verdict keeps each test's status, never its failure report: pytest's
                # formatting of one was most of a failing patch's time (RESULTS.md §24).
                traceback="no",
            )
            return r, canaries

        outcomes: list[TestOutcome] = []
        for label, extra in (
            ("original", {}),
            ("equivalent", {h["equivalent"]["path"]: h["equivalent"]["text"]}),
        ):
            r, canaries = run(extra)
            if not r.ready:
                return Verdict.infra(task.id, f"runner did not start: {r.exec.summary()}", VERSION)
            if any(r.status(c) == "passed" for c in canaries):
                flags.append(Flag(kind="forged-report", evidence=f"canary passed on {label}"))
                return self._zero(task, "report forged", flags, t0)
            mine = {
                k: v
                for k, v in r.results.items()
                if k.startswith(target + "::") and k not in ignored
            }
            new = len(mine) - _count_tests(before, r, ignored)
            ok = bool(mine) and new > 0 and all(v.status == "passed" for v in mine.values())
            outcomes.append(
                TestOutcome(
                    name=f"passes on the {label} code",
                    status="passed" if ok else "failed",
                    detail=f"{len(mine)} tests, {max(new, 0)} new",
                )
            )
            if not ok:
                return self._zero(
                    task, f"the tests do not all pass on the {label} code", flags, t0, outcomes
                )
        killed = 0
        for m in h["mutants"]:
            r, canaries = run({m["path"]: m["text"]})
            if not r.ready:
                return Verdict.infra(task.id, f"runner did not start: {r.exec.summary()}", VERSION)
            if any(r.status(c) == "passed" for c in canaries):
                flags.append(Flag(kind="forged-report", evidence=f"canary passed on {m['id']}"))
                return self._zero(task, "report forged", flags, t0)
            survivors = [
                v for k, v in r.results.items() if k.startswith(target + "::") and k not in ignored
            ]
            dead = r.exec.timed_out or not survivors or any(v.status != "passed" for v in survivors)
            killed += dead
            outcomes.append(
                TestOutcome(
                    name=f"mutant {m['id']}",
                    status="passed" if dead else "failed",
                    detail="killed" if dead else "survived",
                )
            )
        total = len(h["mutants"])
        return Verdict(
            task_id=task.id,
            reward=killed / total if total else 0.0,
            passed=total > 0 and killed == total,
            tests=outcomes,
            flags=flags,
            timings={"total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def _zero(self, task, why, flags, t0, outcomes=None) -> Verdict:  # type: ignore[no-untyped-def]
        return Verdict(
            task_id=task.id,
            reward=0.0,
            passed=False,
            tests=outcomes or [TestOutcome(name="tests", status="failed", detail=why)],
            flags=flags,
            timings={"total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def close(self) -> None:
        self._boxes.close()

    def __enter__(self) -> TestgenVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _count_tests(before: str, run: TestRun, ignored: set[str]) -> int:
    """Tests the starting state's file already had (their names appear in it as functions)."""
    names = set(re.findall(r"^\s*def (test\w*)", before, flags=re.M))
    return sum(
        1
        for k in run.results
        if k not in ignored and k.rsplit("::", 1)[-1].split("[", 1)[0] in names
    )
