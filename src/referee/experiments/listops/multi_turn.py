"""``referee train --env code``: the embedded experiment, multi-turn, with tools in the sandbox.

The question is the single-turn experiment's (:mod:`referee.experiments.listops.single_turn`): does RL beat
imitation of an imperfect demonstrator on held-out tasks? Here the model does not write a
completion: it acts in :class:`~referee.envs.code.CodeEnv` by calling tools.

* **Tasks**: the same ``list-ops`` tasks and splits (:func:`~referee.experiments.listops.single_turn.
  prepare_tasks`); the user message is the task's compact description (as single-turn).
* **Episode**: a short system prompt (:data:`SYSTEM`) and two tools, ``write_file`` and
  ``submit`` (:data:`TOOLS`; the tasks have no visible tests, so ``run_tests`` would only say
  so). A good episode writes ``solution.py`` (the signature line and a body), submits, and says
  ``Done.``; at most :data:`MAX_TOOL_CALLS` rounds of tools. Whatever the episode leaves
  is judged by the sandboxed verifier (submitted, or the workspace as it stands).
* **Tokenizer and model**: a BPE trained here, TRL's ``qwen2_5.jinja`` template and its tool
  tokens (:mod:`referee.experiments.listops.chat`); text that is the same in every demonstration (the
  rendered system block with the tool schemas, the fixed part of each tool call) is one token
  (:func:`referee.experiments.listops.tool_demos.chat_model`). The model is TinyConfig's Llama.
* **Demonstrations** are tool-use conversations: for each draw of the
  :class:`~referee.experiments.listops.demonstrator.Demonstrator`, a real episode of the TRL environment
  class writes its code and submits it, and the tool results in the transcript are what the
  environment answered. Their token ids are built as TRL's tool loop builds a rollout, and the
  fine-tuning loss covers the assistant's tokens only (not the prompt, not the tool results).
* **GRPO**: TRL's ``GRPOTrainer`` with ``environment_factory`` =
  :func:`referee.train.trl_env.environment_class` (:mod:`referee.experiments.listops.grpo`).
* **Control**: fine-tuning continued for GRPO's wall time, as single-turn.
* **Evaluation**: greedy held-out episodes in the environment, run as TRL runs them
  (:mod:`referee.experiments.listops.tool_episodes`); pass@1 is the verifier's verdict; paired tests.

>>> results = run_multiturn_experiment(multiturn_config())                  # doctest: +SKIP
>>> results["heldout_sft"], results["heldout_rl"]                           # doctest: +SKIP
(0.3984375, 0.40625)
>>> results["heldout_tool_use"]["sft"]["tool_calls_per_episode"]            # doctest: +SKIP
2.0
"""

from __future__ import annotations

import inspect
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, cast

from referee.envs.code import CodeEnv
from referee.envs.runtime import CodeRuntime
from referee.tasks.model import Message, Task
from referee.experiments.listops.demonstrator import Demonstrator
from referee.experiments.listops.single_turn import Log, TrainConfig, _prompt, _Timer, stage_results
from referee.experiments.listops.tiny import TinyConfig
from referee.train.trl_env import TRLEnvironment

__all__ = [
    "MAX_TOOL_CALLS",
    "SYSTEM",
    "TOOLS",
    "multiturn_config",
    "run_multiturn_experiment",
]

SYSTEM = "Write the function to {solution} with write_file, then call submit."
TOOLS = ("write_file", "submit")
#: TRL's max_tool_calling_iterations: a write, a second write after a change of mind, a submit.
MAX_TOOL_CALLS = 3
#: The longest sequence :func:`referee.experiments.listops.single_turn._sft` fine-tunes on (its ``max_length``).
SFT_MAX_LENGTH = 192

#: What ``referee train --env code`` changes from the single-turn defaults: sized for about
#: ten to fifteen minutes on two shared cores, the fine-tuning steps from the dev split's
#: imitation curve (dev pass@1 every 50 steps), never from held-out numbers.
DEFAULTS: dict[str, Any] = {
    "run_dir": "runs/train-code",
    "tasks": 1500,
    "eval_tasks": 128,
    "dev_tasks": 64,
    "demo_draws": 8,
    "sft_steps": 300,
    "sft_batch": 32,
    "rl_steps": 30,
    "rl_prompts": 4,
    "group_size": 8,
    "max_completion_tokens": 160,
    "pass_k_samples": 0,
    "tiny": TinyConfig(max_positions=512),
}


def multiturn_config(cfg: TrainConfig | None = None, *, keep: Iterable[str] = ()) -> TrainConfig:
    """``cfg`` (default: ``TrainConfig()``) with :data:`DEFAULTS`, except the fields in ``keep``.

    >>> multiturn_config(TrainConfig(rl_steps=5), keep={"rl_steps"}).rl_steps
    5
    >>> multiturn_config().max_completion_tokens
    160
    """
    kept = set(keep)
    return replace(cfg or TrainConfig(), **{k: v for k, v in DEFAULTS.items() if k not in kept})


