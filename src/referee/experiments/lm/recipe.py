"""``run_lm``: GRPO on a pretrained language model and any task file, with its control and its
held-out evaluations; the library call behind ``referee train --model SPEC --tasks FILE``.

1. **Tasks**: the file's ``train`` split trains, its ``heldout`` split is only evaluated (a
   task file made with ``--heldout`` keeps near-duplicates on one side: ``referee tasks
   split``). Calibrated pass rates (``referee tasks calibrate``) start the curriculum, whose
   Beta prior is fitted to them (``--prior fit``, :func:`curriculum_config`).
2. **Base**: greedy held-out pass@1 of the model as loaded (:func:`~referee.rollout.evaluate.
   evaluate_batched`: the same fixed padded batches ``referee eval`` uses, so ``referee eval
   --policy local:SPEC`` reproduces it).
3. **GRPO** through TRL (:func:`~referee.experiments.listops.grpo.run_grpo`: the curriculum,
   canaries, quarantine, detectors, the run's store and the dashboard), with LoRA or the top
   layers training, until ``budget_minutes`` of wall time; the adapter is saved to
   ``RUN/adapter`` and evaluated (``referee eval ... --adapter RUN/adapter`` reproduces it).
4. **Control**: the base model again, a fresh adapter, rejection-sampling fine-tuning for the
   wall time GRPO took, its tasks drawn by a curriculum started as GRPO's
   (:mod:`~referee.experiments.lm.control` says why this control), then evaluated the same way
   (``RUN/control-adapter``).
5. **Statistics**: exact McNemar tests over the held-out tasks (GRPO vs base, GRPO vs control),
   with the share of answers that ran at all beside pass@1 (format against correctness).

Everything lands in ``RUN/summary.json`` and ``RUN/heldout.jsonl`` (one row per task and
stage).

**Multi-turn** (``env="code"``, ``referee train ... --env code``): the model acts in
:class:`~referee.envs.code.CodeEnv` through tool calls (``write_file``, ``submit``), in GRPO
through TRL's ``environment_factory`` and in the held-out evaluations as greedy episodes run as
TRL runs them (:mod:`~referee.experiments.lm.multi_turn`; each episode in
``RUN/heldout_episodes.jsonl``, the answer column of ``heldout.jsonl`` holds its messages).
The chat template is the model's own where TRL can render and parse its tool calls, else TRL's
qwen2_5 tool template installed on the tokenizer (:mod:`~referee.experiments.lm.tool_chat`;
``chat_template`` in the summary says which). The RFT control samples tool episodes as GRPO
does and imitates the passing ones on the model's own turns. ``referee eval --adapter``
evaluates single completions, so it does not reproduce a multi-turn run's episodes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.experiments.lm.config import LMConfig
from referee.optional import require_extra
from referee.rollout.evaluate import EvalResult
from referee.tasks.beta_prior import fit_beta_prior, parse_prior
from referee.tasks.curriculum import Curriculum, CurriculumConfig
from referee.tasks.model import Task

__all__ = ["curriculum_config", "run_lm"]

Log = Callable[[str], None]


def _control_curriculum(
    train: Sequence[Task], cfg: LMConfig, config: CurriculumConfig,
    prior: Mapping[str, Sequence[float]],
) -> Curriculum | None:  # fmt: skip
    """The control's own curriculum, as GRPO's starts (same configuration, same calibrated
    outcomes, its own seed), so that both draw tasks alike; ``None`` (uniform) when GRPO's
    sampler is uniform."""
    if cfg.sampler != "curriculum":
        return None
    cur = Curriculum([t.id for t in train], config, seed=cfg.seed + 1)
    cur.start_from(prior)
    return cur


def _file_hash(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _split(tasks: Sequence[Task], cfg: LMConfig) -> tuple[list[Task], list[Task]]:
    train = [t for t in tasks if t.split == "train"]
    heldout = [t for t in tasks if t.split == "heldout"]
    if not train or not heldout:
        raise ConfigError(
            f"{cfg.tasks} has {len(train)} train and {len(heldout)} held-out tasks; GRPO needs "
            f"both: hold some out with `referee tasks split {cfg.tasks} --heldout 0.3 --out FILE`"
        )
    if cfg.eval_limit:
        heldout = heldout[: cfg.eval_limit]
    return train, heldout


def _summary(result: EvalResult) -> dict[str, Any]:
    from referee.experiments.listops.stats import wilson_interval

    n = len(result.passed)
    return {
        "pass_at_1": result.pass_at_1,
        "ran": sum(result.ran) / n if n else None,
        "interval_95": [round(v, 4) for v in wilson_interval(sum(result.passed), n)],
        "infra_errors": result.infra_errors,
        "greedy_s": result.greedy_s,
    }


def _runtime() -> Any:
    """Multi-turn episodes' runtime: its harness sandbox (the tools' and the verifiers') and
    verifiers are made on first use and closed with it."""
    from referee.envs.runtime import CodeRuntime

    return CodeRuntime()


def curriculum_config(cfg: LMConfig, calibrated: Mapping[str, Sequence[float]]) -> CurriculumConfig:
    """The curriculum's settings for a run whose training tasks have the ``calibrated`` outcomes.

    The prior is ``cfg.prior``: two numbers, or ``fit``, the population's maximum-likelihood
    Beta (Beta(1, 1) when fewer than two tasks are calibrated). With a calibration, tasks never
    tried get no ``unseen_bonus``: every calibrated task has been tried, and the bonus (0.25,
    ten times a never-solved task's weight under a fitted prior) would draw the uncalibrated
    canaries far more often than their share of the pool.

    >>> cfg = LMConfig(model="m", tasks="t.jsonl")
    >>> calibrated = {"a": [0.0] * 4, "b": [1.0, 0.0, 0.0, 0.0], "c": [0.0] * 4}
    >>> c = curriculum_config(cfg, calibrated)
    >>> c.unseen_bonus, round(c.prior_alpha / (c.prior_alpha + c.prior_beta), 3)
    (0.0, 0.084)
    >>> curriculum_config(LMConfig(model="m", tasks="t.jsonl", prior="1,1"), {}).prior_alpha
    1.0
    """
    given = parse_prior(cfg.prior)
    if given is not None:
        alpha, beta = given
    elif len(calibrated) >= 2:
        alpha, beta = fit_beta_prior(calibrated)
    else:
        alpha, beta = 1.0, 1.0
    bonus = 0.0 if calibrated else CurriculumConfig.unseen_bonus
    return CurriculumConfig(prior_alpha=alpha, prior_beta=beta, unseen_bonus=bonus)


def run_lm(
    cfg: LMConfig, log: Log = print, *, verifiers: Any = None, runtime: Any = None
) -> dict[str, Any]:
    """Run ``cfg`` (see the module docstring); returns the summary (also ``summary.json``).

    ``verifiers``: what judges the single-turn answers (a
    :class:`~referee.verify.dispatch.VerifierSet`, made here and closed when None);
    ``runtime``: the :class:`~referee.envs.runtime.CodeRuntime` of multi-turn episodes (their
    tools' sandbox and their verifiers; made here and closed when None)."""
    require_extra("train", needed_for="training a model (run_lm)")
    from referee.experiments.listops.config import GRPOConfig, TrackingConfig
    from referee.experiments.listops.grpo import grpo_pool, run_grpo
    from referee.experiments.listops.process import prepare_process
    from referee.experiments.listops.stats import paired_test
    from referee.experiments.lm.control import rejection_sampling_fine_tune
    from referee.experiments.lm.model import load_model, make_trainable, trainable_parameters
    from referee.experiments.lm.rollouts import ChatRollouts
    from referee.policy.local import TransformersPolicy
    from referee.rollout.calibrate import calibrated_outcomes
    from referee.rollout.evaluate import evaluate_batched
    from referee.tasks.model import read_tasks
    from referee.track.layout import RunLayout
    from referee.verify.dispatch import VerifierSet

    tasks = read_tasks(cfg.tasks)
    train, heldout = _split(tasks, cfg)
    device = prepare_process(cfg.device)
    if cfg.threads is not None and device.device == "cpu":
        import torch

        torch.set_num_threads(cfg.threads)
    layout = RunLayout(cfg.run_dir)
    layout.create()
    (layout.root / "config.json").write_text(json.dumps(cfg.options(), indent=1))
    times: dict[str, float] = {}
    owned = verifiers is None
    verifiers = VerifierSet() if owned else verifiers
    multi = cfg.env == "code"
    tools: Any = None
    own_runtime = multi and runtime is None
    if own_runtime:
        runtime = _runtime()
    template = None
    grpo_cfg = GRPOConfig(
        steps=cfg.steps, prompts=cfg.prompts, group_size=cfg.group_size, lr=cfg.lr,
        kl_beta=cfg.kl_beta, temperature=cfg.temperature,
        max_completion_tokens=cfg.max_tokens, sampler=cfg.sampler, reward="pass",
        canary_share=cfg.canary_share, budget_wall_s=cfg.budget_minutes * 60.0,
    )  # fmt: skip
    pool, canaries = grpo_pool(train, grpo_cfg, seed=cfg.seed)
    try:
        t0 = time.perf_counter()
        model, tokenizer, label = load_model(cfg.model, device.device)
        times["load"] = round(time.perf_counter() - t0, 2)
        log(f"model {label} loaded in {times['load']:.0f}s; {len(train)} train, "
            f"{len(heldout)} held-out tasks")  # fmt: skip
        if multi:
            from referee.experiments.lm.multi_turn import ToolEpisodes
            from referee.experiments.lm.tool_chat import tool_chat_template

            template = tool_chat_template(tokenizer, model)
            log(f"multi-turn: chat template {template} ("
                + ("the model's own renders and parses tool calls" if template == "model"
                   else "the model's own cannot render or parse tool calls for TRL: TRL's "
                   "qwen2_5 tool template installed on the tokenizer") + ")")  # fmt: skip
            tools = ToolEpisodes(pool, runtime, log=log)

        def evaluate(m: Any, stage: str) -> EvalResult:
            if tools is not None:
                res: EvalResult = tools.evaluate(m, tokenizer, heldout, stage, cfg, layout)
                times[f"eval_{stage}"] = res.greedy_s
                use = tools.tool_use[stage]
                log(f"held-out pass@1 ({stage}): {res.pass_at_1:.3f} "
                    f"({sum(res.passed)}/{len(res.passed)}); episodes with a valid write_file "
                    f"{use['valid_write_file']:.3f}, submitted {use['submitted']:.3f}, "
                    f"{use['tool_calls_per_episode']:.2f} tool calls per episode, in "
                    f"{res.greedy_s:.0f}s")  # fmt: skip
                if res.infra_errors:
                    log(f"warning: {res.infra_errors} held-out episodes of {stage} could not "
                        "be judged")  # fmt: skip
                return res
            policy = TransformersPolicy(m, tokenizer, num_threads=None)
            try:
                t = time.perf_counter()
                res = evaluate_batched(
                    policy, heldout, max_tokens=cfg.max_tokens, batch=cfg.eval_batch,
                    verifiers=verifiers,
                )  # fmt: skip
                times[f"eval_{stage}"] = round(time.perf_counter() - t, 2)
            finally:
                policy.close()
            log(f"held-out pass@1 ({stage}): {res.pass_at_1:.3f} "
                f"({sum(res.passed)}/{len(res.passed)}; answers that ran "
                f"{sum(res.ran)}/{len(res.ran)}) in {times[f'eval_{stage}']:.0f}s")  # fmt: skip
            return res

        base = evaluate(model, "base")
        model = make_trainable(model, cfg)
        n_train, n_all = trainable_parameters(model)
        log(f"training {n_train:,} of {n_all:,} parameters")
        prior = calibrated_outcomes(train, cfg.model)
        curriculum = curriculum_config(cfg, prior)
        if prior and cfg.sampler == "curriculum":
            log(f"curriculum: {len(prior)} of {len(train)} training tasks start from their "
                f"calibrated pass rates for {cfg.model}; prior Beta({curriculum.prior_alpha:g}, "
                f"{curriculum.prior_beta:g})")  # fmt: skip
        rollouts = (
            tools.rollouts(layout, cfg) if tools is not None
            else ChatRollouts(pool, verifiers, tokenizer)
        )  # fmt: skip
        grpo, rl = run_grpo(
            model, tokenizer, rollouts, pool=pool, heldout=heldout, cfg=grpo_cfg,
            tracking_cfg=TrackingConfig(), layout=layout, seed=cfg.seed,
            env="code" if multi else "chat-single",
            run_config=cfg.options(), heldout_eval=evaluate, start=base, quarantined=set(),
            canaries=len(canaries), log=log, prior_outcomes=prior, curriculum=curriculum,
        )  # fmt: skip
        times["rl"] = round(grpo.wall_s, 2)
        adapter = layout.root / "adapter"
        model.save_pretrained(adapter)
        control = control_eval = None
        if cfg.control == "rft":
            del model
            model, tokenizer, _ = load_model(cfg.model, device.device)
            if multi:  # the base model again: its tool template installed as for GRPO
                from referee.experiments.lm.tool_chat import tool_chat_template

                tool_chat_template(tokenizer, model)
            model = make_trainable(model, cfg)
            t0 = time.perf_counter()
            control = rejection_sampling_fine_tune(
                model, tokenizer, train, cfg, wall_s=grpo.wall_s, verifiers=verifiers, log=log,
                curriculum=_control_curriculum(train, cfg, curriculum, prior), episodes=tools,
            )  # fmt: skip
            times["control"] = round(time.perf_counter() - t0, 2)
            model.save_pretrained(layout.root / "control-adapter")
            control_eval = evaluate(model, "control")
    finally:
        if tools is not None:
            tools.close()
        if own_runtime:
            runtime.close()
        if owned:
            verifiers.close()

    summary: dict[str, Any] = {
        "model": label,
        "tasks": cfg.tasks,
        "tasks_sha256": _file_hash(cfg.tasks),
        "n_train": len(train),
        "n_heldout": len(heldout),
        "device": device.device,
        "env": cfg.env,
        "heldout_base": base.pass_at_1,
        "heldout_rl": rl.pass_at_1,
        "heldout_control": control_eval.pass_at_1 if control_eval else None,
        "base": _summary(base),
        "rl": _summary(rl),
        "rl_vs_base": paired_test(rl.passed, base.passed).to_dict(),
        "grpo": {
            "steps": grpo.steps,
            "wall_s": grpo.wall_s,
            "cpu_s": grpo.cpu_s,
            "rows_generated": grpo.rows_generated,
            "rows_skipped_as_tied": grpo.rows_skipped,
            "train_reward_per_step": list(grpo.train_reward_per_step),
            "answers_ran_per_step": [round(x, 4) for x in getattr(rollouts, "answers_ran", [])],
            "zero_variance_groups_mean": grpo.zero_variance_groups_mean,
            "curriculum_prior": [curriculum.prior_alpha, curriculum.prior_beta]
            if cfg.sampler == "curriculum"
            else None,
            "alerts": list(grpo.alerts),
            "canaries": canaries and len(canaries),
        },
        "stage_s": times,
        "config": cfg.options(),
    }
    if tools is not None:
        summary["chat_template"] = template
        summary["tool_use"] = tools.tool_use
        summary["grpo"]["tool_calls_per_episode"] = list(grpo.tool_calls_per_episode or ())
        summary["grpo"]["episodes"] = grpo.episodes
        summary["grpo"]["infra_errors"] = grpo.infra_errors
    if control is not None and control_eval is not None:
        summary["control"] = _summary(control_eval)
        summary["control_run"] = {
            "sampler": cfg.sampler,
            "rounds": control.rounds, "steps": control.steps, "samples": control.samples,
            "passing": control.passing, "wall_s": control.wall_s,
            "pass_rate_per_round": [round(x, 4) for x in control.pass_rate_per_round],
        }  # fmt: skip
        summary["rl_vs_control"] = paired_test(rl.passed, control_eval.passed).to_dict()
    summary["p_value"] = (summary.get("rl_vs_control") or summary["rl_vs_base"])["p_value"]
    rows = []
    stages = [("base", base), ("rl", rl)] + ([("control", control_eval)] if control_eval else [])
    for stage, res in stages:
        for i, task in enumerate(heldout):
            rows.append({
                "stage": stage, "task_id": task.id, "passed": res.passed[i],
                "ran": res.ran[i] if res.ran else None, "answer": res.completions[i],
            })  # fmt: skip
    (layout.root / "heldout.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (layout.root / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary
