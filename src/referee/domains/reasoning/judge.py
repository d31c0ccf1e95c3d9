"""How referee judges a reasoning task's text answer: pure comparisons, no code run.

The model's final answer is the text of its last ``<answer>...</answer>`` block, stripped (as
reasoning-gym's own ``extract_answer`` reads it); an answer with no such block fails. It is then
compared with the task's gold answer by the task's ``hidden["judge"]`` mode, one of
:data:`JUDGES`. Every mode parses the answer as data (``Decimal``, ``Fraction``, JSON) and never
evaluates it: reasoning-gym's own scorers ``eval()`` the answer for several datasets, which is
why those datasets are judged here by text alone or not offered (:mod:`.catalog`).

The verdict is binary: reasoning-gym's partial credit (a share of the answer's length when it
merely *contains* the gold answer, a tenth for a near miss) is a reward a policy learns to
farm, so referee passes exactly the answers reasoning-gym scores 1.0 and gives the rest 0.

>>> extract_answer("think... <answer> 42 </answer>")
'42'
>>> judge("decimal", "+1,000.0", {"answer": "1000"})
True
>>> judge("casefold", "Alice", {"answer": "alice"}), judge("exact", "Alice", {"answer": "alice"})
(True, False)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

__all__ = ["JUDGES", "extract_answer", "judge"]

_ANSWER = re.compile(r"<answer>\s?(.*?)\s?</answer>", re.DOTALL)


def extract_answer(completion: str) -> str | None:
    """The stripped text of the last ``<answer>`` block of ``completion``; None if it has none."""
    matches = _ANSWER.findall(completion)
    return matches[-1].strip() if matches else None


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def _exact(answer: str, hidden: Mapping[str, Any]) -> bool:
    return answer == str(hidden["answer"]).strip()


def _casefold(answer: str, hidden: Mapping[str, Any]) -> bool:
    return answer.lower() == str(hidden["answer"]).strip().lower()


def _nospace_casefold(answer: str, hidden: Mapping[str, Any]) -> bool:
    # The figlet and needle datasets accept the word with its letters spaced out.
    return answer.replace(" ", "").lower() == str(hidden["answer"]).strip().lower()


def _words_casefold(answer: str, hidden: Mapping[str, Any]) -> bool:
    # letter_jumble, sentence_reordering: the same words in the same order, any case or spacing.
    return answer.lower().split() == str(hidden["answer"]).lower().split()


def _collapse_space(answer: str, hidden: Mapping[str, Any]) -> bool:
    return answer.split() == str(hidden["answer"]).split()


def _decimal_equal(answer: str, hidden: Mapping[str, Any], *, commas: bool) -> bool:
    gold = str(hidden["answer"])
    if commas:  # "1,000" is 1000: the datasets that print thousands separators accept them
        answer, gold = answer.replace(",", ""), gold.replace(",", "")
    a, g = _decimal(answer), _decimal(gold)
    return a is not None and g is not None and a == g


def _decimal_within(answer: str, hidden: Mapping[str, Any]) -> bool:
    a, g = _decimal(answer), _decimal(str(hidden["answer"]))
    tolerance = Decimal(str(hidden["tolerance"]))
    return a is not None and g is not None and abs(a - g) <= tolerance


def _number_within(answer: str, hidden: Mapping[str, Any]) -> bool:
    # number_format: the gold value is a float in the metadata, any notation within 1e-2.
    a = _decimal(answer.replace(",", ""))
    if a is None:
        return False
    return abs(float(a) - float(hidden["value"])) < float(hidden["tolerance"])


def _fraction_within(answer: str, hidden: Mapping[str, Any]) -> bool:
    # coin_flip: a probability written as a fraction or a decimal, within the tolerance.
    try:
        a = Fraction(answer.replace(",", ""))
        g = Fraction(str(hidden["answer"]).replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return False
    return abs(float(a) - float(g)) <= float(hidden["tolerance"])


def _one_of(answer: str, hidden: Mapping[str, Any]) -> bool:
    # n_queens: every valid board is listed with the task (a few dozen at most).
    return answer in hidden["accepted"]


def _json(answer: str) -> Any:
    try:
        return json.loads(answer)
    except (json.JSONDecodeError, RecursionError):
        return None


def _groups(answer: str, hidden: Mapping[str, Any]) -> bool:
    # group_anagrams: a JSON list of lists of words; order of groups and of words is free.
    def norm(value: Any) -> list[list[str]] | None:
        if not isinstance(value, list) or not all(isinstance(g, list) for g in value):
            return None
        return sorted(sorted(str(w) for w in g) for g in value)

    got = norm(_json(answer))
    return got is not None and got == norm(hidden["solution"])


def _partitions(answer: str, hidden: Mapping[str, Any]) -> bool:
    # palindrome_partitioning: a JSON list of partitions, each a list of strings; order free.
    def norm(value: Any) -> set[tuple[str, ...]] | None:
        if not isinstance(value, list) or not all(isinstance(p, list) for p in value):
            return None
        if not all(isinstance(s, str) for p in value for s in p):
            return None
        return {tuple(p) for p in value}

    got = norm(_json(answer))
    return got is not None and got == norm(hidden["solution"])


def _rows(answer: str, hidden: Mapping[str, Any]) -> bool:
    # manipulate_matrix: rows on lines, cells split by any run of spaces.
    def rows(text: str) -> list[list[str]]:
        return [line.split() for line in text.strip().split("\n")]

    return rows(answer) == rows(str(hidden["answer"]))


def _word_list(answer: str, hidden: Mapping[str, Any]) -> bool:
    # word_sorting: the words in order, separated by commas (spaces after them free).
    return [w.strip() for w in re.split(r",\s*", answer)] == list(hidden["words"])


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


_TIMES = "\u00d7"  # the multiplication sign reasoning-gym joins factors with


def _factors(answer: str, hidden: Mapping[str, Any]) -> bool:
    # prime_factorization: factors joined by a multiplication sign (U+00D7), in any order.
    def factors(text: str) -> list[int] | None:
        parts = [_int_or_none(f.strip()) for f in text.split(_TIMES) if f.strip()]
        return None if None in parts else sorted(p for p in parts if p is not None)

    got = factors(answer)
    return got is not None and got == factors(str(hidden["answer"]))


_LATEX_FRACTION = re.compile(r"\\(?:frac|dfrac)\s*{\s*(\d+)\s*}\s*{\s*(\d+)\s*}", re.IGNORECASE)


def _fraction(answer: str, hidden: Mapping[str, Any]) -> bool:
    # fraction_simplification: "a/b" or LaTeX's \frac{a}{b}, in lowest terms as given.
    cleaned = answer.strip().strip("$").strip()
    latex = _LATEX_FRACTION.match(cleaned)
    if latex:
        top, bottom = _int_or_none(latex.group(1)), _int_or_none(latex.group(2))
        if top is None or bottom is None:
            return False
        pair = (top, bottom)
    elif "/" in cleaned:
        top, bottom = (_int_or_none(p.strip()) for p in cleaned.split("/", 1))
        if top is None or bottom is None:
            return False
        pair = (top, bottom)
    else:
        return False
    return list(pair) == list(hidden["fraction"])


def _palindrome(answer: str, hidden: Mapping[str, Any]) -> bool:
    # palindrome_generation: any palindrome using exactly the given letters.
    word = answer.lower()
    return word == word[::-1] and sorted(word) == sorted(hidden["letters"])


#: The judge modes, by name: ``judge(mode, answer, hidden)`` with the extracted answer.
JUDGES: dict[str, Callable[[str, Mapping[str, Any]], bool]] = {
    "exact": _exact,
    "casefold": _casefold,
    "nospace-casefold": _nospace_casefold,
    "collapse-space": _collapse_space,
    "words-casefold": _words_casefold,
    "decimal": lambda a, h: _decimal_equal(a, h, commas=False),
    "decimal-commas": lambda a, h: _decimal_equal(a, h, commas=True),
    "decimal-within": _decimal_within,
    "number-within": _number_within,
    "fraction-within": _fraction_within,
    "one-of": _one_of,
    "anagram-groups": _groups,
    "partitions": _partitions,
    "palindrome": _palindrome,
    "rows": _rows,
    "word-list": _word_list,
    "factors": _factors,
    "fraction": _fraction,
}


def judge(mode: str, answer: str, hidden: Mapping[str, Any]) -> bool:
    """Whether the extracted ``answer`` is right under ``mode`` (:data:`JUDGES`), given the
    task's ``hidden`` data (``answer`` and what the mode reads)."""
    return JUDGES[mode](answer, hidden)