def tool_task(task: Task, style: str = "compact") -> Task:
    """``task`` with the user message the tiny model reads (the description, or the code)."""
    text = _prompt(task, style).strip()
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


def run_multiturn_experiment(cfg: TrainConfig, log: Log = print) -> dict[str, Any]:
    """Run the multi-turn experiment (see the module docstring); returns the results dict,
    with the single-turn run's keys (``heldout_before``, ``heldout_sft``, ``heldout_rl``,
    ``heldout_sft_control``, ``train_reward``, ``run_dir``, ...) and the episodes' tool use."""
    import torch

    torch.set_num_threads(1)  # two threads on two shared cores were 10-30x slower here
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # environment_factory is marked experimental in TRL; its notice on every run says nothing new.
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from referee.experiments.listops.single_turn import _quiet_libraries, prepare_tasks
    from referee.train.trl_env import environment_class
    from referee.verify.function import FunctionVerifier, harness_sandbox

    _quiet_libraries()
    run = Path(cfg.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps({**asdict(cfg), "env": "code"}, indent=1))
    timer = _Timer()
    sandbox = harness_sandbox()
    verifier = FunctionVerifier(sandbox)
    runtime = CodeRuntime(sandbox=sandbox, function_verifier=verifier)
    env_class = None
    try:
        t0 = time.perf_counter()
        train, dev, heldout = (
            [tool_task(t, cfg.prompt) for t in split] for split in prepare_tasks(cfg, sandbox)
        )
        env_class = environment_class(code_env, train, runtime=runtime)
        timer.lap("tasks", t0)
        log(f"tasks: {len(train)} train, {len(dev)} dev, {len(heldout)} held-out for evaluation")
        log(f"episodes: CodeEnv with tools {', '.join(TOOLS)}; system prompt {SYSTEM!r}")
        return _experiment(cfg, log, run, timer, train, dev, heldout, env_class, runtime)
    finally:
        if env_class is not None:
            env_class.shutdown()
        runtime.close()
        verifier.close()
        sandbox.close()


