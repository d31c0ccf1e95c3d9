"""The results table of ``referee train``: held-out pass@1 at each stage, with the paired tests."""

from __future__ import annotations

from typing import Any

from rich.table import Table

__all__ = ["results_table"]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def results_table(results: dict[str, Any]) -> Table:
    """The table of ``results`` (``results.json``'s keys); the run folder is not in it."""
    n = results.get("heldout_tasks", 0)
    table = Table(
        "stage",
        f"held-out pass@1 ({n} tasks, greedy)",
        "sampled pass@1 / pass@k",
        "vs RL (paired, exact McNemar)",
        "wall s",
        title="referee train: held-out pass@1 by stage",
    )  # the run folder is printed whole after the table: a title would fold a long path
    paired = results.get("paired", {})
    pass_k = results.get("heldout_pass_at_k", {})

    def sampled(stage: str) -> str:
        got = pass_k.get(stage)
        if not got:
            return ""
        return " / ".join(f"{100 * v:.1f}% (k={k})" for k, v in sorted(got.items()))

    def versus(key: str) -> str:
        p = paired.get(key)
        if not p:
            return ""
        return (
            f"RL {p['a_only']} better / {p['b_only']} worse, "
            f"diff {100 * p['diff']:+.1f} pts "
            f"[{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}], "
            f"p={p['p_value']:.3g}"
        )

    times = results.get("times", {})
    table.add_row("before fine-tuning", _pct(results.get("heldout_before")), "", "", "")
    table.add_row(
        "after fine-tuning (imperfect demos)",
        _pct(results.get("heldout_sft")),
        sampled("sft"),
        versus("rl_vs_sft"),
        str(times.get("sft", "")),
    )
    table.add_row(
        f"after GRPO (train reward, last steps: {results.get('train_reward') or 0:.3f})",
        _pct(results.get("heldout_rl")),
        sampled("rl"),
        "",
        str(times.get("rl", "")),
    )
    ceiling = results.get("imitation_ceiling")
    if ceiling:
        table.add_row(
            "imitation ceiling (the demonstrator's majority answer)",
            _pct(ceiling.get("heldout_mode")),
            f"{_pct(ceiling.get('heldout_draw'))} (one draw)",
            "",
            "",
        )
    if results.get("heldout_sft_control") is not None:
        table.add_row(
            "SFT-only control (GRPO's wall time)",
            _pct(results.get("heldout_sft_control")),
            sampled("control"),
            versus("rl_vs_control"),
            str(times.get("control", "")),
        )
    return table
