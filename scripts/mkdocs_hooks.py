"""The documentation site's build hooks (mkdocs.yml ``hooks:``): pages made from other files.

* ``index.md`` is the README, its ``docs/...`` links made relative to the site;
* ``cli.md`` is every command of the Typer app (``referee.cli.app``), read at build time, so
  the reference cannot drift from the code;
* ``results/*.md`` are ``bench/RESULTS.md`` split by topic, each page opening with a table of
  its sections. RESULTS.md stays the one source: the benchmarks append sections to it and the
  code and tests cite it as ``bench/RESULTS.md §N``; a section whose number has no topic yet
  lands on ``results/more.md``, never nowhere;
* ``changelog.md`` is ``CHANGELOG.md``.

On every page a link to a file outside ``docs/`` (``../src/referee/...``, ``bench/...``) becomes
the path in code: the site has no copy of those files to link to.
"""

from __future__ import annotations

import importlib
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Each page of results: its file, title, and the RESULTS.md sections (by number) it holds.
#: The unnumbered note "How the fast path got here" travels with the section before it (§4's
#: neighbour in the file, but about speed): NOTES names where it goes.
TOPICS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("speed", "Sandbox, verification and environment speed", (1, 2, 7)),
    (
        "limit",
        "Verification at the physical limit",
        (22, 23, 24, 37, 38, 39, 40, 44, 48, 52, 53, 54),
    ),
    ("verifiers", "Verifiers: wrong answers, red team, languages, load", (3, 4, 13, 28)),
    ("synthesis", "Task synthesis and refactoring tasks", (5, 14)),
    (
        "training",
        "Training: GRPO against imitation, real models",
        (6, 10, 25, 36, 42, 46, 47, 49, 51, 55),
    ),
    ("tracking", "Tracking, detectors and costs", (8, 11)),
    ("service", "Service and Ray", (9, 12, 32, 41, 43, 45, 50)),
    ("domains", "Domains and distribution shift", (15, 16, 17, 18, 19, 20, 21, 27, 30, 31)),
    ("install", "Installation: the light core, extras and the trainers", (26, 29)),
    ("imports", "Imports: public benchmarks against their own judges", (33, 34, 35)),
)
NOTES = {"How the fast path got here": "speed"}
MORE = ("more", "More results (sections without a topic yet)")
SECTION = re.compile(r"^## (?:(\d+)\. )?(.+?)$", re.M)


@dataclass(frozen=True)
class Section:
    number: int | None
    title: str
    when: str
    text: str


def results_sections(text: str) -> tuple[str, list[Section]]:
    """RESULTS.md as its preamble and its ``## `` sections, in order."""
    starts = list(SECTION.finditer(text))
    preamble = text[: starts[0].start()] if starts else text
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        title, _, when = m.group(2).partition(" — ")
        number = int(m.group(1)) if m.group(1) else None
        out.append(Section(number, title.strip(), when.strip(), text[m.start() : end]))
    return preamble, out


def results_pages(text: str) -> dict[str, str]:
    """``{"results/NAME.md": markdown}``: one page per topic, and the index."""
    preamble, sections = results_sections(text)
    where = {n: name for name, _, numbers in TOPICS for n in numbers}
    pages: dict[str, list[Section]] = {name: [] for name, _, _ in TOPICS}
    titles = {name: title for name, title, _ in TOPICS}
    for s in sections:
        note = next((page for start, page in NOTES.items() if s.title.startswith(start)), None)
        name = where.get(s.number) if s.number is not None else note
        if name is None:  # a section appended since TOPICS was written: shown, not lost
            name = MORE[0]
            titles[name] = MORE[1]
        pages.setdefault(name, []).append(s)
    out = {
        f"results/{MORE[0]}.md": f"# {MORE[1]}\n\nNone: every section of `bench/RESULTS.md` "
        "has a topic (`TOPICS` in `scripts/mkdocs_hooks.py`).\n"
    }
    intro = preamble.split("\n", 1)[1].strip() if preamble.startswith("# ") else preamble
    rows = []
    for name, secs in pages.items():
        if not secs:
            continue
        out[f"results/{name}.md"] = _page(titles[name], secs)
        numbers = ", ".join(f"§{s.number}" for s in secs if s.number is not None)
        rows.append(f"| [{titles[name]}]({name}.md) | {numbers} |")
    index = [
        "# The numbers",
        "",
        "What referee measured, split by topic from `bench/RESULTS.md`, the one file the",
        "benchmarks append to (and the code cites as `bench/RESULTS.md §N`).",
        "",
        intro,
        "",
        "| topic | sections |",
        "|---|---|",
        *rows,
        "",
    ]
    out["results/index.md"] = "\n".join(index)
    return out


