"""The embedded experiment behind ``referee train``: does RL beat imitation of an imperfect
demonstrator, on held-out tasks, on a CPU?

1. **Tasks**: ``list-ops`` tasks (:mod:`referee.tasks.procedural`), split by structure (the
   kinds of the steps): a held-out task's composition was never trained on. Their tests are
   recorded by running the reference in the sandbox.
2. **Model**: a tokenizer trained on the training tasks' texts and a small Llama, both made
   here (:mod:`referee.experiments.listops.tiny`), or any local path / hub id given.
3. **Supervised fine-tuning** (TRL ``SFTTrainer``, completion-only loss) on the
   :class:`~referee.experiments.listops.demonstrator.Demonstrator`'s solutions: imperfect, with systematic
   misconceptions in a fixed share of them.
4. **GRPO** (TRL ``GRPOTrainer``) from the fine-tuned model: rewards from the sandboxed
   verifier, tasks chosen by the curriculum (or uniformly), zero-variance groups counted.
5. **Control**: fine-tuning continued from the same checkpoint on the same demonstrations for
   the same wall time as GRPO took: what imitation reaches with RL's extra time.
6. **Evaluation**: greedy held-out pass@1 before fine-tuning, after it, after GRPO and for the
   control, with paired per-task tests; training reward beside them.

Everything lands in the run folder: config, models, the GRPO trajectories, metrics per step,
the results.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from referee.tasks.model import Task
from referee.tasks.procedural import generate
from referee.tasks.split import assign_split
from referee.track.canary import make_canaries
from referee.experiments.listops.demonstrator import Demonstrator
from referee.tasks.compact import compact_prompt
from referee.experiments.listops.tiny import TinyConfig
from referee.train.tracking import RunTracking

__all__ = ["TrainConfig", "prepare_tasks", "run_experiment"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    run_dir: str = "runs/train"
    # tasks: generated list-ops tasks, or a task file of function tasks (its own splits)
    task_file: str | None = None
    #: "compact": the task's description only (the tiny model's format); "code": the whole
    #: code prompt (signature and docstring), for a real model.
    prompt: str = "compact"
    tasks: int = 3000
    difficulties: tuple[float, ...] = (0.0, 0.5, 1.0)  # list-ops: 1, 2 or 3 steps, in turn
    heldout_fraction: float = 0.2
    dev_fraction: float = (
        0.1  # of the training structures, kept out of training (see prepare_tasks)
    )
    dev_tasks: int = 128
    eval_tasks: int = 256
    # demonstrations: ``demo_draws`` draws of the demonstrator per training task (each draw
    # acts on a misconception with probability ``demo_share``), so the same prompt is seen
    # demonstrated both ways and imitation learns the demonstrator's proportions
    demo_share: float = 0.65
    demo_draws: int = 8
    # model: None builds the tiny model here (sized by ``tiny``); else a local path or hub id
    model: str | None = None
    tiny: TinyConfig = field(default_factory=TinyConfig)
    # supervised fine-tuning (skipped when ``sft_checkpoint`` names a fine-tuned model folder,
    # for instance a previous run's model-sft: GRPO and the control start from it)
    sft_checkpoint: str | None = None
    sft_steps: int = 600
    sft_batch: int = 32
    sft_lr: float = 3e-3
    #: dev pass@1 every N fine-tuning steps (0: never): the imitation curve, on dev only
    sft_eval_every: int = 0
    #: the SFT-only control's peak learning rate (chosen on dev: bench/control_lr.py)
    control_lr: float = 3e-4
    # GRPO
    rl_steps: int = 50
    rl_prompts: int = 8  # tasks per step
    group_size: int = 8
    rl_lr: float = 2e-4
    kl_beta: float = 0.04  # KL penalty towards the fine-tuned model (TRL's beta)
    temperature: float = 1.0
    max_completion_tokens: int = 72
    sampler: str = "curriculum"  # or "uniform"
    #: "pass": 1 when every test passes, else 0 (what pass@1 measures); "partial": the share
    #: of tests passed (the verifier's reward).
    reward: str = "pass"
    #: share of canary tasks (impossible by construction: referee.track.canary) mixed into the
    #: GRPO pool; any pass on one is an alert. Never in the fine-tuning data.
    canary_share: float = 0.01
    #: the trainer's own loggers for referee's step metrics too: "none", "tensorboard", "wandb"
    report_to: str = "none"
    #: serve the step metrics for Prometheus on 127.0.0.1:PORT while GRPO runs (None: off)
    metrics_port: int | None = None
    #: run folders whose audit labels quarantine tasks from this run's GRPO sampling
    quarantine_from: tuple[str, ...] = ()
    # evaluation
    eval_every: int = 0  # held-out pass@1 every N GRPO steps (0: only at the end)
    pass_k_samples: int = 4  # sampled completions per held-out task for pass@k (0: none)
    control: bool = True


def prepare_tasks(cfg: TrainConfig, sandbox: Any) -> tuple[list[Task], list[Task], list[Task]]:
    """Generate, split by structure and record the tasks; returns (train, dev, held-out).

    *dev* is a share of the training structures kept out of training, for choosing settings:
    the held-out split is only ever reported, never used to pick anything."""
    from referee.verify.record import record_function_tasks

    if cfg.task_file:
        recorded = _task_file(cfg.task_file, sandbox)
    else:
        drafts = []
        for i in range(cfg.tasks):
            d = cfg.difficulties[i % len(cfg.difficulties)]
            t = generate("list-ops", difficulty=d, seed=cfg.seed * 1_000_003 + i)
            split = assign_split(t.provenance.unit or t.id, cfg.heldout_fraction)
            drafts.append(t.model_copy(update={"split": split}))
        recorded = record_function_tasks(sandbox, drafts)
    train: list[Task] = []
    dev: list[Task] = []
    for t in recorded:
        if t.split == "train":
            unit = t.provenance.unit or t.id
            is_dev = assign_split(unit, cfg.dev_fraction, salt="referee-dev-v1") == "heldout"
            (dev if is_dev else train).append(t)
    heldout = [t for t in recorded if t.split == "heldout"]
    random.Random(cfg.seed).shuffle(heldout)
    random.Random(cfg.seed).shuffle(dev)
    return train, dev[: cfg.dev_tasks], heldout[: cfg.eval_tasks]


def _prompt(task: Task, style: str = "compact") -> str:
    code = str(task.payload["code_prompt"])
    return compact_prompt(code) if style == "compact" else code


def _task_file(path: str, sandbox: Any) -> list[Task]:
    from referee.errors import ConfigError
    from referee.tasks.model import read_tasks
    from referee.verify.record import record_function_tasks

    tasks = read_tasks(path)
    usable = [
        t
        for t in tasks
        if t.answer_format == "code" and "entry_point" in t.payload and "reference" in t.hidden
    ]
    if not usable:
        raise ConfigError(
            f"{path} has no function tasks with a reference solution (answer_format 'code', "
            "payload.entry_point, hidden.reference); referee train fine-tunes on references"
        )
    if not any(t.split == "heldout" for t in usable):
        raise ConfigError(
            f"{path} has no held-out tasks, so nothing would measure the training; make the "
            "tasks with a held-out split (referee.tasks.split.assign_split)"
        )
    todo = [t for t in usable if "expected" not in t.hidden]
    done = {t.id: t for t in record_function_tasks(sandbox, todo)} if todo else {}
    return [done.get(t.id, t) for t in usable]


class _Timer:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    def lap(self, name: str, t0: float) -> None:
        self.times[name] = round(time.perf_counter() - t0, 2)


def _sft(
    model: Any, tokenizer: Any, rows: list[dict[str, str]], cfg: TrainConfig, out: Path,
    *, steps: int, time_budget_s: float | None = None, seed: int = 0,
    dev_eval: Callable[[Any], float] | None = None, lr: float | None = None,
    prepared: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Fine-tune ``model`` on ``rows``; returns the stage's numbers. ``prepared``, if given,
    caches TRL's tokenised data set: the control reuses the fine-tuning stage's, since
    tokenising tens of thousands of demonstrations costs as much as a hundred steps."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl.trainer.sft_config import SFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

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
            every = cfg.sft_eval_every
            if dev_eval is not None and every and state.global_step % every == 0:
                t = time.perf_counter()
                curve.append({"step": state.global_step, "dev_pass_at_1": dev_eval(kw["model"])})
                self.eval_s += time.perf_counter() - t
            spent = time.perf_counter() - self.t0 - self.eval_s
            if time_budget_s is not None and spent >= time_budget_s:
                control.should_training_stop = True
            return control

    args = SFTConfig(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=cfg.sft_batch,
        learning_rate=cfg.sft_lr if lr is None else lr,
        lr_scheduler_type="cosine",
        warmup_steps=min(20, steps // 10),
        weight_decay=0.0,
        logging_steps=25,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        # TRL turns checkpointing on by default; for a model this small it only recomputes
        # every forward pass (a quarter of each step's time here).
        gradient_checkpointing=False,
        seed=seed,
        completion_only_loss=True,
        max_length=192,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    budget = Budget()
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=(prepared or {}).get("dataset") or Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[budget],
    )
    if prepared is not None:
        prepared["dataset"] = trainer.train_dataset
    t0 = time.perf_counter()
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {
        "steps": trainer.state.global_step,
        "wall_s": round(time.perf_counter() - t0 - budget.eval_s, 2),
        "train_s": round(time.perf_counter() - budget.t0 - budget.eval_s, 2),
        "lr": args.learning_rate,
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "dev_curve": curve,
    }


def _grpo(
    model: Any, tokenizer: Any, train: list[Task], heldout: list[Task], verifier: Any,
    cfg: TrainConfig, run: Path, log: Log, heldout_eval: Callable[[Any, str], Any],
    tracking: RunTracking,
) -> dict[str, Any]:  # fmt: skip
    from transformers import TrainerCallback
    from trl.trainer.grpo_config import GRPOConfig

    from referee.tasks.curriculum import Curriculum, CurriculumConfig, Group
    from referee.tasks.sampler import TrainingSampler
    from referee.track.loggers import RefereeMetricsCallback
    from referee.train.grpo import CurriculumGRPOTrainer
    from referee.train.trl_adapter import reward_function, tasks_dataset

    index = {t.id: i for i, t in enumerate(train)}
    mode = CurriculumConfig() if cfg.sampler == "curriculum" else CurriculumConfig.uniform()
    # The held-out tasks are given to the sampler too, so that it knows (and refuses) them.
    sampler = TrainingSampler(
        [*train, *heldout],
        curriculum=Curriculum([t.id for t in train], mode, seed=cfg.seed),
    )

    sampler.curriculum.quarantine(cfg_quarantined(cfg))

    def choose(n: int) -> list[int]:
        # Labels recorded while the run goes on (the store is shared with the dashboard) take
        # tasks out of sampling from the next step on.
        newly = sampler.curriculum.quarantine(tracking.quarantined_tasks())
        if newly:
            log(f"quarantined by audit: {newly} more tasks out of sampling")
        return [index[t.id] for t in sampler.sample(n)]

    curve: list[dict[str, Any]] = []
    rewards: list[float] = []
    zero_variance: list[float] = []

    def on_verdicts(batch: list[Task], texts: list[str], verdicts: list[Any]) -> None:
        step = len(rewards)
        # The reward GRPO was given (pass/fail by default), as TRL saw it.
        good = [
            float(v.passed) if cfg.reward == "pass" else v.reward
            for v in verdicts
            if not v.infra_error
        ]
        rewards.append(sum(good) / max(1, len(good)))
        groups: dict[str, list[float | None]] = {}
        for t, v in zip(batch, verdicts, strict=True):
            groups.setdefault(t.id, []).append(None if v.infra_error else v.reward)
        report = sampler.observe([Group(k, r) for k, r in groups.items()], step=step)
        zero_variance.append(report.n_dropped / max(1, len(groups)))
        lengths = [len(tokenizer(c, add_special_tokens=False)["input_ids"]) for c in texts]
        prompts = [_prompt(t, cfg.prompt) for t in batch]
        for a in tracking.log_batch(
            step, batch, prompts, texts, verdicts, completion_tokens=lengths
        ):  # fmt: skip
            log(f"alert at step {step}: [{a.severity}] {a.detector}: {a.message}")

    class Curve(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            if cfg.eval_every and state.global_step % cfg.eval_every == 0:
                res = heldout_eval(kw["model"], f"rl-step{state.global_step}")
                curve.append({"step": state.global_step, "heldout_pass_at_1": res.pass_at_1})
                tracking.heldout(state.global_step, pass_rate=res.pass_at_1, n=len(res.passed))
            return control

    reward = reward_function(verifier, train, on_verdicts=on_verdicts, binary=cfg.reward == "pass")
    args = GRPOConfig(
        output_dir=str(run / "rl"),
        max_steps=cfg.rl_steps,
        per_device_train_batch_size=cfg.rl_prompts * cfg.group_size,
        num_generations=cfg.group_size,
        max_completion_length=cfg.max_completion_tokens,
        temperature=cfg.temperature,
        learning_rate=cfg.rl_lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        beta=cfg.kl_beta,
        logging_steps=1,
        save_strategy="no",
        report_to=cfg.report_to,
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        seed=cfg.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer = CurriculumGRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=args,
        train_dataset=tasks_dataset(train, prompt=lambda t: _prompt(t, cfg.prompt)),
        processing_class=tokenizer,
        callbacks=[Curve()],
        choose=choose,
    )
    # referee's step metrics (reward spread, visible/hidden gap, alerts...) reach whatever
    # loggers report_to names, beside TRL's own.
    RefereeMetricsCallback.attach(trainer, tracking.tracker)
    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0
    return {
        **grpo_stats(trainer, run, wall, rewards, zero_variance, sampler),
        "curve": curve,
        "alerts": [
            {"step": a.step, "detector": a.detector, "severity": a.severity, "message": a.message}
            for a in tracking.alerts
        ],
    }


def grpo_stats(
    trainer: Any, run: Path, wall: float, rewards: list[float], zero_variance: list[float],
    sampler: Any,
) -> dict[str, Any]:  # fmt: skip
    """The numbers of a finished GRPO stage (single-turn or on tool episodes); writes TRL's
    metrics per step to ``rl_metrics.jsonl``."""
    history = [h for h in trainer.state.log_history if "reward" in h]
    zero_std = [h.get("frac_reward_zero_std", 0.0) for h in history]
    (run / "rl_metrics.jsonl").write_text("".join(json.dumps(h) + "\n" for h in history))
    return {
        "steps": trainer.state.global_step,
        "wall_s": round(wall, 2),
        "train_reward_first": rewards[0] if rewards else None,
        "train_reward_last": sum(rewards[-5:]) / len(rewards[-5:]) if rewards else None,
        "train_reward_per_step": [round(r, 4) for r in rewards],
        "frac_zero_std_mean": sum(zero_std) / len(zero_std) if zero_std else None,
        "zero_variance_groups_mean": sum(zero_variance) / max(1, len(zero_variance)),
        "curriculum": sampler.curriculum.summary(),
        "never_solved": len(sampler.curriculum.never_solved(min_attempts=16)),
    }


def stage_results(
    run: Path, *, train: list[Task], heldout: list[Task], demo_pass: float,
    ceiling: dict[str, float], stages: dict[str, Any], stats: dict[str, dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    """The results every ``referee train`` run reports, from its held-out evaluations
    (``stages``: before, sft, rl and control, the last None without a control) and each
    stage's numbers; also writes ``heldout_per_task.json``. The caller adds its own keys."""
    from referee.experiments.listops.stats import paired_test

    before, sft, rl, control = (stages[k] for k in ("before", "sft", "rl", "control"))
    paired = {"rl_vs_sft": asdict(paired_test(rl.passed, sft.passed))}
    if control:
        paired["rl_vs_control"] = asdict(paired_test(rl.passed, control.passed))
    per_task = {
        "task_ids": sft.task_ids, "before": before.passed, "sft": sft.passed, "rl": rl.passed,
        "control": control.passed if control else None,
    }  # fmt: skip
    (run / "heldout_per_task.json").write_text(json.dumps(per_task))
    return {
        "run_dir": str(run),
        "train_tasks": len(train),
        "heldout_tasks": len(heldout),
        "demo_pass_rate": round(demo_pass, 4),
        "imitation_ceiling": ceiling,
        "heldout_before": before.pass_at_1,
        "heldout_sft": sft.pass_at_1,
        "heldout_rl": rl.pass_at_1,
        "heldout_sft_control": control.pass_at_1 if control else None,
        "train_reward": stats["rl"]["train_reward_last"],
        **stats,
        "paired": paired,
    }


