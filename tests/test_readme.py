"""The README and the documentation pages as a newcomer reads them: every Python snippet runs,
every command line parses, the quick ones run.

The pages are README.md and every page under docs/ (the site's sources; tests/test_site.py
builds the site). Each ```python block runs on its own in a fresh interpreter, in an empty
folder, unless an HTML comment right above it says why it cannot here (``<!-- not run: needs
veRL -->``: the test reports it skipped, with the reason). Each command line of the shell blocks
(```, ```sh, ```bash; ``referee ...`` or ``.venv/bin/referee ...``) must name a subcommand that
exists and options it accepts (parsed by the CLI itself, not run); ``[...]`` optional parts are
included and ``a|b`` alternatives tried one by one. The cheap ones then really run, page by
page, in order, in one folder per page.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer

import referee
from referee.cli import app

SRC = Path(referee.__file__).parents[1]
ROOT = SRC.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("**/*.md"))]
# Typer's own copy of click's usage error (typer does not export it under that name).
UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
FENCE = re.compile(
    r"^(?: *<!-- not run: (?P<why>[^>]*?) -->\n)?(?P<indent> *)```(\w*)\n(.*?)^(?P=indent)```$",
    re.M | re.S,
)
SHELL = ("", "sh", "bash")


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def fenced(page: Path = README) -> list[tuple[str, str, str]]:
    """The page's code blocks (those indented in a list too): (language, body, why it is not run
    or "")."""
    return [
        (lang, textwrap.dedent(body), why or "")
        for why, _, lang, body in FENCE.findall(page.read_text())
    ]


def blocks(lang: str, page: Path = README) -> list[str]:
    langs = SHELL if lang == "" else (lang,)
    return [body for kind, body, _ in fenced(page) if kind in langs]


def snippets() -> list[tuple[str, int, str, str]]:
    """Every page's Python blocks: (page, number on the page, source, why not run or "")."""
    out = []
    for page in PAGES:
        python = [(body, why) for kind, body, why in fenced(page) if kind == "python"]
        out += [(_name(page), i + 1, body, why) for i, (body, why) in enumerate(python)]
    return out


def command_lines(page: Path = README, *, setup: bool = False) -> list[str]:
    """The page's referee command lines, continuation lines joined, comments dropped; with
    ``setup``, the shell lines that make their input files (``echo ... > FILE``) too, in order."""
    lines: list[str] = []
    starts = ("referee ", ".venv/bin/referee ", *(("echo ",) if setup else ()))
    for body in blocks("", page):
        for raw in body.splitlines():
            line = re.sub(r"\s+#\s.*$", "", raw).rstrip()
            if raw[:1].isspace() and lines and line.strip().startswith("["):
                lines[-1] += " " + line.strip()  # the options of `referee train` over lines
            elif line.startswith(starts):
                lines.append(line)
    for line in list(lines):  # `a && referee b`: the second command too
        lines[lines.index(line)], *rest = line.split(" && ")
        lines += rest
    return lines


def all_command_lines() -> list[tuple[str, str]]:
    return [(_name(p), line) for p in PAGES for line in command_lines(p)]


def variants(line: str) -> list[list[str]]:
    """Argument lists for one command line: brackets opened, each alternative of a|b once."""
    line = line.split(" > ", 1)[0].replace("[", " ").replace("]", " ")
    line = re.sub(r"(?<!\S)\.\.\.(?!\S)", " ", line)  # `referee train ... --x`, not `runs/.../m`
    words = shlex.split(line)[1:]  # without the program
    if "--" in words:
        words = words[: words.index("--")]  # the sandboxed command is not referee's
    options = [w.split("|") if "|" in w and "://" not in w else [w] for w in words]
    n = max(len(o) for o in options)
    return [[NUMBERS.get(w, w) for w in (o[min(i, len(o) - 1)] for o in options)] for i in range(n)]


# The README's numeric placeholders, and a value of the right type for each.
NUMBERS = {"N": "2", "S": "0", "PORT": "9400"}


