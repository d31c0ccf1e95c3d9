"""bench-learn's tables from a run folder: held-out pass@1 and the share of answers that ran,
per stage, overall and per held-out structure (list-ops' unit: tasks of one structure differ
only in constants, so the structures, not the tasks, are the independent units), with the
paired tests over tasks and a sign test over structures.

    python bench/learn_report.py RUN_FOLDER HELDOUT.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from math import comb
from pathlib import Path


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    p = 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, p)


def main(run: str, heldout: str) -> None:
    unit = {}
    for line in Path(heldout).read_text().splitlines():
        row = json.loads(line)
        unit[row["id"]] = row["provenance"].get("unit") or row["id"]
    rows = [json.loads(x) for x in (Path(run) / "heldout.jsonl").read_text().splitlines()]
    stages = sorted({r["stage"] for r in rows}, key=["base", "rl", "control"].index)
    by: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    ran: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        by[r["stage"]][unit[r["task_id"]]].append(r["passed"])
        ran[r["stage"]].append(bool(r["ran"]))
    summary = json.loads((Path(run) / "summary.json").read_text())
    print("| stage | held-out pass@1 | 95 % interval | answers that ran |")
    print("|---|---|---|---|")
    for s in stages:
        k = summary[s]
        lo, hi = k["interval_95"]
        print(f"| {s} | {k['pass_at_1']:.3f} | [{lo:.3f}, {hi:.3f}] | {k['ran']:.3f} |")
    print()
    for other in ("base", "control"):
        key = f"rl_vs_{other}"
        if key in summary:
            t = summary[key]
            print(
                f"GRPO vs {other}, over tasks: {t['a_only']} vs {t['b_only']} discordant, "
                f"p={t['p_value']:.3g}"
            )
            units = sorted(by["rl"])
            rate = {s: {u: sum(by[s][u]) / len(by[s][u]) for u in units} for s in ("rl", other)}
            wins = sum(rate["rl"][u] > rate[other][u] for u in units)
            losses = sum(rate["rl"][u] < rate[other][u] for u in units)
            print(
                f"GRPO vs {other}, over {len(units)} structures: {wins} better, {losses} "
                f"worse, sign test p={sign_test(wins, losses):.3g}"
            )
    print()
    print("| structure | tasks | " + " | ".join(stages) + " |")
    print("|---|---|" + "---|" * len(stages))
    for u in sorted(by["base"]):
        cells = " | ".join(f"{sum(by[s][u])}/{len(by[s][u])}" for s in stages)
        print(f"| {u} | {len(by['base'][u])} | {cells} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
