"""``referee tasks import|generate|families|sources``: task files made, and where from."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from referee.cli.console import Out, err, print_json_lines
from referee.cli.files import out_file
from referee.cli.options import BY_OPTION, OUT_TASKS_HELP, heldout_option
from referee.errors import ConfigError


def tasks_import(
    source: Annotated[
        str,
        typer.Argument(
            help="Where the tasks come from: humaneval, apps, taco, codecontests, livecodebench, "
            "deepcoder, verl, swebench, harbor (a folder of Harbor task directories), or a "
            "domain's import (docs/imports.md; `referee tasks sources` lists them all)."
        ),
    ],
    out: Annotated[str, typer.Option("--out", help=OUT_TASKS_HELP)],
    file: Annotated[
        str | None,
        typer.Argument(
            help="The dataset file (JSONL, JSON or Parquet) of a source that reads one: every "
            "source but humaneval and the benchmarks read from installed packages (verilogeval, "
            "intercode-bash, intercode-sql; docs/imports.md)."
        ),
    ] = None,
    split: Annotated[
        str | None, typer.Option(help="Put every task in this split: train or heldout.")
    ] = None,
    heldout: Annotated[
        float | None, heldout_option("instead of --split (e.g. 0.2 to train on the rest)")
    ] = None,
    by: Annotated[str, BY_OPTION] = "module",
    augment: Annotated[
        int,
        typer.Option(
            min=0,
            help="Generated test inputs to add per function task (0: the task's own only); "
            "humaneval and other function sources only.",
        ),
    ] = 0,
    subset: Annotated[
        str | None,
        typer.Option(
            help="deepcoder: the subset the file holds (default: from its name); verilogeval: "
            "human or machine (default: both); agentbench-os: dev or test; bfcl-multi-turn: "
            "base, miss_func, miss_param or long_context (default: all)."
        ),
    ] = None,
    repo_dir: Annotated[
        str | None,
        typer.Option(
            "--repo-dir",
            help="swebench: a local git checkout of the instances' repository (or a folder "
            "holding one checkout per repository, named owner__name or name).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(help="swebench: the artifact store for the repository snapshots."),
    ] = None,
    skip_bad: Annotated[
        bool,
        typer.Option(
            "--skip-bad",
            help="Skip the rows that cannot be imported and report each on stderr (one line "
            "naming the row); the good rows are written. Without it the first bad row stops "
            "the import.",
        ),
    ] = False,
) -> None:
    """Import tasks from a registered source: humaneval's own, or a dataset FILE (docs/imports.md).

    Every task goes to the held-out split unless --split or --heldout says otherwise.

    Function tasks (humaneval) are recorded in the sandbox; program and repository tasks are not.

    A malformed row stops the import (naming the file, row and field) and writes nothing,
    unless --skip-bad skips and reports it.
    """
    from referee.tasks.model import write_tasks
    from referee.tasks.sources import check_source_call
    from referee.tasks.split import check_split_options, split_tasks

    out_file("--out", out)
    if split is not None and heldout is not None:
        raise ConfigError(
            "give --split (every task in one split) or --heldout (a share held out), not both"
        )
    options = {"subset": subset, "repo_dir": repo_dir, "store": store}
    given = {k for k, v in options.items() if v is not None}
    entry = check_source_call(source, split or "heldout", file, given)
    check_split_options(heldout or 0.0, by)  # before the minutes of recording
    if entry.reads_file or entry.skips_bad_rows:  # a file's rows, or a packaged benchmark's
        from referee.tasks.imports import import_tasks

        if augment:
            raise ConfigError(
                f"--augment adds inputs to recorded function tasks; {source!r} makes tasks "
                "that carry their own cases: drop --augment"
            )
        summary = import_tasks(
            source,
            None if file is None else str(file),
            out,
            split=split or "heldout",
            heldout=heldout,
            by=by,
            skip_bad=skip_bad,
            **options,
        )
        for line in summary.skipped:
            err.print(f"skipped {line}", markup=False, highlight=False, soft_wrap=True)
        train = summary.splits.get("train", 0)
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(summary.kinds.items()))
        err.print(
            f"wrote {summary.count} {source} tasks ({kinds}; {train} train, "
            f"{summary.count - train} held out) to {out}"
            + (f"; skipped {len(summary.skipped)} bad rows" if skip_bad else "")
        )
        return
    if skip_bad:
        raise ConfigError(
            f"task source {source!r} reads no file, so it has no rows to skip: drop --skip-bad"
        )
    from referee.verify.record import import_recorded

    tasks = import_recorded(source, split=split or "heldout", augment=augment)
    if heldout is not None:
        tasks = split_tasks(tasks, heldout, by=by)
    n = write_tasks(out, tasks)
    calls = sum(len(t.hidden["inputs"]) for t in tasks)
    err.print(f"wrote {n} tasks ({calls} recorded test calls; {_split_counts(tasks)}) to {out}")


def _procedural_families() -> str:
    # Imported when `tasks generate` is built (its annotations are evaluated then), not by every
    # command: the task model it needs is ~100 ms of pydantic to import.
    from referee.tasks.procedural import FAMILIES

    return ", ".join(FAMILIES)


def tasks_generate(
    family: Annotated[
        str,
        typer.Argument(
            help=f"The task family: {_procedural_families()}, or a domain's "
            "(`referee tasks families` lists them all)."
        ),
    ],
    out: Annotated[str, typer.Option("--out", help=OUT_TASKS_HELP)],
    count: Annotated[int, typer.Option(min=1, help="How many tasks.")] = 100,
    difficulty: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="0..1; default: 0, 0.1, ..., 1.")
    ] = None,
    seed: Annotated[int, typer.Option(help="First seed; task i uses seed + i.")] = 0,
    heldout: Annotated[float, heldout_option("(0: every task trains)")] = 0.0,
    by: Annotated[str, BY_OPTION] = "structure",
) -> None:
    """Generate a family's tasks (seeded, reproducible), with their references recorded."""
    from referee.domains import generate_family
    from referee.tasks.model import write_tasks
    from referee.tasks.split import check_split_options, split_tasks

    out_file("--out", out)
    check_split_options(heldout, by)
    tasks = generate_family(family, count=count, difficulty=difficulty, seed=seed)
    tasks = split_tasks(tasks, heldout, by=by)
    n = write_tasks(out, tasks)
    err.print(f"wrote {n} {family} tasks ({_split_counts(tasks)}) to {out}")


