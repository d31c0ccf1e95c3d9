"""``referee train``: does RL beat imitation of an imperfect demonstrator, on held-out tasks, on
a CPU? The single-turn mode: one completion per task, judged by the sandboxed verifier.

1. **Tasks**: ``list-ops`` tasks (:mod:`referee.tasks.procedural`), split by structure
   (:mod:`referee.experiments.listops.tasks`): a held-out task's composition was never trained
   on.
2. **Model**: a tokenizer trained on the training tasks' texts and a small Llama, both made
   here (:mod:`referee.experiments.listops.tiny`), or any local path / hub id given.
3. **Supervised fine-tuning** (:mod:`~referee.experiments.listops.sft`, completion-only loss)
   on the :class:`~referee.experiments.listops.demonstrator.Demonstrator`'s solutions:
   imperfect, with systematic misconceptions in a fixed share of them.
4. **GRPO** (:mod:`~referee.experiments.listops.grpo`) from the fine-tuned model: rewards from
   the sandboxed verifier through a TRL reward function, tasks chosen by the curriculum (or
   uniformly), canaries in the pool, quarantined tasks out, zero-variance groups counted.
5. **Control**: fine-tuning continued from the same checkpoint on the same demonstrations for
   the same wall time as GRPO took: what imitation reaches with RL's extra time.
6. **Evaluation**: greedy held-out pass@1 before fine-tuning, after it, after GRPO and for the
   control, with paired per-task tests; training reward beside them.

Everything lands in the run folder (:class:`~referee.track.layout.RunLayout`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from referee.experiments.listops.config import ExperimentConfig
from referee.experiments.listops.demonstrator import Demonstrator
from referee.experiments.listops.grpo import StepRecord, grpo_pool, grpo_stage
from referee.experiments.listops.process import Timer, place
from referee.experiments.listops.results import ExperimentResults, SFTResult, experiment_results
from referee.experiments.listops.tasks import prepare_tasks, task_prompt
from referee.rollout.evaluate import EvalResult
from referee.tasks.model import Task
from referee.track.layout import RunLayout

__all__ = ["CompletionRollouts", "run_single_turn"]

Log = Callable[[str], None]


class CompletionRollouts:
    """Single-turn episodes for the GRPO stage: TRL samples a completion of each task's
    prompt; a TRL reward function asks the verifier (pass/fail, or partial credit)."""

    def __init__(
        self, pool: Sequence[Task], verifier: Any, tokenizer: Any, *, prompt: str, reward: str
    ) -> None:
        self.pool = list(pool)
        self.verifier = verifier
        self.tokenizer = tokenizer
        self.prompt = prompt
        self.binary = reward == "pass"

    def dataset(self) -> Any:
        from referee.train.trl_adapter import tasks_dataset

        return tasks_dataset(self.pool, prompt=lambda t: task_prompt(t, self.prompt))

    def reward_function(self, record: StepRecord) -> Callable[..., list[float | None]]:
        from referee.train.trl_adapter import reward_function

        def on_verdicts(batch: list[Task], texts: list[str], verdicts: list[Any]) -> None:
            # The reward GRPO was given (pass/fail by default), as TRL saw it.
            lengths = [len(self.tokenizer(c, add_special_tokens=False)["input_ids"]) for c in texts]
            prompts = [task_prompt(t, self.prompt) for t in batch]
            prompt_lengths = [len(self.tokenizer(p)["input_ids"]) for p in prompts]
            record.log_verdicts(
                batch, prompts, texts, verdicts, prompt_tokens=prompt_lengths,
                completion_tokens=lengths, binary=self.binary,
            )  # fmt: skip

        return reward_function(
            self.verifier, self.pool, on_verdicts=on_verdicts, binary=self.binary
        )

    def trainer_options(self) -> dict[str, Any]:
        return {}

    def grpo_options(self) -> dict[str, Any]:
        return {}

    def finish(self) -> dict[str, Any]:
        return {}


def run_single_turn(
    cfg: ExperimentConfig, layout: RunLayout, *, quarantined: set[str], log: Log
) -> ExperimentResults:
    """Run the single-turn experiment (see the module docstring) in ``layout``'s folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from referee.experiments.listops.evaluation import evaluate, imitation_ceiling
    from referee.experiments.listops.sft import control_stage, fine_tune, save_checkpoint
    from referee.experiments.listops.tiny import tiny_model, train_tokenizer
    from referee.verify.function import FunctionVerifier, harness_sandbox

    timer = Timer()
    sandbox = harness_sandbox()
    verifier = FunctionVerifier(sandbox)
    style, ev = cfg.tasks.prompt, cfg.evaluation
    try:
        t0 = time.perf_counter()
        train, dev, heldout = prepare_tasks(cfg.tasks, sandbox, seed=cfg.seed)
        timer.lap("tasks", t0)
        log(f"tasks: {len(train)} train, {len(dev)} dev, {len(heldout)} held-out for evaluation")

        demo = Demonstrator(share=cfg.sft.demo_share)
        rows = [
            {"prompt": task_prompt(t, style), "completion": demo.solve(t, draw=d)}
            for d in range(max(1, cfg.sft.demo_draws))
            for t in train
        ]
        t0 = time.perf_counter()
        probe = random.Random(cfg.seed).sample(range(len(rows)), min(400, len(rows)))
        demo_verdicts = verifier.verify_many(
            [(train[i % len(train)], rows[i]["completion"]) for i in probe]
        )
        demo_pass = sum(v.passed for v in demo_verdicts) / len(demo_verdicts)
        ceiling = imitation_ceiling(demo, heldout, dev, verifier)
        timer.lap("demo_check", t0)
        log(f"demonstrations: {demo_pass:.1%} of a sample of {len(probe)} pass their tests")
        log(
            "imitation ceiling (the demonstrator's majority answer): held-out "
            f"{ceiling['heldout_mode']:.1%}, dev {ceiling['dev_mode']:.1%}; its draws pass "
            f"{ceiling['heldout_draw']:.1%} of held-out tasks"
        )

        if cfg.model.model is None:
            texts = [r["prompt"] + r["completion"] for r in rows]
            texts += [task_prompt(t, style) + t.hidden["reference"] for t in train[:200]]
            tokenizer = train_tokenizer(texts)
            model = tiny_model(tokenizer, cfg.model.tiny, seed=cfg.seed)
        else:
            tokenizer = AutoTokenizer.from_pretrained(cfg.model.model)
            model = AutoModelForCausalLM.from_pretrained(cfg.model.model)
        model = place(model)  # the run's device (the CPU here; CUDA where present)

        dev_scores: dict[str, float] = {}
        pass_k: dict[str, dict[int, float]] = {}
        infra: dict[str, int] = {}

        def on(m: Any, tasks: list[Task], samples: int = 0) -> EvalResult:
            return evaluate(
                m, tokenizer, tasks, verifier, max_new_tokens=ev.max_completion_tokens,
                prompt=lambda task: task_prompt(task, style), samples=samples,
                ks=(1, ev.pass_k_samples), temperature=ev.temperature, seed=cfg.seed,
            )  # fmt: skip

        def heldout_eval(m: Any, name: str) -> EvalResult:
            t = time.perf_counter()
            res = on(m, heldout, ev.pass_k_samples if name in ("sft", "rl", "control") else 0)
            if res.pass_at_k:
                pass_k[name] = res.pass_at_k
            # A verification that could not run is not a failure of the model: counted apart
            # and shown, never folded silently into pass@1.
            infra[name] = res.infra_errors
            if res.infra_errors:
                log(f"warning: {res.infra_errors} held-out verifications of {name} failed to run")
            if dev and not name.startswith("rl-step"):
                dev_scores[name] = on(m, dev).pass_at_1
            timer.lap(f"eval_{name}", t)
            log(f"held-out pass@1 {name}: {res.pass_at_1:.3f} (dev {dev_scores.get(name, 0):.3f})")
            return res

        prepared: dict[str, Any] = {}
        before = heldout_eval(model, "before")
        t0 = time.perf_counter()
        if cfg.model.sft_checkpoint:
            tokenizer = AutoTokenizer.from_pretrained(cfg.model.sft_checkpoint)
            model = place(AutoModelForCausalLM.from_pretrained(cfg.model.sft_checkpoint))
            sft_result = SFTResult.skipped(cfg.model.sft_checkpoint)
        else:
            sft_result = fine_tune(
                model, tokenizer, rows, cfg.sft, layout.sft_dir, steps=cfg.sft.steps,
                seed=cfg.seed, prepared=prepared,
                dev_eval=(lambda m: float(on(m, dev).pass_at_1)) if dev else None,
            )  # fmt: skip
        timer.lap("sft", t0)
        log(f"fine-tuning: {sft_result.describe()}")
        model = save_checkpoint(model, tokenizer, layout)
        sft = heldout_eval(model, "sft")

        t0 = time.perf_counter()
        pool, canaries = grpo_pool(train, cfg.grpo, seed=cfg.seed)
        rollouts = CompletionRollouts(
            pool, verifier, tokenizer, prompt=style, reward=cfg.grpo.reward
        )
        rl_result, rl = grpo_stage(
            model, tokenizer, rollouts, cfg, layout, pool=pool, heldout=heldout,
            heldout_eval=heldout_eval, start=sft, quarantined=quarantined,
            canaries=len(canaries), timer=timer, t0=t0, log=log,
        )  # fmt: skip
        control_result, control = control_stage(
            cfg.sft, layout, tokenizer, rows, fine_tuning=sft_result, grpo_wall_s=rl_result.wall_s,
            grpo_cpu_s=rl_result.total_cpu_s, seed=cfg.seed, heldout_eval=heldout_eval,
            timer=timer, log=log, prepared=prepared,
        )  # fmt: skip

        results = experiment_results(
            layout, train=train, heldout=heldout, demo_pass=demo_pass, ceiling=ceiling,
            stages={"before": before, "sft": sft, "rl": rl, "control": control},
            sft=sft_result, rl=rl_result, control=control_result, dev_pass_at_1=dev_scores,
            heldout_pass_at_k=pass_k, heldout_infra_errors=infra, times=timer.times,
        )  # fmt: skip
        results.write(layout)
        return results
    finally:
        verifier.close()
        sandbox.close()
