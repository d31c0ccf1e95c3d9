"""Environment overhead per step and episodes per second, with a scripted policy.

    .venv/bin/python bench/env_overhead.py [--tasks 30] [--concurrency 4] [--rounds 2]

Procedural function tasks (the three families, difficulties spread over [0, 1]), recorded once;
the scripted policy answers with each task's reference solution, so every episode passes and
no model time is counted. Measured:

* **single-turn**: ``reset``, one ``step`` with the answer in a ```python block, ``verify``;
* **multi-turn**: ``reset``, then steps ``write_file`` (solution.py), ``run_python`` (import it
  and call the function), ``run_tests``, ``submit``, then ``verify``.

Per step, ``env_overhead_s = env_s - exec_s``: the environment's own time (parsing, the workspace,
thread hops, copying the workspace in and out of the fork server), without the sandboxed
program's. ``verify`` is the function verifier's time, also reported directly (``verifier
alone``) to show what the environment adds on top. Episodes per second are end to end, one
episode at a time and ``--concurrency`` at a time (asyncio, one environment each, one runtime).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save, summary_ms
from referee.envs import CodeEnv, CodeRuntime
from referee.tasks import Task, generate
from referee.verify.function import harness_sandbox
from referee.verify.record import record_function_tasks


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {
        "id": f"call-{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _msg(*calls: dict[str, Any], content: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


async def single_turn(rt: CodeRuntime, task: Task, stats: dict[str, list[float]]) -> bool:
    env = CodeEnv(rt, single_turn=True)
    t0 = time.perf_counter()
    await env.reset(task)
    t1 = time.perf_counter()
    r = await env.step(
        {"role": "assistant", "content": f"```python\n{task.hidden['reference']}```"}
    )
    t2 = time.perf_counter()
    v = await env.verify()
    t3 = time.perf_counter()
    await env.close()
    stats["reset"].append(t1 - t0)
    stats["step_overhead"].append(r.metrics["env_overhead_s"])
    stats["verify"].append(t3 - t2)
    stats["episode"].append(time.perf_counter() - t0)
    return v.passed


async def multi_turn(rt: CodeRuntime, task: Task, stats: dict[str, list[float]]) -> bool:
    env = CodeEnv(rt)
    solution = task.payload["code_prompt"] + task.hidden["reference"]
    t0 = time.perf_counter()
    await env.reset(task)
    stats["reset"].append(time.perf_counter() - t0)
    steps = [
        ("write_file", _msg(_call("write_file", path="solution.py", content=solution))),
        ("run_python", _msg(_call("run_python", code="import solution\nsolution.solve"))),
        ("run_tests", _msg(_call("run_tests"))),
        ("submit", _msg(_call("submit"))),
    ]
    for name, message in steps:
        r = await env.step(message)
        stats[f"{name}.overhead"].append(r.metrics["env_overhead_s"])
        stats[f"{name}.exec"].append(r.metrics["exec_s"])
        stats["step_overhead"].append(r.metrics["env_overhead_s"])
    t1 = time.perf_counter()
    v = await env.verify()
    stats["verify"].append(time.perf_counter() - t1)
    await env.close()
    stats["episode"].append(time.perf_counter() - t0)
    return v.passed


async def measure(
    rt: CodeRuntime, tasks: list[Task], mode: str, concurrency: int
) -> dict[str, Any]:
    episode = single_turn if mode == "single" else multi_turn
    stats: dict[str, list[float]] = defaultdict(list)
    t0 = time.perf_counter()
    passed = []
    for task in tasks:  # one at a time
        passed.append(await episode(rt, task, stats))
    sequential_s = time.perf_counter() - t0
    sem = asyncio.Semaphore(concurrency)
    throwaway: dict[str, list[float]] = defaultdict(list)

    async def bounded(task: Task) -> bool:
        async with sem:
            return await episode(rt, task, throwaway)

    t1 = time.perf_counter()
    passed += await asyncio.gather(*(bounded(t) for t in tasks))
    concurrent_s = time.perf_counter() - t1
    out: dict[str, Any] = {k: summary_ms(v) for k, v in sorted(stats.items())}
    out["all_passed"] = all(passed)
    out["episodes_per_s"] = len(tasks) / sequential_s
    out[f"episodes_per_s_concurrency_{concurrency}"] = len(tasks) / concurrent_s
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2, help="rounds per mode; the best is kept")
    args = ap.parse_args()
    families = ["list-pipeline", "string-pipeline", "recurrence"]
    drafts = [
        generate(families[i % 3], difficulty=round((i % 11) / 10, 2), seed=1000 + i)
        for i in range(args.tasks)
    ]
    with harness_sandbox() as sb, CodeRuntime(sandbox=sb) as rt:
        tasks = record_function_tasks(sb, drafts)
        t0 = time.perf_counter()
        for t in tasks:
            rt.function_verifier.verify(t, t.hidden["reference"])
        verifier_alone = (time.perf_counter() - t0) / len(tasks)
        asyncio.run(measure(rt, tasks[:3], "multi", 1))  # warm: workers, threads, imports
        results: dict[str, Any] = {}
        for mode in ("single", "multi"):
            rounds = [
                asyncio.run(measure(rt, tasks, mode, args.concurrency)) for _ in range(args.rounds)
            ]
            results[mode] = max(rounds, key=lambda r: r["episodes_per_s"])
    single_overhead = results["single"]["step_overhead"]["median_ms"]
    multi_overhead = statistics.median(
        results["multi"][f"{n}.overhead"]["median_ms"]
        for n in ("write_file", "run_python", "run_tests", "submit")
    )
    data = {
        "benchmark": "env_overhead",
        "machine": machine(),
        "tasks": len(tasks),
        "concurrency": args.concurrency,
        "verifier_alone_ms": verifier_alone * 1000,
        "single_turn": results["single"],
        "multi_turn": results["multi"],
        "headline": {
            "single_turn_step_overhead_median_ms": single_overhead,
            "multi_turn_step_overhead_median_ms": multi_overhead,
            "single_turn_episodes_per_s": results["single"]["episodes_per_s"],
            "multi_turn_episodes_per_s": results["multi"]["episodes_per_s"],
        },
    }
    save("env_overhead", data)
    print(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
