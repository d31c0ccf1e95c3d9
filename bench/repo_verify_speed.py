"""Repository-task verification: today's fresh sandboxes per step vs a held warm worker.

"fresh" (``REFEREE_PYTEST_WARM=0``) is the path before issue 19: the patch is applied in a fresh
sandbox and pytest starts in a fresh interpreter. "warm" holds one fork-server worker for the
whole verification (``Sandbox.lease``): the repository is written into its workspace, ``git
apply`` and pytest run as forks of it (pytest imported once per worker), and the repository's
own files get bytecode compiled once on the host (``referee.verify.bytecode``).

    PYTHONPATH=src python bench/repo_verify_speed.py TASKS.jsonl [--rounds 3] [--limit N]

Samples: each task's gold patch (``referee tasks gold``) and an empty patch. Both paths run
``referee verify``'s verifier set (``harness_sandbox`` + ``VerifierSet``, as the CLI makes them),
one sample at a time, in alternating rounds (fresh, warm, fresh, warm, ...;
``REFEREE_PYTEST_WARM`` switches the path). Every verdict of the warm path must equal the fresh
path's (reward, passed, each test's status, flags); any difference fails the bench. Reports the
median seconds per sample of each path and the ratio, overall and per task kind.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

from referee.tasks.model import read_tasks
from referee.verify.dispatch import VerifierSet
from referee.verify.function import harness_sandbox
from referee.verify.repo_run import GRADER_PACKAGES, WARM_ENV
from referee.verify.samples import gold_samples


def key(v: Any) -> tuple[Any, ...]:
    return (
        v.reward,
        v.passed,
        v.infra_error is not None,
        tuple((t.name, t.status) for t in v.tests),
        tuple(sorted(f.kind for f in v.flags)),
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args()
    tasks = read_tasks(a.tasks)
    if a.limit:
        tasks = tasks[: a.limit]
    by_id = {t.id: t for t in tasks}
    samples = [(by_id[s["task_id"]], s["completion"], "gold") for s in gold_samples(tasks)]
    samples += [(t, "", "empty") for t in tasks]
    times: dict[str, list[float]] = {"fresh": [], "warm": []}
    # Per task kind too (repository patches and test-writing tasks cost very differently).
    by_kind: dict[tuple[str, str], list[float]] = {}
    verdicts: dict[str, list[tuple[Any, ...]]] = {"fresh": [], "warm": []}
    with (
        harness_sandbox(python_workers=2, python_packages=GRADER_PACKAGES) as sb,
        VerifierSet(sb) as vs,
    ):
        for rnd in range(a.rounds):
            for path in ("fresh", "warm") if rnd % 2 == 0 else ("warm", "fresh"):
                os.environ[WARM_ENV] = "1" if path == "warm" else "0"
                for task, completion, _kind in samples:
                    t0 = time.perf_counter()
                    v = vs.verify(task, completion)
                    if rnd > 0 or a.rounds == 1:  # round 0 warms caches and workers
                        times[path].append(time.perf_counter() - t0)
                        by_kind.setdefault((task.kind, path), []).append(times[path][-1])
                    verdicts[path].append(key(v))
                print(f"round {rnd} {path}: done", file=sys.stderr, flush=True)
    n = len(samples)
    same = 0
    diffs = []
    for i, (fv, wv) in enumerate(zip(verdicts["fresh"], verdicts["warm"], strict=True)):
        if fv == wv:
            same += 1
        else:
            diffs.append((samples[i % n][0].id, samples[i % n][2], fv, wv))
    # Every round of one path must agree with itself too (a flaky verdict is no comparison).
    flaky = sum(
        len({verdicts[p][r * n + j] for r in range(a.rounds)}) > 1
        for p in ("fresh", "warm")
        for j in range(n)
    )
    fresh, warm = statistics.median(times["fresh"]), statistics.median(times["warm"])
    out = {
        "tasks": a.tasks,
        "samples": n,
        "rounds": a.rounds,
        "comparisons": len(verdicts["fresh"]),
        "identical": same,
        "flaky": flaky,
        "passed_gold": sum(1 for j in range(n) if verdicts["warm"][j][1]),
        "median_s_fresh": round(fresh, 4),
        "median_s_warm": round(warm, 4),
        "ratio": round(fresh / warm, 2),
        "infra_errors": sum(v[2] for p in verdicts for v in verdicts[p]),
        "kinds": {
            kind: {
                "samples": len(by_kind[(kind, "warm")]),
                "median_s_fresh": round(statistics.median(by_kind[(kind, "fresh")]), 4),
                "median_s_warm": round(statistics.median(by_kind[(kind, "warm")]), 4),
                "ratio": round(
                    statistics.median(by_kind[(kind, "fresh")])
                    / statistics.median(by_kind[(kind, "warm")]),
                    2,
                ),
            }
            for kind in sorted({k for k, _ in by_kind})
        },
    }
    print(json.dumps(out))
    for d in diffs[:5]:
        print("DIFF", d, file=sys.stderr)
    return 0 if same == len(verdicts["fresh"]) else 1


if __name__ == "__main__":
    sys.exit(main())
