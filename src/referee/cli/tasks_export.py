"""``referee tasks export``: a task file as a trainer's dataset."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from referee.cli.console import err
from referee.cli.files import load_tasks, out_file
from referee.cli.options import TaskFile
from referee.errors import ConfigError


def tasks_export(
    file: TaskFile,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="The trainer's dataset format: verl, skyrl, rllm, areal, nemo-gym; or harbor "
            "(shell tasks as Harbor task directories under --out).",
        ),
    ],
    out: Annotated[
        str,
        typer.Option(
            "--out",
            help="The file to write: .parquet or .jsonl; a path or a URL (s3://...). harbor: "
            "the folder to write the task directories into.",
        ),
    ],
    split: Annotated[
        str, typer.Option(help="train (a training file) or heldout (an evaluation file).")
    ] = "train",
    agent_name: Annotated[
        str | None,
        typer.Option("--agent-name", help="veRL: the agent loop the rows select (referee)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON summary line.")] = False,
) -> None:
    """A task file as a trainer's dataset: one row per task of the split.

    Held-out tasks are exported only with --split heldout; canary tasks never.
    """
    from referee.tasks.trainer_rows import ROW_FORMATS, export_tasks, task_file_source

    if fmt == "harbor":
        _export_harbor(file, out, split, as_json)
        return
    if fmt not in ROW_FORMATS:
        raise ConfigError(
            f"unknown format {fmt!r}; choose one of: {', '.join(ROW_FORMATS)}, harbor"
        )
    out_file("--out", out)
    options = {"agent_name": agent_name} if agent_name is not None else {}
    done = export_tasks(
        load_tasks(file), fmt, out, split=split, source=task_file_source(file), **options
    )
    if as_json:
        print(json.dumps({"format": fmt, "out": str(out), "rows": done.rows,
                          "split": split, "left_out": done.left_out}))  # fmt: skip
        return
    left = ", ".join(
        f"{n} {why.replace('heldout', 'held-out')}" for why, n in done.left_out.items()
    )
    err.print(
        f"wrote {done.rows} {split} rows ({fmt}) to {out}"
        + (f"; left out {left} tasks" if left else "")
    )


def _export_harbor(file: str, out: str, split: str, as_json: bool) -> None:
    from referee.domains.shell.harbor_export import export_harbor

    done = export_harbor(load_tasks(file), out, split=split)
    if as_json:
        print(json.dumps({"format": "harbor", "out": str(out), "rows": done.written,
                          "split": split, "left_out": done.left_out}))  # fmt: skip
        return
    left = ", ".join(f"{n} {why}" for why, n in done.left_out.items())
    err.print(
        f"wrote {done.written} Harbor task directories ({split}) to {out}"
        + (f"; left out {left} tasks" if left else "")
    )
