"""Reading an answer out of what a model wrote: code for function tasks, a diff for patches,
a program in a language-tagged block for program tasks.

Models answer in many shapes: a fenced block, the raw body, the whole function again with its
signature, a module with helpers. The function verifier takes a *completion*, the text that
continues the task's code prompt (``code_prompt + completion`` is the program), so
:func:`to_completion` turns each shape into one:

>>> prompt = "def solve(xs):\\n    'Sum them.'\\n"
>>> to_completion(prompt, "    return sum(xs)\\n", "solve")       # a body: as it is
'    return sum(xs)\\n'
>>> to_completion(prompt, prompt + "    return sum(xs)\\n", "solve")   # the prompt repeated
'    return sum(xs)\\n'
>>> to_completion(prompt, "return sum(xs)", "solve")            # an unindented body
'    return sum(xs)\\n'
>>> to_completion(prompt, "def solve(xs):\\n    return sum(xs)\\n", "solve")[:11]
'\\ndef solve('

The last shape redefines the function after the prompt's own definition (whose body is its
docstring, so the prompt alone is valid Python): the later definition wins, exactly as if the
model had written the body.

>>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nDone.")
'print(1)\\n'
>>> extract_diff("```diff\\n--- a/x.py\\n+++ b/x.py\\n@@ -1 +1 @@\\n-a\\n+b\\n```")[:9]
'--- a/x.p'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.tasks.model import Task

__all__ = [
    "answer_for",
    "extract_code",
    "extract_diff",
    "message_text",
    "program_answer",
    "strip_end_tokens",
    "text_answer",
    "to_completion",
]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_DIFF_START = re.compile(r"^(?:diff --git |--- )", re.M)
# A program's block: fences at the start of a line, closed by the same fence (or the end).
_PROGRAM_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S
)


def message_text(message: dict[str, object]) -> str:
    """An assistant message's text; ``content`` may be a string, None or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def extract_code(text: str, *, require_fence: bool = False) -> str | None:
    """The last ```python (or bare ```) block of ``text``; else the text, or None if required.

    The *last* block, because models that reason first tend to put the final version last. An
    unterminated block (the completion ran out of tokens) counts up to the end.
    """
    blocks: list[tuple[str, str]] = [(m[1].lower(), m[2]) for m in _FENCE.finditer(text)]
    python = [b for lang, b in blocks if lang in ("python", "py", "python3")]
    bare = [b for lang, b in blocks if lang == ""]
    chosen = python or bare
    if chosen:
        return chosen[-1]
    return None if require_fence else text


def extract_diff(text: str) -> str | None:
    """A unified diff in ``text``: a ```diff/```patch block, or from the first header on.

    None when there is no ``---``/``+++``/``@@`` structure at all.
    """
    for m in _FENCE.finditer(text):
        lang, body = m[1], m[2]
        if lang.lower() in ("diff", "patch", "") and _looks_like_diff(body):
            return body if body.endswith("\n") else body + "\n"
    start = _DIFF_START.search(text)
    if start and _looks_like_diff(text[start.start() :]):
        body = text[start.start() :]
        return body if body.endswith("\n") else body + "\n"
    return None


def program_answer(text: str, *, require_fence: bool = False) -> str | None:
    """A program task's answer in ``text``: the last fenced block tagged with a language the
    program verifier knows (```` ```cpp ````, ```` ```py ````, ...), fenced again with its tag,
    so the verifier judges that block in that language whatever prose or other blocks come
    before it. Without such a block: the text as it is (the verifier then reads its first
    block's tag, or bare code as Python), or None if ``require_fence``; None when no code.

    >>> program_answer("Idea:\\n```text\\n3 4\\n```\\nCode:\\n```c++\\nint main(){}\\n```\\n")
    '```c++\\nint main(){}\\n```\\n'
    """
    from referee.verify.program.answer import normalise_language

    blocks = [
        (m[2], m[3]) for m in _PROGRAM_FENCE.finditer(text) if normalise_language(m[2] or "-")
    ]
    if not blocks:
        if require_fence or not text.strip():
            return None
        return text
    tag, code = blocks[-1]
    if not code.strip():
        return None
    code = code if code.endswith("\n") else code + "\n"
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", code)), default=0))
    return f"{fence}{tag}\n{code}{fence}\n"


