"""The baseline: the repository's suite, run twice in the sandbox, and its coverage map.

Tests that fail, skip or flip between the two runs are excluded from every task (and reported
with the reason): a task may only rely on tests that pass reliably on the reference. The first
run measures coverage with one context per test, giving for each function
(``path::Qualified.name``) the tests that execute its body; validation then runs only those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.errors import SandboxError
from referee.sandbox import Sandbox
from referee.synth.repo import Repository
from referee.verify.repo_run import CoverageMap, TestRun, run_pytest

__all__ = ["Baseline", "run_baseline"]


@dataclass
class Baseline:
    stable: list[str]
    excluded: dict[str, str]
    coverage: CoverageMap
    durations: dict[str, float]
    suite_wall_s: float
    coverage_wall_s: float
    reports: dict[str, str] = field(default_factory=dict)
    #: Seconds pytest took to import and collect the whole suite (second run, no coverage).
    collect_s: float = 0.0

    def covering(self, function_key: str) -> list[str]:
        """Stable tests that execute ``function_key``'s body."""
        stable = set(self.stable)
        return [t for t in self.coverage.functions.get(function_key, []) if t in stable]

    def covering_line(self, function_key: str, line: int) -> list[str] | None:
        """Stable tests that execute statement ``line``; None when line selection is unsound
        (the line also ran at import time) so the caller falls back to the whole function."""
        if line in self.coverage.import_lines.get(function_key, set()):
            return None
        stable = set(self.stable)
        return [t for t in self.coverage.lines.get(function_key, {}).get(line, []) if t in stable]


def _check(run: TestRun, what: str) -> None:
    if not run.ready or not run.results:
        raise SandboxError(
            f"the baseline {what} run produced no test results ({run.exec.summary()}): "
            f"{run.exec.stderr.strip()[-800:]}"
        )


def run_baseline(sandbox: Sandbox, repo: Repository) -> Baseline:
    roots = [f"{r}/{p}" if r else p for r in repo.source_roots for p in repo.packages]
    tests, conftests = list(repo.test_files), list(repo.conftests)
    first = run_pytest(
        sandbox,
        repo.files,
        tests,
        source_roots=repo.source_roots,
        conftests=conftests,
        coverage=roots,
        # Fresh interpreters, never warm forks: the two runs must differ in their hash seeds
        # (forks of one worker share it), or a test that depends on set order looks stable.
        warm=False,
    )
    _check(first, "first (coverage)")
    if first.coverage is None or not first.coverage.functions:
        raise SandboxError(
            "the baseline run reported no coverage map "
            f"({'output truncated' if first.exec.stdout_truncated else first.exec.summary()}): "
            "without it no test can be selected; " + first.exec.stderr.strip()[-400:]
        )
    second = run_pytest(
        sandbox, repo.files, tests, source_roots=repo.source_roots, conftests=conftests, warm=False
    )
    _check(second, "second")
    stable, excluded = [], {}
    for nodeid in sorted(set(first.results) | set(second.results)):
        a, b = first.status(nodeid), second.status(nodeid)
        if a == b == "passed":
            stable.append(nodeid)
        elif a != b:
            excluded[nodeid] = f"flaky: {a} then {b}"
        else:
            excluded[nodeid] = a
    return Baseline(
        stable=stable,
        excluded=excluded,
        coverage=first.coverage or CoverageMap(),
        durations={k: v.duration_s for k, v in second.results.items()},
        suite_wall_s=second.wall_s,
        coverage_wall_s=first.wall_s,
        collect_s=second.collect_s,
    )
