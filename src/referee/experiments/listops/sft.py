"""The one supervised fine-tuning stage (TRL ``SFTTrainer``), and the SFT-only control.

Both modes fine-tune with it: single-turn on prompt/completion rows (completion-only loss),
multi-turn on token ids with a mask of the assistant's own tokens. The **control** is the same
stage continued from the fine-tuned checkpoint on the same demonstrations for GRPO's time (wall
seconds, or CPU seconds: ``SFTConfig.control_clock``): what imitation reaches with RL's extra
time.

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
from referee.experiments.listops.process import StageClock, Timer, place, trainer_device_args
from referee.experiments.listops.results import SFTResult
from referee.track.layout import RunLayout

if TYPE_CHECKING:
    from referee.rollout.evaluate import EvalResult

__all__ = ["control_budget", "control_stage", "fine_tune", "run_control", "save_checkpoint"]


def fine_tune(
    model: Any, tokenizer: Any, rows: Sequence[Any], cfg: SFTConfig, out: Path,
    *, steps: int, time_budget_s: float | None = None, seed: int = 0,
    dev_eval: Callable[[Any], float] | None = None, lr: float | None = None,
    prepared: dict[str, Any] | None = None, stage: str = "fine-tuning", clock: str = "wall",
) -> SFTResult:  # fmt: skip
    """Fine-tune ``model`` on ``rows`` for ``steps`` (or until ``time_budget_s`` of training,
    counted by ``clock``: wall seconds, or this process's CPU seconds; see
    :data:`~referee.experiments.listops.process.CLOCKS`).

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
            self.clock = StageClock()

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            # The clock starts with the first step: tokenising the data set is not training.
            self.t0 = time.perf_counter()
            self.clock.start()
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            every = cfg.eval_every
            if dev_eval is not None and every and state.global_step % every == 0:
                t = time.perf_counter()
                with self.clock.paused():
                    point = {"step": state.global_step, "dev_pass_at_1": dev_eval(kw["model"])}
                curve.append(point)
                self.eval_s += time.perf_counter() - t
            if clock == "cpu":
                spent = self.clock.cpu()
            else:  # as before the CPU clock existed, to the digit
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
        cpu_s=round(budget.clock.cpu(), 2),
        lr=args.learning_rate,
        loss_first=losses[0] if losses else None,
        loss_last=losses[-1] if losses else None,
        dev_curve=tuple(curve),
    )


def control_budget(
    cfg: SFTConfig, fine_tuning: SFTResult, *, grpo_wall_s: float, grpo_cpu_s: float | None
) -> tuple[float, int]:
    """(the control's time, the steps planned for it): GRPO's time by ``cfg.control_clock``,
    and the steps it buys at fine-tuning's pace measured by the same clock (10**6 where no pace
    was measured: the clock alone stops the control).

    >>> ft = SFTResult(steps=100, wall_s=60.0, train_s=50.0, lr=3e-3, cpu_s=20.0)
    >>> control_budget(SFTConfig(), ft, grpo_wall_s=30.0, grpo_cpu_s=12.0)
    (30.0, 60)
    >>> control_budget(SFTConfig(control_clock="cpu"), ft, grpo_wall_s=30.0, grpo_cpu_s=12.0)
    (12.0, 60)
    """
    if cfg.control_clock == "cpu":
        if grpo_cpu_s is None:
            raise ValueError("control_clock 'cpu' needs GRPO's CPU seconds (grpo_cpu_s)")
        budget, pace = grpo_cpu_s, fine_tuning.pace_cpu_s
    else:
        budget, pace = grpo_wall_s, fine_tuning.pace_s
    return budget, int(budget / pace) if pace > 0 else 10**6


def run_control(
    cfg: SFTConfig, layout: RunLayout, tokenizer: Any, rows: Sequence[Any], *,
    fine_tuning: SFTResult, grpo_wall_s: float, seed: int,
    prepared: dict[str, Any] | None = None, grpo_cpu_s: float | None = None,
) -> tuple[SFTResult, Any]:  # fmt: skip
    """The control: from the saved fine-tuned model, fine-tuning continued for GRPO's time;
    returns its result and model (saved, with the tokenizer, as ``model-control``).

    GRPO's time is counted by ``cfg.control_clock``: ``wall``, its wall seconds
    (``grpo_wall_s``); ``cpu``, the CPU seconds it cost (``grpo_cpu_s``: its process and the
    sandbox's runs), which the load of other work on a shared machine does not change, so the
    control gets the compute GRPO had whatever ran beside either stage. Its schedule is sized
    to that time: a second fine-tuning stage (cosine from ``cfg.control_lr``) over the steps
    the time buys at fine-tuning's measured pace (by the same clock); the clock stops it if the
    pace differs."""
    from dataclasses import replace

    from transformers import AutoModelForCausalLM

    budget, planned = control_budget(
        cfg, fine_tuning, grpo_wall_s=grpo_wall_s, grpo_cpu_s=grpo_cpu_s
    )
    base = place(AutoModelForCausalLM.from_pretrained(layout.model_sft))
    result = fine_tune(
        base, tokenizer, rows, cfg, layout.control_dir, prepared=prepared,
        steps=max(1, planned), time_budget_s=budget, seed=seed + 1, lr=cfg.control_lr,
        stage="control", clock=cfg.control_clock,
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
    prepared: dict[str, Any] | None = None, grpo_cpu_s: float | None = None,
) -> tuple[SFTResult | None, EvalResult | None]:  # fmt: skip
    """The control stage as both modes run it, so that they time, log and evaluate it alike:
    :func:`run_control` when ``cfg.control`` asks for it, timed as ``control``, then the
    held-out evaluation of its model as stage ``control``. ``(None, None)`` without a control."""
    if not cfg.control:
        return None, None
    t0 = time.perf_counter()
    result, base = run_control(
        cfg, layout, tokenizer, rows, fine_tuning=fine_tuning, grpo_wall_s=grpo_wall_s,
        seed=seed, prepared=prepared, grpo_cpu_s=grpo_cpu_s,
    )  # fmt: skip
    timer.lap("control", t0)
    what = "CPU time" if cfg.control_clock == "cpu" else "wall time"
    log(f"control (fine-tuning for GRPO's {what}): {result.describe()}")
    return result, heldout_eval(base, "control")
