"""Multi-turn GRPO against its control over held-out *structures* (issue 27): tasks of one
list-ops structure are not independent, so the structure is the unit a significance test can
trust. Each held-out task's structure is recovered by generating the run's tasks again
(``draft_tasks`` with the run's seed, count and difficulties) and matching their ids.

    PYTHONPATH=src .venv/bin/python bench/multiturn_structures.py runs/mt12-s4 \\
        bench/results/multiturn/mt12-s4-structures.json

Needs the run folder's ``config.json`` and ``heldout_per_task.json``.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from referee.experiments.listops.config import TasksConfig
from referee.experiments.listops.stats import paired_test_scores
from referee.experiments.listops.tasks import draft_tasks


def structures(run: Path) -> tuple[dict[str, str], dict[str, list[bool]]]:
    """Each held-out task's structure, and each stage's outcomes in task order."""
    cfg = json.loads((run / "config.json").read_text())
    per = json.loads((run / "heldout_per_task.json").read_text())
    drafts = draft_tasks(
        TasksConfig(
            count=cfg["tasks"], difficulties=tuple(cfg["difficulties"]),
            heldout_fraction=cfg["heldout_fraction"],
        ),
        cfg["seed"],
    )  # fmt: skip
    by_id = {t.id: str(t.provenance.unit) for t in drafts}
    missing = [t for t in per["task_ids"] if t not in by_id]
    if missing:
        raise SystemExit(f"{missing[0]}: not among this run's generated tasks")
    unit = {t: by_id[t] for t in per["task_ids"]}
    stages = {k: [bool(x) for x in v] for k, v in per.items() if k != "task_ids"}
    return unit, stages


def main() -> None:
    run, out = Path(sys.argv[1]), Path(sys.argv[2])
    unit, stages = structures(run)
    ids = json.loads((run / "heldout_per_task.json").read_text())["task_ids"]
    names = sorted(set(unit.values()))
    print(f"{len(ids)} held-out tasks in {len(names)} structures")

    def rates(stage: str) -> list[float]:
        by: dict[str, list[bool]] = defaultdict(list)
        for task_id, ok in zip(ids, stages[stage], strict=True):
            by[unit[task_id]].append(ok)
        return [sum(by[n]) / len(by[n]) for n in names]

    report: dict[str, object] = {"run": str(run), "tasks": len(ids), "structures": len(names)}
    for a, b in (("rl", "control"), ("rl", "sft")):
        r = paired_test_scores(rates(a), rates(b)).to_dict()
        report[f"{a}_vs_{b}"] = r
        print(f"{a} vs {b}: {r['a_better']} structures better, {r['b_better']} worse, "
              f"{r['ties']} tied; p = {r['p_value']:.3g} ({r['method']})")  # fmt: skip
    out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
