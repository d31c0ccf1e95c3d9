"""A soak of `referee serve`: every route that matters, for a stated time, and the memory.

    .venv/bin/python bench/soak.py --duration-s 600 [--clients 8] [--every-s 10] [--mix all]

A `referee serve` subprocess (2 sandbox workers, ``--queue 1024`` so nothing is refused) on
127.0.0.1 serves the 164 HumanEval tasks (recorded in the sandbox) and, unless ``--mix
verify``, generated SQL and tool-world tasks. ``--clients`` asyncio httpx clients (one
connection each) loop over a mix of requests, each checked:

* ``verify``: ``POST /v1/verify`` of 1-8 canonical solutions of mixed kinds (function, SQL,
  tool world); every verdict must pass;
* ``session``: ``POST /v1/sessions`` (code), a snapshot, a wrong answer (done, reward < 1), the
  snapshot restored, the right answer (reward 1), ``/verify``, ``DELETE``;
* ``tools``: ``POST /v1/tools`` of each environment; ``GET /v1/tasks``, ``/health``, ``/metrics``;
* ``bad``: a 422 (unknown task id) and a 404 (unknown session).

An "answer" is one judged sample or one session step. After ``--warmup-s`` the server's RSS
(and its process tree's RSS and PSS, sandbox workers included) is sampled every ``--every-s``
with the answers so far; the slope is a least-squares line of RSS on answers over the samples
after warm-up, in MB per 1,000 answers (and per hour at the rate measured). Written to
``bench/out/soak.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT, machine
from _service import descendants, humaneval_file, memory, rss_mb, serve

GENERATE = (sys.executable, "-m", "referee.cli", "tasks", "generate")
DOMAIN_FAMILIES = (("sql-filter", 12), ("sql-join", 12), ("shop-refund", 8))


def task_file(mix: str) -> tuple[Path, list[dict[str, str]], list[dict[str, str]]]:
    """A task file of HumanEval and (``mix`` all) generated domain tasks; the gold samples of
    all, and the HumanEval ones (for sessions)."""
    from referee.tasks.model import read_tasks, write_tasks
    from referee.verify.samples import gold_samples

    he_path, he_tasks, he_gold = humaneval_file()
    tasks = list(he_tasks)
    if mix == "all":
        tmp = Path(tempfile.mkdtemp(prefix="referee-soak-"))
        for family, count in DOMAIN_FAMILIES:
            out = tmp / f"{family}.jsonl"
            subprocess.run(
                [*GENERATE, family, "--count", str(count), "--out", str(out)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            tasks += read_tasks(out)
        path = tmp / "soak.jsonl"
        write_tasks(path, tasks)
    else:
        path = he_path
    return path, list(gold_samples(tasks)), he_gold


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of y on x."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


class Load:
    def __init__(self, gold: list[dict[str, str]], he_gold: list[dict[str, str]]) -> None:
        self.gold = gold
        self.he_gold = he_gold
        self.answers = 0
        self.requests = 0
        self.statuses: collections.Counter[str] = collections.Counter()
        self.wrong: list[str] = []
        self.ops: collections.Counter[str] = collections.Counter()

    def note(self, what: str, ok: bool) -> None:
        if not ok and len(self.wrong) < 20:
            self.wrong.append(what)
        elif not ok:
            self.wrong.append("...")

    async def call(self, c: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
        r = await c.request(method, path, **kw)
        self.requests += 1
        self.statuses[str(r.status_code)] += 1
        return r

    async def verify(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        samples = rng.sample(self.gold, rng.randint(1, 8))
        r = await self.call(c, "POST", "/v1/verify", json={"samples": samples})
        ok = r.status_code == 200 and all(v["passed"] for v in r.json()["verdicts"])
        self.note(f"verify {r.status_code} {r.text[:300]}", ok)
        self.answers += len(samples)

    async def session(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        sample = rng.choice(self.he_gold)
        r = await self.call(
            c, "POST", "/v1/sessions", json={"env": "code", "task_id": sample["task_id"]}
        )
        if r.status_code != 200:
            self.note(f"open {r.status_code} {r.text[:300]}", False)
            return
        sid = r.json()["session_id"]
        base = f"/v1/sessions/{sid}"
        snap = (await self.call(c, "POST", base + "/snapshot")).json()["snapshot_id"]
        wrong = {"role": "assistant", "content": "```python\ndef nothing():\n    return 0\n```"}
        r = await self.call(c, "POST", base + "/step", json={"message": wrong})
        self.note(f"wrong step {r.text[:300]}", r.status_code == 200 and r.json()["reward"] < 1)
        await self.call(c, "POST", base + "/restore", json={"snapshot_id": snap})
        right = {"role": "assistant", "content": "```python\n" + sample["completion"] + "\n```"}
        r = await self.call(c, "POST", base + "/step", json={"message": right})
        self.note(f"right step {r.text[:300]}", r.status_code == 200 and r.json()["reward"] == 1)
        r = await self.call(c, "POST", base + "/verify")
        self.note(f"session verify {r.text[:300]}", r.status_code == 200 and r.json()["passed"])
        r = await self.call(c, "DELETE", base)
        self.note(f"close {r.text[:300]}", r.status_code == 200)
        self.answers += 2

    async def tools(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        env = rng.choice(["code", "sql", "toolworld", "shell"])
        r = await self.call(c, "POST", "/v1/tools", json={"env": env})
        self.note(f"tools {env} {r.text[:300]}", r.status_code == 200)
        for path in ("/v1/tasks", "/health", "/metrics"):
            r = await self.call(c, "GET", path)
            self.note(f"{path} {r.status_code}", r.status_code == 200)

    async def bad(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        r = await self.call(
            c, "POST", "/v1/verify", json={"samples": [{"task_id": "nope", "completion": ""}]}
        )
        self.note(f"unknown task {r.status_code}", r.status_code == 422)
        r = await self.call(c, "POST", "/v1/sessions/" + "A" * 22 + "/verify")
        self.note(f"unknown session {r.status_code}", r.status_code == 404)


MIXES = {
    "all": (("verify", 6), ("session", 2), ("tools", 1), ("bad", 1)),
    "verify": (("verify", 1),),
    "session": (("session", 1),),
}


async def drive(url: str, load: Load, mix: str, clients: int, until: float, seed: int) -> None:
    ops, weights = zip(*MIXES[mix], strict=True)

    async def client(i: int) -> None:
        rng = random.Random(seed + i)
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            while time.monotonic() < until:
                op = rng.choices(ops, weights)[0]
                load.ops[op] += 1
                try:
                    await getattr(load, op)(c, rng)
                except httpx.HTTPError as e:
                    load.statuses[f"error: {type(e).__name__}"] += 1
                    load.note(f"{op}: {type(e).__name__}: {e}", False)

    await asyncio.gather(*(client(i) for i in range(clients)))


def tree_memory(pid: int) -> dict[str, float]:
    out = memory(pid)
    kids = descendants(pid)
    out["workers_rss_mb"] = round(sum(rss_mb(p) for p in kids), 1)
    try:
        out["server_threads"] = len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        out["server_threads"] = 0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration-s", type=float, default=600.0)
    ap.add_argument("--warmup-s", type=float, default=30.0)
    ap.add_argument("--every-s", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mix", choices=sorted(MIXES), default="all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--serve-arg", action="append", default=[], help="passed to referee serve")
    ap.add_argument(
        "--server-path", default=None, help="put first on the server's PYTHONPATH (other code)"
    )
    ap.add_argument("--out", default=str(OUT / "soak.json"))
    args = ap.parse_args()

    path, gold, he_gold = task_file(args.mix)
    load = Load(gold, he_gold)
    series: list[dict[str, float]] = []
    serve_args = ["--tasks", str(path), "--workers", str(args.workers), "--queue", "1024"]
    env = None
    if args.server_path:
        env = {"PYTHONPATH": os.pathsep.join([args.server_path, os.environ.get("PYTHONPATH", "")])}
    with serve(serve_args + args.serve_arg, env=env) as srv:
        stop = threading.Event()
        t0 = time.monotonic()
        warm_end = t0 + args.warmup_s

        def sample() -> None:
            stop.wait(max(0.0, warm_end - time.monotonic()))
            while not stop.is_set():
                row = {
                    "t": round(time.monotonic() - t0, 1),
                    "answers": load.answers,
                    "requests": load.requests,
                    **tree_memory(srv.pid),
                }
                series.append(row)
                print(
                    f"t={row['t']:7.1f}s answers={row['answers']:8d} requests={row['requests']:8d} "
                    f"server RSS {row['server_rss_mb']:6.1f} MB  workers RSS "
                    f"{row['workers_rss_mb']:6.1f} MB  tree PSS {row['tree_pss_mb']:6.1f} MB "
                    f"fds {row['server_fds']} threads {row['server_threads']}",
                    flush=True,
                )
                stop.wait(args.every_s)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        asyncio.run(drive(srv.url, load, args.mix, args.clients, t0 + args.duration_s, args.seed))
        stop.set()
        sampler.join()
        series.append(
            {
                "t": round(time.monotonic() - t0, 1),
                "answers": load.answers,
                "requests": load.requests,
                **tree_memory(srv.pid),
            }
        )
    elapsed = time.monotonic() - t0
    fits = {}
    for key in ("server_rss_mb", "workers_rss_mb", "tree_pss_mb"):
        s = slope([(row["answers"] / 1000, row[key]) for row in series])
        fits[key] = {
            "mb_per_1000_answers": None if s is None else round(s, 4),
            "mb_per_hour": None if s is None else round(s * load.answers / elapsed * 3.6, 2),
        }
    # The second half alone: a slope that levels off shows here.
    half = series[len(series) // 2 :]
    s2 = slope([(row["answers"] / 1000, row["server_rss_mb"]) for row in half])
    result = {
        "machine": machine(),
        "loadavg": os.getloadavg(),
        "command": "python bench/soak.py " + " ".join(sys.argv[1:]),
        "settings": vars(args),
        "elapsed_s": round(elapsed, 1),
        "answers": load.answers,
        "requests": load.requests,
        "answers_per_s": round(load.answers / elapsed, 1),
        "ops": dict(load.ops),
        "statuses": dict(sorted(load.statuses.items())),
        "wrong": load.wrong,
        "slope": fits,
        "server_rss_second_half_mb_per_1000_answers": None if s2 is None else round(s2, 4),
        "series": series,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{load.answers} answers, {load.requests} requests in {elapsed:.0f} s "
        f"({result['answers_per_s']}/s); statuses {result['statuses']}; wrong {len(load.wrong)}"
    )
    for key, fit in fits.items():
        print(
            f"slope {key}: {fit['mb_per_1000_answers']} MB per 1,000 answers "
            f"({fit['mb_per_hour']} MB/h at this rate)"
        )
    print(f"server RSS slope, second half: {s2} MB per 1,000 answers; saved {args.out}")


if __name__ == "__main__":
    main()
