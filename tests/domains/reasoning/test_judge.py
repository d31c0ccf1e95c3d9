"""The reasoning judge's modes: each passes the answers reasoning-gym scores 1.0 and nothing
else, by parsing text (never running it). bench/reasoning_gym_agreement.py measures the
agreement on generated tasks; these are the cases each mode exists for."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.domains.reasoning.judge import JUDGES, extract_answer, judge


def test_the_last_answer_block_is_the_answer_stripped():
    assert extract_answer("a <answer>1</answer> b <answer>\n 2 \n</answer>") == "2"
    assert extract_answer("no tags 2") is None
    assert extract_answer("<answer></answer>") == ""


@pytest.mark.parametrize(
    ("mode", "hidden", "right", "wrong"),
    [
        ("exact", {"answer": "Ab c"}, ["Ab c"], ["ab c", "Ab  c", "Ab c."]),
        ("casefold", {"answer": "Alice"}, ["alice", "ALICE"], ["Alice.", "Alic"]),
        ("nospace-casefold", {"answer": "HELLO"}, ["h e l l o", "Hello"], ["hell o!"]),
        ("words-casefold", {"answer": "The cat"}, ["the  CAT", "the\ncat"], ["thecat", "cat the"]),
        ("collapse-space", {"answer": "1 2 3"}, ["1  2\n3"], ["1 2", "123"]),
        ("rows", {"answer": "1 2\n3 4"}, ["1  2\n3 4 "], ["1 2 3 4", "1 2\n4 3"]),
        ("decimal", {"answer": "3.50"}, ["3.5", "+3.500", "03.5"], ["3,5", "3.51", "NaN"]),
        ("decimal-commas", {"answer": "1000"}, ["1,000", "1000.0"], ["1001", "1e3x"]),
        ("decimal-within", {"answer": "1.23", "tolerance": "1e-2"}, ["1.225", "1.24"], ["1.25"]),
        ("number-within", {"value": 1234.5, "tolerance": 0.01}, ["1,234.5", "1234.505"], ["1234"]),
        (
            "fraction-within",
            {"answer": "3/8", "tolerance": 1e-4},
            ["0.375", "6/16"],
            ["0.38", "3/0"],
        ),
        ("one-of", {"accepted": ["Q_\n_Q", "_Q\nQ_"]}, ["_Q\nQ_"], ["Q_\nQ_"]),
        (
            "anagram-groups",
            {"solution": [["ab", "ba"], ["c"]]},
            ['[["c"], ["ba", "ab"]]'],
            ['[["ab"], ["ba"], ["c"]]', "[[ab]]", '{"a": 1}'],
        ),
        ("partitions", {"solution": [["a", "a"], ["aa"]]}, ['[["aa"], ["a", "a"]]'], ['[["aa"]]']),
        ("palindrome", {"letters": ["a", "a", "b"]}, ["aba", "ABA"], ["aab", "abba"]),
        ("word-list", {"words": ["a", "b", "c"]}, ["a, b,c"], ["a b c", "c, b, a"]),
        (
            "factors",
            {"answer": "2 \u00d7 3 \u00d7 3"},
            ["3\u00d72\u00d73"],
            ["2 \u00d7 9", "2 * 3 * 3", "2\u00d73\u00d73\u00d71"],
        ),
        ("fraction", {"fraction": [2, 3]}, ["2/3", "$\\frac{2}{3}$", " 2 / 3"], ["4/6", "2:3"]),
    ],
)
def test_each_mode_passes_its_right_answers_only(mode, hidden, right, wrong):
    hidden = {"answer": "", **hidden}
    assert all(judge(mode, a, hidden) for a in right), mode
    assert not any(judge(mode, a, hidden) for a in wrong), mode


def test_every_mode_is_covered_above():
    covered = test_each_mode_passes_its_right_answers_only.pytestmark[0].args[1]
    assert {case[0] for case in covered} == set(JUDGES)


def test_an_answer_that_is_code_is_read_as_text_never_run(tmp_path):
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch() or [1]"
    for mode in JUDGES:
        hidden = {"answer": "1", "tolerance": 1, "value": 1, "accepted": [], "solution": [],
                  "letters": [], "words": [], "fraction": [1, 1]}  # fmt: skip
        try:
            assert not judge(mode, code, hidden)
        except (ValueError, TypeError):
            pass
    assert not Path(marker).exists()
