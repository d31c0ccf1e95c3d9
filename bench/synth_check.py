"""Check synthesized tasks against `referee verify` verdicts of their gold and empty patches.

    referee tasks gold T.jsonl > gold.jsonl      # and an empty patch per task in empty.jsonl
    referee verify --tasks T.jsonl --samples gold.jsonl --json > gold.verdicts.jsonl
    referee verify --tasks T.jsonl --samples empty.jsonl --json > empty.verdicts.jsonl
    .venv/bin/python bench/synth_check.py T.jsonl gold.verdicts.jsonl empty.verdicts.jsonl

Prints one JSON line: gold passed, empty failed, infra errors, and for bug-fixing and
implementation tasks how many starting states behave under the verifier exactly as validation
said (every FAIL_TO_PASS test fails, every PASS_TO_PASS test passes).
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from referee.tasks.model import Task, TaskKind


def main() -> None:
    tasks_path, gold_path, empty_path = sys.argv[1:4]
    tasks = {}
    for line in open(tasks_path):
        t = json.loads(line)
        tasks[t["id"]] = t
    gold = [json.loads(x) for x in open(gold_path)]
    empty = [json.loads(x) for x in open(empty_path)]
    as_validated, checked, mismatches = 0, 0, []
    for v in empty:
        t = tasks[v["task_id"]]
        if Task.model_validate(t).kind == TaskKind.TEST_WRITING:
            continue
        checked += 1
        status = {o["name"]: o["status"] for o in v["tests"]}
        f2p_fail = all(status.get(n) != "passed" for n in t["hidden"]["fail_to_pass"])
        p2p_pass = all(status.get(n) == "passed" for n in t["hidden"]["pass_to_pass"])
        if f2p_fail and p2p_pass:
            as_validated += 1
        else:
            mismatches.append(t["id"])
    kinds = Counter(t["payload"]["kind"] for t in tasks.values())
    print(
        json.dumps(
            {
                "tasks": len(tasks),
                "by_kind": dict(kinds),
                "gold_passed": sum(v["passed"] for v in gold),
                "gold_total": len(gold),
                "empty_failed": sum(not v["passed"] and v["reward"] == 0 for v in empty),
                "empty_total": len(empty),
                "infra_errors": sum(v["infra_error"] is not None for v in gold + empty),
                "starting_states_as_validated": as_validated,
                "starting_states_checked": checked,
                "mismatches": mismatches[:10],
            }
        )
    )


if __name__ == "__main__":
    main()
