"""`referee verify` of repository tasks end to end, this tree against another, same samples.

    PYTHONPATH=src python bench/repo_verify_cli.py TASKS.jsonl [TASKS.jsonl ...] \\
        --variant before=/path/to/old/src [--rounds 3] [--workers 2]

Samples per task file: each task's gold patch (``referee tasks gold``; issue 19's definition),
and with ``--empty`` an empty patch per task too (a failing sample: pytest's reports). Each
round runs the real command (a subprocess, ``--json``) once per tree, in turned order, and
times it from launch to exit. Every verdict (task, passed, reward, each test's status, flag
kinds) must be identical between the trees, sample by sample, or the bench fails. Reports the
median wall seconds per tree and the ratio, per task file.

``--mult 1,4`` also runs every sample 4 times in one command and reports the rate at the
margin, (extra samples) / (extra wall seconds) between the x1 and x4 commands, for each tree:
start-up (sandboxes, pytest imports, first compiles) cancels, as in issue 19's function target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def env_for(src: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package: bytecode cached
    return env


def samples_file(tasks: Path, work: Path, empty: bool) -> Path:
    out = work / f"{tasks.stem}.{'gold_and_empty' if empty else 'gold'}.jsonl"
    gold = subprocess.run(
        [sys.executable, "-m", "referee", "tasks", "gold", str(tasks)],
        env=env_for(SRC),
        check=True,
        capture_output=True,
    ).stdout.decode()
    rows = [json.loads(line) for line in gold.splitlines() if line.strip()]
    if empty:
        rows += [{"task_id": r["task_id"], "completion": ""} for r in rows]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def run(src: Path, tasks: Path, samples: Path, workers: int) -> tuple[float, list[Any]]:
    cmd = [sys.executable, "-m", "referee", "verify", "--json", "--workers", str(workers)]
    cmd += ["--tasks", str(tasks), "--samples", str(samples)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env_for(src), capture_output=True, check=False)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):  # 1: some sample failed, which the empty patches do
        raise RuntimeError(f"referee verify failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    verdicts = [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]
    key = sorted(  # in sample order or not, the same multiset of verdicts
        (
            v["task_id"],
            v["passed"],
            round(v["reward"], 9),
            v.get("infra_error") is not None,
            tuple((t["name"], t["status"]) for t in v.get("tests", [])),
            tuple(sorted(f["kind"] for f in v.get("flags", []))),
        )
        for v in verdicts
    )
    return wall, key


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="+", type=Path)
    ap.add_argument("--variant", required=True, help="NAME=SRC_DIR: the tree to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--empty", action="store_true", help="an empty patch per task as well")
    ap.add_argument("--mult", default="1", help="sample multiples, e.g. 1,4 (margin rate)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/referee-bench-repo-cli"))
    ap.add_argument("--out", type=Path, default=HERE / "out" / "repo_verify_cli.json")
    a = ap.parse_args()
    name, _, other = a.variant.partition("=")
    trees = {"current": SRC, name: Path(other)}
    a.work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "samples": "gold and empty patches" if a.empty else "gold patches",
    }
    ok = True
    mults = sorted(int(m) for m in a.mult.split(","))
    for tasks in a.tasks:
        base_samples = samples_file(tasks, a.work, a.empty)
        lines = base_samples.read_text()
        n = lines.count("\n")
        files = {}
        for m in mults:
            files[m] = a.work / f"{base_samples.stem}.x{m}.jsonl"
            files[m].write_text(lines * m)
        walls: dict[tuple[str, int], list[float]] = {(t, m): [] for t in trees for m in mults}
        keys: dict[tuple[str, int], list[Any]] = {}
        loads = []
        for rnd in range(a.rounds):
            order = list(trees) if rnd % 2 == 0 else list(reversed(trees))
            for m in mults:
                for tree in order:
                    wall, key = run(trees[tree], tasks, files[m], a.workers)
                    walls[(tree, m)].append(wall)
                    if keys.setdefault((tree, m), key) != key:
                        print(f"{tasks.name}: {tree} x{m}: verdicts changed", file=sys.stderr)
                        ok = False
            loads.append(os.getloadavg()[0])
            took = ", ".join(f"{t} x{m} {w[-1]:.1f}s" for (t, m), w in walls.items())
            print(f"{tasks.name} round {rnd}: {took}", file=sys.stderr)
        same = sum(x == y for x, y in zip(keys[("current", 1)], keys[(name, 1)], strict=True))
        ok &= same == n and all(keys[("current", m)] == keys[(name, m)] for m in mults)
        med = {k: statistics.median(w) for k, w in walls.items()}
        entry: dict[str, Any] = {
            "samples": n,
            "identical_verdicts": same,
            "passed": sum(k[1] for k in keys[("current", 1)]),
            "wall_s": {f"{t} x{m}": [round(x, 2) for x in w] for (t, m), w in walls.items()},
            "median_wall_s": {f"{t} x{m}": round(v, 2) for (t, m), v in med.items()},
            "ratio_x1": round(med[(name, 1)] / med[("current", 1)], 2),
            "load_1min": [round(x, 1) for x in loads],
        }
        if len(mults) > 1:
            lo, hi = mults[0], mults[-1]
            extra = n * (hi - lo)
            # Per round, then the median: a round's two commands ran under the same load.
            rates = {
                t: [
                    extra / (walls[(t, hi)][r] - walls[(t, lo)][r])
                    for r in range(a.rounds)
                    if walls[(t, hi)][r] > walls[(t, lo)][r]
                ]
                for t in trees
            }
            entry["margin_samples_per_s"] = {
                t: round(statistics.median(v), 2) if v else None for t, v in rates.items()
            }
            if rates["current"] and rates[name]:
                entry["ratio_margin"] = round(
                    statistics.median(rates["current"]) / statistics.median(rates[name]), 2
                )
        report[tasks.name] = entry
        print(json.dumps({tasks.name: entry}))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
