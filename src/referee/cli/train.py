"""``referee train``: GRPO on the list-ops experiment, or a pretrained model on a task file."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from referee.cli.console import Out, err
from referee.cli.options import DEVICE_HELP
from referee.cli.train_lm import check_device, train_lm
from referee.errors import ConfigError


def train(
    ctx: typer.Context,
    steps: Annotated[int, typer.Option(help="GRPO steps.")] = 50,
    sft_steps: Annotated[int, typer.Option(help="Supervised fine-tuning steps.")] = 600,
    group_size: Annotated[int, typer.Option(help="Completions per task (GRPO's G).")] = 8,
    prompts: Annotated[int, typer.Option(help="Tasks per GRPO step.")] = 8,
    model: Annotated[
        str | None, typer.Option(help="A local path or hub id; default: a tiny model made here.")
    ] = None,
    sampler: Annotated[str, typer.Option(help="curriculum or uniform.")] = "curriculum",
    tasks: Annotated[
        str,
        typer.Option(
            help="A task FILE (any kind, with train and held-out splits): GRPO on the --model "
            "given; or N, how many list-ops tasks to generate (the list-ops experiment)."
        ),
    ] = "3000",
    task_file: Annotated[
        str | None,
        typer.Option(
            "--task-file",
            help="Function tasks to use instead (with their splits); a path or a URL.",
        ),
    ] = None,
    prompt: Annotated[
        str, typer.Option(help="compact (the description: the tiny model) or code.")
    ] = "compact",
    env: Annotated[
        str,
        typer.Option(
            help="code-single (one completion judged by the verifier) or code (multi-turn: "
            "tool calls in CodeEnv's sandbox, GRPO through TRL's environment_factory; its own "
            "smaller defaults for the options not given)."
        ),
    ] = "code-single",
    eval_tasks: Annotated[int, typer.Option(help="Held-out tasks evaluated.")] = 256,
    eval_every: Annotated[int, typer.Option(help="Held-out pass@1 every N GRPO steps.")] = 0,
    demo_share: Annotated[
        float, typer.Option(help="Share of demonstrations acting on a misconception.")
    ] = 0.65,
    demo_draws: Annotated[int, typer.Option(help="Demonstrations drawn per training task.")] = 16,
    sft_eval_every: Annotated[
        int, typer.Option(help="Dev pass@1 every N fine-tuning steps (0: never).")
    ] = 0,
    canary_share: Annotated[
        float, typer.Option(help="Share of impossible canary tasks in the GRPO pool.")
    ] = 0.01,
    control_clock: Annotated[
        str | None,
        typer.Option(
            help="How GRPO's time, which the control gets, is counted: wall or cpu (the "
            "process's and the sandbox's CPU seconds, which a shared machine's load does not "
            "inflate). Default: wall; cpu with --env code."
        ),
    ] = None,
    report_to: Annotated[
        str, typer.Option(help="Trainer loggers for the metrics too: none, tensorboard, wandb.")
    ] = "none",
    metrics_port: Annotated[
        int | None, typer.Option(help="Serve step metrics for Prometheus on 127.0.0.1:PORT.")
    ] = None,
    quarantine_from: Annotated[
        list[Path] | None,
        typer.Option(help="A run folder whose audit labels keep tasks out (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option()] = 0,
    sft_checkpoint: Annotated[
        Path | None,
        typer.Option(help="Start GRPO and the control from this fine-tuned model (skip SFT)."),
    ] = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(help="Run folder, new or empty (default runs/train-<time>)."),
    ] = None,
    control: Annotated[bool, typer.Option(help="Run the SFT-only control.")] = True,
    budget_cpu_hours: Annotated[
        float | None,
        typer.Option(help="Stop GRPO cleanly once its sandbox CPU time reaches this (hours)."),
    ] = None,
    budget_tokens: Annotated[
        int | None,
        typer.Option(help="Stop GRPO cleanly once its prompt + completion tokens reach this."),
    ] = None,
    budget_wall: Annotated[
        float | None,
        typer.Option(help="Stop GRPO cleanly after this many seconds of sampling."),
    ] = None,
    device: Annotated[str, typer.Option(help=DEVICE_HELP + ".")] = "auto",
    budget_minutes: Annotated[
        float,
        typer.Option(help="--tasks FILE: GRPO's wall-clock minutes (the control gets the same)."),
    ] = 30.0,
    lora_rank: Annotated[
        int, typer.Option(help="--tasks FILE: LoRA's rank (0: train the layers' own weights).")
    ] = 16,
    train_layers: Annotated[
        int | None, typer.Option(help="--tasks FILE: train only the top N layers.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="--tasks FILE: most tokens of one answer.")] = 160,
    lr: Annotated[float, typer.Option(help="--tasks FILE: the learning rate.")] = 1e-4,
    control_kind: Annotated[
        str,
        typer.Option(
            "--control-kind",
            help="--tasks FILE: rft (rejection-sampling fine-tuning on the model's own passing "
            "answers or, with --env code, episodes; GRPO's wall time) or none.",
        ),
    ] = "rft",
    eval_limit: Annotated[
        int | None, typer.Option(help="--tasks FILE: at most N held-out tasks evaluated.")
    ] = None,
    threads: Annotated[
        int | None, typer.Option(help="--tasks FILE: torch threads on the CPU (default: one).")
    ] = None,
    prior: Annotated[
        str,
        typer.Option(
            help="--tasks FILE: the curriculum's Beta prior: fit (fitted to the file's "
            "calibrated pass rates for --model) or ALPHA,BETA (1,1: uniform)."
        ),
    ] = "fit",
    as_json: Annotated[
        bool,
        typer.Option("--json", help="stdout: one JSON object, the results (the table: stderr)."),
    ] = False,
) -> None:
    """GRPO with verifier rewards, a control and a held-out table: a pretrained --model on a
    --tasks FILE, or (by default) the list-ops experiment on a model made here."""
    # Every option is checked before torch is imported (seconds): a mistyped option is refused
    # at once; then the extra and the device (which needs torch), then the work.
    if not tasks.isdigit():
        train_lm(ctx, tasks, model, run_dir, as_json)
        return
    from referee.experiments.listops import experiment_config

    lm_only = ("budget_minutes", "lora_rank", "train_layers", "max_tokens", "lr",
               "control_kind", "eval_limit", "threads", "prior")  # fmt: skip
    for name in lm_only:
        if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT":
            raise ConfigError(
                f"--{name.replace('_', '-')} applies to --tasks FILE (a pretrained --model on a "
                "task file), not to the list-ops experiment"
            )

    # Only the options given go to the library: the ones left out take the mode's defaults
    # (multi-turn has its own, smaller ones). The run folder is always named here.
    names = {"steps": "rl_steps", "prompts": "rl_prompts"}
    given: dict[str, Any] = {
        names.get(name, name): value
        for name, value in ctx.params.items()
        if name not in ("env", "as_json", *lm_only)
        and getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    }
    if "tasks" in given:
        given["tasks"] = int(tasks)
    given["run_dir"] = str(run_dir or Path("runs") / time.strftime("train-%Y%m%d-%H%M%S"))
    for key in ("task_file", "sft_checkpoint"):
        if given.get(key) is not None:
            given[key] = str(given[key])
    if "quarantine_from" in given:
        given["quarantine_from"] = tuple(str(p) for p in given["quarantine_from"] or ())
    cfg = experiment_config(given, env=env)
    check_device(device)
    from referee.experiments.listops import results_table, run_experiment
    from referee.ui.tables import print_table

    # A SIGTERM (`timeout`, a scheduler) unwinds like Ctrl-C, so the run folder is marked
    # cancelled or removed instead of left half-made.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    results = run_experiment(cfg, log=lambda m: err.print(m, markup=False, highlight=False))
    data = results.to_json()
    # The table is the command's result: on stdout, unless --json makes that line the result.
    out = err.console if as_json else Out(soft_wrap=True)
    print_table(out, results_table(data), keys=())
    out.print(f"run folder: {data.get('run_dir', '')}", markup=False, highlight=False)
    if as_json:
        print(json.dumps(data))


def register(app: typer.Typer) -> None:
    """Add ``referee train`` to ``app``."""
    app.command()(train)
