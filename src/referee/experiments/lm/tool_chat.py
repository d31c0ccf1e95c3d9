"""The chat template a pretrained model's multi-turn episodes are written in.

TRL's tool loop (``GRPOTrainer`` with an ``environment_factory``, TRL 1.16) renders the tools
into the prompt with the tokenizer's chat template and reads the model's tool calls back with
a response parser (``trl.chat_template_utils.add_response_schema``, which knows a fixed list
of templates). So the rule is:

* the model's **own** template, when TRL accepts it for tool calling
  (``supports_tool_calling``: it renders the tool call's name and arguments and the tool's
  result) *and* a parser for it exists (already on the tokenizer, or one TRL knows);
* otherwise **TRL's qwen2_5 tool template** (``trl/chat_templates/qwen2_5.jinja``, the one the
  list-ops experiment uses) is installed on the tokenizer, with its response parser. Its turn
  markers ``<|im_start|>`` and ``<|im_end|>`` become special tokens where the vocabulary lacks
  them (the model's embeddings grow to match: new rows, untrained) and ``<|im_end|>`` becomes
  the end token (generation stops there). The tool tags (``<tool_call>`` ...) are left as the
  model's ordinary text: TRL's parser reads them from the text after the prompt.

SmolLM2-Instruct's template is ChatML without tools, so it gets the second (its vocabulary has
both turn markers already). Which one a run used is logged and recorded in its summary
(``chat_template``).

>>> tok = AutoTokenizer.from_pretrained(folder)                             # doctest: +SKIP
>>> tool_chat_template(tok, model)                                          # doctest: +SKIP
'trl-qwen2_5'
"""

from __future__ import annotations

from typing import Any

from referee.errors import ConfigError

__all__ = ["OWN", "QWEN", "tool_chat_template"]

OWN = "model"
QWEN = "trl-qwen2_5"
TURN_TOKENS = ("<|im_start|>", "<|im_end|>")


def _has_parser(tok: Any) -> bool:
    return any(getattr(tok, a, None) is not None for a in ("response_template", "response_schema"))


def tool_chat_template(tok: Any, model: Any = None) -> str:
    """Make ``tok`` render and parse tool calls (see the module docstring); returns which
    template it now has: :data:`OWN` or :data:`QWEN`. ``model``'s embeddings grow where turn
    tokens had to be added (required then)."""
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    from referee.experiments.listops.chat import qwen_template

    if tok.chat_template is not None and supports_tool_calling(tok):
        if not _has_parser(tok):
            add_response_schema(tok)  # sets one only for the templates TRL knows
        if _has_parser(tok):
            return OWN
    tok.chat_template = qwen_template()
    vocab = tok.get_vocab()
    missing = [t for t in TURN_TOKENS if t not in vocab]
    if missing:
        if model is None:
            raise ConfigError(f"the tokenizer lacks {missing}: pass the model to resize it")
        tok.add_special_tokens({"additional_special_tokens": missing})
        model.resize_token_embeddings(len(tok))
    tok.eos_token = TURN_TOKENS[1]
    if model is not None:
        model.config.eos_token_id = tok.eos_token_id
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.eos_token_id = tok.eos_token_id
            model.generation_config.pad_token_id = tok.pad_token_id
    tok.response_template = tok.response_schema = None  # the old template's parser, if any
    add_response_schema(tok)
    if not (supports_tool_calling(tok) and _has_parser(tok)):
        raise ConfigError(
            "TRL does not accept TRL's own qwen2_5 template on this tokenizer for tool calling"
        )
    return QWEN