def _looks_like_diff(text: str) -> bool:
    return bool(
        re.search(r"^--- ", text, re.M)
        and re.search(r"^\+\+\+ ", text, re.M)
        and re.search(r"^@@ ", text, re.M)
    )


def to_completion(code_prompt: str, code: str, entry_point: str) -> str:
    """The completion (text after ``code_prompt``) that ``code`` stands for; see the module."""
    if code.startswith(code_prompt):
        return code[len(code_prompt) :]
    stripped = code.strip("\n")
    if code_prompt.strip() and stripped.startswith(code_prompt.strip()):
        return stripped[len(code_prompt.strip()) :].lstrip("\n") + "\n"
    if re.search(rf"^(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", code, re.M):
        return "\n" + code if code.endswith("\n") else "\n" + code + "\n"
    lines = stripped.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    if first and not first[0].isspace():
        # A body written flush left: it belongs inside the function.
        return "".join(f"    {ln}\n" if ln.strip() else "\n" for ln in lines)
    return code if code.endswith("\n") else code + "\n"


# Special tokens a tokenizer's decode keeps at the end of a response (skip_special_tokens=False).
_TOKEN = (
    r"(?:<\|[A-Za-z0-9_.:-]{1,40}\|>|</s>|<eos>|<end_of_turn>"
    r"|<\uff5cend\u2581of\u2581sentence\uff5c>)"  # DeepSeek end of sentence
)
_END_TOKENS = re.compile(rf"{_TOKEN}(?:\s*{_TOKEN})*\s*\Z")
_END_TAIL = 512


def strip_end_tokens(text: str) -> str:
    """``text`` without the end-of-turn special tokens a decode left at its end.

    >>> strip_end_tokens("    return 1\\n<|im_end|><|endoftext|>")
    '    return 1\\n'
    """
    start = max(0, len(text) - _END_TAIL)  # only the end: no scan of a long hostile text
    match = _END_TOKENS.search(text, start)
    return text if match is None else text[: match.start()]


def text_answer(
    text: str,
    *,
    kind: str,
    code_prompt: str = "",
    entry_point: str = "",
    final_only: bool = False,
) -> str | None:
    """The answer a model's plain text gives to a task of ``kind``, or None: the one rule every
    reader of raw model text uses (single-turn episodes, trainers' reward routes).

    A function task's answer is its code (the last fenced block, else the raw text unless
    ``final_only``) turned into a completion of ``code_prompt``; a program task's is its last
    block tagged with a language, re-fenced with the tag (:func:`program_answer`); a repository
    task's is its diff (else the raw text unless ``final_only``). End-of-turn tokens are
    dropped first.
    ``final_only``: only a fenced block or a diff counts (multi-turn, where prose is talk).

    >>> text_answer("```python\\nreturn 1\\n```<|im_end|>", kind="function",
    ...             code_prompt="def f():\\n    'One.'\\n", entry_point="f")
    '    return 1\\n'
    """
    text = strip_end_tokens(text)
    if kind == "function":
        code = extract_code(text, require_fence=final_only)
        if code is None or not code.strip():
            return None
        return to_completion(code_prompt, code, entry_point)
    if kind == "program":
        return program_answer(text, require_fence=final_only)
    diff = extract_diff(text)
    if diff is None and not final_only:
        return text
    return diff


def answer_for(task: Task, text: str) -> str:
    """The answer the verifier judges for ``task`` when a model wrote the plain text ``text``
    (:func:`text_answer`, as a single-turn episode reads it): a function task's completion, a
    program task's last language-tagged block with its tag (else the text), a repository
    task's diff (else the text), the text for other kinds; "" when it holds no code.
    What every trainer's reward route uses (the reward protocols of ``referee serve``, veRL's
    ``compute_score``)."""
    from referee.tasks.kinds import TaskKind

    if task.kind == TaskKind.FUNCTION:
        answer = text_answer(
            text,
            kind=task.kind.value,
            code_prompt=str(task.payload.get("code_prompt", "")),
            entry_point=str(task.payload.get("entry_point", "")),
        )
        return answer or ""
    if task.kind.is_repository or task.kind == TaskKind.PROGRAM:
        return text_answer(text, kind=task.kind.value) or ""
    return strip_end_tokens(text)