def parse(args: list[str]) -> None:
    """Parse ``args`` as the CLI would, down to the subcommand, without running anything."""
    cmd: Any = typer.main.get_command(app)
    ctx = None
    words = list(args)
    while hasattr(cmd, "get_command"):  # a group: the next word names its subcommand
        if words and words[0].startswith("-"):  # the group's own option (`referee --version`)
            opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
            if words[0] not in opts:
                raise UsageError(f"no option {words[0]!r} (in {' '.join(args)!r})")
            return  # eager: it acts and exits before any subcommand
        ctx = cmd.make_context(cmd.name or "referee", [], parent=ctx, resilient_parsing=True)
        name = words.pop(0) if words else ""
        sub = cmd.get_command(ctx, name)
        if sub is None:
            raise UsageError(f"no command {name!r} (in {' '.join(args)!r})")
        cmd = sub
    cmd.make_context(cmd.name, words, parent=ctx)  # options and arguments: UsageError if wrong


def test_the_pages_have_snippets_and_command_lines() -> None:
    # The README is a front page now (issue 31): a tour; the manual it was moved to docs/.
    assert len(blocks("python")) >= 1 and len(command_lines()) >= 10
    assert len(snippets()) >= 20 and len(all_command_lines()) >= 110


@pytest.mark.parametrize(
    "line", ["referee tasks nosuch FILE", "referee train --no-such-option 1", "referee nosuch"]
)
def test_a_wrong_command_line_is_caught(line: str) -> None:
    with pytest.raises(UsageError):
        for args in variants(line):
            parse(args)


@pytest.mark.parametrize(("page", "line"), all_command_lines())
def test_every_command_line_names_a_real_command_and_options(page: str, line: str) -> None:
    for args in variants(line):
        try:
            parse(args)
        except UsageError as e:
            pytest.fail(f"{page}: `{line}` does not parse ({' '.join(args)}): {e.format_message()}")


