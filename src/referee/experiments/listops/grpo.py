"""The one GRPO stage of the experiment, single- and multi-turn alike.

TRL's ``GRPOTrainer`` (as :class:`~referee.train.grpo.CurriculumGRPOTrainer`) from the
fine-tuned model, with everything referee adds around it, the same in both modes:

* the **pool**: the training tasks with canaries (impossible by construction:
  :mod:`referee.track.canary`) mixed in at ``canary_share`` (:func:`grpo_pool`); a pass on one
  is an alert. Canaries are never in the fine-tuning data;
* the **sampler**: the curriculum (or uniform) chooses each step's tasks; the held-out tasks
  are known to it so that it refuses them; tasks quarantined by audit labels (earlier runs'
  ``--quarantine-from`` stores at the start, this run's labels before every step) are never
  sampled;
* the **record**: every episode goes to the run's ``track.sqlite`` through
  :class:`~referee.train.tracking.RunTracking` (detectors on each step; the step metrics to
  the Prometheus endpoint of ``metrics_port`` and to the trainer's ``report_to`` loggers);
* the **held-out curve** every ``eval_every`` steps, and the held-out pass rate after GRPO;
* the **budget** (``budget_*`` options): every episode's cost is summed by the run's ledger,
  and when a budget is spent GRPO stops after the step it finished (TRL's
  ``should_training_stop``: no step is cut in half), the run is recorded ``stopped`` with the
  :class:`~referee.rollout.cost.BudgetStop`, and the rest of the experiment (the model, the
  held-out evaluation, the control) goes on from where GRPO stopped.

What differs between the modes is a :class:`Rollouts`: how TRL makes the episodes and how their
rewards come back (single-turn: a reward function over completions; multi-turn: TRL's
``environment_factory`` with the environment's verdicts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from referee.experiments.listops.config import ExperimentConfig, GRPOConfig, TrackingConfig
from referee.experiments.listops.process import StageClock, Timer, trainer_device_args
from referee.experiments.listops.results import GRPOResult
from referee.rollout.evaluate import EvalResult
from referee.tasks.curriculum import CurriculumConfig
from referee.tasks.model import Task
from referee.track.canary import make_canaries
from referee.track.detectors import Alert
from referee.track.layout import RunLayout
from referee.train.tracking import RunTracking

__all__ = ["HeldoutEval", "Rollouts", "StepRecord", "grpo_pool", "grpo_stage", "run_grpo"]

Log = Callable[[str], None]


def grpo_pool(
    train: Sequence[Task], cfg: GRPOConfig, *, seed: int
) -> tuple[list[Task], list[Task]]:
    """The GRPO pool (the training tasks and the canaries) and the canaries alone."""
    n = round(cfg.canary_share * len(train))
    canaries = make_canaries(n, seed=seed, like=list(train)) if n else []
    return [*train, *canaries], canaries


class StepRecord:
    """What every GRPO step records, whatever made its episodes: the reward GRPO was given,
    the sampler's view of the groups, the run's store (via the caller's alerts)."""

    def __init__(self, sampler: Any, tracking: RunTracking, cfg: GRPOConfig, log: Log) -> None:
        self.sampler = sampler
        self.tracking = tracking
        self.cfg = cfg
        self.log = log
        self.rewards: list[float] = []
        self.zero_variance: list[float] = []

    @property
    def step(self) -> int:
        """The step being scored (0-based)."""
        return len(self.rewards)

    def scored(
        self, tasks: Sequence[Task], scores: Sequence[float | None],
        verifier_rewards: Sequence[float | None], alerts: Sequence[Alert],
    ) -> int:  # fmt: skip
        """One step's outcome (rows in TRL's group order); returns the groups without variance.

        ``scores``: what GRPO was given (None: not scored); ``verifier_rewards``: the verdicts'
        partial credit (None: no verdict), which the curriculum learns from."""
        step = self.step
        for a in alerts:
            self.log(f"alert at step {step}: [{a.severity}] {a.detector}: {a.message}")
        good = [s for s in scores if s is not None]
        self.rewards.append(sum(good) / max(1, len(good)))
        groups: dict[str, list[float | None]] = {}
        for t, r in zip(tasks, verifier_rewards, strict=True):
            groups.setdefault(t.id, []).append(r)
        from referee.tasks.curriculum import Group

        report = self.sampler.observe([Group(k, r) for k, r in groups.items()], step=step)
        self.zero_variance.append(report.n_dropped / max(1, len(groups)))
        return int(report.n_dropped)

    def log_verdicts(
        self, batch: Sequence[Task], prompts: Sequence[str], texts: Sequence[str],
        verdicts: Sequence[Any], *, prompt_tokens: Sequence[int],
        completion_tokens: Sequence[int], binary: bool,
    ) -> None:  # fmt: skip
        """One reward call's verdicts (rows in TRL's group order): into the run's store (its
        detectors' alerts logged), then :meth:`scored` with what GRPO was given (pass/fail when
        ``binary``, else partial credit; None for an infrastructure error)."""
        scores = [
            None if v.infra_error else float(v.passed) if binary else v.reward for v in verdicts
        ]
        alerts = self.tracking.log_batch(
            self.step, batch, prompts, texts, verdicts, completion_tokens=completion_tokens,
            prompt_tokens=prompt_tokens,
        )  # fmt: skip
        rewards = [None if v.infra_error else v.reward for v in verdicts]
        self.scored(batch, scores, rewards, alerts)


class Rollouts(Protocol):
    """How TRL makes one mode's episodes and scores them."""

    def dataset(self) -> Any:
        """TRL's train data set: a ``prompt`` and a ``task_id`` per task of the pool."""
        ...

    def reward_function(self, record: StepRecord) -> Callable[..., list[float | None]]:
        """The TRL reward function; it reports each step to ``record.scored``."""
        ...

    def trainer_options(self) -> dict[str, Any]:
        """Extra keyword arguments of the trainer (``environment_factory``)."""
        ...

    def grpo_options(self) -> dict[str, Any]:
        """Extra fields of TRL's ``GRPOConfig`` (``max_tool_calling_iterations``)."""
        ...

    def finish(self) -> dict[str, Any]:
        """The mode's own fields of :class:`GRPOResult` after training (or {})."""
        ...


#: The run's held-out evaluation of a model, by stage name (``rl-step10``, ``rl``).
HeldoutEval = Callable[[Any, str], EvalResult]


def _by_task(result: EvalResult) -> dict[str, bool]:
    """Each held-out task's greedy outcome (the dashboard's held-out bars by difficulty)."""
    return dict(zip(result.task_ids, result.passed, strict=True))


def grpo_stage(
    model: Any, tokenizer: Any, rollouts: Rollouts, cfg: ExperimentConfig, layout: RunLayout, *,
    pool: Sequence[Task], heldout: Sequence[Task], heldout_eval: HeldoutEval, start: EvalResult,
    quarantined: set[str], canaries: int, timer: Timer, t0: float, log: Log,
) -> tuple[GRPOResult, EvalResult]:  # fmt: skip
    """:func:`run_grpo` as both modes run it, with the experiment's settings from ``cfg``, and
    timed as ``rl`` from ``t0`` (when the stage began: the caller's set-up of ``rollouts``
    counts) but without the held-out evaluation after GRPO (timed on its own, ``eval_rl``)."""
    result, rl = run_grpo(
        model, tokenizer, rollouts, pool=pool, heldout=heldout, cfg=cfg.grpo,
        tracking_cfg=cfg.tracking, layout=layout, seed=cfg.seed, env=cfg.env,
        run_config=cfg.options(), heldout_eval=heldout_eval, start=start,
        quarantined=quarantined, canaries=canaries, log=log,
    )  # fmt: skip
    timer.lap("rl", t0 + timer.times.get("eval_rl", 0.0))
    return result, rl


def run_grpo(
    model: Any, tokenizer: Any, rollouts: Rollouts, *, pool: Sequence[Task],
    heldout: Sequence[Task], cfg: GRPOConfig, tracking_cfg: TrackingConfig, layout: RunLayout,
    seed: int, env: str, run_config: Mapping[str, Any], heldout_eval: HeldoutEval,
    start: EvalResult, quarantined: set[str], canaries: int, log: Log,
    prior_outcomes: Mapping[str, Sequence[float]] | None = None,
    curriculum: CurriculumConfig | None = None,
) -> tuple[GRPOResult, EvalResult]:  # fmt: skip
    """GRPO from ``model`` (loaded from the fine-tuned checkpoint) on ``pool`` (see the module
    docstring); saves ``model-rl`` and returns the stage's result and its held-out evaluation.

    ``start``: the held-out evaluation GRPO starts from (the curve's step 0);
    ``quarantined``: task ids the earlier runs' audits took out; ``prior_outcomes``: outcomes
    measured before the run (``referee tasks calibrate``), which the curriculum starts from;
    ``curriculum``: the curriculum's settings when ``cfg.sampler`` is ``curriculum`` (default:
    :class:`~referee.tasks.curriculum.CurriculumConfig`'s)."""
    from transformers import TrainerCallback
    from trl.trainer.grpo_config import GRPOConfig as TRLGRPOConfig

    from referee.experiments.listops.trainer_log import quiet_trainer
    from referee.tasks.curriculum import Curriculum
    from referee.tasks.sampler import TrainingSampler
    from referee.track.loggers import RefereeMetricsCallback
    from referee.train.grpo import CurriculumGRPOTrainer

    sinks = []
    if tracking_cfg.metrics_port is not None:
        from referee.track.prometheus import MetricsServer

        sinks.append(MetricsServer(tracking_cfg.metrics_port))
        log(f"step metrics for Prometheus: {sinks[0].url}")
    tracking = RunTracking(
        layout.root, run_id=layout.name, config=dict(run_config), tasks=[*pool, *heldout],
        env=env, name=f"referee train{' --env code' if env == 'code' else ''} "
        f"(seed {seed}, {cfg.sampler})", sinks=sinks, budget=cfg.budget,
    )  # fmt: skip
    status = "failed"
    try:
        tracking.heldout(0, pass_rate=start.pass_at_1, n=len(start.passed), passed=_by_task(start))
        if cfg.sampler == "curriculum":
            mode = curriculum or CurriculumConfig()
        else:
            mode = CurriculumConfig.uniform()
        # The held-out tasks are given to the sampler too, so that it knows (and refuses) them.
        sampler = TrainingSampler(
            [*pool, *heldout],
            curriculum=Curriculum([t.id for t in pool], mode, seed=seed),
        )
        sampler.curriculum.start_from(prior_outcomes or {})
        out = sampler.curriculum.quarantine(quarantined)
        if quarantined:
            log(f"quarantined by earlier runs' audits: {out} of this run's tasks out of sampling")
        dataset = rollouts.dataset()
        index = {tid: i for i, tid in enumerate(dataset["task_id"])}

        def choose(n: int) -> list[int]:
            # Labels recorded while the run goes on (the store is shared with the dashboard)
            # take tasks out of sampling from the next step on.
            newly = sampler.curriculum.quarantine(tracking.quarantined_tasks())
            if newly:
                log(f"quarantined by audit: {newly} more tasks out of sampling")
            return [index[t.id] for t in sampler.sample(n)]

        record = StepRecord(sampler, tracking, cfg, log)
        curve: list[dict[str, Any]] = []

        # GRPO's own time: the held-out curve's evaluations inside it are not GRPO's work (the
        # control is sized by this time).
        clock = StageClock()

        class Curve(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
                if cfg.eval_every and state.global_step % cfg.eval_every == 0:
                    with clock.paused():
                        res = heldout_eval(kw["model"], f"rl-step{state.global_step}")
                    curve.append({"step": state.global_step, "heldout_pass_at_1": res.pass_at_1})
                    tracking.heldout(
                        state.global_step, pass_rate=res.pass_at_1, n=len(res.passed),
                        passed=_by_task(res),
                    )  # fmt: skip
                return control

        class Budget(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
                stop = tracking.ledger.exhausted()
                if stop is not None and not control.should_training_stop:
                    log(f"GRPO stops after step {state.global_step}: {stop.describe()}")
                    control.should_training_stop = True
                return control

        args = TRLGRPOConfig(
            output_dir=str(layout.rl_dir),
            max_steps=cfg.steps,
            per_device_train_batch_size=cfg.prompts * cfg.group_size,
            num_generations=cfg.group_size,
            # multi-turn: TRL's budget for the whole episode, the model's tokens and the tools'
            max_completion_length=cfg.max_completion_tokens,
            temperature=cfg.temperature,
            learning_rate=cfg.lr,
            lr_scheduler_type="constant",
            warmup_steps=0,
            beta=cfg.kl_beta,
            logging_steps=1,
            save_strategy="no",
            report_to=tracking_cfg.report_to,
            **trainer_device_args(),  # the CPU here; CUDA in bf16/fp16 where present
            gradient_checkpointing=False,
            seed=seed,
            dataloader_num_workers=0,
            disable_tqdm=True,
            **rollouts.grpo_options(),
        )
        trainer = CurriculumGRPOTrainer(
            model=model,
            reward_funcs=[rollouts.reward_function(record)],
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[Curve(), Budget()],
            choose=choose,
            **rollouts.trainer_options(),
        )
        # referee's step metrics (reward spread, visible/hidden gap, alerts...) reach whatever
        # loggers report_to names, beside TRL's own.
        RefereeMetricsCallback.attach(trainer, tracking.tracker)
        quiet_trainer(trainer, layout.rl_dir, "GRPO")
        sandbox0 = tracking.ledger.spent.sandbox_cpu_s
        clock.start()
        trainer.train()
        wall, cpu = clock.wall(), clock.cpu()
        result = GRPOResult(
            **_numbers(trainer, layout, wall, record, sampler),
            cpu_s=round(cpu, 2),
            sandbox_cpu_s=round(tracking.ledger.spent.sandbox_cpu_s - sandbox0, 2),
            rows_generated=trainer.rows_generated,
            rows_skipped=trainer.rows_skipped,
            curve=tuple(curve),
            alerts=tuple(
                {
                    "step": a.step,
                    "detector": a.detector,
                    "severity": a.severity,
                    "message": a.message,
                }
                for a in tracking.alerts
            ),
            canaries=canaries,
            quarantined=len(sampler.curriculum.quarantined()),
            **rollouts.finish(),
        )
        model.save_pretrained(layout.model_rl)
        tokenizer.save_pretrained(layout.model_rl)
        on_rl = heldout_eval(model, "rl")
        tracking.heldout(
            result.steps, pass_rate=on_rl.pass_at_1, n=len(on_rl.passed), passed=_by_task(on_rl)
        )
        status = "finished" if tracking.ledger.exhausted() is None else "stopped"
        return result, on_rl
    finally:
        tracking.close(status, tracking.ledger.exhausted() if status == "stopped" else None)
        for sink in sinks:
            sink.close()


def _numbers(
    trainer: Any, layout: RunLayout, wall: float, record: StepRecord, sampler: Any
) -> dict[str, Any]:
    """The numbers of a finished GRPO run; writes TRL's metrics per step to ``rl_metrics.jsonl``."""
    import json

    history = [h for h in trainer.state.log_history if "reward" in h]
    zero_std = [h.get("frac_reward_zero_std", 0.0) for h in history]
    layout.rl_metrics.write_text("".join(json.dumps(h) + "\n" for h in history))
    rewards, zero_variance = record.rewards, record.zero_variance
    return {
        "steps": trainer.state.global_step,
        "wall_s": round(wall, 2),
        "train_reward_first": rewards[0] if rewards else None,
        "train_reward_last": sum(rewards[-5:]) / len(rewards[-5:]) if rewards else None,
        "train_reward_per_step": tuple(round(r, 4) for r in rewards),
        "frac_zero_std_mean": sum(zero_std) / len(zero_std) if zero_std else None,
        "zero_variance_groups_mean": sum(zero_variance) / max(1, len(zero_variance)),
        "curriculum": sampler.curriculum.summary(),
        "never_solved": len(sampler.curriculum.never_solved(min_attempts=16)),
    }
