"""Benchmark of the lab domain: per family and difficulty, what the reference answer, the empty
answer, the exploit corpus and four scripted agents (gold, naive, pilot-only, prior guess)
earn, and what the reference agent's episode costs.

Run: ``PYTHONPATH=src python bench/domain_lab.py [--per-cell 6] [--seed 500]``.
Writes ``bench/results/lab.json`` and prints a markdown table. ``--verify-cost`` only times the
verifier (20 tasks a family at difficulty 1; ``bench/results/lab-verify.json``).

* ``reference``: the true model submitted (the task's gold answer);
* ``empty``: nothing submitted;
* ``exploits``: the largest reward any exploit of the corpus (answers and episodes,
  :mod:`referee.domains.lab.redteam`) earns on the cell's tasks;
* ``gold``: the reference scientist (whole budget on a box-spanning design, every law fitted,
  the lowest BIC submitted); ``naive``: one experiment at the centre, the simplest law fitted;
  ``pilot``: no experiment, every law fitted to the two pilot runs of the prompt (the
  single-turn form); ``prior``: the simplest law at the centre of its public bounds.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from referee.domains import generate_family
from referee.domains.lab.agents import AGENTS, play
from referee.domains.lab.env import LabEnv
from referee.domains.lab.redteam import ANSWERS, EPISODES
from referee.domains.lab.verifier import LabVerifier
from referee.envs.base import SyncEnvironment

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ("lab-kinetics", "lab-population", "lab-pharmacology", "lab-circuits")
DIFFICULTIES = (0.0, 0.25, 0.5, 0.75, 1.0)


def exploit_rewards(task: Any, verifier: LabVerifier) -> dict[str, float]:
    """Every exploit's reward on ``task``."""
    out = {
        name: verifier.verify(task, answer(task)).reward for name, (_, answer) in ANSWERS.items()
    }
    for name, (_, episode) in EPISODES.items():
        with SyncEnvironment(LabEnv()) as env:
            env.reset(task)
            episode(task, env)
            out[name] = env.verify().reward
    return out


def cell(family: str, difficulty: float, count: int, seed: int) -> dict[str, Any]:
    tasks = generate_family(family, count=count, difficulty=difficulty, seed=seed)
    verifier = LabVerifier()
    row: dict[str, Any] = {"family": family, "difficulty": difficulty, "tasks": len(tasks)}
    reference = [verifier.verify(t, t.hidden["reference"]) for t in tasks]
    empty = [verifier.verify(t, "") for t in tasks]
    row["reference_pass"] = sum(v.passed for v in reference)
    row["empty_reward_max"] = max(v.reward for v in empty)
    exploits = [exploit_rewards(t, verifier) for t in tasks]
    row["exploit_reward_max"] = max(max(e.values()) for e in exploits)
    row["exploit_pass"] = 0  # a pass would show as a reward of 1 above; kept explicit
    row["laws"] = sorted({t.hidden["law"] for t in tasks})
    for agent in AGENTS:
        start = time.perf_counter()
        verdicts = [play(t, agent) for t in tasks]
        row[agent] = {
            "pass": sum(v.passed for v in verdicts),
            "reward_mean": round(statistics.fmean(v.reward for v in verdicts), 3),
            "s_per_task": round((time.perf_counter() - start) / len(tasks), 2),
        }
    return row


def verify_cost(count: int = 20) -> dict[str, float]:
    """Milliseconds the verifier takes per task (the reference answer, difficulty 1)."""
    verifier = LabVerifier()
    out = {}
    for family in FAMILIES:
        tasks = generate_family(family, count=count, difficulty=1.0, seed=7)
        start = time.perf_counter()
        for t in tasks:
            verifier.verify(t, t.hidden["reference"])
        out[family] = round((time.perf_counter() - start) / count * 1000, 2)
    return out


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| family | d | reference pass | empty max | exploit max | gold pass (mean) | "
        "naive | pilot only | prior guess | gold s/task |\n" + "|---" * 10 + "|"
    )
    lines = [head]
    for r in rows:
        n = r["tasks"]

        def agent(name: str, r: dict[str, Any] = r, n: int = n) -> str:
            return f"{r[name]['pass']}/{n} ({r[name]['reward_mean']:.2f})"

        lines.append(
            f"| {r['family']} | {r['difficulty']:g} | {r['reference_pass']}/{n} | "
            f"{r['empty_reward_max']:.2f} | {r['exploit_reward_max']:.2f} | {agent('gold')} | "
            f"{agent('naive')} | {agent('pilot')} | {agent('prior')} | "
            f"{r['gold']['s_per_task']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=6)
    parser.add_argument("--seed", type=int, default=500)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument(
        "--verify-cost",
        action="store_true",
        help="only time the verifier (bench/results/lab-verify.json)",
    )
    args = parser.parse_args()
    if args.verify_cost:
        cost = {
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "bench/domain_lab.py --verify-cost",
            "verify_ms_per_task": verify_cost(),
        }
        (ROOT / "bench" / "results" / "lab-verify.json").write_text(
            json.dumps(cost, indent=1) + "\n"
        )
        print(json.dumps(cost))
        return
    started = time.perf_counter()
    rows = []
    for family in args.families.split(","):
        for d in DIFFICULTIES:
            rows.append(cell(family, d, args.per_cell, args.seed))
            print(json.dumps(rows[-1]), flush=True)
    out = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.python_version()}, shared 2-core host",
        "command": f"bench/domain_lab.py --per-cell {args.per_cell} --seed {args.seed}",
        "seconds": round(time.perf_counter() - started, 1),
        "rows": rows,
    }
    path = ROOT / "bench" / "results" / "lab.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
