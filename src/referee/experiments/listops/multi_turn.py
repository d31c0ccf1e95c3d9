"""``referee train --env code``: the experiment, multi-turn, with tools in the sandbox.

The question is the single-turn mode's (:mod:`referee.experiments.listops.single_turn`): does
RL beat imitation of an imperfect demonstrator on held-out tasks? Here the model does not write
a completion: it acts in :class:`~referee.envs.code.CodeEnv` by calling tools.

* **Tasks**: the same ``list-ops`` tasks and splits; the user message is the task's compact
  description (as single-turn).
* **Episode**: a short system prompt (:data:`SYSTEM`) and two tools, ``write_file`` and
  ``submit`` (:data:`TOOLS`; the tasks have no visible tests, so ``run_tests`` would only say
  so). A good episode writes ``solution.py`` (the signature line and a body), submits, and says
  ``Done.``; at most :data:`MAX_TOOL_CALLS` rounds of tools. Whatever the episode leaves
  is judged by the sandboxed verifier (submitted, or the workspace as it stands).
* **Tokenizer and model**: a BPE trained here, TRL's ``qwen2_5.jinja`` template and its tool
  tokens (:mod:`referee.experiments.listops.chat`); text that is the same in every
  demonstration is one token (:func:`referee.experiments.listops.tool_demos.chat_model`).
* **Demonstrations** are tool-use conversations: for each draw of the
  :class:`~referee.experiments.listops.demonstrator.Demonstrator`, a real episode of the TRL
  environment class writes its code and submits it; the fine-tuning loss covers the
  assistant's tokens only (not the prompt, not the tool results).
* **GRPO**: the one GRPO stage (:mod:`referee.experiments.listops.grpo`) with
  :class:`EnvRollouts`: TRL's ``environment_factory`` =
  :func:`referee.train.trl_env.environment_class`; canaries, quarantine, metrics sinks and
  loggers as in single-turn.
* **Control**: fine-tuning continued for GRPO's wall time, as single-turn.
* **Evaluation**: greedy held-out episodes in the environment, run as TRL runs them
  (:mod:`referee.experiments.listops.tool_episodes`); pass@1 is the verifier's verdict.

>>> results = run_experiment(experiment_config(env="code"))              # doctest: +SKIP
>>> results.heldout_sft, results.heldout_rl                               # doctest: +SKIP
(0.3984375, 0.40625)
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Sequence
from typing import IO, Any, cast

from referee.envs.code import CodeEnv
from referee.envs.runtime import CodeRuntime
from referee.experiments.listops.config import ExperimentConfig
from referee.experiments.listops.demonstrator import Demonstrator
from referee.experiments.listops.grpo import StepRecord, grpo_pool, grpo_stage
from referee.experiments.listops.process import Timer, place
from referee.experiments.listops.results import ExperimentResults, SFTResult, experiment_results
from referee.experiments.listops.tasks import prepare_tasks, task_prompt
from referee.rollout.evaluate import EvalResult
from referee.tasks.model import Message, Task
from referee.track.layout import RunLayout
from referee.train.trl_env import TRLEnvironment

__all__ = [
    "MAX_TOOL_CALLS",
    "SYSTEM",
    "TOOLS",
    "EnvRollouts",
    "code_env",
    "run_multi_turn",
    "system_prompt",
    "tool_functions",
    "tool_task",
    "unscored",
]

SYSTEM = "Write the function to {solution} with write_file, then call submit."
TOOLS = ("write_file", "submit")
#: TRL's max_tool_calling_iterations: a write, a second write after a change of mind, a submit.
MAX_TOOL_CALLS = 3

Log = Callable[[str], None]


def system_prompt() -> str:
    """:data:`SYSTEM` as the episode sees it, its ``{solution}`` filled in (as CodeEnv does)."""
    from referee.envs.code_tasks import SOLUTION_FILE

    return SYSTEM.format(solution=SOLUTION_FILE)


def tool_task(task: Task, style: str = "compact") -> Task:
    """``task`` with the user message the tiny model reads (the description, or the code)."""
    text = task_prompt(task, style).strip()
    return task.model_copy(update={"prompt": (Message(role="user", content=text),)})


def code_env(runtime: CodeRuntime) -> CodeEnv:
    """The episode's environment: multi-turn, :data:`TOOLS` only, :data:`SYSTEM`."""
    return CodeEnv(runtime, single_turn=False, tools=TOOLS, system_prompt=SYSTEM)


