"""Summarise `referee train` run folders for bench/RESULTS.md: the per-seed table, the paired
tests, and held-out pass@1 per GRPO step for curriculum against uniform sampling.

    .venv/bin/python bench/train_summary.py runs/seed1-curriculum runs/seed2-curriculum \\
        --compare runs/seed1-curriculum runs/seed1-uniform
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--compare", nargs=2, metavar=("CURRICULUM", "UNIFORM"))
    args = ap.parse_args()
    print(
        "| run | seed | demos passing | held-out before | after SFT | after GRPO "
        "| SFT-only control | GRPO vs SFT (better/worse, p) | GRPO vs control (better/worse, p) "
        "| train reward (first → last steps) | dev: SFT → GRPO | wall s: SFT / GRPO / control |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        r = json.loads((Path(run) / "results.json").read_text())
        cfg = json.loads((Path(run) / "config.json").read_text())
        p = r["paired"]

        def vs(key: str, p: dict[str, dict[str, float]] = p) -> str:
            t = p.get(key)
            return f"{t['a_only']}/{t['b_only']}, p={t['p_value']:.2g}" if t else "-"

        dev = r.get("dev_pass_at_1", {})
        times = r["times"]
        print(
            f"| {run} | {cfg['seed']} | {_pct(r['demo_pass_rate'])} | {_pct(r['heldout_before'])} "
            f"| {_pct(r['heldout_sft'])} | **{_pct(r['heldout_rl'])}** | "
            f"{_pct(r['heldout_sft_control'])} | {vs('rl_vs_sft')} | {vs('rl_vs_control')} | "
            f"{r['rl']['train_reward_first']:.2f} → {r['train_reward']:.2f} | "
            f"{_pct(dev.get('sft'))} → {_pct(dev.get('rl'))} | "
            f"{times.get('sft')} / {times.get('rl')} / {times.get('control', '-')} |"
        )
    if args.compare:
        rows = {}
        for name, run in zip(("curriculum", "uniform"), args.compare, strict=True):
            r = json.loads((Path(run) / "results.json").read_text())
            curve = {0: r["heldout_sft"]} | {
                c["step"]: c["heldout_pass_at_1"] for c in r["rl"]["curve"]
            }
            curve[r["rl"]["steps"]] = r["heldout_rl"]
            rows[name] = (curve, r)
        steps = sorted(set(rows["curriculum"][0]) | set(rows["uniform"][0]))
        print()
        print("| GRPO step | " + " | ".join(str(s) for s in steps) + " |")
        print("|---|" + "---|" * len(steps))
        for name, (curve, _) in rows.items():
            print(f"| {name} | " + " | ".join(_pct(curve.get(s)) for s in steps) + " |")
        for name, (_, r) in rows.items():
            c = r["rl"].get("curriculum") or {}
            print(
                f"\n{name}: train reward first/last {r['rl']['train_reward_first']:.3f}/"
                f"{r['train_reward']:.3f}; "
                f"zero-variance groups {r['rl']['frac_zero_std_mean']:.2f}; "
                f"tasks seen {c.get('seen')}, groups dropped {c.get('groups_dropped')}"
            )


if __name__ == "__main__":
    main()
