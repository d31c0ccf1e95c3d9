"""A bounded load test of `referee serve` at its admission limit, on loopback.

    .venv/bin/python bench/service_load.py [--requests 6000] [--max-s 120] [--clients 32]

A `referee serve` subprocess with a small admission limit (``--queue 16``, 2 workers) and the
164 HumanEval tasks. ``--clients`` concurrent clients (asyncio, one connection each) send
``POST /v1/verify`` requests of 4 canonical solutions until ``--requests`` have been answered
or ``--max-s`` seconds have passed, whichever comes first (the test stops by itself). A client
refused with 429 tries again after ``--backoff-ms`` (not the Retry-After second: it hammers).

Reported: answers by status (and transport errors), whether every 200 held 4 passing
verdicts, and the server's memory sampled every second: its own RSS and its process tree's
PSS (the sandbox workers included), at the start (after a warm-up), the middle and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from _service import humaneval_file, memory, serve


async def hammer(url: str, gold: list[dict[str, str]], args: argparse.Namespace) -> dict[str, Any]:
    statuses: collections.Counter[str] = collections.Counter()
    wrong = 0
    ok_latency: list[float] = []
    answered = 0
    end = time.monotonic() + args.max_s
    next_batch = 0

    async def client() -> None:
        nonlocal answered, wrong, next_batch
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            while answered < args.requests and time.monotonic() < end:
                start = (next_batch * args.per_request) % len(gold)
                next_batch += 1
                samples = [gold[(start + j) % len(gold)] for j in range(args.per_request)]
                t = time.perf_counter()
                try:
                    r = await c.post("/v1/verify", json={"samples": samples})
                except httpx.HTTPError as e:
                    statuses[f"error: {type(e).__name__}"] += 1
                    answered += 1
                    continue
                answered += 1
                statuses[str(r.status_code)] += 1
                if r.status_code == 200:
                    ok_latency.append(time.perf_counter() - t)
                    verdicts = r.json()["verdicts"]
                    if len(verdicts) != len(samples) or not all(v["passed"] for v in verdicts):
                        wrong += 1
                elif r.status_code == 429:
                    await asyncio.sleep(args.backoff_ms / 1000)

    t0 = time.monotonic()
    await asyncio.gather(*(client() for _ in range(args.clients)))
    return {
        "statuses": dict(sorted(statuses.items())),
        "answered": answered,
        "elapsed_s": time.monotonic() - t0,
        "stopped_by": "count" if answered >= args.requests else "time",
        "ok_with_a_wrong_verdict": wrong,
        "ok_p50_ms": statistics.median(ok_latency) * 1000 if ok_latency else None,
        "ok_samples_per_s": len(ok_latency) * args.per_request / (time.monotonic() - t0),
    }


def sample_memory(pid: int, samples: list[dict[str, float]], stop: threading.Event) -> None:
    """The server's memory every second until ``stop``."""
    t0 = time.monotonic()
    while not stop.is_set():
        samples.append({"t": round(time.monotonic() - t0, 1), **memory(pid)})
        stop.wait(1.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=6000, help="answers to collect, at most")
    ap.add_argument("--max-s", type=float, default=120.0, help="seconds, at most")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--queue", type=int, default=16, help="the server's --queue")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--per-request", type=int, default=4)
    ap.add_argument("--backoff-ms", type=float, default=10.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    path, _, gold = humaneval_file()
    runs = []
    for i in range(args.runs):
        serve_args = ["--tasks", str(path), "--workers", str(args.workers)]
        serve_args += ["--queue", str(args.queue)]
        with serve(serve_args) as srv:
            with httpx.Client(base_url=srv.url, timeout=60) as c:  # warm every worker
                for _ in range(3):
                    c.post("/v1/verify", json={"samples": gold[: args.queue]})
            samples: list[dict[str, float]] = []
            stop = threading.Event()
            sampler = threading.Thread(
                target=sample_memory, args=(srv.pid, samples, stop), daemon=True
            )
            sampler.start()
            result = asyncio.run(hammer(srv.url, gold, args))
            stop.set()
            sampler.join()
            samples.append({"t": samples[-1]["t"] + 0.1, **memory(srv.pid)})
            with httpx.Client(base_url=srv.url, timeout=60) as c:
                after = c.post("/v1/verify", json={"samples": gold[: args.queue]})
                result["after_load_all_passed"] = after.status_code == 200 and all(
                    v["passed"] for v in after.json()["verdicts"]
                )
                metrics = c.get("/metrics").text
        result["memory"] = {
            "start": samples[0],
            "middle": samples[len(samples) // 2],
            "end": samples[-1],
            "max_server_rss_mb": max(s["server_rss_mb"] for s in samples),
            "max_tree_pss_mb": max(s["tree_pss_mb"] for s in samples),
            "series": samples,
        }
        result["metrics_5xx_lines"] = [
            line
            for line in metrics.splitlines()
            if line.startswith("referee_http_requests_total") and 'status="5' in line
        ]
        runs.append(result)
        m = result["memory"]
        print(
            f"run {i + 1}: {result['answered']} answers in {result['elapsed_s']:.1f} s "
            f"(stopped by {result['stopped_by']}): {result['statuses']}; wrong 200s "
            f"{result['ok_with_a_wrong_verdict']}; server RSS {m['start']['server_rss_mb']} -> "
            f"{m['middle']['server_rss_mb']} -> {m['end']['server_rss_mb']} MB, tree PSS "
            f"{m['start']['tree_pss_mb']} -> {m['middle']['tree_pss_mb']} -> "
            f"{m['end']['tree_pss_mb']} MB; next batch all passed: "
            f"{result['after_load_all_passed']}",
            flush=True,
        )
    out = save(
        "service_load",
        {
            "machine": machine(),
            "command": "python bench/service_load.py " + " ".join(sys.argv[1:]),
            "settings": vars(args),
            "runs": runs,
        },
    )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