def tasks_families(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per family.")] = False,
) -> None:
    """The task families `referee tasks generate` makes: name, domain, what it makes."""
    from referee.domains import family_names, get_family
    from referee.ui.tables import print_rows

    families = [get_family(n) for n in family_names()]
    if as_json:
        print_json_lines({"family": f.name, "domain": f.domain, "makes": f.description}
                         for f in families)  # fmt: skip
        return
    rows = [(f.name, f.domain, f.description) for f in families]
    print_rows(Out(), ("family", "domain", "makes"), rows)


def tasks_sources(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per source.")] = False,
) -> None:
    """The sources `referee tasks import` reads: name, whether it takes a file, what it is."""
    from referee.tasks.sources import get_source, source_names
    from referee.ui.tables import print_rows

    entries = [get_source(n) for n in source_names()]
    if as_json:
        print_json_lines({"source": e.name, "reads_file": e.reads_file, "what": e.description}
                         for e in entries)  # fmt: skip
        return
    rows = [(e.name, "yes" if e.reads_file else "no", e.description) for e in entries]
    print_rows(Out(), ("source", "file", "what"), rows)


def _split_counts(tasks: list[Any]) -> str:
    train = sum(t.split == "train" for t in tasks)
    return f"{train} train, {len(tasks) - train} held out"
