"""What the lm tests check of a saved LoRA adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def lora_b_norm(adapter: Path) -> float:
    """The summed magnitude of the adapter's B matrices: they start at zero, so a non-zero norm
    is an update that happened."""
    from safetensors.torch import load_file

    weights = load_file(str(adapter / "adapter_model.safetensors"))
    return float(sum(w.abs().sum() for k, w in weights.items() if "lora_B" in k))


def lora_b_norm_of(model: Any) -> float:
    """:func:`lora_b_norm` of a model in memory (its LoRA B parameters)."""
    return float(sum(p.detach().abs().sum() for n, p in model.named_parameters() if "lora_B" in n))
