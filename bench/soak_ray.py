"""A compressed soak of a Ray pool actor (``referee.cluster.SandboxActor``): its memory over a
million answers.

    nice -n 10 .venv/bin/python bench/soak_ray.py --answers 1000000 --warmup-answers 100000 \\
        --out bench/results/load/soak_ray_1m.json [--probe] [--chunk 64]

A local Ray (``ray.init`` with 2 CPUs, no dashboard, Ray's memory monitor off: it counts the
whole shared machine) and a :class:`referee.cluster.SandboxPool` of one actor on the same task
file as ``bench/soak.py --mix compressed`` (HumanEval, SQL, tool world, reasoning-gym).
``--clients`` threads of the driver loop over the same mix of work as the service's compressed
soak, through the pool's public API: batches of ``--batch`` reasoning answers (every tenth one
wrong), single answers, 1-8 sandboxed/SQL/tool-world answers, code sessions on the actor (open,
snapshot, a wrong step, restore, the right step, verify, close); each verdict checked. An answer
is a judged sample or a session step.

Sampled every ``--every-s``: the actor process's RSS and PSS, its sandbox workers' RSS, the
driver's RSS (the pool lives in the trainer's process), and with ``--probe`` the actor's
allocator figures (``bench/probe/sitecustomize.py``, put on the Ray workers' ``PYTHONPATH``).
The slope after ``--warmup-answers`` is fitted as in ``bench/soak.py``; JSON and CSV are written.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT, machine
from _service import anon_mb, descendants, pss_mb, rss_mb
from soak import PROBE, fits_of, probe_row, task_file, write_result

MIX = (("cheap_batch", 20), ("small", 30), ("verify", 20), ("session", 10))


class RayLoad:
    def __init__(self, pool: Any, tasks: dict[str, Any], gold: Any, he_gold: Any, cheap: Any):
        self.pool = pool
        self.tasks = tasks
        self.gold = gold
        self.he_gold = he_gold
        self.cheap = cheap
        self.answers = 0
        self.calls = 0
        self.wrong: list[str] = []
        self.ops: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()

    def note(self, what: str, ok: bool) -> None:
        if not ok:
            with self.lock:
                self.wrong.append(what if len(self.wrong) < 20 else "...")

    def count(self, answers: int, calls: int) -> None:
        with self.lock:
            self.answers += answers
            self.calls += calls

    def judged(self, samples: list[dict[str, str]]) -> list[Any]:
        return self.pool.verify_many(
            [(self.tasks[x["task_id"]], x["completion"]) for x in samples], deadline_s=60
        )

    def cheap_batch(self, rng: random.Random, batch: int) -> None:
        samples = [dict(x) for x in rng.choices(self.cheap, k=batch)]
        wrong = set(range(0, batch, 10))
        for i in wrong:
            samples[i]["completion"] = "<answer>not it</answer>"
        verdicts = self.judged(samples)
        ok = all(v.passed == (i not in wrong) for i, v in enumerate(verdicts))
        self.note(f"cheap batch: {[v.passed for v in verdicts][:20]}", ok)
        self.count(batch, 1)

    def small(self, rng: random.Random) -> None:
        [v] = self.judged([rng.choice(self.cheap)])
        self.note(f"small: {v}", v.passed)
        self.count(1, 1)

    def verify(self, rng: random.Random) -> None:
        samples = rng.sample(self.gold, rng.randint(1, 8))
        verdicts = self.judged(samples)
        bad = [v for v in verdicts if not v.passed]
        self.note(f"verify: {bad[:1]}", not bad)
        self.count(len(samples), 1)

    def session(self, rng: random.Random) -> None:
        sample = rng.choice(self.he_gold)
        session = self.pool.open_session("code", sample["task_id"])

        async def episode() -> None:
            try:
                snap = await session.snapshot()
                wrong = {"role": "assistant", "content": "```python\ndef f():\n    return 0\n```"}
                r = await session.step(wrong)
                self.note(f"wrong step {r}", r["done"] is True)
                await session.restore(snap)
                right = {
                    "role": "assistant",
                    "content": "```python\n" + sample["completion"] + "\n```",
                }
                r = await session.step(right)
                self.note(f"right step {r}", r["done"] is True)
                v = await session.verify()
                self.note(f"session verify {v}", v.passed)
            finally:
                await session.close()

        asyncio.run(episode())
        self.count(2, 7)


ROW = re.compile(
    r"t=\s*(?P<t>[\d.]+)s answers=\s*(?P<answers>\d+) calls=\s*(?P<requests>\d+) actor RSS"
    r"\s+(?P<actor_rss_mb>[\d.]+) MB PSS\s+(?P<actor_pss_mb>[\d.]+) tree PSS"
    r"\s+(?P<actor_tree_pss_mb>[\d.]+) driver RSS\s+(?P<driver_rss_mb>[\d.]+) threads"
    r" (?P<actor_threads>\d+)(?: malloc in use (?P<malloc_in_use_mb>[\d.]+) free"
    r" (?P<malloc_free_mb>[\d.]+) arenas (?P<arenas>\d+))?"
)


def from_log(log: Path, warmup_answers: int, out: Path) -> None:
    """The JSON and CSV of a soak stopped before its end, from the rows it printed."""
    series = [
        {k: float(v) for k, v in m.groupdict().items() if v is not None}
        for m in map(ROW.match, log.read_text().splitlines())
        if m
    ]
    result = {
        "from_log": str(log),
        "note": "the soak was stopped before its end; rows as it printed them",
        "answers": int(series[-1]["answers"]),
        "calls": int(series[-1]["requests"]),
        "elapsed_s": series[-1]["t"],
        "after_warmup_mb_per_1000_answers": fits_of(series, warmup_answers),
        "series": series,
    }
    write_result(out, result, list(series[-1]))
    for key, fit in result["after_warmup_mb_per_1000_answers"].items():
        print(
            f"{key}: {fit['slope']} ({fit['ci95']}; blocks {fit['blocks']}) "
            f"{fit['first']} -> {fit['last']}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from-log", default=None, help="rows printed by a stopped soak: fit them")
    ap.add_argument("--answers", type=int, default=1_000_000)
    ap.add_argument("--warmup-answers", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--max-s", type=float, default=None, help="stop the load after this long")
    ap.add_argument("--chunk", type=int, default=None, help="the pool's chunk_size")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="sandbox workers in the actor")
    ap.add_argument("--every-s", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--trim-every-s", type=float, default=0.0)
    ap.add_argument("--arena-max", type=int, default=None)
    ap.add_argument("--out", default=str(OUT / "soak_ray.json"))
    args = ap.parse_args()
    if args.from_log:
        from_log(Path(args.from_log), args.warmup_answers, Path(args.out))
        return

    path, gold, he_gold, cheap = task_file("compressed")
    # The actor's environment is this process's (a local Ray starts its workers from it).
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ["RAY_memory_monitor_refresh_ms"] = "0"  # noqa: SIM112 (Ray spells it so)
    os.environ["RAY_AUTH_MODE"] = "disabled"
    src = str(Path(__file__).resolve().parents[1] / "src")
    paths = [src, os.environ.get("PYTHONPATH", "")]
    probe_dir: Path | None = None
    if args.probe or args.trim_every_s > 0:
        probe_dir = Path(tempfile.mkdtemp(prefix="referee-soak-ray-probe-"))
        paths.insert(0, str(PROBE))
        os.environ["REFEREE_SOAK_PROBE"] = str(probe_dir)
        os.environ["REFEREE_SOAK_TRIM_EVERY_S"] = str(args.trim_every_s)
        os.environ["REFEREE_SOAK_PROBE_EVERY_S"] = "2"
    if args.arena_max is not None:
        os.environ["MALLOC_ARENA_MAX"] = str(args.arena_max)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)

    import ray

    # `ray start` in a process group of its own (it waits for its raylet patiently, where
    # ray.init's local start timed out at load ~10), stopped by killing exactly that group.
    tmp = Path(tempfile.mkdtemp(prefix="referee-soak-ray-", dir="/tmp"))
    head = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--port=0",
         "--num-cpus=2", f"--temp-dir={tmp}", "--disable-usage-stats",
         "--include-dashboard=false", "--object-store-memory=150000000"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    said, _ = head.communicate(timeout=600)
    m = re.search(r"ray start --address='([^']+)'", said)
    if head.returncode != 0 or not m:
        raise SystemExit(f"ray start --head failed: {said[-2000:]}")
    try:
        ray.init(address=m.group(1), log_to_driver=False, logging_level="WARNING")
        run(args, ray, path, gold, he_gold, cheap, probe_dir)
    finally:
        ray.shutdown()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(head.pid, sig)
            time.sleep(3)
        shutil.rmtree(tmp, ignore_errors=True)


def run(
    args: argparse.Namespace,
    ray: Any,
    path: Path,
    gold: Any,
    he_gold: Any,
    cheap: Any,
    probe_dir: Path | None,
) -> None:
    from referee.cluster import SandboxPool
    from referee.tasks.model import read_tasks

    tasks = {t.id: t for t in read_tasks(path)}
    series: list[dict[str, Any]] = []
    t0 = time.monotonic()
    with SandboxPool(
        str(path),
        actors=1,
        workers_per_actor=args.workers,
        num_cpus_per_actor=1,
        chunk_size=args.chunk,
        ready_timeout_s=300,
    ) as pool:
        [health] = pool.health()
        pid = int(health["pid"])
        load = RayLoad(pool, tasks, gold, he_gold, cheap)
        stop = threading.Event()

        def row_now() -> dict[str, Any]:
            kids = descendants(pid)
            return {
                "t": round(time.monotonic() - t0, 1),
                "answers": load.answers,
                "requests": load.calls,
                "actor_rss_mb": round(rss_mb(pid), 2),
                "actor_anon_mb": round(anon_mb(pid), 2),
                "actor_pss_mb": round(pss_mb(pid), 2),
                "actor_tree_pss_mb": round(sum(pss_mb(p) for p in [pid, *kids]), 1),
                "workers_rss_mb": round(sum(rss_mb(p) for p in kids), 1),
                "driver_rss_mb": round(rss_mb(os.getpid()), 2),
                "actor_threads": len(os.listdir(f"/proc/{pid}/task")),
                **probe_row(probe_dir, pid),
                "loadavg_1m": os.getloadavg()[0],
            }

        def sample() -> None:
            while not stop.is_set():
                row = row_now()
                series.append(row)
                print(
                    f"t={row['t']:7.1f}s answers={row['answers']:8d} calls={row['requests']:7d} "
                    f"actor RSS {row['actor_rss_mb']:6.1f} MB PSS {row['actor_pss_mb']:6.1f} "
                    f"tree PSS {row['actor_tree_pss_mb']:6.1f} driver RSS "
                    f"{row['driver_rss_mb']:6.1f} threads {row['actor_threads']}"
                    + (
                        f" malloc in use {row['malloc_in_use_mb']:.1f} free "
                        f"{row['malloc_free_mb']:.1f} arenas {row['arenas']}"
                        if "malloc_in_use_mb" in row
                        else ""
                    ),
                    flush=True,
                )
                stop.wait(args.every_s)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        ops, weights = zip(*MIX, strict=True)

        def client(i: int) -> None:
            rng = random.Random(args.seed + i)
            while load.answers < args.answers and (
                args.max_s is None or time.monotonic() - t0 < args.max_s
            ):
                op = rng.choices(ops, weights)[0]
                with load.lock:
                    load.ops[op] += 1
                try:
                    if op == "cheap_batch":
                        load.cheap_batch(rng, args.batch)
                    else:
                        getattr(load, op)(rng)
                except Exception as e:  # recorded, and the soak goes on
                    load.note(f"{op}: {type(e).__name__}: {str(e)[:300]}", False)

        with ThreadPoolExecutor(args.clients) as ex:
            list(ex.map(client, range(args.clients)))
        stop.set()
        sampler.join()
        series.append(row_now())
        stats = pool.stats()
    elapsed = time.monotonic() - t0
    after = fits_of(series, args.warmup_answers)
    result = {
        "machine": machine(),
        "loadavg": os.getloadavg(),
        "command": "python bench/soak_ray.py " + " ".join(sys.argv[1:]),
        "settings": vars(args),
        "ray": ray.__version__,
        "elapsed_s": round(elapsed, 1),
        "answers": load.answers,
        "calls": load.calls,
        "answers_per_s": round(load.answers / elapsed, 1),
        "ops": dict(load.ops),
        "pool_stats": stats,
        "wrong": load.wrong,
        "after_warmup_mb_per_1000_answers": after,
        "after_warmup_mb_per_1000_calls": fits_of(series, args.warmup_answers, "requests"),
        "series": series,
    }
    out = Path(args.out)
    write_result(out, result, [k for k in series[-1] if not isinstance(series[-1][k], list)])
    print(
        f"{load.answers} answers in {elapsed:.0f} s ({result['answers_per_s']}/s); "
        f"wrong {len(load.wrong)} {load.wrong[:3]}"
    )
    for key, fit in after.items():
        print(
            f"after {args.warmup_answers} answers, {key}: {fit['slope']} MB per 1,000 answers "
            f"(95 % {fit['ci95']}; 20 blocks {fit['blocks']}); {fit['first']} -> {fit['last']}"
        )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
