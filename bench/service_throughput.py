"""`referee serve` throughput and latency against the same work in-process, in one run.

    .venv/bin/python bench/service_throughput.py [--rounds 5] [--workers 3] [--requests 96]

The 164 HumanEval tasks (recorded in the sandbox) and their canonical solutions:

* **whole batch**: all 164 samples in one ``POST /v1/verify`` to a `referee serve` subprocess on
  loopback (its own interpreter: client and server share no GIL), against the same 164 judged
  in this process by a ``ServiceEngine`` (the server's engine, without HTTP) with the same
  number of sandbox workers, and by a bare ``VerifierSet`` in a thread pool of that size;
* **CPU**: for each measurement, the CPU seconds of this process and every process below it (the
  server, both sides' sandbox workers and the programs they ran) per sample: what HTTP adds in
  work, which on a machine whose cores are all busy is what it costs in throughput, and far
  less noisy than the throughput itself;
* **latency**: ``--requests`` requests of 8 samples (consecutive slices of the 164, cycling)
  from 1, 8 and 32 concurrent clients (asyncio, one httpx client each, so one connection
  each), p50/p99 per request and samples/s; the in-process anchor runs the same slices through
  ``ServiceEngine.verify`` from as many concurrent coroutines.

Each round runs every measurement once, HTTP and in-process alternating (which goes first
alternates too), so the machine's noise hits both alike. Reported: medians over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, pct, save
from _service import humaneval_file, serve, tree_cpu_s

LEVELS = (1, 8, 32)
PER_REQUEST = 8


def batches(gold: list[dict[str, str]], n: int) -> list[list[dict[str, str]]]:
    out = []
    for i in range(n):
        start = (i * PER_REQUEST) % len(gold)
        out.append([gold[(start + j) % len(gold)] for j in range(PER_REQUEST)])
    return out


async def clients_http(
    clients: list[httpx.AsyncClient], work: list[list[dict[str, str]]], n_clients: int
) -> list[float]:
    """Each of the first ``n_clients`` clients takes the next request until none is left;
    latencies in seconds. The clients are made (and connected) before, outside the timing."""
    todo = list(reversed(work))
    latencies: list[float] = []

    async def client(c: httpx.AsyncClient) -> None:
        while todo:
            samples = todo.pop()
            t = time.perf_counter()
            r = await c.post("/v1/verify", json={"samples": samples})
            latencies.append(time.perf_counter() - t)
            check(
                r.status_code == 200 and all(v["passed"] for v in r.json()["verdicts"]),
                r.text,
            )

    await asyncio.gather(*(client(c) for c in clients[:n_clients]))
    return latencies


async def clients_inproc(
    engine: Any, work: list[list[dict[str, str]]], n_clients: int
) -> list[float]:
    todo = list(reversed(work))
    latencies: list[float] = []

    async def client() -> None:
        while todo:
            samples = todo.pop()
            t = time.perf_counter()
            verdicts = await engine.verify([(s["task_id"], s["completion"]) for s in samples])
            latencies.append(time.perf_counter() - t)
            check(all(v.passed for v in verdicts), verdicts)

    await asyncio.gather(*(client() for _ in range(n_clients)))
    return latencies


def check(ok: bool, what: object) -> None:
    if not ok:
        raise RuntimeError(f"unexpected result: {str(what)[:500]}")


def latency_stats(latencies: list[float], elapsed: float) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": pct(latencies, 0.99) * 1000,
        "samples_per_s": len(latencies) * PER_REQUEST / elapsed,
        "requests": len(latencies),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=3, help="sandbox workers, both sides")
    ap.add_argument("--requests", type=int, default=96, help="8-sample requests per level")
    args = ap.parse_args()

    from referee.service.engine import ServiceEngine
    from referee.verify.dispatch import VerifierSet

    path, tasks, gold = humaneval_file()
    by_id = {t.id: t for t in tasks}
    work = batches(gold, args.requests)
    samples = [(s["task_id"], s["completion"]) for s in gold]
    rounds: list[dict[str, Any]] = []
    serve_args = ["--tasks", str(path), "--workers", str(args.workers), "--queue", "1024"]
    with serve(serve_args) as srv, httpx.Client(base_url=srv.url, timeout=120) as http:
        engine = ServiceEngine(tasks, workers=args.workers)
        vset = VerifierSet(engine.sandbox)  # a bare VerifierSet over the same sandbox
        pool = ThreadPoolExecutor(args.workers)
        loop = asyncio.new_event_loop()
        clients = [httpx.AsyncClient(base_url=srv.url, timeout=120) for _ in range(max(LEVELS))]
        try:

            def whole_http() -> float:
                t = time.perf_counter()
                r = http.post("/v1/verify", json={"samples": gold})
                elapsed = time.perf_counter() - t
                check(r.status_code == 200, r.text[:300])
                check(sum(v["passed"] for v in r.json()["verdicts"]) == len(gold), "not all passed")
                return elapsed

            def whole_engine() -> float:
                t = time.perf_counter()
                verdicts = loop.run_until_complete(engine.verify(samples))
                elapsed = time.perf_counter() - t
                check(all(v.passed for v in verdicts), "not all passed")
                return elapsed

            def whole_vset() -> float:
                t = time.perf_counter()
                verdicts = list(pool.map(lambda s: vset.verify(by_id[s[0]], s[1]), samples))
                elapsed = time.perf_counter() - t
                check(all(v.passed for v in verdicts), "not all passed")
                return elapsed

            # Warm both sides: every worker started, every code path run once, every client
            # connected.
            whole_http(), whole_engine(), whole_vset()
            loop.run_until_complete(clients_http(clients, batches(gold, len(clients)), 32))
            for i in range(args.rounds):
                rnd: dict[str, Any] = {"whole": {}, "latency": {}}
                order = [("http", whole_http), ("engine", whole_engine), ("vset", whole_vset)]
                if i % 2:
                    order.reverse()
                for name, fn in order:
                    cpu0 = tree_cpu_s(os.getpid())
                    rnd["whole"][name] = len(gold) / fn()
                    rnd["whole"][f"{name}_cpu_ms"] = (
                        (tree_cpu_s(os.getpid()) - cpu0) / len(gold) * 1000
                    )
                for n in LEVELS:
                    res = {}
                    sides = ["http", "engine"] if i % 2 == 0 else ["engine", "http"]
                    for side in sides:
                        cpu0 = tree_cpu_s(os.getpid())
                        t = time.perf_counter()
                        if side == "http":
                            lat = loop.run_until_complete(clients_http(clients, work, n))
                        else:
                            lat = loop.run_until_complete(clients_inproc(engine, work, n))
                        res[side] = latency_stats(lat, time.perf_counter() - t)
                        res[side]["cpu_ms"] = (
                            (tree_cpu_s(os.getpid()) - cpu0) / (len(lat) * PER_REQUEST) * 1000
                        )
                    rnd["latency"][n] = res
                rounds.append(rnd)
                w = rnd["whole"]
                print(
                    f"round {i + 1}: whole batch http {w['http']:.0f}/s, engine "
                    f"{w['engine']:.0f}/s, VerifierSet {w['vset']:.0f}/s; "
                    + "; ".join(
                        f"{n} clients http p50 {r['http']['p50_ms']:.0f} ms "
                        f"({r['http']['samples_per_s']:.0f}/s) vs {r['engine']['p50_ms']:.0f} ms "
                        f"({r['engine']['samples_per_s']:.0f}/s)"
                        for n, r in rnd["latency"].items()
                    ),
                    flush=True,
                )
        finally:
            for c in clients:
                loop.run_until_complete(c.aclose())
            loop.close()
            pool.shutdown()
            engine.close()

    def med(get: Any) -> float:
        return statistics.median(get(r) for r in rounds)

    # Overheads are per round (both sides measured moments apart), then the median of those.
    keys = ("http", "engine", "vset", "http_cpu_ms", "engine_cpu_ms", "vset_cpu_ms")
    whole = {k: med(lambda r, k=k: r["whole"][k]) for k in keys}
    whole["cpu_overhead_vs_engine"] = med(
        lambda r: r["whole"]["http_cpu_ms"] / r["whole"]["engine_cpu_ms"] - 1
    )
    whole["overhead_vs_engine"] = med(lambda r: r["whole"]["engine"] / r["whole"]["http"] - 1)
    whole["overhead_vs_vset"] = med(lambda r: r["whole"]["vset"] / r["whole"]["http"] - 1)
    latency: dict[int, dict[str, dict[str, float]]] = {}
    for n in LEVELS:
        latency[n] = {
            side: {
                k: med(lambda r, n=n, side=side, k=k: r["latency"][n][side][k])
                for k in ("p50_ms", "p99_ms", "samples_per_s", "cpu_ms")
            }
            for side in ("http", "engine")
        }
        latency[n]["overhead"] = {
            "samples_per_s": med(
                lambda r, n=n: (
                    r["latency"][n]["engine"]["samples_per_s"]
                    / r["latency"][n]["http"]["samples_per_s"]
                    - 1
                )
            ),
            "cpu": med(
                lambda r, n=n: (
                    r["latency"][n]["http"]["cpu_ms"] / r["latency"][n]["engine"]["cpu_ms"] - 1
                )
            ),
            "p50": med(
                lambda r, n=n: (
                    r["latency"][n]["http"]["p50_ms"] / r["latency"][n]["engine"]["p50_ms"] - 1
                )
            ),
        }
    result = {
        "machine": machine(),
        "command": "python bench/service_throughput.py " + " ".join(sys.argv[1:]),
        "workers": args.workers,
        "requests_per_level": args.requests,
        "samples_per_request": PER_REQUEST,
        "server": "referee serve subprocess on 127.0.0.1 (own interpreter), --no-auth",
        "median": {"whole_batch_samples_per_s": whole, "latency": latency},
        "rounds": rounds,
    }
    out = save("service_throughput", result)
    print(
        "\n| what | HTTP | in-process ServiceEngine | HTTP overhead (median of rounds) |"
        "\n|---|---|---|---|"
    )
    print(
        f"| whole batch (164): samples/s; CPU ms/sample | {whole['http']:.0f}; "
        f"{whole['http_cpu_ms']:.2f} | {whole['engine']:.0f}; {whole['engine_cpu_ms']:.2f} "
        f"(bare VerifierSet {whole['vset']:.0f}; {whole['vset_cpu_ms']:.2f}) | "
        f"throughput {whole['overhead_vs_engine']:+.1%}, CPU "
        f"{whole['cpu_overhead_vs_engine']:+.1%} |"
    )
    for n, r in latency.items():
        h, e, o = r["http"], r["engine"], r["overhead"]
        print(
            f"| {n} client(s), 8/request: p50 / p99 ms; samples/s; CPU ms/sample | "
            f"{h['p50_ms']:.0f} / {h['p99_ms']:.0f}; {h['samples_per_s']:.0f}; {h['cpu_ms']:.2f} | "
            f"{e['p50_ms']:.0f} / {e['p99_ms']:.0f}; {e['samples_per_s']:.0f}; {e['cpu_ms']:.2f} | "
            f"throughput {o['samples_per_s']:+.1%}, p50 {o['p50']:+.1%}, CPU {o['cpu']:+.1%} |"
        )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
