"""Rollout runner throughput: rollouts per second with a scripted policy and a trivial env.

    .venv/bin/python bench/rollout_throughput.py [--rollouts 2000] [--rounds 3] [--turns 1]

What the runner itself costs (no model, no sandbox), at concurrency 1, 8 and 32:

* ``overhead``: the policy answers at once; every rollout is a fresh environment, ``reset``,
  ``turns`` policy/step rounds, ``verify``, ``close``, and a ``Trajectory`` with its turns;
* ``store``: the same, each trajectory also written to the run's ``TrackStore`` (SQLite in
  WAL mode, every commit synced) in a temporary folder;
* ``latency_10ms``: the policy takes 10 ms per reply (``asyncio.sleep``, as a remote server
  would), so throughput should grow with concurrency up to ``concurrency / (turns * 10 ms)``.

Prints one JSON object (and saves it to ``bench/out/rollout_throughput.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner
from referee.tasks.model import Task
from referee.track.store import TrackStore
from referee.verify.verdict import Verdict


class TrivialEnv(Environment):
    """Asks once per turn, ends after ``turns`` replies, passes when the last one says 42."""

    name = "trivial"

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.seen = 0
        self.last = ""
        self.task_id = ""

    async def reset(self, task: Task) -> list[ChatMessage]:
        self.task_id = task.id
        return [{"role": "user", "content": task.user_prompt}]

    async def step(self, message: ChatMessage) -> StepResult:
        self.seen += 1
        self.last = message.get("content") or ""
        done = self.seen >= self.turns
        obs = [] if done else [{"role": "user", "content": "go on"}]
        return StepResult(observations=obs, done=done, reason="answered" if done else "")

    @property
    def done(self) -> bool:
        return self.seen >= self.turns

    async def verify(self) -> Verdict:
        ok = self.last == "42"
        return Verdict(task_id=self.task_id, reward=float(ok), passed=ok, verifier="trivial")


def measure(concurrency: int, rollouts: int, turns: int, delay_s: float, store: bool) -> float:
    tasks = [Task.create(name=f"bench/{i}", prompt="say 42") for i in range(rollouts)]
    policy = ScriptedPolicy(lambda messages, tools: "42", delay_s=delay_s)
    with tempfile.TemporaryDirectory() as tmp:
        st = TrackStore(tmp) if store else None
        runner = RolloutRunner(
            lambda: TrivialEnv(turns),
            policy,
            concurrency=concurrency,
            limits=EpisodeLimits(max_turns=turns),
            store=st,
        )
        start = time.perf_counter()
        out = asyncio.run(runner.run(tasks))
        elapsed = time.perf_counter() - start
        if st is not None:
            st.close()
    assert len(out) == rollouts and all(t.passed for t in out), "a rollout failed"
    return rollouts / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rollouts", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--turns", type=int, default=1)
    ap.add_argument("--concurrency", default="1,8,32")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    modes: dict[str, dict[str, Any]] = {
        "overhead": {"delay_s": 0.0, "store": False, "rollouts": args.rollouts},
        "store": {"delay_s": 0.0, "store": True, "rollouts": max(50, args.rollouts // 4)},
        "latency_10ms": {"delay_s": 0.010, "store": False, "rollouts": max(50, args.rollouts // 4)},
    }
    results: dict[str, Any] = {}
    for mode, cfg in modes.items():
        results[mode] = {}
        for c in levels:
            # Rounds of one cell run back to back; the median damps a noisy shared machine.
            rates = [
                measure(c, cfg["rollouts"], args.turns, cfg["delay_s"], cfg["store"])
                for _ in range(args.rounds)
            ]
            rate = statistics.median(rates)
            results[mode][str(c)] = {
                "rollouts_per_s": round(rate, 1),
                "ms_per_rollout": round(1000 / rate, 3),
                "rollouts": cfg["rollouts"],
                "rounds": args.rounds,
            }
    data = {
        "benchmark": "rollout_throughput",
        "turns": args.turns,
        "command": " ".join(["bench/rollout_throughput.py", *sys.argv[1:]]),
        "machine": machine(),
        "results": results,
    }
    save("rollout_throughput", data)
    print(json.dumps(data))


if __name__ == "__main__":
    main()
