"""The chat template of a pretrained model's multi-turn episodes: the model's own where TRL can
render and parse its tool calls, else TRL's qwen2_5 tool template."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")


def _write_file(path: str, content: str) -> str:
    """Write a file.

    Args:
        path: where
        content: what
    """
    return ""


def test_a_template_without_tools_gets_trls_and_its_turn_tokens() -> None:
    from trl.chat_template_utils import parse_response

    from referee.experiments.lm.tool_chat import QWEN, tool_chat_template
    from tests.policy import tiny_lm

    tok = tiny_lm.tokenizer(tiny_lm.CHAT_TEMPLATE)
    model = tiny_lm.model(tok)
    n = len(tok)
    assert tool_chat_template(tok, model) == QWEN
    # the turn markers are new special tokens, the model's embeddings grew to match
    assert len(tok) == n + 2 and model.get_input_embeddings().weight.shape[0] == len(tok)
    assert (
        tok.eos_token == "<|im_end|>" and model.generation_config.eos_token_id == tok.eos_token_id
    )
    # a tool call written as plain text (no tool-tag tokens) parses after the prompt
    prefix = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}], tools=[_write_file], add_generation_prompt=True,
        tokenize=True, return_dict=False,
    )  # fmt: skip
    text = (
        '<tool_call>\n{"name": "_write_file", "arguments": {"path": "solution.py", '
        '"content": "x = 1\\n"}}\n</tool_call><|im_end|>'
    )
    ids = tok(text, add_special_tokens=False)["input_ids"]
    call = parse_response(tok, ids, prefix=prefix, tools=[_write_file])["tool_calls"][0]
    assert call["function"] == {
        "name": "_write_file", "arguments": {"path": "solution.py", "content": "x = 1\n"},
    }  # fmt: skip


def test_a_template_trl_can_parse_is_kept() -> None:
    from referee.experiments.listops.chat import qwen_template
    from referee.experiments.lm.tool_chat import OWN, tool_chat_template
    from tests.policy import tiny_lm

    tok = tiny_lm.tokenizer(qwen_template())
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    n, eos = len(tok), tok.eos_token
    assert tool_chat_template(tok) == OWN
    assert len(tok) == n and tok.eos_token == eos  # nothing changed but the parser


def test_valid_write_counts_only_a_write_that_ran() -> None:
    from referee.experiments.lm.multi_turn import valid_write

    ran = [{"role": "tool", "name": "write_file", "content": "wrote 12 bytes to solution.py"}]
    refused = [{"role": "tool", "name": "write_file", "content": "{'error': 'missing content'}"}]
    assert valid_write(ran) and not valid_write(refused) and not valid_write([])
