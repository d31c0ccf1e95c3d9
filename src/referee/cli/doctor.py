"""``referee doctor``: the isolation, extras and domains this machine has."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from referee.cli.console import Out


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show which isolation layers this machine provides, which of referee's extras are
    installed and which domains loaded."""
    from referee.discovery import domain_records
    from referee.optional import installed_extras
    from referee.sandbox import Sandbox
    from referee.sandbox.tools import check_tools

    with Sandbox(python_workers=1) as sb:
        layers = sb.isolation()
        probe = sb.run_python("print('ok')")
        tools = check_tools(sb)
    bad = [c.line() for c in tools if not c.ok]
    info: dict[str, Any] = {
        "layers": layers,
        "fast_path_ok": probe.stdout == "ok\n",
        "probe": probe.summary(),
        "shell_tools_ok": sum(c.ok for c in tools),
        "shell_tools_bad": bad,
        "extras": installed_extras(),
        # Each domain found (referee.discovery) and why it failed to load, if it did.
        "domains": {r.name: r.error for r in domain_records()},
    }
    if as_json:
        print(json.dumps(info))
        return
    from rich.markup import escape

    out = Out(soft_wrap=True)  # the listing is the result: `referee doctor | grep seccomp`
    for layer in layers:
        out.print(f"[green]✓[/] {escape(layer)}")
    out.print(f"fast path: {probe.summary()}", markup=False, highlight=False)
    out.print(f"shell tools: {len(tools) - len(bad)}/{len(tools)} run in the sandbox"
              + "".join(f"\n  {line}" for line in bad), markup=False, highlight=False)  # fmt: skip
    extras = info["extras"]
    missing = [name for name, ok in extras.items() if not ok]
    out.print(
        f"extras: {' '.join(name for name, ok in extras.items() if ok) or 'none'} installed"
        + (
            f"; not installed: {' '.join(missing)} (pip install 'referee[EXTRA]')"
            if missing
            else ""
        ),
        markup=False,
        highlight=False,
    )
    for name, error in info["domains"].items():
        mark = "[green]✓[/]" if error is None else "[red]✗[/]"
        out.print(f"{mark} domain {escape(name)}" + (f": {escape(error)}" if error else ""))


def register(app: typer.Typer) -> None:
    """Add ``referee doctor`` to ``app``."""
    app.command()(doctor)
