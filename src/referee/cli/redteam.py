"""``referee redteam``: the exploit corpus run against a verifier."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from referee.cli.console import Out, err
from referee.cli.files import load_tasks
from referee.cli.options import Json
from referee.errors import ConfigError


def redteam(
    verifier: Annotated[
        str,
        typer.Option(help="Which verifier to attack: function, pytest, program or a domain's."),
    ] = "function",
    tasks: Annotated[
        str | None,
        typer.Option(
            help="Task JSONL (a path or URL) to attack (function; default: 8 HumanEval tasks)."
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Run the exploit corpus against a verifier; exit 1 if any exploit gets through.

    On a terminal a table; piped or redirected, tab-separated lines without a header.
    """
    from rich.text import Text

    from referee.ui.tables import print_rows

    results: list[Any]
    if verifier == "function":
        from referee.verify.function import FunctionVerifier, harness_sandbox
        from referee.verify.redteam import default_targets, run_corpus

        with harness_sandbox() as sb:
            targets = load_tasks(tasks, "--tasks") if tasks is not None else default_targets(sb)
            fv = FunctionVerifier(sb, call_timeout_s=0.5, run_timeout_s=3.0)
            results = run_corpus(fv, targets)
    elif verifier == "pytest":
        from referee.verify.pytest_verifier import PytestVerifier
        from referee.verify.redteam_pytest import repository_tasks, run_pytest_corpus

        with PytestVerifier(timeout_s=60) as pv:
            results = run_pytest_corpus(pv, repository_tasks())
    elif verifier == "program":
        from types import SimpleNamespace

        from referee.verify.program import ProgramVerifier
        from referee.verify.program.redteam import run_corpus as run_program_corpus

        with ProgramVerifier() as prv:
            results = [
                SimpleNamespace(
                    exploit=SimpleNamespace(name=f"{r.language}/{r.name}", klass=r.klass),
                    verdicts=[r.verdict],
                    rejected=r.held,
                    max_reward=r.reward,
                )
                for r in run_program_corpus(prv)
            ]
    else:  # a domain's corpus (referee.domains.register_corpus); unknown names list them all
        from types import SimpleNamespace

        from referee.domains import corpus_names
        from referee.domains import run_corpus as run_domain_corpus

        if verifier not in corpus_names():
            raise ConfigError(
                f"--verifier {verifier!r} has no red-team corpus; choose one of function, "
                f"pytest, program, {', '.join(corpus_names())}"
            )

        results = [
            SimpleNamespace(
                exploit=SimpleNamespace(name=o.name, klass=o.klass),
                verdicts=[SimpleNamespace(flags=[SimpleNamespace(kind=f) for f in o.flags])],
                rejected=o.held,
                max_reward=o.reward,
            )
            for o in run_domain_corpus(verifier)
        ]
    rows = []
    for res in results:
        kinds = sorted({f.kind for v in res.verdicts for f in v.flags})
        row = {
            "exploit": res.exploit.name,
            "class": res.exploit.klass,
            "tasks": len(res.verdicts),
            "rejected": res.rejected,
            "max_reward": res.max_reward,
            "flags": kinds,
        }
        if as_json:
            print(json.dumps(row))
        rows.append((
            res.exploit.name,
            res.exploit.klass,
            str(len(res.verdicts)),
            Text("yes", style="green") if res.rejected else Text("NO", style="red"),
            f"{res.max_reward:.2f}",
            ", ".join(kinds),
        ))  # fmt: skip
    if not as_json:
        header = ("exploit", "class", "tasks", "rejected", "max reward", "flags raised")
        print_rows(Out(), header, rows)
    bad = [r.exploit.name for r in results if not r.rejected]
    err.print(
        f"{len(results) - len(bad)}/{len(results)} exploits rejected"
        + (f"; got through: {', '.join(bad)}" if bad else "")
    )
    if bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``referee redteam`` to ``app``."""
    app.command()(redteam)
