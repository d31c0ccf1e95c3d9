"""The one supervised fine-tuning stage (TRL ``SFTTrainer``), and the SFT-only control.

Both modes fine-tune with it: single-turn on prompt/completion rows (completion-only loss),
multi-turn on token ids with a mask of the assistant's own tokens. The **control** is the same
stage continued from the fine-tuned checkpoint on the same demonstrations for GRPO's wall time:
what imitation reaches with RL's extra time.

>>> result = fine_tune(model, tok, rows, SFTConfig(steps=300), run.sft_dir)   # doctest: +SKIP
>>> result.steps, result.loss_last                                           # doctest: +SKIP
(300, 0.41)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.experiments.listops.config import SFTConfig
from referee.experiments.listops.process import Timer, place, trainer_device_args
from referee.experiments.listops.results import SFTResult
from referee.track.layout import RunLayout

if TYPE_CHECKING:
    from referee.rollout.evaluate import EvalResult

__all__ = ["control_stage", "fine_tune", "run_control", "save_checkpoint"]


def fine_tune(
    model: Any, tokenizer: Any, rows: Sequence[Any], cfg: SFTConfig, out: Path,
    *, steps: int, time_budget_s: float | None = None, seed: int = 0,
    dev_eval: Callable[[Any], float] | None = None, lr: float | None = None,
    prepared: dict[str, Any] | None = None, stage: str = "fine-tuning",
) -> SFTResult:  # fmt: skip
    """Fine-tune ``model`` on ``rows`` for ``steps`` (or until ``time_budget_s`` of training).

    ``dev_eval(model)`` gives the dev curve every ``cfg.eval_every`` steps (its time is not
    training time). ``prepared``, if given, caches TRL's tokenised data set: the control reuses
    the fine-tuning stage's, since tokenising tens of thousands of demonstrations costs as much
    as a hundred steps."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl.trainer.sft_config import SFTConfig as TRLSFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

    from referee.experiments.listops.trainer_log import quiet_trainer

    curve: list[dict[str, Any]] = []

    class Budget(TrainerCallback):
        def __init__(self) -> None:
            self.t0 = time.perf_counter()
            self.eval_s = 0.0  # the dev curve's time is not fine-tuning time

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            # The clock starts with the first step: tokenising the data set is not training.
            self.t0 = time.perf_counter()
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            every = cfg.eval_every
            if dev_eval is not None and every and state.global_step % every == 0:
                t = time.perf_counter()
                curve.append({"step": state.global_step, "dev_pass_at_1": dev_eval(kw["model"])})
                self.eval_s += time.perf_counter() - t
            spent = time.perf_counter() - self.t0 - self.eval_s
            if time_budget_s is not None and spent >= time_budget_s:
                control.should_training_stop = True
            return control

    args = TRLSFTConfig(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=cfg.batch,
        learning_rate=cfg.lr if lr is None else lr,
        lr_scheduler_type="cosine",
        warmup_steps=min(20, steps // 10),
        weight_decay=0.0,
        logging_steps=25,
        save_strategy="no",
        report_to="none",
        **trainer_device_args(),  # the CPU here; CUDA in bf16/fp16 where present
        # TRL turns checkpointing on by default; for a model this small it only recomputes
        # every forward pass (a quarter of each step's time here).
        gradient_checkpointing=False,
        seed=seed,
        completion_only_loss=True,
        max_length=cfg.max_length,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    budget = Budget()
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=(prepared or {}).get("dataset") or Dataset.from_list(list(rows)),
        processing_class=tokenizer,
        callbacks=[budget],
    )
    quiet_trainer(trainer, out, stage)
    if prepared is not None:
        prepared["dataset"] = trainer.train_dataset
    t0 = time.perf_counter()
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return SFTResult(
        steps=trainer.state.global_step,
        wall_s=round(time.perf_counter() - t0 - budget.eval_s, 2),
        train_s=round(time.perf_counter() - budget.t0 - budget.eval_s, 2),
        lr=args.learning_rate,
        loss_first=losses[0] if losses else None,
        loss_last=losses[-1] if losses else None,
        dev_curve=tuple(curve),
    )


def run_control(
    cfg: SFTConfig, layout: RunLayout, tokenizer: Any, rows: Sequence[Any], *,
    fine_tuning: SFTResult, grpo_wall_s: float, seed: int,
    prepared: dict[str, Any] | None = None,
) -> tuple[SFTResult, Any]:  # fmt: skip
    """The control: from the saved fine-tuned model, fine-tuning continued for GRPO's wall
    time; returns its result and model (saved, with the tokenizer, as ``model-control``).

    Its schedule is sized to that time: a second fine-tuning stage (cosine from
    ``cfg.control_lr``) over the steps the time buys at fine-tuning's measured pace; the clock
    stops it if the pace differs."""
    from dataclasses import replace

    from transformers import AutoModelForCausalLM

    base = place(AutoModelForCausalLM.from_pretrained(layout.model_sft))
    pace = fine_tuning.pace_s
    planned = int(grpo_wall_s / pace) if pace > 0 else 10**6
    result = fine_tune(
        base, tokenizer, rows, cfg, layout.control_dir, prepared=prepared,
        steps=max(1, planned), time_budget_s=grpo_wall_s, seed=seed + 1, lr=cfg.control_lr,
        stage="control",
    )  # fmt: skip
    base.save_pretrained(layout.model_control)
    tokenizer.save_pretrained(layout.model_control)
    return replace(result, planned_steps=planned), base


def save_checkpoint(model: Any, tokenizer: Any, layout: RunLayout) -> Any:
    """Save the fine-tuned ``model`` and ``tokenizer`` as ``model-sft``; returns the model loaded
    back from there, the one GRPO starts from in both modes: TRL builds its KL reference model
    from the model's path, which a model made in memory does not have."""
    from transformers import AutoModelForCausalLM

    model.save_pretrained(layout.model_sft)
    tokenizer.save_pretrained(layout.model_sft)
    return place(AutoModelForCausalLM.from_pretrained(layout.model_sft))


def control_stage(
    cfg: SFTConfig, layout: RunLayout, tokenizer: Any, rows: Sequence[Any], *,
    fine_tuning: SFTResult, grpo_wall_s: float, seed: int,
    heldout_eval: Callable[[Any, str], EvalResult], timer: Timer, log: Callable[[str], None],
    prepared: dict[str, Any] | None = None,
) -> tuple[SFTResult | None, EvalResult | None]:  # fmt: skip
    """The control stage as both modes run it, so that they time, log and evaluate it alike:
    :func:`run_control` when ``cfg.control`` asks for it, timed as ``control``, then the
    held-out evaluation of its model as stage ``control``. ``(None, None)`` without a control."""
    if not cfg.control:
        return None, None
    t0 = time.perf_counter()
    result, base = run_control(
        cfg, layout, tokenizer, rows, fine_tuning=fine_tuning, grpo_wall_s=grpo_wall_s,
        seed=seed, prepared=prepared,
    )  # fmt: skip
    timer.lap("control", t0)
    log(f"control (fine-tuning for GRPO's wall time): {result.describe()}")
    return result, heldout_eval(base, "control")
