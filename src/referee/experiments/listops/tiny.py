"""A small causal language model and its tokenizer, made locally: nothing is downloaded.

The embedded experiment trains a model from scratch on a CPU, so both parts are built here:

* a byte-level BPE tokenizer trained with Hugging Face ``tokenizers`` on the experiment's own
  texts. Newlines are pre-tokens of their own, so a prompt that ends with a newline tokenises to
  an exact prefix of prompt + completion (trainers mask the prompt by that prefix);
* a Llama-style decoder (``transformers.LlamaForCausalLM``), by default hidden 96, 3 layers,
  4 heads, feed-forward 384, tied embeddings: about 0.5M parameters, which fine-tunes at about
  1.7 steps per second (batch 32) on one core.

>>> tok = train_tokenizer(["def solve(xs):\\n    return sum(xs)\\n"] * 10)  # doctest: +SKIP
>>> model = tiny_model(tok, TinyConfig(hidden=32, layers=2))               # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["EOS", "PAD", "TinyConfig", "tiny_model", "train_tokenizer"]

PAD, EOS = "<|endoftext|>", "<|im_end|>"
SPECIALS = [PAD, "<|im_start|>", EOS]


@dataclass(frozen=True)
class TinyConfig:
    hidden: int = 96
    layers: int = 3
    heads: int = 4
    ffn: int = 384
    max_positions: int = 256


def train_tokenizer(texts: Iterable[str], *, vocab_size: int = 1000) -> Any:
    """A ``PreTrainedTokenizerFast`` trained on ``texts`` (byte-level BPE, left padding)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split("\n", behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok, eos_token=EOS, pad_token=PAD, padding_side="left"
    )


def tiny_model(tokenizer: Any, config: TinyConfig = TinyConfig(), *, seed: int = 0) -> Any:
    """A randomly initialised ``LlamaForCausalLM`` sized by ``config`` for ``tokenizer``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden,
        intermediate_size=config.ffn,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        num_key_value_heads=config.heads,
        max_position_embeddings=config.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(cfg)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
