"""``referee cost``: what a run cost, in total, per kind and per task, against its budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from referee.cli.console import Out
from referee.cli.files import track_store


def cost(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="This run (default: the folder's latest).")
    ] = None,
    top: Annotated[int, typer.Option(min=0, help="Tasks listed, most CPU first.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, every task.")] = False,
) -> None:
    """What a run cost: sandbox CPU and wall time, peak memory, tokens and bytes stored, in
    total, per kind and per task, per passed rollout, and against its budget."""
    from referee.track.cost import cost_report

    with track_store(run) as store:
        report = cost_report(store, run_id)
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    _print_cost(report, top)


def _print_cost(report: Any, top: int) -> None:
    from rich.table import Table

    from referee.ui.tables import print_table

    out = Out(soft_wrap=True)
    r = report.run
    table = Table(
        "", "rollouts", "passed", "CPU s", "sandbox s", "runs", "peak MB", "wall s",
        "tokens in", "tokens out", "stored",
        title=f"cost of run {r.run_id} ({r.status})",
    )  # fmt: skip
    rows = [
        ("total", report.total),
        *((f"kind {k.key}", k) for k in report.by_kind),
        *((t.key, t) for t in report.by_task[:top]),
    ]
    for name, line in rows:
        c = line.cost
        table.add_row(
            name, str(line.rollouts), str(line.passed), f"{c.sandbox_cpu_s:.2f}",
            f"{c.sandbox_wall_s:.2f}", str(c.sandbox_runs), f"{c.peak_memory_mb:.1f}",
            f"{c.wall_s:.1f}", str(c.prompt_tokens), str(c.completion_tokens),
            _bytes(c.bytes_stored),
        )  # fmt: skip
    print_table(out, table, keys=(0,))
    if len(report.by_task) > top:
        out.print(f"({len(report.by_task) - top} more tasks: --top or --json)", highlight=False)
    per = report.per_pass()
    if per is None:
        out.print("per passed rollout: nothing passed", highlight=False)
    else:
        out.print(
            f"per passed rollout: {per['sandbox_cpu_s']:.3f} CPU s, {per['tokens']:.1f} tokens, "
            f"{per['wall_s']:.3f} s",
            highlight=False,
        )
    units = {"cpu_hours": "CPU-hours", "tokens": "tokens", "wall_s": "s"}
    for name, b in report.budget.items():
        share = "" if b["share"] is None else f" ({b['share']:.0%})"
        out.print(
            f"budget {units.get(name, name)}: {b['spent']:g} of {b['limit']:g}{share}",
            highlight=False,
        )
    if report.stop:
        s = report.stop
        out.print(
            f"stopped: {s.get('reason')} ({s.get('budget')}: {s.get('spent'):g} of "
            f"{s.get('limit'):g})",
            highlight=False,
        )


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB"):
        if size < 1000:
            return f"{size:.0f}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1000
    return f"{size:.1f}GB"


def register(app: typer.Typer) -> None:
    """Add ``referee cost`` to ``app``."""
    app.command()(cost)
