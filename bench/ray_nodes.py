"""Ray on several nodes (issue 29): node loss, a shared named pool, absolute deadlines, autoscaling.

    PYTHONPATH=src .venv/bin/python bench/ray_nodes.py [--kills 3] [--out bench/results/ray]

A cluster of three ``ray start`` nodes on this machine, each in its own process group with its
own ports and a custom resource naming it (``node_a`` the head, ``node_b``, and ``victim``, the
node that is killed and started again between rounds). Samples: the 164 HumanEval tasks
(recorded in the sandbox), canonical solutions (must pass) and ``return None`` (must fail).

* **node loss**: a round without a kill (the anchor), then ``--kills`` rounds where the victim
  node is ``kill -9``-ed (its whole process group: raylet, object store, workers) once its
  actor has judged some samples. Counted: samples, verdicts, lost (no verdict, or an
  infrastructure verdict), duplicates (verdicts past one per sample), wrong verdicts, chunks
  retried, wall time against the anchor.
* **shared pool**: 4 reward-worker processes (Ray actors, as veRL's) judge on the job's named
  pool of 2 sandbox actors at once: the CPUs Ray holds for it and the actors' pids, and the
  samples/s through the host against a pool held by the driver itself.
* **absolute deadlines**: a burst bigger than the pool judges in ``within_s``: how many are
  judged, how many expire in the queue (not run), and the call's wall time, against the same
  burst without ``within_s``.
* **autoscaling**: a burst on a pool of 1..3 actors: its size over time, the time to grow and
  to shrink back.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from _service import humaneval_file

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))
WRONG = "    return None\n"
SLOW = "\nimport time\ntime.sleep(0.25)\n"  # appended to a reference: 0.25 s per sample
# The head notices a lost node after 3 missed health checks 2 s apart (Ray's default: 5, 3 s).
# Ray's memory monitor is off: it counts the whole machine's memory, and on a machine shared
# with other work it killed the bench's actors for memory other programs held.
HEALTH = {
    "RAY_health_check_period_ms": "2000",
    "RAY_health_check_timeout_ms": "2000",
    "RAY_health_check_failure_threshold": "3",
    "RAY_memory_monitor_refresh_ms": "0",
}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Nodes:
    """``ray start`` nodes, each its own process group, ports and resource name."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="referee-ray-nodes-", dir="/tmp"))
        self.env = {
            **os.environ,
            **HEALTH,
            "RAY_AUTH_MODE": "disabled",
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONPATH": str(ROOT / "src"),
        }
        self.groups: dict[str, int] = {}
        self.address = ""
        self.next_worker_port = 20000

    def start(self, name: str) -> None:
        lo = self.next_worker_port
        self.next_worker_port += 200
        args = [
            f"--resources={json.dumps({name: 1})}",
            "--num-cpus=2",
            f"--temp-dir={self.tmp}",
            "--disable-usage-stats",
            "--object-store-memory=150000000",
            f"--node-manager-port={_port()}",
            f"--object-manager-port={_port()}",
            f"--metrics-export-port={_port()}",
            f"--runtime-env-agent-port={_port()}",
            f"--dashboard-agent-listen-port={_port()}",
            f"--min-worker-port={lo}",
            f"--max-worker-port={lo + 199}",
        ]
        if not self.address:
            port = _port()
            args = ["--head", f"--port={port}", "--include-dashboard=false", *args]
        else:
            args = [f"--address={self.address}", *args]
        proc = subprocess.Popen(
            [RAY, "start", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.groups[name] = proc.pid
        out, _ = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"ray start ({name}) failed:\n{out[-3000:]}")
        if not self.address:
            m = re.search(r"ray start --address='([^']+)'", out)
            self.address = m.group(1) if m else f"127.0.0.1:{port}"

    def kill(self, name: str) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.groups.pop(name), signal.SIGKILL)

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pgid in self.groups.values():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, sig)
            time.sleep(2 if sig == signal.SIGTERM else 0)