def _experiment(
    cfg: TrainConfig, log: Log, run: Path, timer: _Timer, train: list[Task], dev: list[Task],
    heldout: list[Task], env_class: type[TRLEnvironment], runtime: CodeRuntime,
) -> dict[str, Any]:  # fmt: skip
    from transformers import AutoModelForCausalLM

    from referee.experiments.listops.single_turn import _imitation_ceiling, _sft
    from referee.experiments.listops.evaluation import EvalResult
    from referee.experiments.listops.tool_demos import chat_model, demonstrations, sft_row
    from referee.experiments.listops.tool_episodes import Episode, run_episodes
    from referee.experiments.listops.grpo import grpo_on_env

    t0 = time.perf_counter()
    dataset = env_class.dataset(train)
    openings = dict(zip(dataset["task_id"], dataset["prompt"], strict=True))
    demo = Demonstrator(share=cfg.demo_share)
    episodes, keys = demonstrations(env_class, train, demo, draws=cfg.demo_draws, openings=openings)
    demo_pass = sum(episodes[k][1] for k in keys) / max(1, len(keys))
    ceiling = _imitation_ceiling(demo, heldout, dev, runtime.function_verifier)
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

    def rows_for(tok: Any) -> list[dict[str, list[int]]]:
        memo: dict[str, list[int]] = {}
        by_key = {k: sft_row(tok, c, tools, memo) for k, (c, _) in episodes.items()}
        lengths = [len(r["input_ids"]) for r in by_key.values()]
        own = sum(sum(r["completion_mask"]) for r in by_key.values()) / len(by_key)
        log(
            f"a demonstration is {sum(lengths) / len(lengths):.0f} tokens (at most "
            f"{max(lengths)}), {own:.0f} of them the model's (the fine-tuning loss)"
        )
        over = sum(n > SFT_MAX_LENGTH for n in lengths)
        if over:
            log(
                f"warning: {over} of {len(lengths)} demonstrations are longer than fine-tuning's "
                f"{SFT_MAX_LENGTH} tokens, and lose their end (their last turns) in fine-tuning"
            )
        return [by_key[k] for k in keys]

    tok, model = chat_model(conversations, tools, model=cfg.model, tiny=cfg.tiny, seed=cfg.seed)
    log(
        f"model: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters, "
        f"vocabulary {len(tok)}"
    )
    rows = rows_for(tok)

    dev_scores: dict[str, float] = {}
    infra: dict[str, int] = {}
    tool_use: dict[str, dict[str, Any]] = {}
    store = run / "heldout_episodes.jsonl"

    def episodes_of(m: Any, tasks: list[Task]) -> list[Episode]:
        return run_episodes(
            m, tok, tasks, lambda: code_env(runtime), tools, max_tool_calls=MAX_TOOL_CALLS,
            max_completion_tokens=cfg.max_completion_tokens, seed=cfg.seed,
        )  # fmt: skip

    def heldout_eval(m: Any, name: str) -> EvalResult:
        t = time.perf_counter()
        eps = episodes_of(m, heldout)
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
        with store.open("a") as f:
            f.writelines(json.dumps({"stage": name, **e.record()}, default=str) + "\n" for e in eps)
        if dev and not name.startswith("rl-step"):
            dev_scores[name] = sum(e.passed for e in episodes_of(m, dev)) / len(dev)
        timer.lap(f"eval_{name}", t)
        log(
            f"held-out pass@1 {name}: {res.pass_at_1:.3f} (dev {dev_scores.get(name, 0):.3f}); "
            f"{tool_use[name]['tool_calls_per_episode']:.2f} tool calls per episode, ends {ends}"
        )
        if res.infra_errors:
            log(f"warning: {res.infra_errors} held-out episodes of {name} could not be judged")
        return res

    def dev_pass(m: Any) -> float:
        return sum(e.passed for e in episodes_of(m, dev)) / max(1, len(dev))

    before = heldout_eval(model, "before")
    t0 = time.perf_counter()
    if cfg.sft_checkpoint:
        # Its own tokenizer comes with it: the demonstrations are tokenised again (the control).
        kw: dict[str, Any] = {"tiny": cfg.tiny, "seed": cfg.seed}
        tok, model = chat_model(conversations, tools, model=cfg.sft_checkpoint, **kw)
        rows = rows_for(tok)
        sft_stats: dict[str, Any] = {"from": cfg.sft_checkpoint}
    else:
        sft_stats = _sft(
            model, tok, cast(Any, rows), cfg, run / "sft", steps=cfg.sft_steps, seed=cfg.seed,
            dev_eval=dev_pass if dev else None,
        )  # fmt: skip
    # Token ids and the mask of the model's tokens go straight to TRL's SFTTrainer.
    sft_rows = cast(Any, rows)
    timer.lap("sft", t0)
    log(f"fine-tuning: {sft_stats}")
    model.save_pretrained(run / "model-sft")
    tok.save_pretrained(run / "model-sft")
    # GRPO starts from the saved checkpoint: TRL builds its reference model from its path.
    model = AutoModelForCausalLM.from_pretrained(run / "model-sft")
    sft = heldout_eval(model, "sft")

    t0 = time.perf_counter()
    rl_stats = grpo_on_env(
        model, tok, env_class, train, heldout, cfg, run, max_tool_calls=MAX_TOOL_CALLS,
        heldout_eval=heldout_eval, log=log, dataset=dataset,
    )  # fmt: skip
    timer.lap("rl", t0)
    model.save_pretrained(run / "model-rl")
    tok.save_pretrained(run / "model-rl")
    rl = heldout_eval(model, "rl")

    control = None
    control_stats: dict[str, Any] = {}
    if cfg.control:
        base = AutoModelForCausalLM.from_pretrained(run / "model-sft")
        t0 = time.perf_counter()
        # GRPO's wall time as training time, over the steps it buys at fine-tuning's pace.
        pace = sft_stats.get("train_s", 0) / max(1, sft_stats.get("steps", 0))
        planned = int(rl_stats["wall_s"] / pace) if pace > 0 else 10**6
        control_stats = _sft(
            base, tok, sft_rows, cfg, run / "control", steps=max(1, planned),
            time_budget_s=rl_stats["wall_s"], seed=cfg.seed + 1, lr=cfg.control_lr,
        )  # fmt: skip
        control_stats["planned_steps"] = planned
        timer.lap("control", t0)
        log(f"control (fine-tuning for GRPO's wall time): {control_stats}")
        base.save_pretrained(run / "model-control")
        tok.save_pretrained(run / "model-control")
        control = heldout_eval(base, "control")

    results = stage_results(
        run, train=train, heldout=heldout, demo_pass=demo_pass, ceiling=ceiling,
        stages={"before": before, "sft": sft, "rl": rl, "control": control},
        stats={"sft": sft_stats, "rl": rl_stats, "control": control_stats},
    )  # fmt: skip
    results.update(
        env="code", tools=list(TOOLS), dev_pass_at_1=dev_scores, heldout_pass_at_k={},
        heldout_infra_errors=infra, heldout_tool_use=tool_use, times=timer.times,
    )  # fmt: skip
    (run / "results.json").write_text(json.dumps(results, indent=1))
    return results
