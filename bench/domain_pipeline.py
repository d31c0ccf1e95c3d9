"""The df-pipeline family: gold, empty and exploits per difficulty; wrong pipelines and what the
data contract says about them; the contract check's cost.

    PYTHONPATH=src .venv/bin/python bench/domain_pipeline.py [--per-difficulty 3] [--seed 300]
        [--difficulties 0,0.25,0.5,0.75,1] [--out bench/results/dataframe_pipeline.json]

* **per difficulty** (0, 0.25, 0.5, 0.75, 1; ``--per-difficulty`` seeds each): the share of
  references that pass, the empty answer's reward, and every exploit of
  :data:`~referee.domains.dataframe.redteam_pipeline.PIPELINE_EXPLOITS` plus the general
  ``hardcode-visible-output``: its mean and max reward beside the empty answer's, and on how
  many hidden sets its output kept the contract (the argument against crediting the contract
  alone).
* **wrong pipelines**: each reference with one of its steps left out (``forget-<kind>``), and
  semantic mutants the contract cannot see (keep the first listed row of a re-sent shipment,
  1 lb = 0.45 kg, day-first dates read month-first, dedupe after the filters, drop late
  deliveries instead of blanking them, fill a missing quantity with 0): per mutant, the mean
  reward, on how many failed sets the detail names a contract rule, on how many the comparison
  alone speaks, and one example detail (what the model is shown).
* **cost**: the median time of verifying the reference with the contract and with it removed
  from the task (same sandbox, same run); pandera's import time and resident memory on top of
  pandas, in a fresh interpreter.

Every verdict comes from :class:`~referee.domains.dataframe.verifier.DataframeVerifier`; a set's
contract and comparison findings are read from its detail (contract sentences start with
``contract:``, the comparison's follow).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from referee.domains.dataframe.build import build_tasks
from referee.domains.dataframe.execute import dataframe_sandbox
from referee.domains.dataframe.families import draft_for
from referee.domains.dataframe.pipelines import reference
from referee.domains.dataframe.redteam import EXPLOITS, Exploit
from referee.domains.dataframe.redteam_pipeline import PIPELINE_EXPLOITS
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.sandbox import Limits
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

DIFFICULTIES = (0.0, 0.25, 0.5, 0.75, 1.0)
#: name -> (the kind of dirt it needs, old text, new text) applied to the reference's source.
SEMANTIC = {
    "dedupe-keeps-first-listed": (
        "duplicates",
        's = s.drop_duplicates("shipment_id", keep="last")',
        's = s.sort_index().drop_duplicates("shipment_id", keep="first")',
    ),
    "lb-as-0.45-kg": ("units", "0.45359237", "0.45"),
    "dotted-dates-month-first": ("dates", '"%d.%m.%Y"', '"%m.%d.%Y"'),
    "late-deliveries-dropped": (
        "cross",
        's["delivered_on"] = s["delivered_on"].mask(s["delivered_on"] < s["shipped_on"])',
        's = s[~(s["delivered_on"] < s["shipped_on"])]',
    ),
    "missing-qty-as-0": (
        "missing",
        's["qty"] = s["qty"].fillna(1)',
        's["qty"] = s["qty"].fillna(0)',
    ),
}


def _kinds(task: Task) -> list[str]:
    from referee.domains.dataframe.dirty import KINDS

    unit = str(task.provenance.unit).split("/", 1)[1].split("+")
    short = {
        "dup": "duplicates",
        "cat": "categories",
        "date": "dates",
        "unit": "units",
        "type": "types",
        "miss": "missing",
        "out": "outliers",
        "cross": "cross",
    }
    kinds = {short[u] for u in unit}
    return [k for k in KINDS if k in kinds]


def _dedupe_last(src: str) -> str | None:
    """The dedupe moved after every other step (the order the instruction fixes, broken)."""
    lines = src.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "# duplicates"), None)
    if start is None:
        return None
    block = lines[start : start + 4]
    rest = lines[:start] + lines[start + 4 :]
    at = next(i for i, line in enumerate(rest) if line.strip().startswith("return s["))
    return "\n".join([*rest[:at], *block, *rest[at:]])


def _sets(v: Verdict) -> dict[str, int]:
    """Per failed set: whether a contract rule is named, whether the comparison speaks."""
    out = {"sets": len(v.tests), "failed": 0, "contract_named": 0, "comparison": 0, "error": 0}
    for t in v.tests:
        if t.status == "passed":
            continue
        if t.status != "failed":
            out["error"] += 1
            continue
        out["failed"] += 1
        parts = [p.strip() for p in t.detail.split("; ")]
        out["contract_named"] += any(p.startswith("contract:") for p in parts)
        out["comparison"] += any(not p.startswith("contract:") for p in parts)
    return out


def _contract_kept(v: Verdict) -> int:
    """Hidden sets whose output kept the contract (passed, or failed with no contract rule)."""
    kept = 0
    for t in v.tests:
        if t.status == "passed" or (t.status == "failed" and "contract:" not in t.detail):
            kept += 1
    return kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-difficulty", type=int, default=3)
    ap.add_argument("--seed", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--difficulties", default=",".join(map(str, DIFFICULTIES)))
    ap.add_argument("--out", default="bench/results/dataframe_pipeline.json")
    args = ap.parse_args()
    exploits: tuple[Exploit, ...] = (*PIPELINE_EXPLOITS, EXPLOITS[0])
    started = time.time()
    sandbox = dataframe_sandbox(python_workers=2)
    verifier = DataframeVerifier(sandbox, limits=Limits(timeout_s=4.0, memory_mb=768))
    per_difficulty: list[dict[str, Any]] = []
    wrong: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "tasks": 0,
            "rewards": [],
            "sets": 0,
            "failed": 0,
            "contract_named": 0,
            "comparison": 0,
            "error": 0,
            "example": "",
        }
    )
    tasks_by_d: dict[float, list[Task]] = {}
    try:
        for d in [float(x) for x in args.difficulties.split(",")]:
            drafts = [
                draft_for("df-pipeline", d, args.seed + i) for i in range(args.per_difficulty)
            ]
            tasks = build_tasks(drafts, sandbox)
            tasks_by_d[d] = tasks
            row: dict[str, Any] = {
                "difficulty": d,
                "tasks": len(tasks),
                "kinds": [len(_kinds(t)) for t in tasks],
                "gold_passed": 0,
                "empty_reward": [],
                "exploits": {},
            }
            for task in tasks:
                row["gold_passed"] += verifier.verify(task, str(task.hidden["reference"])).passed
                empty = verifier.verify(task, "")
                row["empty_reward"].append(empty.reward)
                for e in exploits:
                    v = verifier.verify(task, e.make(task))
                    cell = row["exploits"].setdefault(
                        e.name, {"rewards": [], "passed": 0, "contract_kept_sets": 0, "sets": 0}
                    )
                    cell["rewards"].append(v.reward)
                    cell["passed"] += v.passed
                    cell["contract_kept_sets"] += _contract_kept(v)
                    cell["sets"] += len(v.tests)
                    cell["held"] = cell.get("held", True) and (
                        v.reward <= empty.reward and not v.passed and v.infra_error is None
                    )
                kinds = _kinds(task)
                mutants: dict[str, str | None] = {
                    f"forget-{k}": reference(kinds, skip=k) for k in kinds
                }
                src = str(task.hidden["reference"])
                for name, (kind, old, new) in SEMANTIC.items():
                    mutants[name] = (
                        src.replace(old, new, 1) if kind in kinds and old in src else None
                    )
                if "duplicates" in kinds and {"dates", "missing", "outliers"} & set(kinds):
                    # Only where a step drops rows: otherwise the order does not matter.
                    mutants["dedupe-after-the-filters"] = _dedupe_last(src)
                for name, code in mutants.items():
                    if code is None:
                        continue
                    v = verifier.verify(task, code)
                    cell = wrong[name]
                    cell["tasks"] += 1
                    cell["rewards"].append(v.reward)
                    for k, n in _sets(v).items():
                        cell[k] += n
                    bad = next((t.detail for t in v.tests if t.status != "passed"), "")
                    if bad and not cell["example"]:
                        cell["example"] = bad[:240]
            print(f"difficulty {d}: done ({time.time() - started:.0f} s)", file=sys.stderr)
            per_difficulty.append(row)
        # Cost: the reference verified with its contract and without (same sandbox, same run).
        cost = []
        for task in tasks_by_d[sorted(tasks_by_d)[len(tasks_by_d) // 2]][:2]:
            bare = task.model_copy(
                update={"payload": {k: v for k, v in task.payload.items() if k != "contract"}}
            )
            ref = str(task.hidden["reference"])
            verifier.verify(task, ref)  # warm: pandera imported on the host
            with_c = statistics.median(
                _timed(verifier.verify, task, ref) for _ in range(args.repeats)
            )
            without = statistics.median(
                _timed(verifier.verify, bare, ref) for _ in range(args.repeats)
            )
            cost.append({"task": task.id, "with_contract_s": with_c, "without_contract_s": without})
    finally:
        verifier.close()
        sandbox.close()
    probe = (
        "import re, time; import pandas\n"
        "rss = lambda: int(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read())[1])\n"
        "r0 = rss(); t = time.perf_counter()\n"
        "import pandera.pandas\n"
        "print(time.perf_counter() - t, rss() - r0)\n"
    )
    imports = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        seconds, kb = out.stdout.split()
        imports.append({"import_s": float(seconds), "rss_mb": int(kb) / 1024})
    result = {
        "machine": machine(),
        "command": " ".join(sys.argv),
        "per_difficulty": per_difficulty,
        "wrong_pipelines": dict(wrong),
        "cost": cost,
        "pandera_import": imports,
        "wall_s": time.time() - started,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    _print(result)


def _timed(fn: Any, *args: Any) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def _print(r: dict[str, Any]) -> None:
    print(
        "| difficulty | tasks | kinds of dirt | gold passed | empty reward | exploits held |"
        " best exploit reward | exploit sets keeping the contract |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in r["per_difficulty"]:
        ex = row["exploits"]
        held = sum(c["held"] for c in ex.values())
        best = max(max(c["rewards"]) for c in ex.values())
        kept = sum(c["contract_kept_sets"] for c in ex.values())
        sets = sum(c["sets"] for c in ex.values())
        print(
            f"| {row['difficulty']} | {row['tasks']} | {row['kinds']} | {row['gold_passed']}/"
            f"{row['tasks']} | {max(row['empty_reward']):.2f} | {held}/{len(ex)} | {best:.2f} |"
            f" {kept}/{sets} |"
        )
    print()
    print("| exploit | mean reward | sets keeping the contract |")
    print("|---|---|---|")
    names = r["per_difficulty"][0]["exploits"].keys()
    for name in names:
        rewards = [x for row in r["per_difficulty"] for x in row["exploits"][name]["rewards"]]
        kept = sum(row["exploits"][name]["contract_kept_sets"] for row in r["per_difficulty"])
        sets = sum(row["exploits"][name]["sets"] for row in r["per_difficulty"])
        print(f"| {name} | {statistics.mean(rewards):.2f} | {kept}/{sets} |")
    print()
    print(
        "| wrong pipeline | tasks | mean reward | failed sets | contract rule named |"
        " comparison speaks | errors | example detail |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, c in sorted(r["wrong_pipelines"].items()):
        ex = c["example"].replace("|", "\\|")
        print(
            f"| {name} | {c['tasks']} | {statistics.mean(c['rewards']):.2f} | {c['failed']} |"
            f" {c['contract_named']} | {c['comparison']} | {c['error']} | {ex} |"
        )
    print()
    for c in r["cost"]:
        print(
            f"cost {c['task']}: {c['with_contract_s']:.2f} s with the contract, "
            f"{c['without_contract_s']:.2f} s without"
        )
    for i in r["pandera_import"]:
        print(f"pandera import: {i['import_s']:.2f} s, +{i['rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
