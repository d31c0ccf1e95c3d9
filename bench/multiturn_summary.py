"""Summarise multi-turn `referee train --env code` run folders (issue 27): the per-seed table
for bench/RESULTS.md, and one small JSON per run under bench/results/multiturn/.

Besides the held-out numbers and the paired tests that `results.json` holds, it reads the
episodes to tell *format* from *correctness*: a held-out episode that fails either never wrote a
solution file the environment accepted (format: no valid ``write_file`` call), or wrote one whose
code fails the tests (correctness). And from GRPO's ``trajectories.jsonl``, per step: the reward,
the share of groups whose eight episodes all tied (no GRPO gradient) and the share of episodes
that wrote a file.

    .venv/bin/python bench/multiturn_summary.py runs/mt-s1 runs/mt-s2 runs/mt-s3 \\
        --out bench/results/multiturn
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

CONFIG_KEYS = (
    "tasks", "sft_steps", "rl_steps", "rl_prompts", "group_size", "rl_lr", "kl_beta",
    "temperature", "max_completion_tokens", "control_clock", "canary_share",
)  # fmt: skip
GRPO_KEYS = (
    "steps", "wall_s", "cpu_s", "sandbox_cpu_s", "episodes", "infra_errors",
    "frac_zero_std_mean", "zero_variance_groups_mean", "curve",
)  # fmt: skip


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def wrote_file(messages: list[dict[str, Any]]) -> bool:
    """Whether the environment accepted a ``write_file`` call of the episode."""
    return any(
        m.get("role") == "tool"
        and m.get("name") == "write_file"
        and str(m.get("content", "")).startswith("wrote ")
        for m in messages
    )


def outcomes(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Held-out episodes of one stage: passed, wrong code (a file written, tests failed), no
    valid file (format), and how many submitted."""
    n = len(rows)
    passed = sum(r["passed"] for r in rows)
    wrote = sum(wrote_file(r["messages"]) for r in rows)
    return {
        "n": n,
        "passed": passed,
        "wrong_code": wrote - sum(r["passed"] and wrote_file(r["messages"]) for r in rows),
        "no_valid_file": n - wrote,
        "submitted": sum(r["submitted"] for r in rows),
        "infra_errors": sum(bool(r.get("infra_error")) for r in rows),
    }


def grpo_steps(path: Path) -> list[dict[str, Any]]:
    """Per GRPO step: mean reward, groups without variance, episodes that wrote a file."""
    by_step: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        r = json.loads(line)
        by_step[r["step"]].append(r)
    out = []
    for step, rows in sorted(by_step.items()):
        groups: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            if r["reward"] is not None:
                groups[r["task_id"]].append(r["reward"])
        tied = sum(len(set(g)) <= 1 for g in groups.values())
        scored = [r["reward"] for r in rows if r["reward"] is not None]
        out.append({
            "step": step + 1,
            "episodes": len(rows),
            "reward": round(sum(scored) / max(1, len(scored)), 4),
            "zero_variance_groups": round(tied / max(1, len(groups)), 3),
            "wrote_file": round(sum(wrote_file(r["messages"]) for r in rows) / len(rows), 3),
            "tool_calls": round(sum(r["tool_calls"] for r in rows) / len(rows), 2),
        })  # fmt: skip
    return out


def summary(run: Path) -> dict[str, Any]:
    r = json.loads((run / "results.json").read_text())
    cfg = json.loads((run / "config.json").read_text())
    stages: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (run / "heldout_episodes.jsonl").read_text().splitlines():
        row = json.loads(line)
        stages[row["stage"]].append(row)
    traj = run / "trajectories.jsonl"
    steps = grpo_steps(traj) if traj.exists() else []
    keep = ("steps", "wall_s", "train_s", "cpu_s", "planned_steps", "lr", "dev_curve")
    return {
        "run_dir": str(run),
        "seed": cfg["seed"],
        "config": {k: cfg[k] for k in CONFIG_KEYS if k in cfg},
        "train_tasks": r["train_tasks"],
        "heldout_tasks": r["heldout_tasks"],
        "demo_pass_rate": r["demo_pass_rate"],
        "imitation_ceiling": r["imitation_ceiling"],
        "heldout_before": r["heldout_before"],
        "heldout_sft": r["heldout_sft"],
        "heldout_rl": r["heldout_rl"],
        "heldout_control": r["heldout_sft_control"],
        "paired": r["paired"],
        "dev_pass_at_1": r.get("dev_pass_at_1", {}),
        "sft": {k: v for k, v in r["sft"].items() if k in keep},
        "control": {k: v for k, v in (r.get("control") or {}).items() if k in keep},
        "grpo": {k: r["rl"].get(k) for k in GRPO_KEYS},
        "grpo_per_step": steps,
        "heldout_outcomes": {name: outcomes(rows) for name, rows in stages.items()},
        "times": r["times"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help="write <out>/<run folder name>.json")
    args = ap.parse_args()
    print(
        "| seed | ceiling | before | after SFT | **after GRPO** | **control** (steps) "
        "| GRPO vs SFT | **GRPO vs control** | dev: SFT → GRPO → control "
        "| CPU s: GRPO (+sandbox) / control | wall s: GRPO / control |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        s = summary(run)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{run.name}.json").write_text(json.dumps(s, indent=1) + "\n")
        p = s["paired"]

        def vs(key: str, p: dict[str, Any] = p) -> str:
            t = p.get(key)
            return f"{t['a_only']}/{t['b_only']}, p={t['p_value']:.2g}" if t else "-"

        dev, g, c = s["dev_pass_at_1"], s["grpo"], s["control"]
        print(
            f"| {s['seed']} | {_pct(s['imitation_ceiling']['heldout_mode'])} "
            f"| {_pct(s['heldout_before'])} | {_pct(s['heldout_sft'])} "
            f"| **{_pct(s['heldout_rl'])}** | **{_pct(s['heldout_control'])}** "
            f"({c.get('steps')} of {c.get('planned_steps')}) | {vs('rl_vs_sft')} "
            f"| **{vs('rl_vs_control')}** | {_pct(dev.get('sft'))} → {_pct(dev.get('rl'))} → "
            f"{_pct(dev.get('control'))} | {g.get('cpu_s')} (+{g.get('sandbox_cpu_s')}) / "
            f"{c.get('cpu_s')} | {g.get('wall_s')} / {c.get('train_s')} |"
        )
    for run in args.runs:
        s = summary(run)
        print(f"\n{run}: held-out outcomes by stage (passed / wrong code / no valid file):")
        for name, o in s["heldout_outcomes"].items():
            print(
                f"  {name}: {o['passed']} / {o['wrong_code']} / {o['no_valid_file']} of {o['n']}"
                f" (submitted {o['submitted']})"
            )
        steps = s["grpo_per_step"]
        if steps:
            print(
                "  GRPO reward per step: "
                + " ".join(f"{x['reward']:.2f}" for x in steps)
                + "\n  zero-variance groups per step: "
                + " ".join(f"{x['zero_variance_groups']:.2f}" for x in steps)
                + "\n  episodes writing a file per step: "
                + " ".join(f"{x['wrote_file']:.2f}" for x in steps)
            )
        print(f"  fine-tuning dev curve: {s['sft'].get('dev_curve')}")


if __name__ == "__main__":
    main()
