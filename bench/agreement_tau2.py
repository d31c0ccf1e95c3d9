"""referee's ``bench-api`` verdicts on tau2 airline and retail against tau2's own judge
(issue 30).

For each task of a ``tau2-airline`` / ``tau2-retail`` task file, the gold answer and perturbed
answers (nothing done, a gold action dropped, an argument of a write changed, the last action
repeated, the messages left out, an extra read) are judged twice:

* by referee: :class:`referee.domains.toolworld.bench_api.BenchApiVerifier` (tau2's tools in
  the sandbox; the database hash and the communicate strings compared; a task's answers in one
  sandboxed run, ``judge_many``, each from a fresh copy of the database);
* by tau2: ``EnvironmentEvaluator.calculate_reward`` and ``CommunicateEvaluator`` on this host,
  combined as ``evaluate_simulation`` combines them for the tasks' reward basis (DB and
  COMMUNICATE), on the task read from the package's own ``tasks.json`` and a trajectory built
  from the answer: one assistant message per call followed by the tool's reply as referee's
  runner returned it (tau2's ``set_state`` replays every call and refuses a reply that differs:
  a check of the runner too), then one assistant message with what the agent said. tau2's
  tools run on this host here: the calls are this script's (the gold's, perturbed), never a
  model's.

Usage: ``python bench/agreement_tau2.py TASKS.jsonl... --out bench/results/imports/tau2.json
[--limit N]`` (N tasks per file, spread evenly).
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import sys
import time
from collections import Counter, defaultdict
from typing import Any

from referee.domains.toolworld.bench_api import Answer, BenchApiVerifier
from referee.domains.toolworld.tau2 import load_domain
from referee.tasks.model import read_tasks

Calls = list[dict[str, Any]]
_WRITES = ("book", "cancel", "update", "modify", "exchange", "return", "send", "transfer")


def variants(gold: Calls, messages: list[str]) -> dict[str, tuple[Calls, list[str]]]:
    out = {"gold": (gold, messages), "nothing done": ([], [])}
    if gold:
        out["last action dropped"] = (gold[:-1], messages)
        out["first action dropped"] = (gold[1:], messages)
        out["last action repeated"] = ([*gold, gold[-1]], messages)
        out["an extra read"] = (
            [*gold, gold[0]]
            if not gold[0]["name"].startswith(_WRITES)
            else [*gold, {"name": "list_all_airports", "arguments": {}}],
            messages,
        )
        writes = [i for i, c in enumerate(gold) if c["name"].startswith(_WRITES)]
        for i in writes:
            for k, a in gold[i]["arguments"].items():
                if isinstance(a, str) and a:
                    v = copy.deepcopy(gold)
                    v[i]["arguments"][k] = a[:-1] + ("X" if a[-1] != "X" else "Y")
                    out["a write's argument changed"] = (v, messages)
                    break
            if "a write's argument changed" in out:
                break
    if messages:
        out["messages left out"] = (gold, [])
    return out


def tau2_verdict(
    domain: str,
    record: dict[str, Any],
    calls: Calls,
    results: list[dict[str, Any]],
    messages: list[str],
    db: Any,
) -> tuple[bool, str]:
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage
    from tau2.data_model.tasks import RewardType, Task
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    if domain == "airline":
        from tau2.domains.airline.environment import get_environment
    else:
        from tau2.domains.retail.environment import get_environment

    task = Task.model_validate(record)
    trajectory: list[Any] = []
    for i, (c, r) in enumerate(zip(calls, results, strict=True)):
        tc = ToolCall(id=f"c{i}", name=c["name"], arguments=c["arguments"], requestor="assistant")
        trajectory.append(AssistantMessage(role="assistant", content=None, tool_calls=[tc]))
        trajectory.append(
            ToolMessage(
                id=f"c{i}",
                role="tool",
                content=r["content"],
                requestor="assistant",
                error=r["error"],
            )
        )
    if messages:
        trajectory.append(AssistantMessage(role="assistant", content="\n".join(messages)))

    def make(solo_mode: bool = False) -> Any:
        return get_environment(db=copy.deepcopy(db), solo_mode=solo_mode)

    try:
        env = EnvironmentEvaluator.calculate_reward(make, task, trajectory, solo_mode=False)
    except ValueError as e:  # set_state: a reply of referee's runner differs from tau2's
        return False, f"tau2 refused the trajectory: {str(e)[:200]}"
    comm = CommunicateEvaluator.calculate_reward(task, trajectory)
    basis = set(task.evaluation_criteria.reward_basis)
    reward = 1.0
    if basis & {RewardType.DB, RewardType.ENV_ASSERTION}:
        reward *= env.reward
    if RewardType.COMMUNICATE in basis:
        reward *= comm.reward
    return reward == 1.0, ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=0, help="tasks per file, spread evenly (0: all)")
    args = ap.parse_args()
    from loguru import logger  # tau2 logs every tool reply at DEBUG

    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    tasks = []
    for f in args.tasks:
        picked = [t for t in read_tasks(f) if t.payload.get("bench") == "tau2"]
        if args.limit:
            picked = picked[:: max(1, len(picked) // args.limit)][: args.limit]
        tasks += picked
    records: dict[tuple[str, str], dict[str, Any]] = {}
    dbs: dict[str, Any] = {}
    for domain in sorted({t.payload["domain"] for t in tasks}):
        for r in load_domain(domain)[0]:
            records[(domain, str(r["id"]))] = r
        if domain == "airline":
            from tau2.domains.airline.data_model import FlightDB
            from tau2.domains.airline.utils import AIRLINE_DB_PATH

            dbs[domain] = FlightDB.load(AIRLINE_DB_PATH)
        else:
            from tau2.domains.retail.data_model import RetailDB
            from tau2.domains.retail.utils import RETAIL_DB_PATH

            dbs[domain] = RetailDB.load(RETAIL_DB_PATH)
    started = time.time()
    rows = []
    counts: Counter[tuple[str, str]] = Counter()
    with BenchApiVerifier() as verifier:
        for task in tasks:
            domain = task.payload["domain"]
            record = records[(domain, task.id.rsplit("/", 1)[1])]
            ref = json.loads(task.hidden["reference"])
            answers = variants(ref["turns"][0], ref["messages"])
            parsed = [Answer(turns=[c] if c else [], messages=m) for c, m in answers.values()]
            judged = verifier.judge_many(task, parsed)
            for (name, (calls, messages)), (ours, out) in zip(answers.items(), judged, strict=True):
                if ours.infra_error or out is None:
                    raise SystemExit(f"{task.id} {name}: {ours.infra_error or ours.tests}")
                results = out["turns"][0]["results"] if out["turns"] else []
                theirs, note = tau2_verdict(domain, record, calls, results, messages, dbs[domain])
                agree = ours.passed == theirs
                counts[(name, "agree" if agree else "disagree")] += 1
                row: dict[str, Any] = {
                    "task": task.id,
                    "variant": name,
                    "referee": ours.passed,
                    "tau2": theirs,
                }
                if not agree:
                    row["note"] = note
                    row["referee_tests"] = [f"{t.name}: {t.status} {t.detail}" for t in ours.tests]
                rows.append(row)
            print(f"{task.id}: {len(rows)} answers judged", file=sys.stderr, flush=True)
    total = len(rows)
    agreed = sum(1 for r in rows if r["referee"] == r["tau2"])
    by_variant: dict[str, dict[str, int]] = defaultdict(dict)
    for (name, what), n in counts.items():
        by_variant[name][what] = n
    for name in by_variant:
        picked = [r for r in rows if r["variant"] == name]
        by_variant[name]["referee_pass"] = sum(r["referee"] for r in picked)
        by_variant[name]["tau2_pass"] = sum(r["tau2"] for r in picked)
    report = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(sys.argv),
        "machine": f"{platform.node()} {platform.machine()} python {platform.python_version()}",
        "tasks": len(tasks),
        "answers": total,
        "agreed": agreed,
        "agreement": agreed / total if total else None,
        "by_variant": by_variant,
        "disagreements": [r for r in rows if r["referee"] != r["tau2"]],
        "seconds": round(time.time() - started, 1),
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({k: report[k] for k in ("tasks", "answers", "agreed", "agreement")}))


if __name__ == "__main__":
    main()
