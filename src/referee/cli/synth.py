"""``referee synth``: validated repository tasks synthesized from a codebase."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from referee.cli.console import Out, err
from referee.cli.files import out_file, store_folder
from referee.cli.options import OUT_TASKS_HELP
from referee.optional import require_extra


def synth(
    source: Annotated[str, typer.Argument(help="A folder, or pypi:NAME==VERSION.")],
    out: Annotated[str, typer.Option("--out", help=OUT_TASKS_HELP)],
    kinds: Annotated[
        str,
        typer.Option(help="Comma-separated, of bugfix,implement,testgen,refactor (opt-in)."),
    ] = "bugfix,implement,testgen",
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N candidates validated per kind.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling sites and combinations.")] = 0,
    store: Annotated[
        str | None, typer.Option(help="Artifact store (fsspec URL) for the snapshot.")
    ] = None,
    # No max in the option: Click's range shows [0.0<=x<=1.0], and 1 (nothing left to train
    # on) is refused; synthesize() checks 0 <= x < 1 before any work, naming --heldout.
    heldout: Annotated[
        float,
        typer.Option(min=0.0, help="Share of source units held out: at least 0, below 1."),
    ] = 0.2,
    split_by: Annotated[str, typer.Option(help="Held-out unit: module or function.")] = "module",
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON on stdout.")] = False,
) -> None:
    """Synthesize validated repository tasks (bug fixing, implementation, test writing,
    refactoring)."""
    require_extra("synth", needed_for="referee synth")
    from rich.progress import Progress
    from rich.table import Table

    from referee.synth.pipeline import synthesize
    from referee.tasks.model import write_tasks
    from referee.ui.tables import print_table

    out_file("--out", out)
    store_folder("--store", store)
    wanted = tuple(k.strip() for k in kinds.split(",") if k.strip())
    t0 = time.perf_counter()
    # No live display at all in a pipe or a log (it would leave a blank line before an error).
    with Progress(console=err.console, transient=True, disable=not err.is_terminal) as progress:
        bars: dict[str, Any] = {}

        def show(stage: str, done: int, total: int) -> None:
            if not err.is_terminal:  # no live bars in a pipe or a log: a plain line per step
                took = time.perf_counter() - t0
                err.print(f"synth: {stage} {done}/{total} ({took:.1f} s)", markup=False)
                return
            if stage not in bars:
                bars[stage] = progress.add_task(stage, total=max(total, 1))
            progress.update(bars[stage], completed=done, total=max(total, 1))

        report = synthesize(
            source,
            kinds=wanted,
            limit=limit,
            seed=seed,
            store=store,
            heldout_fraction=heldout,
            split_by=split_by,
            progress=show,
        )
    write_tasks(out, report.tasks)
    elapsed = time.perf_counter() - t0
    data = {**report.to_json(), "out": str(out), "wall_s": round(elapsed, 1)}
    if as_json:
        print(json.dumps(data))
        return
    table = Table("kind", "candidates", "kept", "test time s")
    for kind in wanted:
        table.add_row(
            kind,
            str(report.candidates_by_kind[kind]),
            str(report.kept_by_kind[kind]),
            f"{report.test_s_by_kind[kind]:.1f}",
        )
    for op, n in sorted(report.candidates_by_operator.items()):
        table.add_row(f"  refactor: {op}", str(n), str(report.kept_by_operator[op]), "")
    # The report is the result, on stdout (`referee synth ... > report.txt` keeps it); the
    # progress lines stay on stderr.
    result = Out(soft_wrap=True)
    print_table(result, table)
    rej = Table("rejected because", "count")
    for reason, n in report.rejected.most_common():
        rej.add_row(reason, str(n))
    print_table(result, rej)
    kept = len(report.tasks)
    result.print(
        f"{kept} tasks -> {out} in {elapsed:.1f} s; baseline {report.baseline_tests} stable "
        f"tests ({len(report.baseline_excluded)} excluded), suite {report.suite_wall_s:.2f} s; "
        f"validation test time {report.validation_test_s:.1f} s"
        + (f" ({report.validation_test_s / kept:.2f} s per kept task)" if kept else ""),
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``referee synth`` to ``app``."""
    app.command()(synth)
