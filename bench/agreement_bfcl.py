"""referee's ``bench-api`` verdicts on BFCL multi-turn against BFCL's own judge (issue 30).

For each task of a ``bfcl-multi-turn`` task file, the gold answer and perturbed answers (empty
turns, a call dropped, an argument changed, a call repeated, a turn's calls moved to the next
turn, an unknown function) are judged twice:

* by referee: :class:`referee.domains.toolworld.bench_api.BenchApiVerifier` (BFCL's classes
  in the sandbox, referee's judge on the hashes they leave);
* by BFCL: ``bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker`` on this host, with
  the task's entry and ground truth read from the package's own files, after the turn-count
  check of ``eval_runner._evaluate_single_multi_turn_entry``. Its executor ``eval``s call
  strings: the strings here are written by this script from the ground truth (``repr`` of
  literal arguments), never by a model.

Usage: ``python bench/agreement_bfcl.py TASKS.jsonl --out bench/results/imports/bfcl.json
[--limit N]`` (N tasks per category, spread evenly).
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import re
import sys
import time
from collections import Counter, defaultdict
from typing import Any

from referee.domains.toolworld.bench_api import BenchApiVerifier
from referee.domains.toolworld.bfcl import load_category
from referee.tasks.model import Task, read_tasks

Turns = list[list[dict[str, Any]]]


def call_text(call: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in call["arguments"].items())
    return f"{call['name']}({args})"


def variants(gold: Turns) -> dict[str, Turns]:
    """The perturbed answers of one task (those that differ from the gold)."""
    out: dict[str, Turns] = {"gold": gold, "empty turns": [[] for _ in gold]}
    filled = [i for i, t in enumerate(gold) if t]
    if filled:
        last, first = filled[-1], filled[0]
        v = copy.deepcopy(gold)
        v[last] = v[last][:-1]
        out["last call dropped"] = v
        v = copy.deepcopy(gold)
        v[first] = v[first][1:]
        out["first call dropped"] = v
        v = copy.deepcopy(gold)
        v[last] = v[last] + [v[last][-1]]
        out["last call repeated"] = v
        v = copy.deepcopy(gold)
        v[first] = v[first] + [{"name": "no_such_function", "arguments": {}}]
        out["unknown function added"] = v
        for i in filled:  # an argument changed: the first string or number argument found
            for j, c in enumerate(gold[i]):
                for k, a in c["arguments"].items():
                    if isinstance(a, str | int | float) and not isinstance(a, bool):
                        v = copy.deepcopy(gold)
                        changed = a + "_x" if isinstance(a, str) else a + 1
                        v[i][j]["arguments"][k] = changed
                        out["an argument changed"] = v
                        break
                if "an argument changed" in out:
                    break
            if "an argument changed" in out:
                break
        if len(gold) > 1 and first + 1 < len(gold):
            v = copy.deepcopy(gold)
            v[first + 1] = v[first] + v[first + 1]
            v[first] = []
            out["a turn's calls moved to the next"] = v
    return out


def bfcl_verdict(entry: dict[str, Any], truth: list[list[str]], answer: Turns, tag: str) -> bool:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    if len(answer) != len(truth):  # eval_runner: "force-terminated"
        return False
    decoded = [[[call_text(c) for c in turn]] if turn else [] for turn in answer]
    category = entry["id"].rsplit("_", 1)[0]
    try:
        result = multi_turn_checker(decoded, truth, copy.deepcopy(entry), category, tag)
    except AssertionError:  # its instance-count assert: a turn with no executed step
        return False
    return bool(result["valid"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks")
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=0, help="tasks per category (0: all)")
    args = ap.parse_args()
    tasks = [t for t in read_tasks(args.tasks) if t.payload.get("bench") == "bfcl"]
    by_cat: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_cat[t.payload["category"]].append(t)
    if args.limit:
        for cat, ts in by_cat.items():
            step = max(1, len(ts) // args.limit)
            by_cat[cat] = ts[::step][: args.limit]
    entries: dict[str, tuple[dict[str, Any], list[list[str]]]] = {}
    for cat in by_cat:
        for e, a in load_category(cat):
            entries[e["id"]] = (e, a["ground_truth"])
    started = time.time()
    rows = []
    counts: Counter[tuple[str, str]] = Counter()
    with BenchApiVerifier() as verifier:
        for _cat, ts in sorted(by_cat.items()):
            for task in ts:
                bfcl_id = task.id.removeprefix("bfcl/")
                entry, truth = entries[bfcl_id]
                gold = json.loads(task.hidden["reference"])["turns"]
                for name, answer in variants(gold).items():
                    ours = verifier.verify(task, json.dumps({"turns": answer}))
                    if ours.infra_error:
                        raise SystemExit(f"{task.id} {name}: infra error {ours.infra_error}")
                    # BFCL names its instances after the model (they must be identifiers)
                    tag = re.sub(r"\W", "_", f"v{len(rows)}_{name}")
                    theirs = bfcl_verdict(entry, truth, answer, tag)
                    agree = ours.passed == theirs
                    counts[(name, "agree" if agree else "disagree")] += 1
                    row = {
                        "task": task.id,
                        "variant": name,
                        "referee": ours.passed,
                        "bfcl": theirs,
                    }
                    if not agree:
                        row["referee_tests"] = [
                            f"{t.name}: {t.status} {t.detail}" for t in ours.tests
                        ]
                    rows.append(row)
                print(f"{task.id}: {len(rows)} answers judged", file=sys.stderr, flush=True)
    total = len(rows)
    agreed = sum(1 for r in rows if r["referee"] == r["bfcl"])
    by_variant: dict[str, dict[str, int]] = defaultdict(dict)
    for (name, what), n in counts.items():
        by_variant[name][what] = n
    for name in by_variant:
        picked = [r for r in rows if r["variant"] == name]
        by_variant[name]["referee_pass"] = sum(r["referee"] for r in picked)
        by_variant[name]["bfcl_pass"] = sum(r["bfcl"] for r in picked)
    report = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(sys.argv),
        "machine": f"{platform.node()} {platform.machine()} python {platform.python_version()}",
        "tasks": sum(len(ts) for ts in by_cat.values()),
        "tasks_per_category": {c: len(ts) for c, ts in by_cat.items()},
        "answers": total,
        "agreed": agreed,
        "agreement": agreed / total if total else None,
        "by_variant": by_variant,
        "disagreements": [r for r in rows if r["referee"] != r["bfcl"]],
        "seconds": round(time.time() - started, 1),
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({k: report[k] for k in ("tasks", "answers", "agreed", "agreement")}))


if __name__ == "__main__":
    main()
