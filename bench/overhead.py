"""Per-run overhead of a trivial Python program, fast path and fresh path, with anchors.

    .venv/bin/python bench/overhead.py [--rounds 5] [--fast 400] [--fresh 60]

Measured side by side in one run (the machine is shared and noisy, so compare ratios):

* anchor ``fork``: ``os.fork()`` + ``os._exit(0)`` + ``waitpid`` from a bare ``python -I``
  (our own trivial code, no sandbox): the floor the fork server builds on;
* anchor ``python -c pass``: a fresh interpreter via subprocess, no sandbox;
* ``fast path``: ``Sandbox.run_python("pass")``, end to end as the caller sees it, and the
  server-side part (fork to reap) that ``ExecResult.wall_s`` reports;
* ``fresh path``: ``Sandbox.run(["python3", "-c", "pass"])``: a new bubblewrap sandbox each time;
* memory of one idle fork-server worker (PSS of its processes, and its cgroup's usage).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save, summary_ms
from referee.sandbox import Sandbox

FORK_ANCHOR = """
import os, sys, time
n = int(sys.argv[1]); out = []
for _ in range(n):
    t = time.perf_counter(); pid = os.fork()
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0); out.append(time.perf_counter() - t)
print(' '.join(map(repr, out)))
"""


def fork_anchor(n: int) -> list[float]:
    p = subprocess.run(
        [sys.executable, "-I", "-c", FORK_ANCHOR, str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [float(x) for x in p.stdout.split()]


def python_anchor(n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        out.append(time.perf_counter() - t)
    return out


def pss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fast", type=int, default=400)
    ap.add_argument("--fresh", type=int, default=60)
    args = ap.parse_args()
    rows: dict[str, list[dict[str, float]]] = {
        k: []
        for k in (
            "anchor_fork",
            "anchor_python",
            "fast_end_to_end",
            "fast_server",
            "fresh_end_to_end",
        )
    }
    with Sandbox(python_workers=1) as sb:
        for _ in range(20):
            sb.run_python("pass")
            sb.run(["true"])
        for _ in range(args.rounds):
            rows["anchor_fork"].append(summary_ms(fork_anchor(args.fast)))
            rows["anchor_python"].append(summary_ms(python_anchor(args.fresh)))
            e2e, server = [], []
            for _ in range(args.fast):
                t = time.perf_counter()
                r = sb.run_python("pass")
                e2e.append(time.perf_counter() - t)
                server.append(r.wall_s)
                assert r.exit_code == 0, r
            rows["fast_end_to_end"].append(summary_ms(e2e))
            rows["fast_server"].append(summary_ms(server))
            fresh = []
            for _ in range(args.fresh):
                t = time.perf_counter()
                r = sb.run(["python3", "-c", "pass"])
                fresh.append(time.perf_counter() - t)
                assert r.exit_code == 0, r
            rows["fresh_end_to_end"].append(summary_ms(fresh))
        worker = sb.pool.workers[0]
        time.sleep(0.5)
        pids = worker.group.pids() if worker.group is not None else []
        idle = {
            "processes": len(pids),
            "pss_mb": round(sum(pss_kb(p) for p in pids) / 1024, 2),
            "cgroup_usage_mb": round(worker.group.stats().peak_bytes / 2**20, 2)
            if worker.group is not None
            else None,
        }
    result = {
        "machine": machine(),
        "rounds": rows,
        "idle_worker": idle,
        "command": "python bench/overhead.py " + " ".join(sys.argv[1:]),
    }
    med = {k: statistics.median(r["median_ms"] for r in v) for k, v in rows.items()}
    p95 = {k: statistics.median(r["p95_ms"] for r in v) for k, v in rows.items()}
    result["median_of_rounds"] = {"median_ms": med, "p95_ms": p95}
    path = save("overhead", result)
    print("| measurement | median ms | p95 ms |\n|---|---|---|")
    for k in rows:
        print(f"| {k} | {med[k]:.2f} | {p95[k]:.2f} |")
    print(
        f"\nidle worker: {idle}\nratio fresh/fast (end to end): "
        f"{med['fresh_end_to_end'] / med['fast_end_to_end']:.1f}x\nsaved {path}"
    )


if __name__ == "__main__":
    main()
