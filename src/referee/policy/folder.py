"""What makes a folder a model folder (``save_pretrained``'s output), told without loading it.

``referee eval --policy local:PATH`` and ``referee train --model`` / ``--sft-checkpoint`` take
a folder that transformers loads with ``from_pretrained``. Given anything else, transformers
takes the path for a hub id and retries the network, or fails deep in the tokenizer's loading
after minutes of work. :func:`model_folder_problem` says in a second what is wrong, and names
the model folders inside (a run folder's ``model-sft`` and ``model-rl``), so the message names
the fix.

>>> model_folder_problem("/no/such/folder")
'/no/such/folder does not exist'
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["model_folder_problem"]

#: Files of a saved tokenizer, any one of which ``AutoTokenizer.from_pretrained`` starts from.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def _is_model_config(path: Path) -> bool:
    """Whether ``path`` is a transformers model config (a JSON object with ``model_type``)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "model_type" in data


def _has_weights(folder: Path) -> bool:
    patterns = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json")
    return any(next(folder.glob(p), None) is not None for p in patterns)


def _models_inside(folder: Path) -> list[Path]:
    """The model folders directly inside ``folder`` (a run folder's model-sft, model-rl)."""
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    return [p for p in children if _why_not(p) is None]


def _why_not(folder: Path) -> str | None:
    """What the folder ``folder`` lacks to be a model folder (None: nothing); not recursive."""
    config = folder / "config.json"
    if not config.is_file():
        return "it has no config.json"
    if not _is_model_config(config):
        return "its config.json is not a model's: no model_type"
    if not _has_weights(folder):
        return "it has no weights (*.safetensors, pytorch_model*.bin)"
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return f"it has no tokenizer ({', '.join(TOKENIZER_FILES)})"
    return None


def model_folder_problem(value: str | Path) -> str | None:
    """None when ``value`` is a model folder with its tokenizer; else what is wrong, in words
    that name the fix (a model folder inside it, where there is one)."""
    folder = Path(value).expanduser()
    if not folder.exists():
        return f"{value} does not exist"
    if not folder.is_dir():
        return f"{value} is a file, not a model folder"
    why = _why_not(folder)
    if why is None:
        return None
    inside = _models_inside(folder)
    if inside:
        names = " or ".join(str(p) for p in inside)
        return f"{value} is not a model folder ({why}) but holds model folders: pass {names}"
    return f"{value} is not a model folder ({why}); give a folder saved with save_pretrained"
