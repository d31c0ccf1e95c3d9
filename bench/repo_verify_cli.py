"""`referee verify` of repository tasks end to end, this tree against another, same samples.

    PYTHONPATH=src python bench/repo_verify_cli.py TASKS.jsonl [TASKS.jsonl ...] \\
        --variant before=/path/to/old/src [--rounds 3] [--workers 2]

Samples per task file: each task's gold patch (``referee tasks gold``; issue 19's definition),
and with ``--empty`` an empty patch per task too (a failing sample: pytest's reports). Each
round runs the real command (a subprocess, ``--json``) once per tree, in turned order, and
times it from launch to exit. Every verdict (task, passed, reward, each test's status, flag
kinds) must be identical between the trees, sample by sample, or the bench fails. Reports the
median wall seconds per tree and the ratio, per task file.
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
    for tasks in a.tasks:
        samples = samples_file(tasks, a.work, a.empty)
        n = sum(1 for _ in samples.open())
        walls: dict[str, list[float]] = {t: [] for t in trees}
        keys: dict[str, list[Any]] = {}
        loads = []
        for rnd in range(a.rounds):
            order = list(trees) if rnd % 2 == 0 else list(reversed(trees))
            for tree in order:
                wall, key = run(trees[tree], tasks, samples, a.workers)
                walls[tree].append(wall)
                if keys.setdefault(tree, key) != key:
                    print(
                        f"{tasks.name}: {tree} changed its verdicts between rounds", file=sys.stderr
                    )
                    ok = False
            loads.append(os.getloadavg()[0])
            print(
                f"{tasks.name} round {rnd}: "
                + ", ".join(f"{t} {walls[t][-1]:.1f}s" for t in trees),
                file=sys.stderr,
            )
        same = sum(x == y for x, y in zip(keys["current"], keys[name], strict=True))
        ok &= same == n
        med = {t: statistics.median(w) for t, w in walls.items()}
        report[tasks.name] = {
            "samples": n,
            "identical_verdicts": same,
            "passed": sum(k[1] for k in keys["current"]),
            "wall_s": {t: [round(x, 2) for x in w] for t, w in walls.items()},
            "median_wall_s": {t: round(m, 2) for t, m in med.items()},
            "ratio": round(med[name] / med["current"], 2),
            "load_1min": [round(x, 1) for x in loads],
        }
        print(json.dumps({tasks.name: report[tasks.name]}))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