def _page(title: str, sections: list[Section]) -> str:
    lines = [f"# {title}", "", "| § | what | when |", "|---|---|---|"]
    for s in sections:
        anchor = _slug(s.text.splitlines()[0][3:])
        label = f"[{_cell(s.title)}](#{anchor})"
        lines.append(f"| {s.number if s.number is not None else ''} | {label} | {_cell(s.when)} |")
    lines.append("")
    for s in sections:
        lines.append(s.text.rstrip() + "\n")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify)."""
    from markdown.extensions.toc import slugify

    plain = re.sub(r"`([^`]*)`", r"\1", heading)
    return slugify(plain, "-")


def cli_page() -> str:
    """Every command of the app, as a section each: usage, help, arguments and options."""
    import typer

    cli = importlib.import_module("referee.cli")  # a module today, maybe a package tomorrow
    root = typer.main.get_command(cli.app)
    lines = [
        "# Command-line reference",
        "",
        "Every `referee` command, read from the command line's own definition when the site is",
        "built (`scripts/mkdocs_hooks.py`). `referee COMMAND --help` prints the same.",
        "Exit codes: [getting started](getting-started.md#exit-codes).",
        "",
    ]
    for path, cmd in _walk(root, ["referee"]):
        lines += _command(path, cmd)
    return "\n".join(lines)


def _walk(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    out = [(path, cmd)]
    for name in sorted(getattr(cmd, "commands", {}) or {}):
        sub = cmd.commands[name]
        if not getattr(sub, "hidden", False):
            out += _walk(sub, [*path, name])
    return out


def _command(path: list[str], cmd: Any) -> list[str]:
    import click

    depth = min(len(path), 4)
    lines = [f"{'#' * (depth + 1) if len(path) > 1 else '##'} `{' '.join(path)}`", ""]
    usage = " ".join(cmd.collect_usage_pieces(click.Context(cmd, info_name=path[-1])))
    lines += ["```text", f"{' '.join(path)} {usage}".rstrip(), "```", ""]
    if cmd.help:
        lines += [_plain(cmd.help), ""]
    rows = []
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        if isinstance(p, click.Argument):
            name = f"`{p.human_readable_name}`"
        else:
            name = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
        default = p.default
        default = "" if default in (None, (), False, "") or callable(default) else f"`{default}`"
        rows.append(f"| {name} | {_cell(_plain(getattr(p, 'help', None) or ''))} | {default} |")
    if rows:
        lines += ["| argument or option | meaning | default |", "|---|---|---|", *rows, ""]
    return lines


def _plain(text: str) -> str:
    """Help text as one markdown paragraph: Typer's \\b markers and line breaks dropped."""
    return " ".join(text.replace("\b", "").split())


def readme_page() -> str:
    """README.md with its links made relative to docs/."""
    text = (ROOT / "README.md").read_text()
    return re.sub(r"\]\(docs/", "](", text)


def changelog_page() -> str:
    return (ROOT / "CHANGELOG.md").read_text()


# -- mkdocs events -------------------------------------------------------------------------


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    made = {"index.md": readme_page(), "cli.md": cli_page(), "changelog.md": changelog_page()}
    made |= results_pages((ROOT / "bench" / "RESULTS.md").read_text())
    for uri, content in made.items():
        files.append(File.generated(config, uri, content=content))
    return files


_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """A link to a file the site does not hold becomes its repository path, in code."""
    here = posixpath.dirname(page.file.src_uri)
    source_dir = {"index.md": "", "changelog.md": ""}.get(page.file.src_uri)
    if page.file.src_uri.startswith("results/"):
        source_dir = "bench"  # RESULTS.md's own links are relative to bench/

    def fix(m: re.Match[str]) -> str:
        bang, text, target = m.group(1), m.group(2), m.group(3)
        if "://" in target or target.startswith(("mailto:", "/")):
            return m.group(0)
        if files.get_file_from_path(posixpath.normpath(posixpath.join(here, target))):
            return m.group(0)
        base = source_dir if source_dir is not None else posixpath.join("docs", here)
        path = posixpath.normpath(posixpath.join(base, target))
        if path.startswith("docs/") and target.endswith(".md"):
            return m.group(0)  # a page that should exist: let mkdocs --strict say so
        shown = text if text.strip("`") == path else f"{text} (`{path}`)"
        return shown if not bang else f"`{path}`"

    return _LINK.sub(fix, markdown)
