"""What the ``output`` and ``tree`` checks compare: an answer's printed output against the
expected one, and a whole file tree against the one the reference left.

Imported benchmarks judge more than files: InterCode's bash tasks ("count the files under
/testbed", "print the three largest files") are answered by what the command prints, and a
task that changes files is judged on every change, not on a few named paths (a stray file is
a wrong answer). Both are decided on the host from plain data: the output the agent's script
printed, captured by the grader, and the tree read without following any link.

Output modes:

==========  =========================================================================
``exact``   the same text
``lines``   the same lines, trailing spaces and trailing empty lines ignored
``sorted``  the same lines in any order (a multiset)
``words``   the same words (runs of letters, digits and ``_``) in any order, case and
            punctuation ignored: nearly the view of InterCode's own judge, a TF-IDF
            cosine over lowercased words, except that its tokens drop one-character
            words (to it "3 files" and "4 files" are the same answer; here they differ)
==========  =========================================================================

>>> output_matches("a.txt\\nb.txt\\n", "b.txt\\na.txt", "sorted")
(True, '')
>>> output_matches("3 files", "4 files", "words")
(False, 'the output differs: 2 words expected, 2 printed, 1 of them different')
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

__all__ = ["OUTPUT_MODES", "output_matches", "tree_digest", "tree_entries"]

OUTPUT_MODES = ("exact", "lines", "sorted", "words")
_WORD = re.compile(r"\w+")


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _units(text: str, mode: str) -> list[str]:
    if mode == "exact":
        return [text]
    if mode == "lines":
        return _lines(text)
    if mode == "sorted":
        return sorted(_lines(text))
    if mode == "words":
        return sorted(_WORD.findall(text.lower()))
    raise ValueError(f"unknown output mode {mode!r}; modes: {', '.join(OUTPUT_MODES)}")


def output_matches(expected: str, got: str, mode: str) -> tuple[bool, str]:
    """(whether ``got`` matches ``expected`` under ``mode``, a detail that says how much
    differs without showing the expected text)."""
    want, have = _units(expected, mode), _units(got, mode)
    if want == have:
        return True, ""
    if mode == "exact":
        sizes = f"{len(expected)} characters expected, {len(got)} printed"
        return False, f"the output differs ({sizes})"
    unit = "words" if mode == "words" else "lines"
    wrong = sum((Counter(have) - Counter(want)).values())
    return False, (
        f"the output differs: {len(want)} {unit} expected, {len(have)} printed, "
        f"{wrong} of them different"
    )


def tree_entries(root: Path, exclude: Iterable[str] = ()) -> list[str]:
    """One line per path under ``root`` (sorted, links never followed): ``d PATH`` for a
    directory, ``f PATH SHA256`` for a regular file, ``l PATH -> TARGET`` for a link, ``o PATH``
    for anything else. Top-level names in ``exclude`` are left out with all they hold."""
    skip = set(exclude)
    out = []
    for top, dirs, files in os.walk(root):  # os.walk does not follow links to directories
        rel = os.path.relpath(top, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in skip]
            files = [f for f in files if f not in skip]
        for name in sorted(dirs + files):
            path = name if rel == "." else f"{rel}/{name}"
            full = os.path.join(top, name)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out.append(f"l {path} -> {os.readlink(full)}")
            elif stat.S_ISDIR(st.st_mode):
                out.append(f"d {path}")
            elif stat.S_ISREG(st.st_mode):
                out.append(f"f {path} {_sha256(full)}")
            else:
                out.append(f"o {path}")
    return sorted(out)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_digest(root: Path, exclude: Iterable[str] = ()) -> tuple[str, int]:
    """(the sha256 of :func:`tree_entries`, how many entries): two trees with the same digest
    hold the same paths, kinds, file contents and link targets."""
    entries = tree_entries(root, exclude)
    return hashlib.sha256("\n".join(entries).encode()).hexdigest(), len(entries)
