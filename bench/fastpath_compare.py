"""The fast path's trivial run, end to end, for several source trees side by side.

    .venv/bin/python bench/fastpath_compare.py [--rounds 5] [--n 400]
        [--variant NAME=SRC_DIR ...]

Each round, for each tree (``PYTHONPATH``) in turn, a fresh process makes a one-worker
``Sandbox`` and times ``run_python("pass")`` ``--n`` times as the caller sees it (after 30 warm-up
runs), with the server's fork-to-reap (``ExecResult.wall_s``), the caller's own CPU per run
(``thread_time``) and the worker cgroup's CPU per run (``ExecResult.cpu_s``). The anchor, a bare
``os.fork()`` + ``_exit`` + ``waitpid`` in ``python -I``, runs in the same round. Medians of the
rounds' medians; the ratios to the anchor are what to compare across runs on this shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from overhead import fork_anchor

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, statistics, sys, time
from referee.sandbox import Sandbox
n = int(sys.argv[1])
with Sandbox(python_workers=1) as sb:
    for _ in range(30):
        sb.run_python("pass")
    e2e, server, host, cg = [], [], [], []
    for _ in range(n):
        c, t = time.thread_time(), time.perf_counter()
        r = sb.run_python("pass")
        e2e.append(time.perf_counter() - t)
        host.append(time.thread_time() - c)
        server.append(r.wall_s)
        cg.append(r.cpu_s)
        assert r.exit_code == 0, r
med = lambda xs: statistics.median(xs) * 1e3
print(json.dumps({"end_to_end_ms": med(e2e), "fork_to_reap_ms": med(server),
                  "host_cpu_ms": med(host), "sandbox_cpu_ms": med(cg),
                  "p95_end_to_end_ms": sorted(e2e)[int(0.95 * n)] * 1e3}))
"""


def probe(src: Path, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(n)], env=env, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--variant", action="append", default=[], help="NAME=SRC_DIR")
    ap.add_argument("--name", default="fastpath_compare")
    args = ap.parse_args()
    variants = {"current": ROOT / "src"}
    for v in args.variant:
        name, _, path = v.partition("=")
        variants[name] = Path(path).resolve()
    rounds = []
    for i in range(args.rounds):
        rnd: dict[str, object] = {
            "anchor_fork_ms": statistics.median(fork_anchor(args.n)) * 1e3,
        }
        for name, src in variants.items():
            rnd[name] = probe(src, args.n)
        rounds.append(rnd)
        print(json.dumps({"round": i + 1, **rnd}), flush=True)
    summary: dict[str, object] = {
        "anchor_fork_ms": statistics.median(r["anchor_fork_ms"] for r in rounds)  # type: ignore[misc]
    }
    for name in variants:
        summary[name] = {
            k: statistics.median(r[name][k] for r in rounds)  # type: ignore[index]
            for k in rounds[0][name]  # type: ignore[union-attr]
        }
    result = {
        "machine": machine(),
        "command": "python bench/fastpath_compare.py " + " ".join(sys.argv[1:]),
        "variants": {k: str(v) for k, v in variants.items()},
        "rounds": rounds,
        "summary": summary,
        "loadavg": os.getloadavg(),
    }
    path = save(args.name, result)
    print(json.dumps(summary, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
