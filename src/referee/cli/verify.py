"""``referee verify``: samples judged against their tasks, here or on Ray actors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from referee.cli.console import Out, err
from referee.cli.files import load_tasks
from referee.cli.options import TASKS_HELP
from referee.errors import ConfigError, RefereeError, VerifierError


def verify(
    tasks: Annotated[str, typer.Option("--tasks", help=TASKS_HELP)],
    samples: Annotated[Path, typer.Option("--samples", help="Samples JSONL: task_id, completion.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON verdict per sample.")] = False,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Concurrent checks (with --ray: per actor).")
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS|local",
            help="Verify on Ray actors: a cluster's address (HOST:PORT, auto) or local.",
        ),
    ] = None,
    actors: Annotated[
        int | None, typer.Option(min=1, help="Sandbox actors with --ray (default: one per node).")
    ] = None,
) -> None:
    """Verify samples against tasks: a summary on stdout (--json: one verdict per line there,
    the summary on stderr); exit 1 when every sample was an infrastructure error."""
    if actors is not None and ray_address is None:
        raise ConfigError("--actors works with --ray only; add --ray local (or a cluster address)")
    from referee.verify import early

    sandbox = None
    sandbox_error: RefereeError | None = None
    if ray_address is None:
        # The sandbox's workers start in the background while the tasks and samples load (a
        # start is mostly waiting for bubblewrap and an interpreter); a sandbox that cannot
        # start is reported after the task file's own errors, as before. `python -m referee`
        # and the `referee` script started it already, before this parser loaded (early).
        sandbox = early.take(workers)
        if sandbox is None:
            from referee.verify.function import harness_sandbox
            from referee.verify.repo_run import GRADER_PACKAGES

            try:
                sandbox = harness_sandbox(python_workers=workers, python_packages=GRADER_PACKAGES)
                sandbox.warm()
            except RefereeError as e:
                sandbox_error = e
    try:
        from referee.verify.samples import read_samples

        task_list = load_tasks(tasks, "--tasks")
        pairs = read_samples(samples, task_list, tasks_name=str(tasks))
        if not pairs:  # a summary of nothing ("0 samples, mean reward 0.000") is no verdict
            raise ConfigError(
                f"--samples {samples} holds no samples; give one JSON object per line, "
                f'{{"task_id": ..., "completion": ...}} (`referee tasks gold {tasks}` writes the '
                "references in that form)"
            )
        if sandbox_error is not None:
            raise sandbox_error
    except BaseException:
        if sandbox is not None:
            sandbox.close()
        raise

    verdicts = []
    if sandbox is None:
        assert ray_address is not None  # no sandbox here: --ray, or an error raised above
        verdicts = _verify_on_ray(ray_address, actors, workers, task_list, pairs)
        if as_json:
            for v in verdicts:
                print(json.dumps(v.model_dump(mode="json")), flush=True)
    else:
        from referee.verify.dispatch import VerifierSet

        def emit(v: Any) -> None:
            verdicts.append(v)
            if as_json:
                print(json.dumps(v.model_dump(mode="json")), flush=True)

        # The first pair may have been judged (and printed) before this command line loaded
        # (referee.verify.early.judge_first); it is not judged again.
        judged = early.take_first(pairs[0][0].id, pairs[0][1])
        if judged is not None:
            verdicts.append(judged.verdict)
        # Each task is judged by the verifier of its kind, all sharing this sandbox.
        with sandbox, VerifierSet(sandbox) as verifiers:
            rest = pairs[len(verdicts) :]
            stream = iter(verifiers.verify_many(rest, workers=sandbox.python_workers))
            # The first verdict comes before the progress bar's import (~20 ms of a one-shot
            # command's start); the bar then starts at one done.
            if not verdicts:
                first = next(stream, None)
                if first is not None:
                    emit(first)
            from rich.progress import Progress

            with Progress(console=err.console) as progress:
                bar = progress.add_task("verifying", total=len(pairs), completed=len(verdicts))
                for v in stream:
                    emit(v)
                    progress.advance(bar)
    passed = sum(v.passed for v in verdicts)
    infra = sum(v.infra_error is not None for v in verdicts)
    flagged = sum(bool(v.flags) for v in verdicts)
    mean = sum(v.reward for v in verdicts) / len(verdicts) if verdicts else 0.0
    # The summary is the result, on stdout; with --json stdout holds the verdicts only.
    (err if as_json else Out(soft_wrap=True)).print(
        f"{len(verdicts)} samples: {passed} passed, {len(verdicts) - passed - infra} failed, "
        f"{infra} infra errors, {flagged} flagged; mean reward {mean:.3f}",
        markup=False,
        highlight=False,
    )
    if verdicts and infra == len(verdicts):  # as `eval`: no verdict at all is no result
        first = next(v for v in verdicts if v.infra_error is not None)
        raise VerifierError(
            f"no sample reached a verdict: all {infra} were infrastructure errors; the first "
            f"({first.task_id}): {first.infra_error}"
        )


def _verify_on_ray(
    address: str, actors: int | None, workers: int | None, tasks: list[Any], pairs: list[Any]
) -> list[Any]:
    """``referee verify --ray``: the same verdicts, judged by a pool of sandbox actors."""
    from rich.progress import Progress

    from referee.cluster import SandboxPool, connect

    info = connect(address)
    used = {t.id for t, _ in pairs}
    with (
        SandboxPool(
            [t for t in tasks if t.id in used],
            actors=actors or info["nodes"],
            workers_per_actor=workers,
        ) as pool,
        Progress(console=err.console) as progress,
    ):
        bar = progress.add_task("verifying", total=len(pairs))
        verdicts = pool.verify_many(pairs, progress=lambda n: progress.advance(bar, n))
    if info["started"]:
        import ray

        ray.shutdown()
    return verdicts


def register(app: typer.Typer) -> None:
    """Add ``referee verify`` to ``app``."""
    app.command()(verify)
