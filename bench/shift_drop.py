"""Distribution shift: a scripted fixer's success, clean and under each shift wrapper.

    PYTHONPATH=src:. .venv/bin/python bench/shift_drop.py [--tasks 6] [--episodes 3]

Bug-fixing tasks synthesised from tests/fixtures/minirepo, the scripted fixer policy of
tests/envs/shift_policy.py (it lists files, runs the tests, reads the module the failing tests
name, writes the fix, runs the tests again, submits; it retries a transiently failed call once),
``--episodes`` rollouts per task per condition through the rollout runner, the shifts applied
with :func:`referee.envs.shift.shift_factory` (episode *k* of a task is perturbed as episode
*k*, so a rerun with the same seeds measures the same thing). The clean condition must be 100%;
each other row's drop is in percentage points against it, from
:func:`referee.rollout.shift_report.compare_shifts`. Results: bench/out/shift_drop.json and the
markdown fragment bench/results/shift.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.envs.shift_policy
sys.path.insert(0, str(Path(__file__).parent))
from tests.envs.shift_policy import LIMITS, bugfix_tasks, run_condition

from _common import machine, save
from referee.envs import CodeRuntime, EpisodeLimits
from referee.rollout.shift_report import ShiftRow, compare_shifts

TIGHT = EpisodeLimits(max_turns=LIMITS.max_turns, episode_timeout_s=8.0)

#: (label suffix, shifts, episode limits, retries of the policy)
CONDITIONS: list[tuple[str, list[str], EpisodeLimits, int]] = [
    ("", [], LIMITS, 1),
    ("", ["AddObservationNoise(rate=0.002)"], LIMITS, 1),
    ("", ["AddObservationNoise(rate=0.01)"], LIMITS, 1),
    ("", ["AddObservationNoise(rate=0.05)"], LIMITS, 1),
    ("", ["TruncateObservations(max_chars=200,keep=head)"], LIMITS, 1),
    ("", ["TruncateObservations(max_chars=200,keep=tail)"], LIMITS, 1),
    ("", ["ReorderToolOutput"], LIMITS, 1),
    ("", ["ReorderToolOutput(tools=*)"], LIMITS, 1),
    ("", ["ParaphraseToolOutput(p=0.3)"], LIMITS, 1),
    ("", ["ParaphraseToolOutput(p=1.0)"], LIMITS, 1),
    ("", ["InjectMisleadingLogs(p=0.3)"], LIMITS, 1),
    ("", ["InjectMisleadingLogs(p=1.0)"], LIMITS, 1),
    ("", ["FailToolsTransiently(p=0.1)"], LIMITS, 1),
    ("", ["FailToolsTransiently(p=0.3)"], LIMITS, 1),
    (" [policy retries 3x]", ["FailToolsTransiently(p=0.3)"], LIMITS, 3),
    ("", ["FailToolsTransiently(p=1.0)"], LIMITS, 1),
    ("", ["SlowTools(delay_s=0.2)"], LIMITS, 1),
    (" [8 s episode limit]", ["SlowTools(delay_s=2.0,jitter=0.0)"], TIGHT, 1),
    ("", ["FailToolsTransiently(p=0.1)", "AddObservationNoise(rate=0.002)"], LIMITS, 1),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "shift.md"))
    args = ap.parse_args()

    t0 = time.perf_counter()
    tasks = bugfix_tasks(args.tasks)
    print(f"{len(tasks)} tasks synthesised in {time.perf_counter() - t0:.1f}s", flush=True)
    rows: list[dict[str, Any]] = []
    clean: list[Any] = []
    with CodeRuntime() as runtime:
        for suffix, shifts, limits, retries in CONDITIONS:
            t1 = time.perf_counter()
            trajs = run_condition(
                runtime, tasks, shifts, episodes=args.episodes,
                concurrency=args.concurrency, limits=limits, retries=retries,
            )  # fmt: skip
            wall = time.perf_counter() - t1
            if not shifts:
                clean = trajs
            row: ShiftRow = compare_shifts(clean + trajs if shifts else trajs)[-1]
            row = replace(row, label=row.label + suffix)
            ends: dict[str, int] = {}
            for t in trajs:
                ends[t.end_reason] = ends.get(t.end_reason, 0) + 1
            rows.append({
                "condition": row.label, "episodes": row.episodes, "passed": row.passed,
                "success": row.success, "drop": row.drop, "infra_errors": row.infra_errors,
                "perturbations": row.perturbations, "end_reasons": ends,
                "episode_s": wall * args.concurrency / max(1, len(trajs)),
            })  # fmt: skip
            print(f"{row.label}: {100 * row.success:.0f}% ({wall:.0f}s) {ends}", flush=True)
    data = {"machine": machine(), "tasks": len(tasks), "episodes": args.episodes, "rows": rows}
    save("shift_drop", data)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(_markdown(data, args))
    print(Path(args.out).read_text())


def _markdown(data: dict[str, Any], args: argparse.Namespace) -> str:
    m = data["machine"]
    lines = [
        "## Distribution shift: success clean vs under each wrapper",
        "",
        f"2026-12-02 (run {m['date']}), {m['cpu']}, {m['cores']} cores, shared with other jobs.",
        "",
        f"    PYTHONPATH=src:. .venv/bin/python bench/shift_drop.py --tasks {args.tasks} "
        f"--episodes {args.episodes}",
        "",
        f"{data['tasks']} bug-fixing tasks synthesised from tests/fixtures/minirepo x "
        f"{data['episodes']} episodes per condition, the scripted fixer of "
        "tests/envs/shift_policy.py (reads the listing and the test output, fixes the module "
        "the failing tests name, retries a transiently failed call once), every shift at seed "
        "0. Drop: clean success minus shifted success, in percentage points. Wall: seconds per "
        "episode (with the concurrency's overlap taken out, roughly).",
        "",
        "| condition | episodes | success | drop (pp) | ends | perturbations | wall s/ep |",
        "|---|---:|---:|---:|---|---|---:|",
    ]
    for r in data["rows"]:
        drop = "" if r["drop"] is None else f"{100 * r['drop']:.0f}"
        ends = ", ".join(f"{k} {v}" for k, v in sorted(r["end_reasons"].items()))
        perturbed = ", ".join(f"{k}={v}" for k, v in r["perturbations"].items()) or "-"
        lines.append(
            f"| `{r['condition']}` | {r['episodes']} | {100 * r['success']:.0f}% | {drop} | "
            f"{ends} | {perturbed} | {r['episode_s']:.1f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
