"""Small verify requests over HTTP against the same verify in-process, in one run, alternating.

    .venv/bin/python bench/small_requests.py [--rounds 7] [--requests 96] [--levels 1,8]
        [--variant NAME=DIR ...]

As ``bench/service_throughput.py`` measures them (bench/RESULTS.md section 9): the 164
HumanEval tasks recorded in the sandbox, requests of 8 canonical solutions (consecutive slices,
cycling), from 1 and 8 concurrent clients (asyncio httpx, one connection each), against the
server's own ``ServiceEngine`` in this process with the same number of sandbox workers. Each
round measures every side once, the order rotating from round to round; the overhead is
computed within each round and the median over rounds is quoted.

``--variant NAME=DIR`` (repeatable): one more `referee serve`, named NAME, whose interpreter
sees DIR first on its ``PYTHONPATH``: a folder holding ``httptools`` and ``uvloop`` (``pip
install --target DIR httptools uvloop``; uvicorn then parses HTTP with httptools and runs on
uvloop), or another checkout's ``src`` (the code before a change). Every server runs the whole
time and they take turns with the in-process side.

Also reported, per side: the CPU of this process and everything below it per sample (the
servers, the sandbox workers and the programs they ran), and each server process's own CPU per
request, split into its event loop's thread and its other threads (the engine's pool), against
the same split of the in-process side (``loop_thread_cpu_ms``, ``other_threads_cpu_ms``; the
in-process loop thread also runs its clients' coroutines), and the HTTP clients' CPU per request
(``client_cpu_ms``). Written to ``bench/out/small_requests.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT, machine
from _service import humaneval_file, serve, tree_cpu_s
from service_throughput import PER_REQUEST, batches, clients_http, clients_inproc, latency_stats


def own_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads_cpu_s(pid: int) -> tuple[float, float]:
    """CPU seconds of ``pid``'s main thread (a server's event loop; here, the loop of the
    in-process side and of the clients) and of all its other threads together (the engine's
    pool, where each sample's verifier code runs)."""
    main = other = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:  # a thread that ended: its time is in the process's, lost here
            continue
        fields = stat.rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        if int(tid) == pid:
            main += ticks
        else:
            other += ticks
    tick = os.sysconf("SC_CLK_TCK")
    return main / tick, other / tick


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--workers", type=int, default=3, help="sandbox workers, every side")
    ap.add_argument("--requests", type=int, default=96, help="8-sample requests per level")
    ap.add_argument("--levels", default="1,8", help="concurrent clients, comma-separated")
    ap.add_argument("--variant", action="append", default=[], help="NAME=DIR: another server")
    ap.add_argument("--out", default=str(OUT / "small_requests.json"))
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    from referee.service.engine import ServiceEngine

    path, tasks, gold = humaneval_file()
    work = batches(gold, args.requests)
    serve_args = ["--tasks", str(path), "--workers", str(args.workers), "--queue", "1024"]
    rounds: list[dict[str, Any]] = []
    with ExitStack() as stack:
        servers = {"http": stack.enter_context(serve(serve_args))}
        for variant in args.variant:
            name, _, first = variant.partition("=")
            env = {"PYTHONPATH": os.pathsep.join([first, os.environ.get("PYTHONPATH", "")])}
            servers[name] = stack.enter_context(serve(serve_args, env=env))
        engine = ServiceEngine(tasks, workers=args.workers)
        stack.callback(engine.close)
        loop = asyncio.new_event_loop()
        stack.callback(loop.close)
        clients = {
            name: [httpx.AsyncClient(base_url=s.url, timeout=120) for _ in range(max(levels))]
            for name, s in servers.items()
        }
        for cs in clients.values():
            for c in cs:
                stack.callback(lambda c=c: loop.run_until_complete(c.aclose()))
        for cs in clients.values():  # warm: every worker, every connection
            loop.run_until_complete(clients_http(cs, batches(gold, 4 * len(cs)), len(cs)))
        loop.run_until_complete(clients_inproc(engine, batches(gold, 32), max(levels)))
        sides = ["engine", *servers]
        for i in range(args.rounds):
            rnd: dict[str, Any] = {}
            order = sides[i % len(sides) :] + sides[: i % len(sides)]
            for n in levels:
                res: dict[str, Any] = {}
                for side in order:
                    cpu0 = tree_cpu_s(os.getpid())
                    srv = servers.get(side)
                    own0 = own_cpu_s(srv.pid) if srv else 0.0
                    split0 = threads_cpu_s(srv.pid if srv else os.getpid())
                    here0 = threads_cpu_s(os.getpid())
                    t = time.perf_counter()
                    if side == "engine":
                        lat = loop.run_until_complete(clients_inproc(engine, work, n))
                    else:
                        lat = loop.run_until_complete(clients_http(clients[side], work, n))
                    res[side] = latency_stats(lat, time.perf_counter() - t)
                    res[side]["cpu_ms"] = (
                        (tree_cpu_s(os.getpid()) - cpu0) / (len(lat) * PER_REQUEST) * 1000
                    )
                    # By thread, ms per request: the server's (or the in-process side's) event
                    # loop and its other threads; for a server, the clients' CPU here too.
                    split = threads_cpu_s(srv.pid if srv else os.getpid())
                    res[side]["loop_thread_cpu_ms"] = (split[0] - split0[0]) / len(lat) * 1000
                    res[side]["other_threads_cpu_ms"] = (split[1] - split0[1]) / len(lat) * 1000
                    if srv:
                        res[side]["server_cpu_ms_per_request"] = (
                            (own_cpu_s(srv.pid) - own0) / len(lat) * 1000
                        )
                        res[side]["client_cpu_ms"] = (
                            (sum(threads_cpu_s(os.getpid())) - sum(here0)) / len(lat) * 1000
                        )
                rnd[str(n)] = res
            rounds.append(rnd)
            print(
                f"round {i + 1}: "
                + "; ".join(
                    f"{n} client(s): "
                    + ", ".join(
                        f"{s} {r[s]['samples_per_s']:.0f}/s p50 {r[s]['p50_ms']:.1f} ms"
                        for s in sides
                    )
                    for n, r in rnd.items()
                ),
                flush=True,
            )

    def med(values: list[float]) -> float:
        return statistics.median(values)

    summary: dict[str, Any] = {}
    for n in map(str, levels):
        per: dict[str, Any] = {}
        for side in sides:
            per[side] = {
                k: round(med([r[n][side][k] for r in rounds]), 3)
                for k in rounds[0][n][side]
                if k != "requests"
            }
        for side in servers:
            per[f"{side}_overhead"] = {
                "throughput": round(
                    med(
                        [
                            r[n]["engine"]["samples_per_s"] / r[n][side]["samples_per_s"] - 1
                            for r in rounds
                        ]
                    ),
                    4,
                ),
                "p50": round(
                    med([r[n][side]["p50_ms"] / r[n]["engine"]["p50_ms"] - 1 for r in rounds]), 4
                ),
                "cpu": round(
                    med([r[n][side]["cpu_ms"] / r[n]["engine"]["cpu_ms"] - 1 for r in rounds]), 4
                ),
                "slower_in_rounds": sum(
                    r[n][side]["samples_per_s"] < r[n]["engine"]["samples_per_s"] for r in rounds
                ),
            }
        summary[n] = per
    result = {
        "machine": machine(),
        "loadavg": os.getloadavg(),
        "command": "python bench/small_requests.py " + " ".join(sys.argv[1:]),
        "settings": vars(args),
        "samples_per_request": PER_REQUEST,
        "median": summary,
        "rounds": rounds,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    for n, per in summary.items():
        for side in servers:
            o = per[f"{side}_overhead"]
            print(
                f"{n} client(s), {side}: throughput {o['throughput']:+.1%}, p50 {o['p50']:+.1%}, "
                f"CPU {o['cpu']:+.1%} over in-process (slower in {o['slower_in_rounds']} of "
                f"{len(rounds)} rounds); server CPU {per[side]['server_cpu_ms_per_request']:.2f} "
                f"ms/request (loop thread {per[side]['loop_thread_cpu_ms']:.2f}, others "
                f"{per[side]['other_threads_cpu_ms']:.2f}; in-process "
                f"{per['engine']['loop_thread_cpu_ms']:.2f}, "
                f"{per['engine']['other_threads_cpu_ms']:.2f}); clients "
                f"{per[side]['client_cpu_ms']:.2f} ms/request"
            )
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
