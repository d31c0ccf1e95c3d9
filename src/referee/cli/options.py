"""The options, arguments and help texts that more than one command takes, defined once.

An ``Annotated`` type here is a parameter's whole declaration: ``file: TaskFile``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

# Task files and exports may be local paths or fsspec URLs (README, "Object storage").
TASKS_HELP = "Task JSONL file: a path, or a URL such as s3://bucket/tasks.jsonl."
OUT_TASKS_HELP = "The task JSONL file to write: a path, or a URL such as s3://bucket/t.jsonl."
DEVICE_HELP = "auto (CUDA where torch sees a GPU, bf16 where supported; else the CPU), cpu or cuda"

#: A task file given as the command's argument.
TaskFile = Annotated[
    str, typer.Argument(help="Task JSONL file: a path, or a URL (s3://bucket/t.jsonl).")
]
#: ``--run``: the run folder of a track store.
RunFolder = Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")]
#: ``--json`` with no help text of its own.
Json = Annotated[bool, typer.Option("--json")]


def heldout_option(what: str) -> Any:
    """``--heldout``: the share of units held out, ``what`` saying what the rest does."""
    return typer.Option(
        "--heldout",
        min=0.0,
        max=1.0,
        help=f"Share of units held out, the rest train {what}; a unit never sits in both.",
    )


#: ``--by``: the unit a held-out split keeps whole.
BY_OPTION = typer.Option(
    "--by",
    help="The unit held out whole: module, function (a repository's; a function task is its "
    "own) or structure (the unit the generator recorded: list-ops' composition of steps).",
)
