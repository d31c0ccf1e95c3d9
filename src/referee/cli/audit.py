"""``referee audit``: flagged and random trajectories reviewed and labelled."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from referee.cli.console import Out, err
from referee.cli.files import out_file, track_store
from referee.errors import ConfigError


def _labeller(given: str, *, needed: bool) -> str:
    """Who labels: ``--labeller``, else this login's user name (``$LOGNAME``, ``$USER``, else the
    account of this process's uid). None of them, where a label is to be recorded, is a
    ConfigError; where not, the empty string."""
    import getpass

    if given.strip():
        return given.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no variable set and the uid has no account
        if needed:
            raise ConfigError(
                "cannot tell who is labelling ($USER is not set and this uid has no user name): "
                "pass --labeller NAME"
            ) from None
        return ""


def audit(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    run_id: Annotated[str | None, typer.Option("--run-id", help="Only this run.")] = None,
    fill: Annotated[
        bool, typer.Option("--fill", help="Enqueue what alerts name, and a random sample.")
    ] = False,
    random_share: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Share of the unflagged trajectories --fill samples."),
    ] = 0.1,
    max_random: Annotated[
        int | None, typer.Option(min=0, help="At most this many random items per run.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random sample.")] = 0,
    next_: Annotated[
        bool, typer.Option("--next", help="Show the next pending item and exit.")
    ] = False,
    label: Annotated[
        str | None, typer.Option(help="legitimate, hack, broken-task or broken-verifier.")
    ] = None,
    item_id: Annotated[
        str | None,
        typer.Option(
            "--id",
            help="The queue item or trajectory to show or label (an id or its unique start).",
        ),
    ] = None,
    note: Annotated[str, typer.Option(help="Why (kept with the label).")] = "",
    labeller: Annotated[
        str, typer.Option(help="Who labels (default: this login's user name).")
    ] = "",
    export: Annotated[
        Path | None, typer.Option(help="Write every label to this JSONL file.")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON object on stdout: every pending item with its id ('pending') and the "
            "next one in full ('next'); or what --fill, --label and --export did.",
        ),
    ] = False,
) -> None:
    """Review flagged and random trajectories one at a time and label them.

    Labels quarantine: hack and broken-task the task, broken-verifier the verifier.
    """
    from referee.track.audit import AuditQueue
    from referee.track.audit_actions import apply_audit, fill_summary, next_item
    from referee.ui.terminal import render, review
    from referee.ui.views import trajectory_view

    out: dict[str, Any] = {}
    interactive = sys.stdin.isatty() and not as_json and not next_ and not item_id
    # Known before anything is written: a label always records who gave it.
    reviews = interactive and not fill and export is None  # acting on the queue ends the call
    who = _labeller(labeller, needed=label is not None or reviews)
    if export is not None:
        out_file("--export", export)
    with track_store(run) as store:
        queue = AuditQueue(store, random_share=random_share, seed=seed, max_random=max_random)
        done = apply_audit(queue, run_id=run_id, fill=fill, label=label, item_id=item_id,
                           note=note, labeller=who, export=export)  # fmt: skip
        if done.filled is not None:
            out["filled"] = {r: {"flagged": f.flagged, "random": f.random}
                             for r, f in done.filled.items()}  # fmt: skip
            out["queue"] = {r: {"pending": f.pending, "pending_flagged": f.pending_flagged}
                            for r, f in done.filled.items()}  # fmt: skip
        for line in fill_summary(done, store):
            err.print(line, markup=False)
        if done.labelled is not None:
            lab = done.labelled
            out["labelled"] = {
                **lab.label.model_dump(),
                "quarantined": [list(q) for q in lab.quarantined],
            }
            q = ", ".join(f"{k} {v}" for k, v in lab.quarantined)
            err.print(f"labelled {lab.label.trajectory_id} {lab.label.label}"
                      + (f"; quarantined {q}" if q else ""))  # fmt: skip
        if done.exported is not None:
            out["exported"] = {"path": str(export), "labels": done.exported}
            err.print(f"wrote {done.exported} labels to {export}")
        if done.acted and not next_ and not (item_id and label is None):
            if as_json:
                print(json.dumps(out))
            return
        one_run = done.one_run
        if interactive:
            review(queue, Out(), input, run_id=one_run, labeller=who)
            return
        item, trajectory_id = next_item(queue, done, item_id)
        if as_json:
            out["pending"] = [i.model_dump() for i in queue.pending(one_run)]
        if trajectory_id is None:
            out["next"] = None
            hint = "" if fill else "; fill it with --fill"
            pending = len(queue.pending(one_run))
            err.print(f"nothing pending in the audit queue ({pending} pending){hint}")
        else:
            view = trajectory_view(store, trajectory_id)
            out["next"] = {
                "item": item.model_dump() if item else None,
                "pending": len(queue.pending(one_run)),
                "alerts": [a.model_dump() for a in view.alerts],
                "trajectory": view.trajectory.model_dump(mode="json"),
            }
            if not as_json:
                Out().print(render(view, item))
    if as_json:
        print(json.dumps(out))


def register(app: typer.Typer) -> None:
    """Add ``referee audit`` to ``app``."""
    app.command()(audit)
