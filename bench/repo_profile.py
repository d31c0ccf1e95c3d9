"""Where a repository verification's time goes, and how much of it is the tests themselves.

    PYTHONPATH=src python bench/repo_profile.py TASKS.jsonl [TASKS.jsonl ...]

Per task file: the gold patches, one at a time, through ``referee verify``'s verifier set (as
the CLI makes it), after two warm-up verifications. Each step is timed where it is called (the
patch's ``git apply``, the pytest run, the host's workspace writes and copies), summed and
divided by the samples; the pytest runner's own report gives the tests' durations (setup, call
and teardown: what any verifier that runs the tests must spend) and the collection time. Run it
with another tree's ``src`` on ``PYTHONPATH`` for the anchor (steps a tree lacks are skipped).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import referee.verify.pytest_verifier as pytest_verifier
from referee.sandbox import Sandbox, Workspace
from referee.tasks.model import read_tasks
from referee.verify.dispatch import VerifierSet
from referee.verify.function import harness_sandbox
from referee.verify.repo_run import GRADER_PACKAGES
from referee.verify.samples import gold_samples

spent: collections.defaultdict[str, float] = collections.defaultdict(float)
last_run: dict[str, float] = {}


def timed(owner: Any, name: str, label: str, after: Callable[[Any], None] | None = None) -> None:
    if not hasattr(owner, name):
        return
    inner = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            out = inner(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - t0
        if after is not None:
            after(out)
        return out

    setattr(owner, name, wrapper)


def remember(run: Any) -> None:
    last_run["collect_s"] = run.collect_s
    last_run["tests_s"] = sum(r.duration_s for r in run.results.values())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="+")
    a = ap.parse_args()
    timed(pytest_verifier, "apply_patch", "git apply of the patch")
    timed(pytest_verifier, "run_pytest", "pytest run, request to reply", remember)
    timed(Sandbox, "run", "fresh sandbox runs (bwrap)")
    for step in ("write", "snapshot", "restore", "clear", "prune"):
        timed(Workspace, step, f"workspace {step}")
    for path in a.tasks:
        tasks = read_tasks(path)
        by_id = {t.id: t for t in tasks}
        samples = [(by_id[s["task_id"]], s["completion"]) for s in gold_samples(tasks)]
        with (
            harness_sandbox(python_workers=2, python_packages=GRADER_PACKAGES) as sb,
            VerifierSet(sb) as vs,
        ):
            for task, patch in samples[:2]:
                vs.verify(task, patch)
            spent.clear()
            total = tests = collect = 0.0
            for task, patch in samples:
                t0 = time.perf_counter()
                vs.verify(task, patch)
                total += time.perf_counter() - t0
                tests += last_run.get("tests_s", 0.0)
                collect += last_run.get("collect_s", 0.0)
        n = len(samples)
        print(
            json.dumps(
                {
                    "tasks": path,
                    "samples": n,
                    "ms_per_sample": {
                        "all of a verification": round(total / n * 1000, 1),
                        **{k: round(v / n * 1000, 1) for k, v in sorted(spent.items())},
                    },
                    "verification_s": round(total, 2),
                    "tests_own_s": round(tests, 2),
                    "collection_s": round(collect, 2),
                    "tests_share": round(tests / total, 3) if total else None,
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
