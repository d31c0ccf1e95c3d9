"""The documentation site (mkdocs.yml): it builds with ``mkdocs build --strict`` (every link,
anchor and nav entry resolves; every ``:::`` API block imports), and the pages it makes from
other files stay whole: every section of bench/RESULTS.md lands on a results page, and every
CLI command on the command-line reference."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import mkdocs_hooks  # noqa: E402  (scripts/ is not a package)

HAVE_MKDOCS = all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings"))


@pytest.mark.skipif(not HAVE_MKDOCS, reason="mkdocs is not installed: pip install 'referee[docs]'")
def test_the_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_MKDOCS_2_WARNING": "1"}
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-5000:]
    for page in ("index.html", "cli/index.html", "results/index.html", "api/sandbox/index.html"):
        assert (tmp_path / page).is_file(), page
    api = (tmp_path / "concepts" / "task" / "index.html").read_text()
    assert "referee.tasks.model.Task" in api  # mkdocstrings rendered the core type


def test_every_results_section_lands_on_a_page() -> None:
    text = (ROOT / "bench" / "RESULTS.md").read_text()
    _, sections = mkdocs_hooks.results_sections(text)
    pages = mkdocs_hooks.results_pages(text)
    body = "\n".join(v for k, v in pages.items() if k != "results/index.md")
    assert sections and all(s.text.rstrip() in body for s in sections)
    numbered = [s.number for s in sections if s.number is not None]
    placed = {n for _, _, ns in mkdocs_hooks.TOPICS for n in ns}
    # A section appended without a topic still shows (results/more.md); give it one.
    assert not set(numbered) - placed, f"sections with no topic: {set(numbered) - placed}"


def test_an_appended_section_is_not_lost() -> None:
    text = "# R\n\nintro\n\n## 1. One — today\n\nx\n\n## 99. New — tomorrow\n\ny\n"
    pages = mkdocs_hooks.results_pages(text)
    assert "## 99. New" in pages["results/more.md"] and "## 1. One" in pages["results/speed.md"]


def test_the_cli_reference_names_every_command() -> None:
    import typer

    from referee.cli import app

    page = mkdocs_hooks.cli_page()
    for path, _ in mkdocs_hooks._walk(typer.main.get_command(app), ["referee"]):
        assert f"`{' '.join(path)}`" in page
    assert "`--version`" in page
