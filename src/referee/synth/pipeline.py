"""``synthesize``: a repository in, validated tasks and a report out.

Steps: intake (folder or PyPI sdist) -> dependency environment -> snapshot into the artifact
store -> baseline (suite twice, coverage map) -> candidates per kind -> validation (selected
tests only, batched) -> combinations of validated bugs -> tasks (difficulty, held-out split).

>>> report = synthesize("tests/fixtures/minirepo", kinds=("bugfix",))     # doctest: +SKIP
>>> report.kept_by_kind["bugfix"] > 0                                      # doctest: +SKIP
True
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from referee.errors import ConfigError
from referee.optional import require_extra, require_fsspec_backend
from referee.synth.baseline import run_baseline
from referee.synth.build import RepoRef, bugfix_task
from referee.synth.candidates import bugfix_candidates, combine, implement_candidates
from referee.synth.refactor import refactor_candidates, refactor_task
from referee.synth.repo import check_source, open_repository
from referee.synth.testgen import testgen_tasks
from referee.synth.validate import ValidationReport, validate
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.model import Task
from referee.tasks.venv import RepoVenv
from referee.verify.repo_run import RepoSandboxes

__all__ = ["DEFAULT_KINDS", "KINDS", "SynthReport", "synthesize"]

KINDS = ("bugfix", "implement", "testgen", "refactor")
#: What ``synthesize`` (and ``referee synth``) makes unless asked: refactoring is opt-in.
DEFAULT_KINDS = ("bugfix", "implement", "testgen")


@dataclass
class SynthReport:
    source: str
    tasks: list[Task] = field(default_factory=list)
    candidates_by_kind: Counter[str] = field(default_factory=Counter)
    kept_by_kind: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    baseline_tests: int = 0
    baseline_excluded: dict[str, str] = field(default_factory=dict)
    suite_wall_s: float = 0.0
    validation_test_s: float = 0.0
    validation_runs: int = 0
    validation_variants: int = 0
    timeout_s: float = 0.0
    timeouts: int = 0
    timeouts_where: dict[str, int] = field(default_factory=dict)
    p2p_dropped: int = 0
    test_s_by_kind: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    #: Refactoring candidates and kept tasks by inverse refactoring ("inline-helper", ...).
    candidates_by_operator: Counter[str] = field(default_factory=Counter)
    kept_by_operator: Counter[str] = field(default_factory=Counter)
    times: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        kept = sum(self.kept_by_kind.values())
        return {
            "source": self.source,
            "candidates": dict(self.candidates_by_kind),
            "kept": dict(self.kept_by_kind),
            "rejected": dict(self.rejected),
            "baseline_tests": self.baseline_tests,
            "baseline_excluded": self.baseline_excluded,
            "suite_wall_s": round(self.suite_wall_s, 3),
            "validation_test_s": round(self.validation_test_s, 3),
            "validation_runs": self.validation_runs,
            "validation_variants": self.validation_variants,
            "timeouts": self.timeouts,
            "timeouts_where": self.timeouts_where,
            "p2p_dropped": self.p2p_dropped,
            "timeout_s": round(self.timeout_s, 2),
            "test_s_per_kept_task": round(self.validation_test_s / kept, 3) if kept else None,
            "test_s_by_kind": {k: round(v, 2) for k, v in self.test_s_by_kind.items()},
            "candidates_by_operator": dict(self.candidates_by_operator),
            "kept_by_operator": dict(self.kept_by_operator),
            "times": {k: round(v, 2) for k, v in self.times.items()},
        }


def synthesize(
    source: str,
    *,
    kinds: tuple[str, ...] = DEFAULT_KINDS,
    limit: int | None = None,
    seed: int = 0,
    store: str | None = None,
    heldout_fraction: float = 0.2,
    split_by: str = "module",
    per_function: int = 4,
    combos: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SynthReport:
    """Make validated tasks from ``source`` (a folder or ``pypi:NAME==VERSION``).

    ``limit`` caps the number of candidates validated per kind, all its stages together
    (sampled with ``seed``);
    ``combos`` the number of combined bugs (default: a quarter of the single bugs kept).
    """
    require_extra("synth", needed_for="task synthesis (referee synth)")
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ConfigError(f"unknown task kinds {sorted(unknown)}; choose from {', '.join(KINDS)}")
    if split_by not in ("module", "function"):
        raise ConfigError("--split-by must be 'module' or 'function'")
    if not 0.0 <= heldout_fraction < 1.0:  # a share of 1 would leave nothing to train on
        raise ConfigError(f"--heldout must be at least 0 and below 1, got {heldout_fraction}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1 (or left out: no cap), got {limit}")
    check_source(source)  # a mistyped source is refused before the intake is reported
    report = SynthReport(source=source)
    say = progress or (lambda stage, done, total: None)
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        report.times[name] = report.times.get(name, 0.0) + now - clock
        clock = now

    # The store first: a scheme whose backend is missing (s3:// without s3fs) is refused in a
    # second, not after the intake and the repository's environment.
    if store:
        require_fsspec_backend(store, option="--store")
    artifacts = ArtifactStore(store)
    say("intake", 0, 1)
    repo = open_repository(source)
    env = RepoVenv(repo.requirements)
    site = env.ensure()
    digest = artifacts.put_files(repo.files)
    ref = RepoRef(repo, digest, artifacts.url, env)
    lap("intake")
    say("intake", 1, 1)
    boxes = RepoSandboxes()
    try:
        sandbox = boxes.get(site)
        say("baseline", 0, 1)
        baseline = run_baseline(sandbox, repo)
        report.baseline_tests = len(baseline.stable)
        report.baseline_excluded = baseline.excluded
        report.suite_wall_s = baseline.suite_wall_s
        lap("baseline")
        say("baseline", 1, 1)
        validation = ValidationReport()
        rng = random.Random(seed)

        def room(kind: str) -> int | None:
            # The cap is per kind over all its stages (bugfix: single bugs, then combinations).
            return None if limit is None else max(0, limit - report.candidates_by_kind[kind])

        def run(kind: str, cands: list, stage: str) -> list:  # type: ignore[type-arg]
            left = room(kind)
            if left is not None and len(cands) > left:
                cands = rng.sample(cands, left)
            if not cands:
                return []
            report.candidates_by_kind[kind] += len(cands)
            if kind == "refactor":
                report.candidates_by_operator.update(c.operators[0] for c in cands)
            say(stage, 0, len(cands))
            before, spent = len(validation.kept), validation.test_time_s
            validate(sandbox, repo, baseline, cands, report=validation)
            report.test_s_by_kind[kind] += validation.test_time_s - spent
            say(stage, len(cands), len(cands))
            return validation.kept[before:]

        singles, implemented, combined, refactored = [], [], [], []
        if "bugfix" in kinds or "testgen" in kinds:
            singles = run(
                "bugfix",
                bugfix_candidates(repo, baseline, seed=seed, per_function=per_function),
                "bugfix",
            )
        if "bugfix" in kinds and singles and room("bugfix") != 0:
            n = combos if combos is not None else max(1, len(singles) // 4)
            combined = run(
                "bugfix",
                combine([v.candidate for v in singles], repo, baseline, seed=seed, limit=n),
                "combine",
            )
        if "implement" in kinds:
            implemented = run("implement", implement_candidates(repo, baseline), "implement")
        if "refactor" in kinds:
            refactored = run("refactor", refactor_candidates(repo, baseline), "refactor")
        lap("validation")
        if "bugfix" in kinds:
            for v in [*singles, *combined]:
                report.tasks.append(
                    bugfix_task(
                        ref, v, seed=seed, heldout_fraction=heldout_fraction, split_by=split_by
                    )
                )
            report.kept_by_kind["bugfix"] = len(singles) + len(combined)
        for v in implemented:
            report.tasks.append(
                bugfix_task(ref, v, seed=seed, heldout_fraction=heldout_fraction, split_by=split_by)
            )
        report.kept_by_kind["implement"] = len(implemented)
        for v in refactored:
            report.tasks.append(
                refactor_task(
                    ref, v, seed=seed, heldout_fraction=heldout_fraction, split_by=split_by
                )
            )
            report.kept_by_operator[v.candidate.operators[0]] += 1
        if "refactor" in kinds:
            report.kept_by_kind["refactor"] = len(refactored)
        if "testgen" in kinds:
            say("testgen", 0, 1)
            spent = validation.test_time_s
            made, cands, rejected = testgen_tasks(
                sandbox,
                ref,
                baseline,
                singles,
                seed=seed,
                heldout_fraction=heldout_fraction,
                split_by=split_by,
                validation=validation,
                limit=limit,
            )
            report.tasks.extend(made)
            report.candidates_by_kind["testgen"] += cands
            report.kept_by_kind["testgen"] = len(made)
            report.test_s_by_kind["testgen"] += validation.test_time_s - spent
            report.rejected.update({f"testgen: {k}": n for k, n in rejected.items()})
            lap("testgen")
            say("testgen", 1, 1)
        report.rejected.update(validation.rejected)
        report.validation_test_s = validation.test_time_s
        report.validation_runs = validation.runs
        report.validation_variants = validation.variants
        report.timeout_s, report.timeouts = validation.timeout_s, validation.timeouts
        report.timeouts_where = dict(validation.timeouts_where)
        report.p2p_dropped = validation.p2p_dropped
    finally:
        boxes.close()
    return report
