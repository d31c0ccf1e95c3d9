"""The prompt a small model trained here sees: a function task's description, nothing else.

A model trained from scratch on a CPU pays for every token, so instead of the whole code
prompt (signature, docstring quotes, the family's fixed preamble) it is given the docstring's
words on one line, and it answers with the function's body. The verifier still judges
``code_prompt + body``, exactly as for any other solution.

>>> from referee.tasks.procedural import generate
>>> compact_prompt(generate("list-ops", difficulty=0.0, seed=3).payload["code_prompt"])
'negate each number; then return the largest, or 0 if none is left.\\n'
"""

from __future__ import annotations

import re

__all__ = ["compact_prompt"]

_DOC = re.compile(r'"""(.*?)"""', re.S)
_PREAMBLE = "Given a list of integers xs, "


def compact_prompt(code_prompt: str) -> str:
    m = _DOC.search(code_prompt)
    text = " ".join((m.group(1) if m else code_prompt).split())
    if text.startswith(_PREAMBLE):
        text = text[len(_PREAMBLE) :]
    return text + "\n"
