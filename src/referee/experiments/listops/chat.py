"""Chat token ids for a tool-calling model, built exactly as TRL's multi-turn GRPO builds them.

TRL's tool loop (``GRPOTrainer._tool_call_loop``, TRL 1.16) never re-renders a conversation:
the sequence is the prompt rendered by the chat template (tools included, generation prompt
added), then the model's own tokens up to its end-of-turn token, then the tool results as the
template renders them after an assistant turn (``_get_tool_suffix_ids``), then the model
again. Supervised demonstrations and held-out episodes built with the functions here are the
same token sequences, so fine-tuning, GRPO and evaluation all see one format:

>>> ids = prompt_ids(tok, opening, tools)                                   # doctest: +SKIP
>>> ids += assistant_ids(tok, {"role": "assistant", "content": "",          # doctest: +SKIP
...                            "tool_calls": [call("submit", {})]})
>>> ids += tool_suffix_ids(tok, [{"role": "tool", "name": "submit",         # doctest: +SKIP
...                              "content": "submitted"}])

:func:`chat_tokenizer` makes the tokenizer of the tiny model: a BPE trained here
(:func:`~referee.experiments.listops.tiny.train_tokenizer`), TRL's ``qwen2_5.jinja``
template (shipped inside the trl package) with its response parser, and the tool tokens.
Text that is the same in every sequence of a run (the rendered system block: system prompt,
tool schemas and the template's tool instructions) can be made one token of its own
(``fixed``): a model trained from scratch cannot read it anyway, and each sequence is then a
few hundred tokens shorter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "TOOL_TOKENS",
    "assistant_ids",
    "assistant_text",
    "chat_tokenizer",
    "prompt_ids",
    "qwen_template",
    "system_block",
    "tool_call",
    "tool_suffix_ids",
]

#: The tokens TRL's Qwen2.5 response parser looks for, one token each.
TOOL_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")

Tools = Sequence[dict[str, Any] | Callable[..., Any]]


def qwen_template() -> str:
    """TRL's Qwen2.5 chat template (tool calling), as shipped in the installed trl."""
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()


def chat_tokenizer(
    texts: Iterable[str], *, vocab_size: int = 1000, fixed: Sequence[str] = ()
) -> Any:
    """A BPE tokenizer trained on ``texts`` with TRL's Qwen2.5 template and tool tokens.

    ``fixed``: strings to hold as single tokens (added tokens match before BPE, longest first).
    Raises :class:`~referee.errors.ConfigError` if TRL would not accept it for tool calling.

    >>> tok = chat_tokenizer(["def solve(xs):\\n    return xs\\n"] * 8)       # doctest: +SKIP
    >>> tok.convert_tokens_to_ids("<tool_call>") != tok.unk_token_id         # doctest: +SKIP
    True
    """
    from tokenizers import AddedToken
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    from referee.errors import ConfigError
    from referee.experiments.listops.tiny import train_tokenizer

    tok = train_tokenizer(texts, vocab_size=vocab_size)
    tok.add_special_tokens({"additional_special_tokens": list(TOOL_TOKENS)})
    if fixed:
        tok.add_tokens([AddedToken(s, normalized=False, special=False) for s in fixed])
    tok.chat_template = qwen_template()
    add_response_schema(tok)  # TRL's parser of the model's tool calls
    if not supports_tool_calling(tok):
        raise ConfigError("TRL does not accept this tokenizer for tool calling (template changed?)")
    return tok


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call as chat templates (and TRL's parser) hold it: arguments as an object."""
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _ids(rendered: Any) -> list[int]:
    # apply_chat_template(tokenize=True) returns ids, or a BatchEncoding, by version and flags.
    ids = rendered["input_ids"] if not isinstance(rendered, list) else rendered
    return [int(i) for i in ids]


def prompt_ids(tok: Any, messages: Sequence[dict[str, Any]], tools: Tools) -> list[int]:
    """The opening as TRL tokenizes a conversational prompt (tools, generation prompt)."""
    return _ids(
        tok.apply_chat_template(
            list(messages), tools=list(tools) or None, add_generation_prompt=True, tokenize=True,
            return_dict=False,
        )
    )  # fmt: skip


def assistant_text(tok: Any, message: dict[str, Any]) -> str:
    """What the model writes for ``message`` after the generation prompt, end token included.

    Rendered by the template (so a tool call is written exactly as the template writes one) and
    cut after the template's generation prompt; the newline after the end token is the next
    part's (TRL's tool suffix starts after the end token)."""
    head = [{"role": "user", "content": "x"}]
    prefix = tok.apply_chat_template(head, add_generation_prompt=True, tokenize=False)
    full = tok.apply_chat_template([*head, message], tokenize=False)
    if not full.startswith(prefix):
        raise ValueError("the chat template does not write an assistant turn after its prompt")
    text = full[len(prefix) :]
    end = text.rfind(tok.eos_token)
    if end < 0:
        raise ValueError(f"the chat template ends an assistant turn without {tok.eos_token!r}")
    return str(text[: end + len(tok.eos_token)])


def assistant_ids(tok: Any, message: dict[str, Any]) -> list[int]:
    """The token ids of :func:`assistant_text`: what the model generates for ``message``."""
    return _ids(tok(assistant_text(tok, message), add_special_tokens=False)["input_ids"])


def tool_suffix_ids(tok: Any, tool_messages: Sequence[dict[str, Any]]) -> list[int]:
    """The tokens TRL inserts after an assistant turn for its tool results (``tool_messages``,
    ``{"role": "tool", "name", "content"}``): what the template renders for them, up to and
    including the next generation prompt. Mirrors ``GRPOTrainer._get_tool_suffix_ids``."""
    dummy = [
        {"role": "user", "content": "dummy"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [tool_call(tool_messages[0]["name"], {})],
        },
    ]
    prefix = _ids(tok.apply_chat_template(dummy, tokenize=True, return_dict=False))
    full = _ids(
        tok.apply_chat_template(
            [*dummy, *tool_messages], add_generation_prompt=True, tokenize=True, return_dict=False
        )
    )
    eos = [i for i, t in enumerate(prefix) if t == tok.eos_token_id]
    if eos:
        prefix = prefix[: eos[-1] + 1]
    if full[: len(prefix)] != prefix:
        raise ValueError("the chat template's tool results do not follow its assistant turn")
    return full[len(prefix) :]


def system_block(tok: Any, messages: Sequence[dict[str, Any]], tools: Tools) -> str:
    """The text the template renders between ``<|im_start|>system\\n`` and the end token for
    this opening and these tools: the same in every prompt of a run with one system prompt."""
    text = tok.apply_chat_template(
        list(messages), tools=list(tools) or None, add_generation_prompt=False, tokenize=False
    )
    start = "<|im_start|>system\n"
    if not text.startswith(start):
        raise ValueError("the chat template does not open with a system turn")
    return str(text[len(start) : text.index(tok.eos_token)])
