"""A griffe extension for the site's API pages (mkdocs.yml): referee's docstrings are
reStructuredText-flavoured, so before mkdocstrings renders one as Markdown its doctest
examples (``>>>`` lines and their output) go into ``pycon`` fences, where ``[x for x in y]`` is
code rather than a link, and Sphinx roles (``:class:`~referee.errors.ConfigError```) become
code spans."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`~?([^`]+)`")


def markdown_docstring(text: str) -> str:
    out: list[str] = []
    in_doctest = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>") and not in_doctest:
            out.append("```pycon")
            in_doctest = True
        elif in_doctest and not stripped:
            out.append("```")
            in_doctest = False
        out.append(line if in_doctest else ROLE.sub(r"`\1`", line))
    if in_doctest:
        out.append("```")
    return "\n".join(out)


class Docstrings(griffe.Extension):
    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
