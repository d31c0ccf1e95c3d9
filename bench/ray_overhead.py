"""What verifying on Ray costs against verifying in-process, and the inputs of a scaling estimate.

    PYTHONPATH=src .venv/bin/python bench/ray_overhead.py [--rounds 3]

The 164 HumanEval tasks (recorded in the sandbox), 5 samples each: the canonical solution 4
times and a wrong one (``return None``) once, 820 samples.

* **CLI, end to end**: ``referee verify`` against ``referee verify --ray local`` (one actor, the
  same number of sandbox workers) and ``referee verify --ray ADDRESS`` (joining a one-node
  cluster the bench started beforehand with ``ray start --head``), subprocesses, interleaved
  (order rotating per round): wall seconds including interpreter start; and once, where the
  ``--ray local`` path's time goes (import, Ray's start, the actor's, the work, shutdown).
* **warm**: the same 820 samples on a warm ``SandboxPool`` (local Ray, one actor) against a
  warm ``VerifierSet`` on a local sandbox with as many workers, interleaved; samples/s and CPU
  per sample (this process and everything below it: Ray's daemons, the actor, both sides'
  sandbox workers and the programs they ran).
* **scaling inputs**: the sandbox's cost per check (one worker, one at a time: wall; and CPU
  per sample at full load), the round trip of a no-op actor call, the per-chunk cost (time per
  sample against chunk size, one chunk at a time), payload bytes per sample and per verdict
  (pickled, as Ray ships them), and the driver's CPU per 1000 verdicts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from _service import humaneval_file, tree_cpu_s

ROOT = Path(__file__).resolve().parents[1]
WRONG = "    return None\n"


def samples_820(gold: list[dict[str, str]]) -> list[dict[str, str]]:
    wrong = [{"task_id": g["task_id"], "completion": WRONG} for g in gold]
    return gold * 4 + wrong


def cli(tasks: Path, samples: Path, ray: str | None) -> float:
    cmd = [sys.executable, "-m", "referee", "verify", "--tasks", str(tasks), "--samples"]
    cmd += [str(samples)] + (["--ray", ray] if ray else [])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("RAY_ADDRESS", None)
    if ray and ray != "local":
        env["RAY_AUTH_MODE"] = "disabled"  # the bench's own cluster (see head_node)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    took = time.perf_counter() - t0
    if p.returncode != 0 or "820 samples: 656 passed, 164 failed, 0 infra" not in p.stdout:
        raise SystemExit(f"referee verify {'--ray ' if ray else ''}failed: {p.stdout}{p.stderr}")
    return took


BREAKDOWN = """
import sys, time
t0 = time.perf_counter()
def mark(s): print(f"{s} {time.perf_counter() - t0:.3f}", flush=True)
import ray; mark("import_ray")
from referee.tasks.model import read_tasks
from referee.verify.samples import read_samples
from referee.cluster import SandboxPool, connect
tasks = read_tasks(sys.argv[1]); pairs = read_samples(sys.argv[2], tasks); mark("read")
connect("local"); mark("ray_started")
pool = SandboxPool(tasks, actors=1); mark("actor_ready")
pool.verify_many(pairs); mark("verified")
pool.close(); ray.shutdown(); mark("shut_down")
"""


def head_node(tmp: Path) -> tuple[str, int]:
    """A one-node Ray cluster in its own process group: (address, group id)."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--port=0",
         f"--num-cpus={os.cpu_count()}", f"--temp-dir={tmp}", "--disable-usage-stats",
         "--include-dashboard=false"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    out, _ = proc.communicate(timeout=180)
    m = re.search(r"ray start --address='([^']+)'", out)
    if proc.returncode != 0 or not m:
        raise SystemExit(f"ray start --head failed: {out[-2000:]}")
    return m.group(1), proc.pid


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=(os.cpu_count() or 1) + 1)
    args = ap.parse_args()

    path, tasks, gold = humaneval_file()
    rows = samples_820(gold)
    sample_file = Path(tempfile.gettempdir()) / f"referee-bench-ray-{os.getpid()}.jsonl"
    sample_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    by_id = {t.id: t for t in tasks}
    pairs = [(by_id[r["task_id"]], r["completion"]) for r in rows]
    out: dict[str, Any] = {"machine": machine(), "samples": len(rows), "workers": args.workers}

    # ---- CLI, end to end --------------------------------------------------------------------
    tmp = Path(tempfile.mkdtemp(prefix="referee-bench-ray-"))
    address, group = head_node(tmp)
    kinds: dict[str, str | None] = {"plain": None, "ray_local": "local", "ray_join": address}
    cli_s: dict[str, list[float]] = {k: [] for k in kinds}
    try:
        for r in range(args.rounds):
            order = list(kinds)[r % 3 :] + list(kinds)[: r % 3]
            for kind in order:
                cli_s[kind].append(cli(path, sample_file, kinds[kind]))
            print(f"cli round {r}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in cli_s.items()))
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, sig)
            time.sleep(2)
        shutil.rmtree(tmp, ignore_errors=True)
    out["cli"] = cli_s
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    marks = subprocess.run(
        [sys.executable, "-c", BREAKDOWN, str(path), str(sample_file)],
        capture_output=True, text=True, env=env, timeout=600,
    ).stdout.split()  # fmt: skip
    at = {marks[i]: float(marks[i + 1]) for i in range(0, len(marks) - 1, 2)}
    steps = list(at)
    out["cli_ray_local_breakdown_s"] = {
        s: round(at[s] - (at[steps[i - 1]] if i else 0.0), 3) for i, s in enumerate(steps)
    }
    print("--ray local, where the time goes:", out["cli_ray_local_breakdown_s"])

    # ---- warm: a pool against a VerifierSet, in this process ------------------------------------
    from referee.cluster import SandboxPool, connect
    from referee.verify.dispatch import VerifierSet
    from referee.verify.function import harness_sandbox

    t0 = time.perf_counter()
    connect("local")
    ray_start_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pool = SandboxPool(tasks, actors=1, workers_per_actor=args.workers)
    actor_start_s = time.perf_counter() - t0
    out["ray_start_s"], out["actor_start_s"] = ray_start_s, actor_start_s
    me = os.getpid()
    sides = ("pool_sps", "local_sps", "pool_cpu", "local_cpu")
    warm: dict[str, list[float]] = {k: [] for k in sides}
    driver_cpu: list[float] = []
    with harness_sandbox(python_workers=args.workers) as sb, VerifierSet(sb) as local:
        list(local.verify_many(pairs[:50]))  # warm both sides
        pool.verify_many(pairs[:50])
        for r in range(args.rounds):
            for use_pool in (r % 2 == 0, r % 2 == 1):
                c0, p0, t0 = tree_cpu_s(me), time.process_time(), time.perf_counter()
                if use_pool:
                    verdicts = pool.verify_many(pairs)
                else:
                    verdicts = list(local.verify_many(pairs, workers=args.workers))
                took = time.perf_counter() - t0
                cpu = tree_cpu_s(me) - c0
                assert sum(v.passed for v in verdicts) == 656, "wrong verdicts"
                side = "pool" if use_pool else "local"
                warm[f"{side}_sps"].append(len(pairs) / took)
                warm[f"{side}_cpu"].append(cpu / len(pairs) * 1000)
                if use_pool:
                    driver_cpu.append((time.process_time() - p0) / len(pairs) * 1000 * 1000)
            print(
                f"warm round {r}: pool {warm['pool_sps'][-1]:.0f}/s, "
                f"local {warm['local_sps'][-1]:.0f}/s"
            )
        out["warm"] = warm
        out["driver_cpu_ms_per_1000"] = driver_cpu

        # ---- scaling inputs ----------------------------------------------------------------
        one = [pairs[i] for i in range(0, 164 * 4, 4)][:100]  # 100 canonical, one at a time
        t0 = time.perf_counter()
        for pair in one:
            local.verify(*pair)
        out["check_wall_ms_one_worker"] = (time.perf_counter() - t0) / len(one) * 1000
    actor = pool.actors()[0]
    import ray

    rtt = []
    for _ in range(200):
        t0 = time.perf_counter()
        ray.get(actor.health.remote())
        rtt.append(time.perf_counter() - t0)
    out["noop_rtt_ms"] = statistics.median(rtt) * 1000
    # Per-chunk cost: one chunk at a time, sizes 1..64, time per chunk against its size.
    chunk_ms: dict[int, float] = {}
    ids = [(t.id, c) for t, c in pairs[:656]]
    for size in (1, 4, 16, 64):
        times = []
        for start in range(0, 128, size):
            chunk = ids[start : start + size]
            t0 = time.perf_counter()
            ray.get(actor.verify_batch.remote(chunk, 60.0))
            times.append((time.perf_counter() - t0) / len(chunk))
        chunk_ms[size] = statistics.median(times) * 1000
    out["ms_per_sample_by_chunk"] = chunk_ms

    verdicts = pool.verify_many(pairs[:164])
    out["payload_bytes"] = {
        "sample_pickled": statistics.mean(len(pickle.dumps(s)) for s in ids[:164]),
        "verdict_pickled": statistics.mean(len(pickle.dumps(v)) for v in verdicts),
        "verdict_json": statistics.mean(len(v.model_dump_json()) for v in verdicts),
        "tasks_put_once": len(pickle.dumps([t.model_dump(mode="json") for t in tasks])),
    }
    pool.close()
    ray.shutdown()
    sample_file.unlink()

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    ratios = [p / q for p, q in zip(warm["pool_sps"], warm["local_sps"], strict=True)]
    out["summary"] = {
        **{f"cli_{k}_s": med(v) for k, v in cli_s.items()},
        "cli_ray_local_overhead": med(cli_s["ray_local"]) / med(cli_s["plain"]) - 1,
        "cli_ray_join_overhead": med(cli_s["ray_join"]) / med(cli_s["plain"]) - 1,
        "warm_pool_sps": med(warm["pool_sps"]),
        "warm_local_sps": med(warm["local_sps"]),
        "warm_throughput_overhead": 1 - med(ratios),
        "warm_cpu_overhead": med(warm["pool_cpu"]) / med(warm["local_cpu"]) - 1,
        "driver_cpu_ms_per_1000": med(driver_cpu),
    }
    print(json.dumps(out["summary"], indent=2))
    print(json.dumps({k: out[k] for k in out if k not in ("cli", "warm", "machine")}, indent=2))
    print("saved", save("ray_overhead", out))


if __name__ == "__main__":
    main()
