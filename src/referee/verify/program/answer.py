"""Which language an answer is written in, and its code.

A program task's answer is the model's text: prose around a fenced code block, or bare code.
The code is the last fenced block tagged with a language this verifier knows (```` ```cpp ````,
```` ```py ````, ...): a reasoning model's scratch blocks and its example outputs (```` ```text
````) come before its answer. That is the rule :func:`referee.envs.answers.program_answer` (the
environments' and trainers' reading) follows, and the one function tasks use. Without such a
block, the first fenced block (whose tag, if any, must name a language). The language is the
sample's ``language`` field when the caller gives one, otherwise the block's tag. Bare code with
no fence and no language is Python where the task allows Python. A missing or unknown language is an
:class:`AnswerError`, which the verifier turns into a per-sample error verdict.

>>> parse_answer("Here:\\n```c++\\nint main(){}\\n```\\n").language
'cpp'
>>> parse_answer("print(1)").language
'python'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from referee.sandbox.toolchains import LANGUAGES

__all__ = [
    "ALIASES",
    "Answer",
    "AnswerError",
    "normalise_language",
    "parse_answer",
    "with_language",
]

#: Every name a language goes by (fence tags, sample fields), lower case.
ALIASES = {
    "python": "python",
    "python3": "python",
    "py": "python",
    "py3": "python",
    "c": "c",
    "cpp": "cpp",
    "c++": "cpp",
    "cc": "cpp",
    "cxx": "cpp",
    "java": "java",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "go": "go",
    "golang": "go",
    "rust": "rust",
    "rs": "rust",
}

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_OPEN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)\n(.*)\Z", re.M | re.S)


class AnswerError(ValueError):
    """The answer names no language, or one the task does not allow."""


@dataclass(frozen=True)
class Answer:
    language: str
    code: str


def normalise_language(name: str) -> str | None:
    """The canonical name (``"cpp"``) of a language alias (``"C++"``), or None if unknown."""
    return ALIASES.get(name.strip().lower())


def _tag(info: str) -> str:
    words = info.strip().split()
    return words[0] if words else ""


def _answer_block(text: str) -> tuple[str, str] | None:
    """(tag, code) of the answer's block (see the module): the last block tagged with a known
    language, else the first fenced block; an unclosed last fence runs to the end."""
    blocks = [(_tag(m.group(2)), m.group(3)) for m in _FENCE.finditer(text)]
    tagged = [b for b in blocks if normalise_language(b[0] or "-")]
    if tagged:
        return tagged[-1]
    if blocks:
        return blocks[0]
    m = _OPEN_FENCE.search(text)
    return None if m is None else (_tag(m.group(2)), m.group(3))


def parse_answer(
    text: str, *, language: str | None = None, allowed: Sequence[str] | None = None
) -> Answer:
    """The language and code of an answer; an :class:`AnswerError` saying what is wrong."""
    allowed = tuple(allowed) if allowed else LANGUAGES
    block = _answer_block(text)
    code = block[1] if block is not None else text
    if language is not None:
        lang = normalise_language(language)
        if lang is None:
            raise AnswerError(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
    elif block is not None:
        tag = block[0]
        if not tag:
            raise AnswerError(
                "the code block has no language tag; write ```python, ```cpp, ```java, ... "
                "or give the sample a 'language'"
            )
        lang = normalise_language(tag)
        if lang is None:
            raise AnswerError(f"unknown language {tag!r} in the code block's tag")
    elif "python" in allowed:
        lang = "python"
    else:
        raise AnswerError(
            "no language: the answer has no fenced code block and no 'language', and this task "
            "does not accept Python"
        )
    if lang not in allowed:
        raise AnswerError(f"language {lang!r} is not allowed here (allowed: {', '.join(allowed)})")
    if not code.strip():
        raise AnswerError("the answer holds no code")
    return Answer(language=lang, code=code)


def with_language(completion: str, language: str) -> str:
    """The answer ``completion`` with its language stated: its code (the answer block's, or all
    of it) in a block tagged ``language``, which :func:`parse_answer` reads back. This is
    how a sample's ``language`` field travels with its completion.

    >>> parse_answer(with_language("int main(){}", "c")).language
    'c'
    """
    block = _answer_block(completion)
    code = block[1] if block is not None else completion
    longest = max((len(m) for m in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * (longest + 1)
    tag = language.strip().replace("`", "").split()[0] if language.strip() else "none"
    return f"{fence}{tag}\n{code}{'' if code.endswith(chr(10)) else chr(10)}{fence}\n"
