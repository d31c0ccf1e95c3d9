"""Cost of validation in `referee synth` against the naive way (whole suite per candidate state).

For each project (a task file and its `referee synth --json` report), measured in one run:

* our validation test time: the report's `validation_test_s` (every sandbox run validation made:
  first run of each candidate, rerun and stub of the survivors, test-writing checks);
* the naive cost of the same protocol: `validation_variants` states, each running the whole
  suite in a fresh sandboxed pytest (what SWE-smith-style harnesses do per candidate), with the
  same runner and options as ours (native tracebacks included, so the ratio is what selection
  and batching buy, nothing else). Its cost per state is measured here on a sample of the
  tasks' starting states (median of `--sample`); states that hit their timeout are charged what
  they cost us. The same states with pytest's default (long) tracebacks are measured beside it,
  for context: that is what a harness running plain `pytest` pays;
* the decomposition: the whole suite as one batched variant (fork of a warm pytest), to show how
  much comes from batching and how much from running only the covering tests;
* the anchor: the clean suite, fresh, measured in the same run.

    .venv/bin/python bench/synth_cost.py NAME=TASKS.jsonl:REPORT.json ... [--sample 10]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time

from _common import OUT, machine
from referee.synth.repo import open_repository
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.model import TaskKind, read_tasks
from referee.tasks.venv import RepoVenv
from referee.verify.repo_run import RepoSandboxes, Variant, run_pytest, run_variants


def measure(name: str, tasks_path: str, report_path: str, sample: int, seed: int) -> dict:
    report = json.load(open(report_path))
    tasks = [t for t in read_tasks(tasks_path) if t.kind != TaskKind.TEST_WRITING]
    repo_meta = tasks[0].payload["repo"]
    repo = open_repository(report["source"])
    files = ArtifactStore(repo_meta["store"]).get_files(repo_meta["snapshot"])
    tests, conftests = list(repo_meta["test_files"]), list(repo_meta["conftests"])
    roots = tuple(repo_meta["source_roots"])
    boxes = RepoSandboxes()
    sandbox = boxes.get(RepoVenv(repo.requirements).ensure())
    picked = random.Random(seed).sample(tasks, min(sample, len(tasks)))
    clean, naive, naive_long, batched = [], [], [], []
    try:
        for t in picked:
            state = {**files, **t.payload["overrides"]}
            t0 = time.perf_counter()
            run_pytest(sandbox, files, tests, source_roots=roots, conftests=conftests)
            clean.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            run_pytest(
                sandbox, state, tests, source_roots=roots, conftests=conftests, traceback="native"
            )
            naive.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            run_pytest(sandbox, state, tests, source_roots=roots, conftests=conftests)
            naive_long.append(time.perf_counter() - t0)
        variants = [
            Variant(id=t.id, files=t.payload["overrides"], ids=tests, timeout_s=300) for t in picked
        ]
        got, _ = run_variants(sandbox, files, variants, source_roots=roots, conftests=conftests)
        batched = [v.wall_s for v in got.values()]
    finally:
        boxes.close()
    kept = sum(report["kept"].values())
    states = report["validation_variants"]
    ours = report["validation_test_s"]
    naive_state = statistics.median(naive)
    # A state that hit its timeout costs the naive way at least as much as it cost us (its hang
    # is in the whole suite too): charged at our time, the rest at the measured median.
    timeouts, timeout_s = report.get("timeouts", 0), report.get("timeout_s", 0.0)
    naive_total = (states - timeouts) * naive_state + timeout_s
    return {
        "project": name,
        "source": report["source"],
        "candidates": report["candidates"],
        "kept": report["kept"],
        "validation_states": states,
        "validation_runs": report["validation_runs"],
        "timeouts": timeouts,
        "timeout_s": timeout_s,
        "ours_test_s": round(ours, 1),
        "ours_s_per_kept": round(ours / kept, 3),
        "clean_suite_fresh_s": round(statistics.median(clean), 3),
        "naive_state_fresh_s": round(naive_state, 3),
        "naive_state_fresh_long_tracebacks_s": round(statistics.median(naive_long), 3),
        "naive_state_batched_s": round(statistics.median(batched), 3),
        "naive_total_s": round(naive_total, 1),
        "naive_s_per_kept": round(naive_total / kept, 3),
        "ratio": round(naive_total / ours, 2),
        "ratio_from_batching": round(naive_state / statistics.median(batched), 2),
        "timeouts_where": report.get("timeouts_where", {}),
        "per_round": {"clean": clean, "naive": naive, "naive_long": naive_long, "batched": batched},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("projects", nargs="+", help="NAME=TASKS.jsonl:REPORT.json")
    ap.add_argument("--sample", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for spec in args.projects:
        name, paths = spec.split("=", 1)
        tasks_path, report_path = paths.split(":", 1)
        row = measure(name, tasks_path, report_path, args.sample, args.seed)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "per_round"}), file=sys.stderr)
    OUT.mkdir(exist_ok=True)
    (OUT / "synth_cost.json").write_text(json.dumps({"machine": machine(), "rows": rows}, indent=1))
    print(
        "| project | states validated | ours: test s | per kept | naive: s per state "
        "(fresh, whole suite) | same, long tracebacks | naive total | **ratio** | "
        "of which batching |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['project']} | {r['validation_states']} | {r['ours_test_s']} | "
            f"{r['ours_s_per_kept']} | {r['naive_state_fresh_s']} | "
            f"{r['naive_state_fresh_long_tracebacks_s']} | {r['naive_total_s']} | "
            f"**{r['ratio']}x** | {r['ratio_from_batching']}x |"
        )


if __name__ == "__main__":
    main()