def cfg_quarantined(cfg: TrainConfig) -> set[str]:
    """The task ids quarantined in the stores of ``cfg.quarantine_from`` (earlier runs)."""
    from referee.track.audit import quarantined_task_ids
    from referee.track.store import TrackStore

    out: set[str] = set()
    for folder in cfg.quarantine_from:
        with TrackStore(folder, create=False) as store:
            out |= quarantined_task_ids(store)
    return out


def _imitation_ceiling(
    demo: Demonstrator, heldout: list[Task], dev: list[Task], verifier: Any
) -> dict[str, float]:
    """What perfect imitation reaches: the pass rate of the demonstrator's majority answer
    (greedy decoding of a perfect imitator) and of one of its draws (sampling at T 1)."""

    def rate(tasks: list[Task], solve: Callable[[Task], str]) -> float:
        if not tasks:
            return 0.0
        verdicts = verifier.verify_many([(t, solve(t)) for t in tasks])
        return round(sum(bool(v.passed) for v in verdicts) / len(verdicts), 4)

    return {
        "heldout_mode": rate(heldout, demo.mode),
        "dev_mode": rate(dev, demo.mode),
        "heldout_draw": rate(heldout, lambda t: demo.solve(t, draw=10**6)),
    }


def _quiet_libraries() -> None:
    # The run prints its own progress; the libraries' bars and deprecation notices (of options
    # referee does not set) would bury it.
    import warnings

    import datasets
    from transformers.utils import logging as hf_logging

    datasets.disable_progress_bars()
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")


