"""``referee export``: a run's trajectories, or dataset rows for trainers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from referee.cli.console import err
from referee.cli.files import out_file, track_store


def export_(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    fmt: Annotated[
        str, typer.Option("--format", help="jsonl, parquet, trl-sft, trl-rl, verl or skyrl.")
    ],
    out: Annotated[
        str,
        typer.Option(
            "--out",
            help="The file to write: .parquet or .jsonl, as --format says; a path or a URL "
            "(s3://bucket/train.parquet).",
        ),
    ],
    run_id: Annotated[str | None, typer.Option("--run-id", help="Only this run.")] = None,
    split: Annotated[str, typer.Option(help="Tasks for trl-rl, verl, skyrl.")] = "train",
    min_reward: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Least reward of a trl-sft row.")
    ] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON summary line.")] = False,
) -> None:
    """Export a run's trajectories, or dataset rows for TRL, veRL and SkyRL.

    Dataset rows leave out held-out (unless --split heldout), quarantined and canary tasks.
    """
    from referee.track.export import check_export_path, export_run

    check_export_path(fmt, out)  # before the store is opened
    out_file("--out", out)
    with track_store(run) as store:
        done = export_run(store, fmt, out, run_id=run_id, split=split, min_reward=min_reward)
    left = ", ".join(
        f"{n} {why.replace('heldout', 'held-out')}" for why, n in done.left_out.items()
    )
    if as_json:
        print(json.dumps({"format": fmt, "out": str(out), "rows": done.rows, "run_id": run_id,
                          "left_out": done.left_out}))  # fmt: skip
    else:
        err.print(
            f"wrote {done.rows} rows ({fmt}) to {out}"
            + (f"; left out {left} tasks" if left else "")
        )


def register(app: typer.Typer) -> None:
    """Add ``referee export`` to ``app``."""
    app.command("export")(export_)