def tool_functions(env_class: type[TRLEnvironment]) -> list[Any]:
    """The tools TRL offers for ``env_class`` (its public methods, in TRL's order)."""
    instance = env_class()
    return [
        getattr(instance, name)
        for name, _ in inspect.getmembers(env_class, inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ]


def unscored(env_class: type[TRLEnvironment]) -> type[TRLEnvironment]:
    """``env_class`` without ``get_reward``, for TRL (the reward function calls it instead:
    with its own ``get_reward`` TRL would add it as a second reward source of weight 1)."""

    class Episodes(env_class):  # type: ignore[valid-type, misc]
        get_reward = None  # TRL looks for a function named get_reward; None is not one

    Episodes.__name__ = Episodes.__qualname__ = env_class.__name__
    return Episodes


class EnvRollouts:
    """Multi-turn episodes for the GRPO stage: TRL runs the tool loop through
    ``environment_factory`` (so every tool call runs in referee's sandbox); the reward function
    asks each episode's environment for its verdict (``TRLEnvironment.get_reward``: the
    sandboxed verifier, infrastructure errors retried, then dropped as NaN, never scored 0).
    Every episode is also written to ``trajectories.jsonl`` (an export beside the store)."""

    def __init__(
        self, env_class: type[TRLEnvironment], dataset: Any, layout: RunLayout, *,
        reward: str, steps: int, log: Log,
    ) -> None:  # fmt: skip
        self.env_class = env_class
        self.scored_class = unscored(env_class)
        self._dataset = dataset
        self.layout = layout
        self.binary = reward == "pass"
        self.steps = steps
        self.log = log
        self.tool_calls: list[float] = []
        self.jsonl: IO[str] | None = None

    def dataset(self) -> Any:
        return self._dataset

    def reward_function(self, record: StepRecord) -> Callable[..., list[float | None]]:
        self.jsonl = self.layout.trajectories_jsonl.open("a")
        jsonl = self.jsonl

        def verifier(
            completions: list[Any], environments: list[Any], **kw: Any
        ) -> list[float | None]:
            step = record.step
            out: list[float | None] = []
            for messages, env in zip(completions, environments, strict=True):
                partial = TRLEnvironment.get_reward(env)
                v = env.verdict
                score = None if partial is None or v is None else partial
                if score is not None and self.binary:
                    score = float(v.passed)
                out.append(score)
                jsonl.write(
                    json.dumps(
                        {"step": step, "task_id": env.task.id, "messages": messages,
                         "reward": score, "verifier_reward": partial,
                         "passed": bool(v and v.passed),
                         "tool_calls": env.metrics.get("tool_calls", 0.0),
                         "infra_error": env.infra_error or None}, default=str,
                    ) + "\n"
                )  # fmt: skip
            jsonl.flush()
            tasks = [e.task for e in environments]
            prompts = kw.get("prompts") or [[] for _ in completions]
            alerts = record.tracking.log_conversations(
                step, tasks, prompts,
                [m if isinstance(m, list) else [{"role": "assistant", "content": str(m)}]
                 for m in completions],
                [e.verdict for e in environments],
                sandbox=[e.sandbox for e in environments],
            )  # fmt: skip
            rewards = [None if e.verdict is None else e.verdict.reward for e in environments]
            dropped = record.scored(tasks, out, rewards, alerts)
            calls = sum(e.metrics.get("tool_calls", 0.0) for e in environments) / len(out)
            self.tool_calls.append(calls)
            self.log(
                f"GRPO step {step + 1}/{self.steps}: reward {record.rewards[-1]:.3f}, "
                f"{calls:.2f} tool calls per episode, "
                f"{dropped}/{len(set(t.id for t in tasks))} groups without variance"
            )
            return out

        return verifier

    def trainer_options(self) -> dict[str, Any]:
        return {"environment_factory": self.scored_class}

    def grpo_options(self) -> dict[str, Any]:
        return {"max_tool_calling_iterations": MAX_TOOL_CALLS}

    def finish(self) -> dict[str, Any]:
        if self.jsonl is not None:
            self.jsonl.close()
        return {
            "tool_calls_per_episode": tuple(round(c, 3) for c in self.tool_calls),
            # The subclass counts on top of what env_class had counted (inherited counters).
            "episodes": self.scored_class.episodes - self.env_class.episodes,
            "infra_errors": self.scored_class.infra_errors - self.env_class.infra_errors,
        }


def run_multi_turn(
    cfg: ExperimentConfig, layout: RunLayout, *, quarantined: set[str], log: Log
) -> ExperimentResults:
    """Run the multi-turn experiment (see the module docstring) in ``layout``'s folder."""
    from referee.train.trl_env import environment_class
    from referee.verify.function import FunctionVerifier, harness_sandbox

    timer = Timer()
    sandbox = harness_sandbox()
    verifier = FunctionVerifier(sandbox)
    runtime = CodeRuntime(sandbox=sandbox, function_verifier=verifier)
    env_class = None
    try:
        t0 = time.perf_counter()
        train, dev, heldout = (
            [tool_task(t, cfg.tasks.prompt) for t in split]
            for split in prepare_tasks(cfg.tasks, sandbox, seed=cfg.seed)
        )
        # Canaries join the GRPO pool only (the environment class knows them; fine-tuning
        # never sees them): nothing can pass them, so a pass is an alert.
        pool, canaries = grpo_pool(train, cfg.grpo, seed=cfg.seed)
        env_class = environment_class(code_env, pool, runtime=runtime)
        timer.lap("tasks", t0)
        log(f"tasks: {len(train)} train, {len(dev)} dev, {len(heldout)} held-out for evaluation")
        log(f"episodes: CodeEnv with tools {', '.join(TOOLS)}; system prompt {system_prompt()!r}")
        return _experiment(
            cfg, layout, log, timer, (train, dev, heldout), pool, len(canaries), env_class,
            runtime, quarantined,
        )  # fmt: skip
    finally:
        if env_class is not None:
            env_class.shutdown()
        runtime.close()
        verifier.close()
        sandbox.close()


def _experiment(
    cfg: ExperimentConfig, layout: RunLayout, log: Log, timer: Timer,
    splits: tuple[list[Task], list[Task], list[Task]], pool: list[Task], n_canaries: int,
    env_class: type[TRLEnvironment], runtime: CodeRuntime, quarantined: set[str],
) -> ExperimentResults:  # fmt: skip
    from referee.experiments.listops.evaluation import imitation_ceiling
    from referee.experiments.listops.sft import control_stage, fine_tune, save_checkpoint
    from referee.experiments.listops.tool_demos import chat_model, demonstrations, sft_row
    from referee.experiments.listops.tool_episodes import Episode, run_episodes

    train, dev, heldout = splits
    t0 = time.perf_counter()
    dataset = env_class.dataset(pool)
    openings = dict(zip(dataset["task_id"], dataset["prompt"], strict=True))
    demo = Demonstrator(share=cfg.sft.demo_share)
    episodes, keys = demonstrations(
        env_class, train, demo, draws=cfg.sft.demo_draws, openings=openings
    )
    demo_pass = sum(episodes[k][1] for k in keys) / max(1, len(keys))
    ceiling = imitation_ceiling(demo, heldout, dev, runtime.function_verifier)
    timer.lap("demonstrations", t0)
    log(
        f"demonstrations: {len(keys)} tool-use episodes ({len(episodes)} distinct, each run in "
        f"the sandbox); {demo_pass:.1%} pass the verifier"
    )
    log(
        "imitation ceiling (the demonstrator's majority answer): held-out "
        f"{ceiling['heldout_mode']:.1%}, dev {ceiling['dev_mode']:.1%}"
    )

    tools = tool_functions(env_class)
    conversations = [c for c, _ in episodes.values()]
    max_length = cfg.sft.max_length

    def rows_for(tok: Any) -> list[dict[str, list[int]]]:
        memo: dict[str, list[int]] = {}
        by_key = {k: sft_row(tok, c, tools, memo) for k, (c, _) in episodes.items()}
        lengths = [len(r["input_ids"]) for r in by_key.values()]
        own = sum(sum(r["completion_mask"]) for r in by_key.values()) / len(by_key)
        log(
            f"a demonstration is {sum(lengths) / len(lengths):.0f} tokens (at most "
            f"{max(lengths)}), {own:.0f} of them the model's (the fine-tuning loss)"
        )
        over = sum(n > max_length for n in lengths)
        if over:
            log(
                f"warning: {over} of {len(lengths)} demonstrations are longer than fine-tuning's "
                f"{max_length} tokens, and lose their end (their last turns) in fine-tuning"
            )
        return [by_key[k] for k in keys]

    m = cfg.model
    tok, model = chat_model(conversations, tools, model=m.model, tiny=m.tiny, seed=cfg.seed)
    model = place(model)  # the run's device (the CPU here; CUDA where present)
    log(
        f"model: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters, "
        f"vocabulary {len(tok)}"
    )
    rows = rows_for(tok)

    dev_scores: dict[str, float] = {}
    infra: dict[str, int] = {}
    tool_use: dict[str, dict[str, Any]] = {}

    def episodes_of(model: Any, tasks: Sequence[Task]) -> list[Episode]:
        return run_episodes(
            model, tok, list(tasks), lambda: code_env(runtime), tools,
            max_tool_calls=MAX_TOOL_CALLS,
            max_completion_tokens=cfg.evaluation.max_completion_tokens, seed=cfg.seed,
        )  # fmt: skip

    def heldout_eval(model: Any, name: str) -> EvalResult:
        t = time.perf_counter()
        eps = episodes_of(model, heldout)
        res = EvalResult(
            task_ids=[e.task_id for e in eps],
            passed=[e.passed for e in eps],
            rewards=[e.verdict.reward if e.verdict else 0.0 for e in eps],
            infra_errors=sum(bool(e.verdict is None or e.verdict.infra_error) for e in eps),
        )
        infra[name] = res.infra_errors
        ends: dict[str, int] = {}
        for e in eps:
            ends[e.end] = ends.get(e.end, 0) + 1
        tool_use[name] = {
            "tool_calls_per_episode": round(sum(e.tool_calls for e in eps) / len(eps), 3),
            "submitted": sum(e.submitted for e in eps),
            "end_reasons": ends,
        }
        with layout.heldout_episodes.open("a") as f:
            f.writelines(json.dumps({"stage": name, **e.record()}, default=str) + "\n" for e in eps)
        if dev and not name.startswith("rl-step"):
            dev_scores[name] = sum(e.passed for e in episodes_of(model, dev)) / len(dev)
        timer.lap(f"eval_{name}", t)
        log(
            f"held-out pass@1 {name}: {res.pass_at_1:.3f} (dev {dev_scores.get(name, 0):.3f}); "
            f"{tool_use[name]['tool_calls_per_episode']:.2f} tool calls per episode, ends "
            + ", ".join(f"{n} {why}" for why, n in sorted(ends.items()))
        )
        if res.infra_errors:
            log(f"warning: {res.infra_errors} held-out episodes of {name} could not be judged")
        return res

    def dev_pass(model: Any) -> float:
        return sum(e.passed for e in episodes_of(model, dev)) / max(1, len(dev))

    before = heldout_eval(model, "before")
    t0 = time.perf_counter()
    if m.sft_checkpoint:
        # Its own tokenizer comes with it: the demonstrations are tokenised again (the control).
        tok, model = chat_model(
            conversations, tools, model=m.sft_checkpoint, tiny=m.tiny, seed=cfg.seed
        )
        model = place(model)
        rows = rows_for(tok)
        sft_result = SFTResult.skipped(m.sft_checkpoint)
    else:
        sft_result = fine_tune(
            model, tok, rows, cfg.sft, layout.sft_dir, steps=cfg.sft.steps, seed=cfg.seed,
            dev_eval=dev_pass if dev else None,
        )  # fmt: skip
    timer.lap("sft", t0)
    log(f"fine-tuning: {sft_result.describe()}")
    model = save_checkpoint(model, tok, layout)
    sft = heldout_eval(model, "sft")

    t0 = time.perf_counter()
    rollouts = EnvRollouts(
        env_class, dataset, layout, reward=cfg.grpo.reward, steps=cfg.grpo.steps, log=log
    )
    rl_result, rl = grpo_stage(
        model, tok, rollouts, cfg, layout, pool=pool, heldout=heldout, heldout_eval=heldout_eval,
        start=sft, quarantined=quarantined, canaries=n_canaries, timer=timer, t0=t0, log=log,
    )  # fmt: skip
    # Token ids and the mask of the model's tokens go straight to TRL's SFTTrainer.
    control_result, control = control_stage(
        cfg.sft, layout, tok, cast(Any, rows), fine_tuning=sft_result,
        grpo_wall_s=rl_result.wall_s, grpo_cpu_s=rl_result.total_cpu_s, seed=cfg.seed,
        heldout_eval=heldout_eval, timer=timer, log=log,
    )  # fmt: skip

    results = experiment_results(
        layout, train=train, heldout=heldout, demo_pass=demo_pass, ceiling=ceiling,
        stages={"before": before, "sft": sft, "rl": rl, "control": control},
        sft=sft_result, rl=rl_result, control=control_result, env="code", tools=TOOLS,
        dev_pass_at_1=dev_scores, heldout_pass_at_k={}, heldout_infra_errors=infra,
        heldout_tool_use=tool_use, times=timer.times,
    )  # fmt: skip
    results.write(layout)
    return results
