"""Distribution shift: a scripted fixer's success, clean and under each shift wrapper.

    PYTHONPATH=src .venv/bin/python bench/shift_drop.py [--tasks 6] [--episodes 3]

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
import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.envs.shift_policy
sys.path.insert(0, str(Path(__file__).parent))
from tests.envs.shift_policy import LIMITS, bugfix_tasks, run_condition

from _common import OUT, machine, save
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
    ap.add_argument("--render", action="store_true", help="only rewrite --out from the JSON")
    args = ap.parse_args()
    if args.render:
        data = json.loads((OUT / "shift_drop.json").read_text())
        args.tasks, args.episodes = data["tasks"], data["episodes"]
        Path(args.out).write_text(_markdown(data, args))
        return

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
            consistent = sum(t.passed == _wrote_fix(t) for t in trajs)
            ends: dict[str, int] = {}
            for t in trajs:
                ends[t.end_reason] = ends.get(t.end_reason, 0) + 1
            rows.append({
                "condition": row.label, "episodes": row.episodes, "passed": row.passed,
                "success": row.success, "drop": row.drop, "infra_errors": row.infra_errors,
                "perturbations": row.perturbations, "end_reasons": ends,
                "episode_s": wall * args.concurrency / max(1, len(trajs)),
                "verdict_follows_fix": consistent,
            })  # fmt: skip
            print(f"{row.label}: {100 * row.success:.0f}% ({wall:.0f}s) {ends}", flush=True)
    data = {"machine": machine(), "tasks": len(tasks), "episodes": args.episodes, "rows": rows}
    save("shift_drop", data)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(_markdown(data, args))
    print(Path(args.out).read_text())


def _wrote_fix(t: Any) -> bool:
    """Whether the policy's write_file of the fix was run (answered with no error)."""
    for turn in t.turns:
        calls = turn.assistant.get("tool_calls") or []
        answers = {m.get("tool_call_id"): str(m.get("content", "")) for m in turn.observations}
        for c in calls:
            answer = answers.get(c["id"])
            name = c["function"]["name"]
            if name == "write_file" and answer and not re.match(r"(?i)\s*(error|failed:)", answer):
                return True
    return False


def _markdown(data: dict[str, Any], args: argparse.Namespace) -> str:
    m = data["machine"]
    lines = [
        "## Distribution shift: success clean vs under each wrapper",
        "",
        f"2026-12-02 (run {m['date']}), {m['cpu']}, {m['cores']} cores, shared with other jobs.",
        "",
        f"    PYTHONPATH=src .venv/bin/python bench/shift_drop.py --tasks {args.tasks} "
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
    consistent = sum(r.get("verdict_follows_fix", 0) for r in data["rows"])
    total = sum(r["episodes"] for r in data["rows"])
    lines += [
        "",
        f"Verdict vs workspace: in {consistent} of {total} episodes the verdict passed exactly "
        "when the policy's write of the fix had run (checked from the trajectories).",
        "",
        *NOTES,
    ]
    return "\n".join(lines) + "\n"


NOTES = [
    "How to read it: the fixer is deliberately a simple reader, so each drop names the reading "
    "a shift breaks. Noise mangles the paths and test names it matches (a listed "
    "`minilib/stats.py`, a `FAILED tests/test_stats.py::...` line); keeping the tail of a "
    "test run loses its summary and FAILED lines (the head keeps them); paraphrase rewords the "
    "summary and FAILED lines its regexes expect; of the misleading lines only `INFO: all tests "
    "passed` fools it (it then submits the unfixed workspace, judged as it is); reordering "
    "changes nothing because it parses lines wherever they are. Transient failures cost what "
    "one retry does not cover; three retries recover them; with p=1.0 nothing ever runs. Slow "
    "tools cost only time until an episode limit binds.",
    "",
    "Reruns: the perturbations are seeded per task, episode and turn, but tool outputs carry "
    "timings (`exit 0 in 292.0 ms`), so character noise can land a few characters differently "
    "from run to run; the wall column is the shared machine's.",
]


if __name__ == "__main__":
    main()
