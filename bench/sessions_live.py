"""A thousand live multi-turn sessions on one `referee serve`: memory per session, step latency.

    .venv/bin/python bench/sessions_live.py [--sessions 1000] [--steps 400] [--clients 8]

A `referee serve` subprocess (2 sandbox workers, ``--max-sessions`` = ``--sessions``,
``--session-ttl`` 3600 so none expires) on 127.0.0.1 serves HumanEval tasks (recorded in the
sandbox) and generated shell (``ops-permissions``), SQL (``sql-filter``) and tool-world
(``shop-refund``) tasks. Then, with ``--clients`` concurrent httpx clients:

1. ``--sessions`` sessions are opened, the environments of ``--envs`` in turn (default all
   four: ``code`` multi-turn with its workspace, ``shell``, ``sql``, ``toolworld``); the
   server's RSS, its process tree's PSS and its process count before and after give the
   memory per idle session;
2. ``--steps`` tool steps on sessions picked at random (``code``: ``list_files``; ``shell``:
   ``list_processes``; ``sql``: ``run_query`` of a SELECT on the sample database;
   ``toolworld``: ``find_customer``), each checked (200, a tool message back): p50/p99 latency
   with every session open;
3. one more session: it must get 429 with ``Retry-After``;
4. every session verified (``POST .../verify``: 200 with a verdict: nothing lost), then
   closed; memory after.

Written to ``bench/out/sessions_live.json`` (``--out``).
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
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT, machine, pct
from _service import humaneval_file, memory, serve

ENVS = ("code", "shell", "sql", "toolworld")
GENERATE = (sys.executable, "-m", "referee.cli", "tasks", "generate")
FAMILIES = {"shell": "ops-permissions", "sql": "sql-filter", "toolworld": "shop-refund"}


def task_file() -> tuple[Path, dict[str, list[str]]]:
    """One task file with every environment's tasks, and the task ids by environment."""
    from referee.tasks.model import read_tasks, write_tasks

    _, he_tasks, _ = humaneval_file()
    tmp = Path(tempfile.mkdtemp(prefix="referee-sessions-"))
    tasks = list(he_tasks[:40])
    ids = {"code": [t.id for t in tasks]}
    for env, family in FAMILIES.items():
        out = tmp / f"{family}.jsonl"
        subprocess.run(
            [*GENERATE, family, "--count", "20", "--out", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        mine = read_tasks(out)
        ids[env] = [t.id for t in mine]
        tasks += mine
    path = tmp / "sessions.jsonl"
    write_tasks(path, tasks)
    return path, ids


def tool_step(env: str) -> dict[str, Any]:
    name, args = {
        "code": ("list_files", {"path": "."}),
        "shell": ("list_processes", {}),
        "sql": ("run_query", {"query": "SELECT 1 AS one"}),
        "toolworld": ("find_customer", {"email": "nobody@example.com"}),
    }[env]
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def open_body(env: str, task_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {"env": env, "task_id": task_id}
    if env == "code":  # a function task is single-turn by default: ask for the workspace
        body["options"] = {"single_turn": False}
    return body


async def pooled(n: int, clients: int, work: Any) -> None:
    """``work(i)`` for i in range(n), ``clients`` at a time."""
    it = iter(range(n))

    async def worker() -> None:
        for i in it:
            await work(i)

    await asyncio.gather(*(worker() for _ in range(clients)))


async def run(
    url: str, ids: dict[str, list[str]], args: argparse.Namespace, pid: int
) -> dict[str, Any]:
    rng = random.Random(args.seed)
    out: dict[str, Any] = {"problems": []}
    problems: list[str] = out["problems"]
    sessions: list[tuple[str, str]] = []
    open_s: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=300) as c:
        out["memory_before"] = memory(pid)

        async def open_one(i: int) -> None:
            env = args.envs[i % len(args.envs)]
            task_id = ids[env][(i // len(args.envs)) % len(ids[env])]
            t = time.perf_counter()
            r = await c.post("/v1/sessions", json=open_body(env, task_id))
            open_s.append(time.perf_counter() - t)
            if r.status_code != 200:
                problems.append(f"open {env} {r.status_code} {r.text[:200]}")
                return
            sessions.append((env, r.json()["session_id"]))

        t0 = time.perf_counter()
        await pooled(args.sessions, args.clients, open_one)
        out["open_s"] = round(time.perf_counter() - t0, 1)
        out["opened"] = len(sessions)
        out["open_latency_ms"] = {
            "p50": round(pct(open_s, 0.5) * 1000, 1),
            "p99": round(pct(open_s, 0.99) * 1000, 1),
        }
        await asyncio.sleep(2)
        out["memory_open"] = memory(pid)
        health = (await c.get("/health")).json()
        out["health_sessions"] = health["sessions"]

        step_s: dict[str, list[float]] = collections.defaultdict(list)

        async def step_one(i: int) -> None:
            env, sid = rng.choice(sessions)
            t = time.perf_counter()
            r = await c.post(f"/v1/sessions/{sid}/step", json={"message": tool_step(env)})
            step_s[env].append(time.perf_counter() - t)
            ok = r.status_code == 200 and r.json()["messages"] and not r.json()["done"]
            if not ok:
                problems.append(f"step {env} {r.status_code} {r.text[:200]}")

        t0 = time.perf_counter()
        await pooled(args.steps, args.clients, step_one)
        out["steps_s"] = round(time.perf_counter() - t0, 1)
        every = [x for xs in step_s.values() for x in xs]
        out["step_latency_ms"] = {
            env: {
                "n": len(xs),
                "p50": round(pct(xs, 0.5) * 1000, 1),
                "p99": round(pct(xs, 0.99) * 1000, 1),
            }
            for env, xs in sorted({**step_s, "all": every}.items())
        }
        out["memory_after_steps"] = memory(pid)

        env = args.envs[0]
        r = await c.post("/v1/sessions", json=open_body(env, ids[env][0]))
        out["over_cap"] = {"status": r.status_code, "retry_after": r.headers.get("retry-after")}

        verdicts: collections.Counter[str] = collections.Counter()

        async def verify_one(i: int) -> None:
            env, sid = sessions[i]
            r = await c.post(f"/v1/sessions/{sid}/verify")
            if r.status_code != 200:
                problems.append(f"verify {env} {r.status_code} {r.text[:200]}")
                verdicts[f"{env}: {r.status_code}"] += 1
                return
            v = r.json()
            verdicts[f"{env}: " + ("infra_error" if v.get("infra_error") else "verdict")] += 1
            d = await c.delete(f"/v1/sessions/{sid}")
            if d.status_code != 200:
                problems.append(f"close {env} {d.status_code}")

        t0 = time.perf_counter()
        await pooled(len(sessions), args.clients, verify_one)
        out["verify_close_s"] = round(time.perf_counter() - t0, 1)
        out["verdicts"] = dict(sorted(verdicts.items()))
        await asyncio.sleep(2)
        out["memory_closed"] = memory(pid)
        out["health_sessions_after"] = (await c.get("/health")).json()["sessions"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--envs", default=",".join(ENVS), help="environments, taken in turn")
    ap.add_argument("--out", default=str(OUT / "sessions_live.json"))
    args = ap.parse_args()
    args.envs = args.envs.split(",")
    path, ids = task_file()
    serve_args = ["--tasks", str(path), "--workers", str(args.workers), "--queue", "1024"]
    serve_args += ["--max-sessions", str(args.sessions), "--session-ttl", "3600"]
    with serve(serve_args) as srv:
        with httpx.Client(base_url=srv.url, timeout=120) as c:  # warm: one session of each
            for env in args.envs:
                sid = c.post("/v1/sessions", json=open_body(env, ids[env][0])).json()["session_id"]
                c.post(f"/v1/sessions/{sid}/step", json={"message": tool_step(env)})
                c.delete(f"/v1/sessions/{sid}")
        result = asyncio.run(run(srv.url, ids, args, srv.pid))
    before, full = result["memory_before"], result["memory_open"]
    n = max(1, result["opened"])
    result["per_session_kb"] = {
        "server_rss": round((full["server_rss_mb"] - before["server_rss_mb"]) * 1024 / n, 1),
        "tree_pss": round((full["tree_pss_mb"] - before["tree_pss_mb"]) * 1024 / n, 1),
    }
    result.update(
        machine=machine(),
        loadavg=os.getloadavg(),
        settings=vars(args),
        command="python bench/sessions_live.py " + " ".join(sys.argv[1:]),
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "problems"}, indent=1))
    print(f"{len(result['problems'])} problems: {result['problems'][:10]}")


if __name__ == "__main__":
    main()
