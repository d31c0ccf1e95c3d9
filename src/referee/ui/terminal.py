"""One trajectory in the terminal (rich), for ``referee audit``: what the viewer page shows.

Texts are clipped harder than in the browser (a terminal has no "show more"); the whole
trajectory is one ``--json`` away.

>>> Console().print(render(trajectory_view(store, tid), item))        # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from referee.errors import ConfigError
from referee.track.audit import LABELS, AuditQueue, is_flagged, normalize_label
from referee.track.store import AuditItemRow
from referee.ui.views import Clipped, TrajectoryView, clip, trajectory_view

__all__ = ["render", "review"]

#: Characters and lines of one text shown in the terminal.
_CHARS, _LINES = 1_500, 30
_DASH = "\u2013"  # what an unknown value shows
_STATUS_STYLE = {"passed": "green", "failed": "red", "error": "red", "timeout": "yellow",
                 "skipped": "yellow", "missing": "yellow"}  # fmt: skip


def _text(c: Clipped, style: str = "") -> Text:
    short = clip(c.text, _CHARS)
    lines = short.text.splitlines()
    body = "\n".join(lines[:_LINES])
    omitted = c.omitted + short.omitted + sum(len(x) + 1 for x in lines[_LINES:])
    out = Text(body, style=style)
    if omitted:
        out.append(f"\n… {omitted} more characters", style="dim italic")
    return out


def _header(view: TrajectoryView, item: AuditItemRow | None) -> Panel:
    t = view.trajectory
    result = (
        Text(f"{t.error.kind} error", style="bold red")
        if t.error
        else Text("passed", style="bold green")
        if t.passed
        else Text("failed", style="bold red")
    )
    head = Text.assemble(
        (t.task_id, "bold"),  # a Text folds where it does not fit: an id is never cut
        "  ",
        result,
        f"  reward {_DASH if t.reward is None else t.reward}",
    )
    # One name and value a row, the values folded, never cut: ids are pasted into `--id`, and
    # a long value (a policy's path) in a shared column would squeeze an id beside it to "…".
    meta = Table.grid(padding=(0, 2))
    meta.add_column(style="dim", no_wrap=True)
    meta.add_column(overflow="fold")
    meta.add_row("trajectory", Text(t.id))
    meta.add_row("run", Text(t.run_id or _DASH))
    meta.add_row("step", str(t.step if t.step is not None else _DASH))
    meta.add_row("split", Text(t.split))
    meta.add_row("policy", Text(t.policy))
    meta.add_row("verifier", Text(view.verifier or _DASH))
    if item is not None:
        meta.add_row("queue item", Text(item.id))
        why = Text(item.reason, style="magenta" if is_flagged(item) else "blue")
        meta.add_row("queued for", why)
        meta.add_row("status", Text(item.status))
    quarantine = []
    if view.task_quarantined:
        quarantine.append(Text("the task is quarantined", style="yellow"))
    if view.verifier_quarantined:
        quarantine.append(Text("the verifier is quarantined", style="yellow"))
    return Panel(Group(head, meta, *quarantine), title="audit", border_style="cyan")


def render(view: TrajectoryView, item: AuditItemRow | None = None) -> RenderableType:
    """The trajectory with its prompt, turns, verdict, flags and alerts, as one renderable."""
    parts: list[RenderableType] = [_header(view, item)]
    for alert in view.alerts:
        evidence = ", ".join(f"{k}={v}" for k, v in sorted(alert.evidence.items()))
        parts.append(
            Panel(
                Text.assemble((alert.message, "bold"), "\n", (evidence, "dim")),
                title=f"alert · {alert.detector} · {alert.severity}",
                border_style="red" if alert.severity == "critical" else "yellow",
            )
        )
    for role, text in view.prompt:
        parts.append(Panel(_text(text), title=f"prompt · {role}", border_style="dim"))
    for turn in view.turns:
        body: list[RenderableType] = []
        if turn.content.text:
            body.append(_text(turn.content))
        for call in turn.tool_calls:
            body.append(Text(f"→ {call.name}", style="bold magenta"))
            body.append(_text(call.arguments, "magenta"))
        for obs in turn.observations:
            body.append(Text(f"← {obs.name or obs.role}", style="bold cyan"))
            body.append(_text(obs.text, "cyan"))
        title = f"turn {turn.index} · {turn.completion_tokens} tokens · {turn.policy_s:.2f} s"
        parts.append(Panel(Group(*body), title=title, border_style="blue"))
    if view.tests:
        table = Table(title="verdict", show_edge=False, expand=True)
        table.add_column("test")
        table.add_column("outcome")
        table.add_column("detail", overflow="fold")
        for o in view.tests:
            table.add_row(o.name, Text(o.status, style=_STATUS_STYLE.get(o.status, "")),
                          o.detail[:200])  # fmt: skip
        parts.append(table)
    elif view.trajectory.verdict is None:
        parts.append(Text("no verdict was reached", style="yellow"))
    if view.trajectory.verdict and view.trajectory.verdict.infra_error:
        parts.append(Text(f"infra error: {view.trajectory.verdict.infra_error}", style="red"))
    for flag in view.flags:
        parts.append(Text.assemble(("flag ", "bold red"), (flag.kind, "red"), f": {flag.evidence}"))
    for label in view.labels:
        parts.append(Text(f"labelled {label.label} by {label.labeller or '?'}: {label.note}"))
    parts.append(Text("labels: " + ", ".join(LABELS), style="dim"))
    return Group(*parts)


def review(
    queue: AuditQueue,
    console: Console,
    ask: Callable[[str], str],
    *,
    run_id: str | None = None,
    labeller: str = "",
) -> int:
    """Show pending items one at a time and record the labels typed; returns how many.

    ``ask(prompt)`` returns what the person typed: ``1``-``4`` or a label's name, ``s`` to skip
    the item, ``q`` (or end of input) to stop. A note is asked for after each label.
    """
    skipped: set[str] = set()
    done = 0
    keys = {str(i): label for i, label in enumerate(LABELS, 1)}
    menu = "  ".join(f"[{k}] {v}" for k, v in keys.items()) + "  [s] skip  [q] quit"
    while True:
        item = next((i for i in queue.pending(run_id) if i.id not in skipped), None)
        if item is None:
            console.print("[green]The audit queue has nothing more to label.[/]")
            return done
        console.print(render(trajectory_view(queue.store, item.trajectory_id), item))
        while True:
            try:
                answer = ask(menu + "\nlabel> ").strip().lower()
            except EOFError:
                answer = "q"
            if answer in ("q", "quit"):
                return done
            if answer in ("s", "skip"):
                skipped.add(item.id)
                break
            try:
                label = normalize_label(keys.get(answer, answer))
            except ConfigError as e:
                console.print(f"[red]{escape(str(e))}[/]")
                continue
            try:
                note = ask("note (optional)> ").strip()
            except EOFError:
                note = ""
            result = queue.label(item.id, label, note=note, labeller=labeller)
            done += 1
            what = ", ".join(f"{k} {v}" for k, v in result.quarantined)
            console.print(f"[green]labelled {label}[/]" + (f"; quarantined {what}" if what else ""))
            break
