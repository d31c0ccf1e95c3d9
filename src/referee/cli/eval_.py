"""``referee eval``: a policy's pass@1 (and pass@k) on tasks of any kind."""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated

import typer

from referee.cli.console import progress_printer
from referee.cli.files import load_tasks
from referee.cli.options import DEVICE_HELP, TASKS_HELP, Json
from referee.errors import ConfigError
from referee.optional import require_extra


def eval_(
    policy: Annotated[
        str,
        typer.Option(
            help="local:PATH (a model folder, a .gguf file, or pkg:MODULE: an installed "
            "package holding one), openai:URL#MODEL, or scripted:TEXT (the same answer to "
            "every task: a baseline)."
        ),
    ],
    tasks: Annotated[str, typer.Option("--tasks", help=TASKS_HELP)],
    split: Annotated[str, typer.Option(help="heldout, train or all.")] = "heldout",
    samples: Annotated[
        int,
        typer.Option(
            min=0,
            help="Sampled completions per task (temperature 1); pass@k is reported for k = 1, "
            "2, 4, 8, ... up to it, and for k = it (0: greedy pass@1 only).",
        ),
    ] = 0,
    limit: Annotated[int | None, typer.Option(min=1, help="At most N tasks.")] = None,
    max_tokens: Annotated[
        int, typer.Option(min=1, help="Most tokens the policy writes per answer.")
    ] = 256,
    device: Annotated[str, typer.Option(help=DEVICE_HELP + " (a local: model)")] = "auto",
    adapter: Annotated[
        str | None,
        typer.Option(
            help="A PEFT (LoRA) adapter folder put on the local: model, as "
            "`referee train --model` saves it (RUN/adapter)."
        ),
    ] = None,
    batch: Annotated[
        int, typer.Option(min=1, help="Tasks per padded batch of a local: model.")
    ] = 16,
    threads: Annotated[
        int | None,
        typer.Option(min=1, help="torch threads of a local: model on the CPU (default: one)."),
    ] = None,
    as_json: Json = False,
) -> None:
    """Evaluate a policy: greedy pass@1 (and pass@k with --samples) on tasks of any kind with
    a verifier, each answer judged by its task's own verifier (a local: model in padded
    batches)."""
    from referee.policy.device import pick_device
    from referee.rollout.evaluate import evaluate_policy

    if policy.startswith("local:"):
        require_extra("train", needed_for="--policy local:")
        pick_device(device)  # a bad or unavailable --device: exit 2 before any loading

    if split not in ("heldout", "train", "all"):
        raise ConfigError(f"--split must be heldout, train or all, got {split!r}")
    loaded = load_tasks(tasks, "--tasks")
    chosen = [t for t in loaded if split == "all" or t.split == split]
    if not chosen:
        others = Counter(t.split for t in loaded)
        found = ", ".join(f"{n} {s}" for s, n in sorted(others.items())) or "no tasks"
        raise ConfigError(
            f"{tasks} has no tasks in split {split!r} ({found}); evaluate them with --split all, "
            f"or hold some out with `referee tasks split {tasks} --heldout 0.2 --out FILE`"
        )
    chosen = chosen[:limit] if limit else chosen
    if adapter is not None and not policy.startswith("local:"):
        raise ConfigError(f"--adapter goes on a local: model, not on {policy!r}")
    result = evaluate_policy(
        policy, chosen, samples=samples, max_tokens=max_tokens, device=device,
        adapter=adapter, batch=batch, progress=progress_printer("answers"), threads=threads,
    )  # fmt: skip
    data = {"tasks": len(chosen), "split": split, "pass_at_1": result.pass_at_1,
            "pass_at_k": result.pass_at_k, "infra_errors": result.infra_errors,
            "solved": result.solved, "completion_tokens": result.completion_tokens,
            "greedy_s": result.greedy_s}  # fmt: skip
    if result.ran:  # the batched route tells which answers reached a test at all
        data["ran"] = sum(result.ran) / len(result.ran)
    sampled = ", ".join(f"pass@{k} {v:.3f}" for k, v in result.pass_at_k.items())
    if as_json:
        print(json.dumps(data))
    else:  # the result, on stdout: `referee eval ... > out.txt` keeps it
        print(
            f"{len(chosen)} {split} tasks: pass@1 {result.pass_at_1:.3f}"
            + (f" (greedy); sampled {sampled}" if sampled else "")
            + f"; {result.infra_errors} infra errors"
        )
        print(f"solved ({len(result.solved)}): {' '.join(result.solved) or 'none'}")
        rate = result.completion_tokens / result.greedy_s if result.greedy_s else 0.0
        print(
            f"greedy pass: {result.completion_tokens} tokens in {result.greedy_s:.0f}s "
            f"({rate:.1f} tokens/s, verdicts included)"
        )


def register(app: typer.Typer) -> None:
    """Add ``referee eval`` to ``app``."""
    app.command("eval")(eval_)