def run(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.parametrize(
    ("page", "number", "source", "why"), snippets(), ids=[f"{p}-{n}" for p, n, _, _ in snippets()]
)
def test_every_python_snippet_runs_on_its_own(
    page: str, number: int, source: str, why: str, tmp_path: Path
) -> None:
    if why:
        pytest.skip(f"{page} snippet {number} is not run here: {why}")
    p = run(sys.executable, "-c", source, cwd=tmp_path)
    assert p.returncode == 0, f"{page} snippet {number} fails:\n{source}\n{p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr


def test_the_parts_snippet_records_a_run_the_dashboard_and_audit_can_see(tmp_path: Path) -> None:
    # issue 20 (10): the snippet never started a run, so its trajectories had run_id null and
    # `referee ui` / `referee audit --fill` showed nothing.
    (source,) = [s for p, _, s, _ in snippets() if p == "docs/concepts/rollout.md"]
    p = run(sys.executable, "-c", source, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    from referee.track.store import TrackStore

    with TrackStore(tmp_path / "runs" / "mine", create=False) as store:
        assert [r.run_id for r in store.runs()] == ["mine"]
        assert store.count_trajectories() == store.count_trajectories(run_id="mine") > 0


# The command lines that are quick and need nothing from outside: they really run, in order,
# in one folder per page (later ones read what earlier ones wrote), each must exit 0.
CHEAP = (
    "--version",
    "exec ",
    "doctor",
    "domains list",
    "tasks families",
    "tasks sources",
    "tasks generate",
    "tasks list",
    "tasks show",
    "tasks stats",
    "tasks gold",
    "verify --tasks",
)

# Their files made small and local: one generated task file stands for every task file named
# (HumanEval's import and synthesis are not cheap). Every other file a line reads, an earlier
# line of the page makes (`echo ... > solution.py`, `referee tasks gold ... > samples.jsonl`).
SMALL = {
    "--count 1000": "--count 5",
    "--count 600": "--count 5",
    "toolz.jsonl": "train.jsonl",
    "he.jsonl": "train.jsonl",
}


def cheap_lines(page: Path) -> list[str]:
    """The page's cheap command lines, with the ``echo`` lines that make their files (a line
    that names a cluster, ``--ray HOST:PORT``, is only parsed: there is none here)."""
    out = []
    for line in command_lines(page, setup=True):
        if "HOST:PORT" in line:
            continue
        if line.startswith("echo ") or line.split(" ", 1)[1].startswith(CHEAP):
            out.append(line)
    return out


CHEAP_PAGES = [p for p in PAGES if any(not c.startswith("echo ") for c in cheap_lines(p))]


@pytest.mark.parametrize("page", CHEAP_PAGES, ids=[_name(p) for p in CHEAP_PAGES])
def test_the_cheap_command_lines_run(page: Path, tmp_path: Path) -> None:
    # What `train.jsonl` (and the big files SMALL maps to it) stands for, and its references
    # as samples, made first: a page may name them without making them.
    made = run(sys.executable, "-m", "referee", "tasks", "generate", "list-pipeline",
               "--count", "5", "--out", "train.jsonl", cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    gold = run(sys.executable, "-m", "referee", "tasks", "gold", "train.jsonl", cwd=tmp_path)
    (tmp_path / "samples.jsonl").write_text(gold.stdout)  # what `--samples samples.jsonl` reads
    for line in cheap_lines(page):
        if line.startswith("echo "):  # a file a later line reads
            assert run("sh", "-c", line, cwd=tmp_path).returncode == 0, line
            continue
        words = line.split(" ", 1)[1]
        redirect = words.split(" > ", 1)[1].split()[0] if " > " in words else None
        for big, small in SMALL.items():
            words = words.replace(big, small)
        for args in variants(line.split(" ", 1)[0] + " " + words):
            if "FILE" in args:
                args[args.index("FILE")] = "train.jsonl"
            if "TASK_ID" in args:
                args[args.index("TASK_ID")] = task_id(tmp_path)
            # exec: the whole line (the sandboxed command after `--` included)
            command = shlex.split(line)[1:] if words.startswith("exec") else args
            p = run(sys.executable, "-m", "referee", *command, cwd=tmp_path)
            if redirect is not None:
                (tmp_path / redirect).write_text(p.stdout)
            assert p.returncode == 0, (
                f"{_name(page)}: `{' '.join(command)}` exits {p.returncode}: {p.stderr}"
            )
            assert "Traceback" not in p.stderr


def test_the_cheap_lines_cover_the_main_commands() -> None:
    ran = {" ".join(shlex.split(c)[1:3]) for p in PAGES for c in cheap_lines(p)}
    for needed in ("doctor", "tasks gold", "verify --tasks", "exec --python", "--version"):
        assert any(r.startswith(needed) for r in ran), needed


def task_id(folder: Path) -> str:
    first = (folder / "train.jsonl").read_text().splitlines()[0]
    return str(json.loads(first)["id"])


# Each system package scripts/bootstrap.sh may install, and how the README's set-up names it.
_BOOTSTRAP_PACKAGES = {
    "bubblewrap": "bubblewrap", "libseccomp2": "libseccomp2", "chromium": "chromium",
    "gcc": "gcc", "g++": "g++", "default-jdk-headless": "a JDK", "nodejs": "node",
    "golang-go": "Go", "rustc": "rustc", "iverilog": "iverilog", "yosys": "yosys",
}  # fmt: skip


def test_the_set_up_section_names_every_system_package_bootstrap_installs():
    # issue 33: iverilog was installed by the bootstrap but missing from the README's list.
    script = (SRC.parent / "scripts" / "bootstrap.sh").read_text()
    installed = set(re.findall(r"need_apt\+=\(([^)\s]+)\)", script))
    assert installed == set(_BOOTSTRAP_PACKAGES), "a package without a README name here"
    text = README.read_text()
    start = text.index("## Set up and run")
    section = text[start : text.index("\n## ", start + 1)]
    missing = [p for p, name in _BOOTSTRAP_PACKAGES.items() if name not in section]
    assert not missing, f"README's set-up section leaves out {missing}"
