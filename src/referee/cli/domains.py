"""``referee domains``: the domains found, their contract checked, a new one started."""

from __future__ import annotations

from typing import Annotated

import typer

from referee.cli.console import Out, err, print_json_lines


def domains_list(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per domain.")] = False,
) -> None:
    """The domains found: name, version, distribution, what it is (its register()'s first
    docstring line), families, verifier kinds, environments, red-team corpus, and status (ok,
    or why it failed to load)."""
    from referee.discovery import domain_records
    from referee.ui.tables import print_rows

    if as_json:
        print_json_lines(
            {"domain": r.name, "version": r.version, "distribution": r.distribution,
             "description": r.description, "families": list(r.parts["family"]),
             "kinds": list(r.parts["kind"]), "env": list(r.parts["env"]),
             "corpus": list(r.parts["corpus"]), "error": r.error}
            for r in domain_records()
        )  # fmt: skip
        return
    rows = [
        (
            r.name,
            r.version,
            r.distribution,
            r.description,
            ", ".join(r.parts["family"]),
            ", ".join(r.parts["kind"]),
            ", ".join(r.parts["env"]),
            ", ".join(r.parts["corpus"]),
            "ok" if r.ok else f"error: {r.error}",
        )
        for r in domain_records()
    ]
    header = (
        "domain",
        "version",
        "distribution",
        "description",
        "families",
        "kinds",
        "env",
        "corpus",
        "status",
    )
    print_rows(Out(soft_wrap=True), header, rows)


def domains_check(
    name: Annotated[str, typer.Argument(help="The domain (`referee domains list`).")],
    per_family: Annotated[
        int, typer.Option("--per-family", min=1, help="Tasks made of each family.")
    ] = 2,
    seed: Annotated[int, typer.Option(help="First seed of the tasks.")] = 0,
) -> None:
    """Check the contract every domain keeps: it loads, gold answers pass, the empty answer
    fails, its exploit corpus is held, hidden data is never in the model's view. Exit 0 when
    all hold, 1 when one fails, 2 for an unknown domain."""
    from rich.text import Text

    from referee.domains.contract import check_domain
    from referee.ui.tables import print_rows

    results = check_domain(name, per_family=per_family, seed=seed)
    rows = [
        (
            r.name,
            Text("ok", style="green") if r.ok else Text("FAIL", style="red"),
            f"{r.seconds:.1f}s",
            r.detail,
        )
        for r in results
    ]
    print_rows(Out(soft_wrap=True), ("check", "result", "time", "detail"), rows)
    failed = [r.name for r in results if not r.ok]
    err.print(
        f"{name}: {len(results) - len(failed)}/{len(results)} checks hold"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    if failed:
        raise typer.Exit(1)


def domains_new(
    name: Annotated[str, typer.Argument(help="The new domain's name (lower-case, '-' joins).")],
    out: Annotated[str, typer.Option("--out", help="A new (or empty) folder for the package.")],
) -> None:
    """Write a pip-installable domain package: a task family, a sandboxed verifier, an
    environment, an exploit corpus, tests and a README (docs/domains.md)."""
    from referee.domains.scaffold import write_domain

    paths = write_domain(name, out)
    err.print(
        f"wrote {len(paths)} files to {out}; next: pip install -e {out} && "
        f"referee domains check {name}"
    )


def register(app: typer.Typer) -> None:
    """Add the ``referee domains`` group to ``app``."""
    group = typer.Typer(
        help="Domains (referee.domains entry points): list them, check their contract, start one.",
        no_args_is_help=True,
    )
    group.command("list")(domains_list)
    group.command("check")(domains_check)
    group.command("new")(domains_new)
    app.add_typer(group, name="domains")
