"""What the lm tests check of a saved LoRA adapter."""

from __future__ import annotations

from pathlib import Path


def lora_b_norm(adapter: Path) -> float:
    """The summed magnitude of the adapter's B matrices: they start at zero, so a non-zero norm
    is an update that happened."""
    from safetensors.torch import load_file

    weights = load_file(str(adapter / "adapter_model.safetensors"))
    return float(sum(w.abs().sum() for k, w in weights.items() if "lora_B" in k))
