"""``referee tasks calibrate``: each task's pass rate for a model, kept in the task file."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from referee.cli.console import progress_printer
from referee.cli.files import load_tasks, out_file
from referee.cli.options import DEVICE_HELP, Json, TaskFile
from referee.errors import ConfigError
from referee.optional import require_extra


def tasks_calibrate(
    file: TaskFile,
    policy: Annotated[
        str, typer.Option(help="local:PATH (a model folder, a .gguf file or pkg:MODULE).")
    ],
    out: Annotated[str, typer.Option("--out", help="The calibrated task file to write.")],
    samples: Annotated[int, typer.Option(min=1, help="Sampled answers per task.")] = 8,
    keep: Annotated[
        str | None,
        typer.Option(help="LO..HI: write only the tasks whose pass rate is in that range."),
    ] = None,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature (use the training one).")
    ] = 0.7,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens of one answer.")] = 160,
    batch: Annotated[int, typer.Option(min=1, help="Tasks per padded batch.")] = 16,
    threads: Annotated[
        int | None, typer.Option(min=1, help="torch threads on the CPU (default: one).")
    ] = None,
    split: Annotated[str, typer.Option(help="train, heldout or all.")] = "all",
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "auto",
    as_json: Json = False,
) -> None:
    """Each task's pass rate for a model, from batched sampling, stored in the task file
    (difficulty.features["calibrated:MODEL"]); --keep selects the model's learning zone."""
    from referee.policy.device import pick_device
    from referee.rollout.calibrate import calibrate, parse_keep
    from referee.rollout.evaluate import policy_for_eval
    from referee.tasks.model import write_tasks

    if not policy.startswith("local:"):
        raise ConfigError(f"--policy: calibration samples a local: model, got {policy!r}")
    if split not in ("heldout", "train", "all"):
        raise ConfigError(f"--split must be heldout, train or all, got {split!r}")
    bounds = parse_keep(keep) if keep is not None else None
    out_file("--out", out)
    require_extra("train", needed_for="referee tasks calibrate")
    pick_device(device)
    loaded = load_tasks(file)
    chosen = [t for t in loaded if split == "all" or t.split == split]
    if not chosen:
        raise ConfigError(f"{file} has no tasks in split {split!r}")
    model = policy.removeprefix("local:")
    loaded_policy = policy_for_eval(policy, device=device)
    if threads is not None:
        loaded_policy.num_threads = threads
    try:
        result = calibrate(
            loaded_policy, chosen, model=model, samples=samples, temperature=temperature,
            max_tokens=max_tokens, batch=batch, progress=progress_printer("answers"),
        )  # fmt: skip
    finally:
        loaded_policy.close()
    kept = result.kept(bounds)
    write_tasks(out, kept)
    rates = sorted(result.rates.values())
    zone = sum(0.0 < r < 1.0 for r in rates)
    data = {
        "tasks": len(chosen), "kept": len(kept), "out": out, "samples": samples,
        "mean_pass_rate": sum(rates) / len(rates), "never_passed": sum(r == 0.0 for r in rates),
        "always_passed": sum(r == 1.0 for r in rates), "mixed": zone, "ran": result.ran,
        "infra_errors": result.infra_errors, "completion_tokens": result.completion_tokens,
    }  # fmt: skip
    if as_json:
        print(json.dumps(data))
    else:
        print(
            f"{len(chosen)} tasks calibrated for {model} ({samples} samples each): mean pass "
            f"rate {data['mean_pass_rate']:.3f}; {data['never_passed']} never passed, "
            f"{zone} mixed, {data['always_passed']} always passed; {len(kept)} written to {out}"
        )
