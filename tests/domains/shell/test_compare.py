"""The ``output`` and ``tree`` checks' comparisons (:mod:`referee.domains.shell.compare`)."""

from __future__ import annotations

import os

import pytest

from referee.domains.shell.compare import output_matches, tree_digest, tree_entries


@pytest.mark.parametrize(
    ("mode", "expected", "got", "ok"),
    [
        ("exact", "a\nb\n", "a\nb\n", True),
        ("exact", "a\nb\n", "a\nb", False),
        ("lines", "a\nb\n\n", "a  \nb", True),
        ("lines", "a\nb\n", "b\na\n", False),
        ("sorted", "a\nb\n", "b\na\n", True),
        ("sorted", "a\nb\n", "a\na\n", False),
        ("words", "Total: 30 files", "total 30, FILES", True),
        # one-character words count here (InterCode's TF-IDF drops them)
        ("words", "3 files", "4 files", False),
        ("words", "30", "30\ndone", False),
        ("words", "", "", True),
    ],
)
def test_output_modes(mode: str, expected: str, got: str, ok: bool) -> None:
    assert output_matches(expected, got, mode)[0] is ok


def test_a_mismatch_says_how_much_differs_without_the_expected_text() -> None:
    ok, detail = output_matches("secret answer here", "wrong", "words")
    assert not ok and "secret" not in detail and "3 words expected, 1 printed" in detail


def test_an_unknown_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown output mode 'fuzzy'"):
        output_matches("a", "a", "fuzzy")


def test_the_tree_digest_sees_contents_kinds_links_and_nothing_excluded(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("one")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "history").write_text("ignored")
    os.symlink("d/f.txt", tmp_path / "link")
    before, count = tree_digest(tmp_path, ["root"])
    assert count == 3 and tree_entries(tmp_path, ["root"])[0] == "d d"
    (tmp_path / "root" / "more").write_text("still ignored")
    assert tree_digest(tmp_path, ["root"])[0] == before
    for change in (
        lambda: (tmp_path / "d" / "f.txt").write_text("two"),  # content
        lambda: (tmp_path / "d" / "empty").mkdir(),  # an empty directory
        lambda: os.replace(tmp_path / "link", tmp_path / "link2"),  # a name
    ):
        change()
        after, _ = tree_digest(tmp_path, ["root"])
        assert after != before
        before = after
