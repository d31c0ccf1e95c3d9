"""GRPO on tool episodes: TRL's ``GRPOTrainer`` with an ``environment_factory`` over ``CodeEnv``.

TRL runs the tool loop (generate, parse the tool calls, call the environment class's tool
methods, append the results, generate again); the class is
:func:`referee.train.trl_env.environment_class`'s, so every tool call runs in referee's sandbox
and every episode is judged by its verifier. What this module adds, as
:mod:`referee.experiments.listops.single_turn` does for single-turn GRPO:

* the **reward** is one reward function (``verifier``) that asks each episode's environment
  for its verdict (``TRLEnvironment.get_reward``: the sandboxed verifier, infrastructure errors
  retried, then dropped as NaN, never scored 0) and gives pass/fail (``reward="pass"``) or the
  share of tests passed. The class TRL gets has no ``get_reward`` of its own, or TRL would add
  it as a second reward source of weight 1;
* the **curriculum** chooses each step's tasks (:class:`~referee.train.grpo.CurriculumGRPOTrainer`)
  and learns from the group outcomes; held-out tasks are known to the sampler so that it
  refuses them, and the class's ``reset`` refuses them too;
* every episode (the conversation TRL built, reward, verdict) is written to
  ``trajectories.jsonl`` and, as a ``Trajectory`` with one turn per assistant message, to the
  run's ``track.sqlite`` (:class:`~referee.train.tracking.RunTracking`), where the detectors
  see it and ``referee ui`` shows it.

>>> stats = grpo_on_env(model, tok, Env, train, heldout, cfg, run,          # doctest: +SKIP
...                     max_tool_calls=3)
>>> stats["train_reward_per_step"][:2]                                      # doctest: +SKIP
[0.31, 0.38]
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.tasks.model import Task
from referee.experiments.listops.single_turn import TrainConfig, grpo_stats
from referee.train.trl_env import TRLEnvironment

__all__ = ["grpo_on_env", "unscored"]


def unscored(env_class: type[TRLEnvironment]) -> type[TRLEnvironment]:
    """``env_class`` without ``get_reward``, for TRL (the reward function calls it instead)."""

    class Episodes(env_class):  # type: ignore[valid-type, misc]
        get_reward = None  # TRL looks for a function named get_reward; None is not one

    Episodes.__name__ = Episodes.__qualname__ = env_class.__name__
    return Episodes


def grpo_on_env(
    model: Any, tok: Any, env_class: type[TRLEnvironment], train: list[Task],
    heldout: list[Task], cfg: TrainConfig, run: Path, *, max_tool_calls: int,
    heldout_eval: Callable[[Any, str], Any] | None = None, log: Callable[[str], None] = print,
    dataset: Any = None, tracking: Any = None,
) -> dict[str, Any]:  # fmt: skip
    """GRPO from ``model`` on ``train`` through ``env_class`` (see the module docstring).

    ``dataset``: ``env_class.dataset(train)``, if already made; ``heldout_eval(model, name)``
    runs every ``cfg.eval_every`` steps (0: never)."""
    from transformers import TrainerCallback
    from trl.trainer.grpo_config import GRPOConfig

    from referee.tasks.curriculum import Curriculum, CurriculumConfig, Group
    from referee.tasks.sampler import TrainingSampler
    from referee.train.grpo import CurriculumGRPOTrainer

    dataset = env_class.dataset(train) if dataset is None else dataset
    index = {tid: i for i, tid in enumerate(dataset["task_id"])}
    mode = CurriculumConfig() if cfg.sampler == "curriculum" else CurriculumConfig.uniform()
    sampler = TrainingSampler(
        [*train, *heldout], curriculum=Curriculum([t.id for t in train], mode, seed=cfg.seed)
    )

    def choose(n: int) -> list[int]:
        return [index[t.id] for t in sampler.sample(n)]

    rewards: list[float] = []
    zero_variance: list[float] = []
    tool_calls: list[float] = []
    store = (run / "trajectories.jsonl").open("a")
    own_tracking = tracking is None
    if tracking is None:
        from dataclasses import asdict

        from referee.train.tracking import RunTracking

        tracking = RunTracking(
            run, run_id=run.name, config=asdict(cfg), tasks=[*train, *heldout], env="code",
            name=f"referee train --env code (seed {cfg.seed})",
        )  # fmt: skip

    def verifier(completions: list[Any], environments: list[Any], **kw: Any) -> list[float | None]:
        step = len(rewards)
        out: list[float | None] = []
        groups: dict[str, list[float | None]] = {}
        for messages, env in zip(completions, environments, strict=True):
            partial = TRLEnvironment.get_reward(env)
            v = env.verdict
            score = None if partial is None or v is None else partial
            if score is not None and cfg.reward == "pass":
                score = float(v.passed)
            out.append(score)
            groups.setdefault(env.task.id, []).append(None if v is None else v.reward)
            store.write(
                json.dumps(
                    {"step": step, "task_id": env.task.id, "messages": messages, "reward": score,
                     "verifier_reward": partial, "passed": bool(v and v.passed),
                     "tool_calls": env.metrics.get("tool_calls", 0.0),
                     "infra_error": env.infra_error or None}, default=str,
                ) + "\n"
            )  # fmt: skip
        store.flush()
        prompts = kw.get("prompts") or [[] for _ in completions]
        for a in tracking.log_conversations(
            step, [e.task for e in environments], prompts,
            [m if isinstance(m, list) else [{"role": "assistant", "content": str(m)}]
             for m in completions],
            [e.verdict for e in environments],
        ):  # fmt: skip
            log(f"alert at step {step}: [{a.severity}] {a.detector}: {a.message}")
        scored = [r for r in out if r is not None]
        rewards.append(sum(scored) / max(1, len(scored)))
        tool_calls.append(sum(e.metrics.get("tool_calls", 0.0) for e in environments) / len(out))
        report = sampler.observe([Group(k, r) for k, r in groups.items()], step=step)
        zero_variance.append(report.n_dropped / max(1, len(groups)))
        log(
            f"GRPO step {step + 1}/{cfg.rl_steps}: reward {rewards[-1]:.3f}, "
            f"{tool_calls[-1]:.2f} tool calls per episode, "
            f"{report.n_dropped}/{len(groups)} groups without variance"
        )
        return out

    curve: list[dict[str, Any]] = []

    class Curve(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            if heldout_eval and cfg.eval_every and state.global_step % cfg.eval_every == 0:
                res = heldout_eval(kw["model"], f"rl-step{state.global_step}")
                curve.append({"step": state.global_step, "heldout_pass_at_1": res.pass_at_1})
            return control

    args = GRPOConfig(
        output_dir=str(run / "rl"),
        max_steps=cfg.rl_steps,
        per_device_train_batch_size=cfg.rl_prompts * cfg.group_size,
        num_generations=cfg.group_size,
        # TRL's budget for the whole episode: the model's tokens and the tool results'.
        max_completion_length=cfg.max_completion_tokens,
        max_tool_calling_iterations=max_tool_calls,
        temperature=cfg.temperature,
        learning_rate=cfg.rl_lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        beta=cfg.kl_beta,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        seed=cfg.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    scored_class = unscored(env_class)
    trainer = CurriculumGRPOTrainer(
        model=model,
        reward_funcs=[verifier],
        args=args,
        train_dataset=dataset,
        processing_class=tok,
        environment_factory=scored_class,
        callbacks=[Curve()],
        choose=choose,
    )
    t0 = time.perf_counter()
    status = "failed"
    try:
        trainer.train()
        status = "finished"
    finally:
        store.close()
        if own_tracking:
            tracking.close(status)
    wall = time.perf_counter() - t0
    return {
        **grpo_stats(trainer, run, wall, rewards, zero_variance, sampler),
        "tool_calls_per_episode": [round(c, 3) for c in tool_calls],
        # The subclass counts on top of what env_class had counted (its counters are inherited).
        "episodes": scored_class.episodes - env_class.episodes,
        "infra_errors": scored_class.infra_errors - env_class.infra_errors,
        "curve": curve,
    }