def alive() -> int:
    import ray

    return sum(1 for n in ray.nodes() if n["Alive"])


def wait_nodes(count: int, seconds: float = 300) -> float:
    t0 = time.monotonic()
    while alive() != count:
        if time.monotonic() - t0 > seconds:
            raise SystemExit(f"the cluster has {alive()} live nodes, expected {count}")
        time.sleep(0.25)
    return time.monotonic() - t0


def node_loss_round(nodes: Nodes, tasks: list[Any], pairs, expect, kill: bool) -> dict[str, Any]:
    from referee.cluster import SandboxPool

    with SandboxPool(
        tasks,
        actors=3,
        workers_per_actor=2,
        placement=["node_a", "node_b", "victim"],
        ready_timeout_s=120,
    ) as pool:
        before = pool.health()[2]["verified"]
        out: dict[str, Any] = {}

        def run() -> None:
            out["verdicts"] = pool.verify_many(pairs)

        t0 = time.monotonic()
        worker = threading.Thread(target=run)
        worker.start()
        killed_at = None
        judged_on_victim = 0
        seen_dead: list[float] = []
        if kill:
            while pool.health()[2]["verified"] - before < 20:
                time.sleep(0.02)
            judged_on_victim = pool.health()[2]["verified"] - before
            nodes.kill("victim")
            killed = time.monotonic()
            killed_at = killed - t0

            def watch() -> None:  # when Ray's head marks the node dead
                while alive() > 2 and time.monotonic() - killed < 120:
                    time.sleep(0.1)
                seen_dead.append(time.monotonic() - killed)

            watcher = threading.Thread(target=watch)
            watcher.start()
        worker.join()
        wall = time.monotonic() - t0
        stats = pool.stats()
        if kill:
            watcher.join()
    verdicts = out["verdicts"]
    lost = sum(1 for v in verdicts if v.infra_error) + max(0, len(pairs) - len(verdicts))
    return {
        "kill": kill,
        "samples": len(pairs),
        "verdicts": len(verdicts),
        "lost": lost,
        "duplicates": max(0, len(verdicts) - len(pairs)),
        "misplaced": sum(
            1 for v, (t, _) in zip(verdicts, pairs, strict=False) if v.task_id != t.id
        ),
        "wrong": sum(
            1
            for v, want in zip(verdicts, expect, strict=False)
            if not v.infra_error and v.passed != want
        ),
        "judged_on_victim_before_kill": judged_on_victim,
        "killed_at_s": None if killed_at is None else round(killed_at, 2),
        "wall_s": round(wall, 2),
        "chunks_retried": stats["chunks_retried"],
        "duplicates_dropped": stats["duplicates_dropped"],
        "node_marked_dead_after_kill_s": round(seen_dead[0], 2) if seen_dead else None,
    }


def _reward_worker() -> Any:
    import ray

    @ray.remote(num_cpus=0)
    class RewardWorker:
        def judge(self, tasks: str, samples: list[tuple[str, str]], rounds: int) -> dict[str, Any]:
            from referee.cluster.shared import shared_pool

            pool = shared_pool(tasks, 2)
            t0 = time.monotonic()
            passed = 0
            for _ in range(rounds):
                passed += sum(v.passed for v in asyncio.run(pool.verify(samples)))
            return {
                "s": time.monotonic() - t0,
                "passed": passed,
                "pids": [h["pid"] for h in pool.health()],
            }

        def close(self) -> None:
            from referee.cluster.shared import close_shared_pools

            close_shared_pools()

    return RewardWorker


def shared_pool_run(task_file: Path, gold: list[tuple[str, str]]) -> dict[str, Any]:
    import ray

    from referee.cluster import SandboxPool
    from referee.cluster.named import pool_name

    free = float(ray.available_resources().get("CPU", 0))
    workers = [_reward_worker().remote() for _ in range(4)]
    rounds = 2
    t0 = time.monotonic()
    got = ray.get([w.judge.remote(str(task_file), gold, rounds) for w in workers])
    named_wall = time.monotonic() - t0
    held = free - float(ray.available_resources().get("CPU", 0))
    host = ray.get_actor(pool_name(str(task_file), 2))
    stats = ray.get(host.stats.remote())
    ray.get([w.close.remote() for w in workers])
    t1 = time.monotonic()
    while time.monotonic() - t1 < 60:
        try:
            ray.get_actor(pool_name(str(task_file), 2))
        except ValueError:
            break
        time.sleep(0.25)
    ended_s = time.monotonic() - t1
    samples = 4 * rounds * len(gold)
    # The same samples from one process on a pool of its own (2 actors, the same placement).
    with SandboxPool(str(task_file), actors=2) as pool:
        t2 = time.monotonic()
        for _ in range(4 * rounds):
            asyncio.run(pool.verify(gold))
        direct_wall = time.monotonic() - t2
    return {
        "reward_workers": 4,
        "actors_asked": 2,
        "sandbox_actor_pids": sorted({p for g in got for p in g["pids"]}),
        "cpus_held_by_the_pool": held,
        "per_process_pools_would_hold": 4 * 2,
        "clients_attached": stats["clients"],
        "samples": samples,
        "passed": sum(g["passed"] for g in got),
        # From when every worker had its handle (the host and its actors up) to the last
        # worker's end; the first figure includes making the pool.
        "named_samples_per_s": round(samples / max(g["s"] for g in got), 1),
        "named_samples_per_s_with_start": round(samples / named_wall, 1),
        "direct_samples_per_s": round(samples / direct_wall, 1),
        "host_gone_after_last_detach_s": round(ended_s, 2),
    }


def deadline_run(tasks: list[Any]) -> dict[str, Any]:
    from referee.cluster import SandboxPool

    task = next(t for t in tasks if t.id == "HumanEval/0")
    burst = [(task, task.hidden["reference"] + SLOW)] * 120
    out: dict[str, Any] = {"samples": len(burst), "per_sample_s": 0.25, "workers": 2}
    with SandboxPool([task], actors=2, workers_per_actor=1, placement=["node_a", "node_b"]) as pool:
        for within in (None, 5.0):
            t0 = time.monotonic()
            verdicts = pool.verify_many(burst, within_s=within)
            wall = time.monotonic() - t0
            expired = [v for v in verdicts if v.infra_error and "not run" in v.infra_error]
            out[f"within_{within}"] = {
                "wall_s": round(wall, 2),
                "judged_passed": sum(v.passed for v in verdicts),
                "expired_not_run": len(expired),
                "other_infra": sum(1 for v in verdicts if v.infra_error) - len(expired),
                "failed_not_infra": sum(1 for v in verdicts if not v.passed and not v.infra_error),
            }
        out["actors_expired"] = sum(h["expired"] for h in pool.health())
        out["pool_expired_in_queue"] = pool.stats()["expired_in_queue"]
    return out


