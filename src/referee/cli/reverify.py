"""``referee reverify``: a run's stored answers judged again with today's verifiers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from referee.cli.console import Out
from referee.cli.files import load_tasks, out_file
from referee.errors import ConfigError


def reverify(
    source: Annotated[
        Path, typer.Argument(help="A run folder, its track.sqlite, or a trajectories JSONL.")
    ],
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Today's task file (default: the tasks the store recorded)."),
    ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Concurrent checks.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object: the summary and every change.")
    ] = False,
    out: Annotated[
        str | None, typer.Option("--out", help="Write every answer's old -> new as JSONL here.")
    ] = None,
) -> None:
    """Judge a run's stored answers again with today's verifiers, in the sandbox, and report
    what changed (newly passing, newly failing, ...); the stored rewards are left as they are.
    A multi-turn episode is replayed in a fresh environment (its recorded tool calls, each
    result checked against the record) and its final state judged; one that cannot be replayed
    faithfully is reported as skipped, with the reason."""
    from referee.envs.runtime import CodeRuntime
    from referee.track.replay import env_factory
    from referee.track.reverify import load_trajectories
    from referee.track.reverify import reverify as judge_again
    from referee.verify.dispatch import VerifierSet
    from referee.verify.function import harness_sandbox
    from referee.verify.repo_run import GRADER_PACKAGES

    if out is not None:
        out_file("--out", out)
        if Path(out).resolve() == source.resolve() or source.resolve() in Path(out).parents:
            raise ConfigError(f"--out {out} is the run's own data; write the report elsewhere")
    trajectories, recorded = load_trajectories(source)
    task_list = load_tasks(tasks, "--tasks") if tasks is not None else recorded
    if not task_list:
        raise ConfigError(f"{source} records no tasks; name today's task file with --tasks")
    with (
        harness_sandbox(python_workers=workers, python_packages=GRADER_PACKAGES) as sandbox,
        VerifierSet(sandbox) as verifiers,
    ):
        # Multi-turn episodes are replayed in fresh environments sharing these sandboxes.
        runtime = CodeRuntime(sandbox=sandbox, program_sandbox=verifiers.setup.program_sandbox)
        try:
            report = judge_again(
                trajectories,
                task_list,
                verifiers,
                workers=sandbox.python_workers,
                make_env=env_factory(verifiers, runtime),
            )
        finally:
            runtime.close()
    if out is not None:
        from referee.storage import write_bytes

        lines = "".join(json.dumps(c.as_dict()) + "\n" for c in report.changes)
        write_bytes(out, lines.encode(), option="--out")
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    console = Out(soft_wrap=True)
    for c in report.changes:
        if c.change not in ("unchanged", "skipped"):
            console.print(
                f"{c.task_id} [{c.trajectory_id[:12]}]: {c.change}: reward {c.old_reward} -> "
                f"{c.new_reward} ({c.old_verifier or '?'} -> {c.new_verifier})"
                + (f": {c.note}" if c.note else ""),
                markup=False,
                highlight=False,
            )
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.counts().items())
    console.print(
        f"{len(report.changes)} answers (referee {report.referee_version}): {counts}",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``referee reverify`` to ``app``."""
    app.command("reverify")(reverify)