def run_experiment(cfg: TrainConfig, log: Log = print) -> dict[str, Any]:
    """Run the whole experiment (see the module docstring); returns the results dict."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)  # two threads on two shared cores were 10-30x slower here
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _quiet_libraries()
    from referee.experiments.listops.evaluation import evaluate
    from referee.experiments.listops.tiny import tiny_model, train_tokenizer
    from referee.verify.function import FunctionVerifier, harness_sandbox

    run = Path(cfg.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps(asdict(cfg), indent=1))
    timer = _Timer()
    sandbox = harness_sandbox()
    verifier = FunctionVerifier(sandbox)
    try:
        t0 = time.perf_counter()
        train, dev, heldout = prepare_tasks(cfg, sandbox)
        timer.lap("tasks", t0)
        log(f"tasks: {len(train)} train, {len(dev)} dev, {len(heldout)} held-out for evaluation")

        demo = Demonstrator(share=cfg.demo_share)
        rows = [
            {"prompt": _prompt(t, cfg.prompt), "completion": demo.solve(t, draw=d)}
            for d in range(max(1, cfg.demo_draws))
            for t in train
        ]
        t0 = time.perf_counter()
        probe = random.Random(cfg.seed).sample(range(len(rows)), min(400, len(rows)))
        demo_verdicts = verifier.verify_many(
            [(train[i % len(train)], rows[i]["completion"]) for i in probe]
        )
        demo_pass = sum(v.passed for v in demo_verdicts) / len(demo_verdicts)
        ceiling = _imitation_ceiling(demo, heldout, dev, verifier)
        timer.lap("demo_check", t0)
        log(f"demonstrations: {demo_pass:.1%} of a sample of {len(probe)} pass their tests")
        log(
            "imitation ceiling (the demonstrator's majority answer): held-out "
            f"{ceiling['heldout_mode']:.1%}, dev {ceiling['dev_mode']:.1%}; its draws pass "
            f"{ceiling['heldout_draw']:.1%} of held-out tasks"
        )

        if cfg.model is None:
            texts = [r["prompt"] + r["completion"] for r in rows]
            texts += [_prompt(t, cfg.prompt) + t.hidden["reference"] for t in train[:200]]
            tokenizer = train_tokenizer(texts)
            model = tiny_model(tokenizer, cfg.tiny, seed=cfg.seed)
        else:
            tokenizer = AutoTokenizer.from_pretrained(cfg.model)
            model = AutoModelForCausalLM.from_pretrained(cfg.model)

        dev_scores: dict[str, float] = {}
        pass_k: dict[str, dict[int, float]] = {}
        infra: dict[str, int] = {}

        def heldout_eval(m: Any, name: str) -> Any:
            t = time.perf_counter()
            res = evaluate(
                m, tokenizer, heldout, verifier,
                max_new_tokens=cfg.max_completion_tokens,
                prompt=lambda task: _prompt(task, cfg.prompt),
                samples=cfg.pass_k_samples if name in ("sft", "rl", "control") else 0,
                ks=(1, cfg.pass_k_samples), temperature=cfg.temperature, seed=cfg.seed,
            )  # fmt: skip
            if res.pass_at_k:
                pass_k[name] = res.pass_at_k
            # A verification that could not run is not a failure of the model: counted apart
            # and shown, never folded silently into pass@1.
            infra[name] = res.infra_errors
            if res.infra_errors:
                log(f"warning: {res.infra_errors} held-out verifications of {name} failed to run")
            if dev and not name.startswith("rl-step"):
                on_dev = evaluate(
                    m, tokenizer, dev, verifier,
                    max_new_tokens=cfg.max_completion_tokens,
                prompt=lambda task: _prompt(task, cfg.prompt),
                )  # fmt: skip
                dev_scores[name] = on_dev.pass_at_1
            timer.lap(f"eval_{name}", t)
            log(f"held-out pass@1 {name}: {res.pass_at_1:.3f} (dev {dev_scores.get(name, 0):.3f})")
            return res

        def dev_pass(m: Any) -> float:
            on_dev = evaluate(
                m, tokenizer, dev, verifier,
                max_new_tokens=cfg.max_completion_tokens,
                prompt=lambda task: _prompt(task, cfg.prompt),
            )  # fmt: skip
            return float(on_dev.pass_at_1)

        prepared: dict[str, Any] = {}
        before = heldout_eval(model, "before")
        t0 = time.perf_counter()
        if cfg.sft_checkpoint:
            tokenizer = AutoTokenizer.from_pretrained(cfg.sft_checkpoint)
            model = AutoModelForCausalLM.from_pretrained(cfg.sft_checkpoint)
            sft_stats: dict[str, Any] = {"from": cfg.sft_checkpoint}
        else:
            sft_stats = _sft(
                model, tokenizer, rows, cfg, run / "sft", steps=cfg.sft_steps, seed=cfg.seed,
                prepared=prepared,
                dev_eval=dev_pass if dev else None,
            )  # fmt: skip
        timer.lap("sft", t0)
        log(f"fine-tuning: {sft_stats}")
        model.save_pretrained(run / "model-sft")
        tokenizer.save_pretrained(run / "model-sft")
        # GRPO starts from the saved checkpoint: TRL builds its KL reference model from the
        # model's path, which a model made in memory does not have.
        model = AutoModelForCausalLM.from_pretrained(run / "model-sft")
        sft = heldout_eval(model, "sft")

        t0 = time.perf_counter()
        # Canaries join the GRPO pool only: nothing can pass them, so a pass is an alert.
        n_canaries = round(cfg.canary_share * len(train))
        canaries = make_canaries(n_canaries, seed=cfg.seed, like=train) if n_canaries else []
        pool = [*train, *canaries]
        sinks = []
        if cfg.metrics_port is not None:
            from referee.track.prometheus import MetricsServer

            sinks.append(MetricsServer(cfg.metrics_port))
            log(f"step metrics for Prometheus: {sinks[0].url}")
        tracking = RunTracking(
            run, run_id=run.name, config=asdict(cfg), tasks=[*pool, *heldout],
            name=f"referee train (seed {cfg.seed}, {cfg.sampler})", sinks=sinks,
        )  # fmt: skip
        tracking.heldout(0, pass_rate=sft.pass_at_1, n=len(sft.passed))
        try:
            rl_stats = _grpo(
                model, tokenizer, pool, heldout, verifier, cfg, run, log, heldout_eval, tracking
            )
        except BaseException:
            tracking.close("failed")
            raise
        finally:
            for sink in sinks:
                sink.close()
        rl_stats["canaries"] = len(canaries)
        timer.lap("rl", t0)
        model.save_pretrained(run / "model-rl")
        tokenizer.save_pretrained(run / "model-rl")
        rl = heldout_eval(model, "rl")
        tracking.heldout(rl_stats["steps"], pass_rate=rl.pass_at_1, n=len(rl.passed))
        tracking.close("finished")

        control = None
        control_stats: dict[str, Any] = {}
        if cfg.control:
            base = AutoModelForCausalLM.from_pretrained(run / "model-sft")
            t0 = time.perf_counter()
            # The control gets GRPO's wall time as its own training time, and a schedule sized
            # to it: a second fine-tuning stage (cosine from ``control_lr``) over the steps that
            # time buys at fine-tuning's measured pace. The clock stops it if the pace differs.
            pace = sft_stats.get("train_s", 0) / max(1, sft_stats.get("steps", 0))
            planned = int(rl_stats["wall_s"] / pace) if pace > 0 else 10**6
            control_stats = _sft(
                base, tokenizer, rows, cfg, run / "control", prepared=prepared,
                steps=max(1, planned), time_budget_s=rl_stats["wall_s"], seed=cfg.seed + 1,
                lr=cfg.control_lr,
            )  # fmt: skip
            control_stats["planned_steps"] = planned
            timer.lap("control", t0)
            log(f"control (fine-tuning for GRPO's wall time): {control_stats}")
            base.save_pretrained(run / "model-control")
            control = heldout_eval(base, "control")

        results = stage_results(
            run, train=train, heldout=heldout, demo_pass=demo_pass, ceiling=ceiling,
            stages={"before": before, "sft": sft, "rl": rl, "control": control},
            stats={"sft": sft_stats, "rl": rl_stats, "control": control_stats},
        )  # fmt: skip
        results.update(
            dev_pass_at_1=dev_scores, heldout_pass_at_k=pass_k, heldout_infra_errors=infra,
            times=timer.times,
        )  # fmt: skip
        (run / "results.json").write_text(json.dumps(results, indent=1))
        return results
    finally:
        verifier.close()
        sandbox.close()