def autoscale_run(tasks: list[Any]) -> dict[str, Any]:
    from referee.cluster import SandboxPool

    task = next(t for t in tasks if t.id == "HumanEval/0")
    burst = [(task, task.hidden["reference"] + SLOW)] * 80
    timeline: list[tuple[float, int, int]] = []
    with SandboxPool(
        [task],
        actors=1,
        max_actors=3,
        workers_per_actor=1,
        chunk_size=1,
        scale_up_depth=2.0,
        idle_s=5.0,
        placement="spread",
    ) as pool:
        stop = threading.Event()
        t0 = time.monotonic()

        def watch() -> None:
            while not stop.is_set():
                s = pool.stats()
                timeline.append((round(time.monotonic() - t0, 2), s["actors"], s["pending"]))
                time.sleep(0.25)

        watcher = threading.Thread(target=watch)
        watcher.start()
        verdicts = pool.verify_many(burst)
        burst_s = time.monotonic() - t0
        while pool.stats()["actors"] > 1 and time.monotonic() - t0 < burst_s + 90:
            time.sleep(0.1)
        shrunk_s = time.monotonic() - t0
        stop.set()
        watcher.join()
        stats = pool.stats()
        per_actor = [h["verified"] for h in pool.health()]
    # The anchor: the same burst on one actor that does not scale.
    with SandboxPool([task], actors=1, workers_per_actor=1, chunk_size=1) as fixed:
        t1 = time.monotonic()
        anchor = fixed.verify_many(burst)
        fixed_s = time.monotonic() - t1
    grew = next((t for t, n, _ in timeline if n > 1), None)
    return {
        "samples": len(burst),
        "passed": sum(v.passed for v in verdicts),
        "min_actors": 1,
        "max_actors": 3,
        "peak_actors": max(n for _, n, _ in timeline),
        "first_growth_at_s": grew,
        "burst_wall_s": round(burst_s, 2),
        "one_fixed_actor_wall_s": round(fixed_s, 2),
        "one_fixed_actor_passed": sum(v.passed for v in anchor),
        "back_to_min_at_s": round(shrunk_s, 2),
        "scaled_up": stats["scaled_up"],
        "scaled_down": stats["scaled_down"],
        "verified_by_the_remaining_actor": per_actor,
        "timeline": timeline,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "ray"))
    ap.add_argument(
        "--parts",
        default="node_loss,shared_pool,deadlines,autoscale",
        help="which parts to run; the others are kept from an earlier nodes.json",
    )
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    import ray

    task_file, tasks, _ = humaneval_file()
    gold_pairs = [(t, t.hidden["reference"]) for t in tasks]
    pairs = gold_pairs * 2 + [(t, WRONG) for t in tasks]
    expect = [True] * (2 * len(tasks)) + [False] * len(tasks)
    nodes = Nodes()
    result: dict[str, Any] = {"machine": machine(), "health_check": HEALTH}
    try:
        for name in ("node_a", "node_b", "victim"):
            nodes.start(name)
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ray.init(address=nodes.address, log_to_driver=False, logging_level="WARNING")
        wait_nodes(3)
        if "node_loss" in parts:
            rounds = [node_loss_round(nodes, tasks, pairs, expect, kill=False)]
            print(json.dumps(rounds[-1]), flush=True)
            for _ in range(args.kills):
                rounds.append(node_loss_round(nodes, tasks, pairs, expect, kill=True))
                wait_nodes(2)
                print(json.dumps(rounds[-1]), flush=True)
                nodes.start("victim")  # a fresh node for the next round
                wait_nodes(3)
            result["node_loss"] = rounds
        if "shared_pool" in parts:
            gold = [(t.id, t.hidden["reference"]) for t in tasks]
            result["shared_pool"] = shared_pool_run(task_file, gold)
            print(json.dumps(result["shared_pool"]), flush=True)
        if "deadlines" in parts:
            result["deadlines"] = deadline_run(tasks)
            print(json.dumps(result["deadlines"]), flush=True)
        if "autoscale" in parts:
            result["autoscale"] = autoscale_run(tasks)
            shown = {k: v for k, v in result["autoscale"].items() if k != "timeline"}
            print(json.dumps(shown), flush=True)
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()
        nodes.stop()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    earlier = out / "nodes.json"
    if earlier.exists() and parts != {"node_loss", "shared_pool", "deadlines", "autoscale"}:
        # The parts run now replace theirs; "machine" stays the earlier run's, and
        # "machine_of" says when each part run again was run.
        kept = json.loads(earlier.read_text())
        rerun = {k: v for k, v in result.items() if k != "machine"}
        again = {**kept.get("machine_of", {}), **{part: result["machine"] for part in parts}}
        result = {**kept, **rerun, "machine_of": again}
    (out / "nodes.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out / 'nodes.json'}")


if __name__ == "__main__":
    main()
