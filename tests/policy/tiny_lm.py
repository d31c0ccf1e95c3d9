"""A tiny random causal LM and a tokenizer trained here, so no test downloads anything."""

from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

CORPUS = [
    "user: What is 6 times 7?\nassistant: 42",
    "system: You are terse.\nuser: add 2 and 3\nassistant: 5",
    "def add(a, b):\n    return a + b\n",
    'tool: {"name": "multiply", "arguments": {"a": 6, "b": 7}}',
    "hello world, the quick brown fox jumps over the lazy dog",
]

CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] or '' }}"
    "{% for c in m.get('tool_calls') or [] %}[call {{ c['function']['name'] }} "
    "a={{ c['function']['arguments']['a'] }}]{% endfor %}</s>\n{% endfor %}"
    "{% if tools %}<s>tools {{ tools | length }}</s>\n{% endif %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}"
)


def tokenizer(chat_template: str | None = None) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<unk>", "<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 10, trainer)
    out = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
    )
    if chat_template:
        out.chat_template = chat_template
    return out


def model(
    tok: PreTrainedTokenizerFast, seed: int = 0, max_positions: int = 512
) -> LlamaForCausalLM:
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()
