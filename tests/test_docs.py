"""The pages under docs/ as a newcomer reads them (the README has its own, tests/test_readme.py).

Every ``referee ...`` command in them names a real command and options it has; on the pages that
tell a trainer's user what to run (``docs/wire-protocols.md``, ``docs/trainer-usage.md``,
``docs/trainer-adapters.md``) each command also parses whole, as typed, and ``referee serve``
starts as written. The options they name for the server exist, the native routes are all listed,
and every page is reachable by links from the README and named in the site's navigation
(mkdocs.yml). Their code blocks run in tests/test_readme.py, as the README's do.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

import referee
from referee.cli import app
from tests.test_readme import UsageError, parse, variants

ROOT = Path(referee.__file__).parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("**/*.md"))
#: Pages the site makes at build time (scripts/mkdocs_hooks.py): the README's links name them.
GENERATED = {"cli.md", "changelog.md", "index.md"}
TRAINER_PAGES = [DOCS / n for n in ("wire-protocols.md", "trainer-usage.md", "trainer-adapters.md")]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
#: An inline code span: a run of backticks, closed by a run of the same length (CommonMark).
SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
COMMAND = re.compile(r"(\.venv/bin/)?referee [a-z]")

#: Options the pages name that belong to other programs: the trainers' own command lines
#: (OpenRLHF, slime) and pip's. A referee option named there must exist (see below).
FOREIGN_OPTIONS = {
    "--data.label_key",
    "--data.input_key",
    "--data.apply_chat_template",
    "--reward.remote_url",
    "--remote_rm_url",
    "--rm-url",
    "--label-key",
    "--reward-key",
    "--eval-reward-key",
    "--group-rm",
    "--input-key",
    "--metadata-key",
    "--tool-key",
    "--no-deps",
}


def commands(page: Path) -> list[str]:
    """The page's referee commands: inline code spans (joined over line breaks) and the lines
    of its code blocks, comments dropped."""
    text = page.read_text()
    prose = FENCE.sub("", text)
    spans = [" ".join(s.split()) for _, s in SPAN.findall(prose)]
    lines = [line.strip() for _, body in FENCE.findall(text) for line in body.splitlines()]
    found = [re.sub(r"\s+#\s.*$", "", s).strip() for s in spans + lines]
    # A command a code block's comment names (`# rows from referee tasks export ...`).
    notes = [m for line in lines for m in re.findall(r"\s#\s.*?(referee [a-z][^;,)`]*)", line)]
    found += [n.strip() for n in notes]
    # `--a/--b/--c` on one line: each of them.
    return [s.replace("/--", "|--") for s in found if COMMAND.match(s)]


def all_options() -> set[str]:
    """Every option of every referee command."""
    out: set[str] = set()

    def walk(cmd: Any) -> None:
        for p in getattr(cmd, "params", []):
            out.update(o for o in p.opts if o.startswith("--"))
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return out


def name_exists(words: list[str]) -> None:
    """``words`` (``["tasks", "export"]``) name a referee command; UsageError otherwise."""
    cmd: Any = typer.main.get_command(app)
    ctx = cmd.make_context("referee", [], resilient_parsing=True)
    for word in words:
        sub = cmd.get_command(ctx, word) if hasattr(cmd, "get_command") else None
        if sub is None:
            raise UsageError(f"no command {' '.join(words)!r}")
        cmd = sub


def _cases(pages: list[Path]) -> list[tuple[str, str]]:
    return [(p.relative_to(ROOT).as_posix(), c) for p in pages for c in commands(p)]


def test_the_pages_have_commands() -> None:
    assert len(_cases(PAGES)) >= 20 and len(_cases(TRAINER_PAGES)) >= 8


@pytest.mark.parametrize(("page", "line"), _cases(PAGES))
def test_every_command_names_a_real_command_and_its_options(page: str, line: str) -> None:
    for args in variants(line):
        try:
            parse(args)
        except UsageError as e:
            # A command named in passing (`referee eval`, `referee serve --ray`) may leave out
            # what it requires; what it names must exist.
            if type(e).__name__ == "NoSuchOption" or str(e).startswith("no command"):
                pytest.fail(f"{page}: `{line}`: {e.format_message()}")


@pytest.mark.parametrize(("page", "line"), _cases(TRAINER_PAGES))
def test_the_trainer_pages_commands_run_as_written(page: str, line: str) -> None:
    words = line.split()
    if len(words) <= 3 and all(not w.startswith("-") for w in words[1:]):
        name_exists(words[1:])  # `referee serve`: the command's name in a sentence
        return
    for args in variants(line):
        try:
            parse(args)
        except UsageError as e:
            pytest.fail(f"{page}: `{line}` does not parse as typed: {e.format_message()}")
    if words[1] == "serve":
        assert "--tokens" in words or "--no-auth" in words, (
            f"{page}: `{line}`: referee serve refuses to start without --tokens FILE "
            "(or --no-auth on loopback)"
        )


def test_serve_refuses_to_start_without_a_tokens_file() -> None:
    """What the check above relies on."""
    from referee.errors import ConfigError
    from referee.service import ServeConfig

    with pytest.raises(ConfigError, match="--tokens"):
        ServeConfig(tasks=("tasks.jsonl",))


@pytest.mark.parametrize("page", [DOCS / "wire-protocols.md", DOCS / "trainer-usage.md"])
def test_every_option_the_serving_pages_name_exists(page: Path) -> None:
    named = {s for _, s in SPAN.findall(page.read_text()) if re.fullmatch(r"--[\w.-]+", s)}
    unknown = sorted(named - all_options() - FOREIGN_OPTIONS)
    assert not unknown, f"{page.name} names options no referee command has: {unknown}"


def test_every_native_route_is_listed_in_wire_protocols() -> None:
    from referee.service.app import NATIVE_ROUTES

    text = (DOCS / "wire-protocols.md").read_text()
    missing = [r for r in NATIVE_ROUTES if f"`{r}`" not in text]
    assert not missing, f"docs/wire-protocols.md does not list {missing}"


def _links(page: Path) -> set[Path]:
    """The docs pages ``page`` names: markdown links relative to it, and ``docs/...`` paths."""
    text = page.read_text()
    out = {(page.parent / m).resolve() for m in re.findall(r"\]\(([^)#\s]+\.md)", text)}
    out |= {(ROOT / m).resolve() for m in re.findall(r"\bdocs/[A-Za-z0-9_/.-]+\.md", text)}
    return {p for p in out if p.exists()}


def test_every_page_is_reachable_from_the_readme() -> None:
    seen: set[Path] = set()
    todo = [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        for linked in _links(page) - seen:
            seen.add(linked)
            todo.append(linked)
    unreachable = sorted(p.relative_to(ROOT).as_posix() for p in PAGES if p.resolve() not in seen)
    assert not unreachable, f"no link leads from the README to {unreachable}"


def test_every_page_is_in_the_sites_navigation() -> None:
    nav = set(
        re.findall(
            r"^\s*-\s+(?:[^:\n]+:\s+)?([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M
        )
    )
    pages = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert not pages - nav, f"pages not in mkdocs.yml's nav: {sorted(pages - nav)}"
    made = {n for n in nav - pages if not n.startswith("results/")}
    assert made <= GENERATED, f"mkdocs.yml's nav names pages that do not exist: {made - GENERATED}"


@pytest.mark.parametrize("name", ["trainer-usage.md", "trainer-adapters.md"])
def test_the_trainer_pages_are_linked_from_the_serving_page(name: str) -> None:
    """A reader of docs/wire-protocols.md (linked from the README's `referee serve`) finds the
    in-process route too."""
    assert (DOCS / name).resolve() in _links(DOCS / "wire-protocols.md")
