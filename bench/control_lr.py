"""Choose the SFT-only control's learning rate on dev: the control must be imitation's best shot.

From a fine-tuned checkpoint (a ``referee train`` run's ``model-sft``), continue fine-tuning on
fresh demonstrator draws for the same wall time at several peak learning rates (cosine over the
steps that time buys), and report dev pass@1 for each: the rate that ``SFTConfig.control_lr``
uses is the best of them on dev. Held-out pass@1 is printed beside it and never used to choose.

    .venv/bin/python bench/control_lr.py --run runs/x-seed3-sft800 --budget 100
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True, help="a referee train run folder with model-sft")
    ap.add_argument("--budget", type=float, default=100.0, help="seconds of training per rate")
    ap.add_argument("--lrs", default="3e-3,1e-3,3e-4,1e-4")
    ap.add_argument("--out", default="bench/out/control_lr.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from referee.experiments.listops.config import OPTIONS, experiment_config
    from referee.experiments.listops.demonstrator import Demonstrator
    from referee.experiments.listops.evaluation import evaluate
    from referee.experiments.listops.process import quiet_libraries
    from referee.experiments.listops.sft import fine_tune
    from referee.experiments.listops.tasks import prepare_tasks, task_prompt
    from referee.track.layout import RunLayout
    from referee.verify.function import FunctionVerifier, harness_sandbox

    quiet_libraries()
    run = RunLayout(a.run)
    saved = json.loads(run.config.read_text())
    cfg = experiment_config({k: v for k, v in saved.items() if k in OPTIONS and k != "tiny"})
    sandbox = harness_sandbox()
    verifier = FunctionVerifier(sandbox)
    train, dev, heldout = prepare_tasks(cfg.tasks, sandbox, seed=cfg.seed)
    demo = Demonstrator(share=cfg.sft.demo_share)
    rows = [
        {"prompt": task_prompt(t, cfg.tasks.prompt), "completion": demo.solve(t, draw=d)}
        for d in range(cfg.sft.demo_draws)
        for t in train
    ]
    tok = AutoTokenizer.from_pretrained(run.model_sft)
    # The pace of a fine-tuning step now, on this machine (its load varies): a short probe.
    probe = fine_tune(AutoModelForCausalLM.from_pretrained(run.model_sft), tok, rows, cfg.sft,
                      Path("/tmp/control_lr"), steps=40, seed=0)  # fmt: skip
    pace = probe.pace_s

    def score(model: object, tasks: list) -> float:
        return evaluate(model, tok, tasks, verifier,
                        max_new_tokens=cfg.evaluation.max_completion_tokens,
                        prompt=lambda t: task_prompt(t, cfg.tasks.prompt)).pass_at_1  # fmt: skip

    start = AutoModelForCausalLM.from_pretrained(run.model_sft)
    results = {"run": str(run.root), "budget_s": a.budget, "pace_s": pace,
               "start": {"dev": score(start, dev), "heldout": score(start, heldout)}}  # fmt: skip
    print(f"start: dev {results['start']['dev']:.3f}", flush=True)
    for lr in [float(x) for x in a.lrs.split(",")]:
        model = AutoModelForCausalLM.from_pretrained(run.model_sft)
        t0 = time.perf_counter()
        stats = fine_tune(model, tok, rows, cfg.sft, Path("/tmp/control_lr"),
                          steps=int(a.budget / pace), time_budget_s=a.budget, seed=cfg.seed + 1,
                          lr=lr)  # fmt: skip
        got = {"dev": score(model, dev), "heldout": score(model, heldout),
               "steps": stats.steps, "train_s": stats.train_s,
               "wall_s": round(time.perf_counter() - t0, 1)}  # fmt: skip
        results[str(lr)] = got
        print(f"lr {lr:g}: {got}", flush=True)
    verifier.close()
    sandbox.close()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
