"""``policy_from_spec``: a policy from one command-line string.

Accepted forms::

    openai:http://host:8000/v1#MODEL    an OpenAI-compatible server (vLLM, SGLang...) and the
                                        served model's name; the key, if any, from OPENAI_API_KEY
    local:PATH[#DEVICE]                 a transformers model folder (save_pretrained's), a
                                        .gguf file (or a folder holding one), or pkg:MODULE
                                        (an installed package's folder holding a .gguf), on
                                        DEVICE (auto: CUDA if present, else cpu; see
                                        referee.policy.device); never a hub id: nothing is
                                        downloaded
    scripted:TEXT                       answers TEXT on every turn (smoke tests)
    scripted:@FILE.json                 a JSON list of replies, one per turn (text or messages)

>>> policy_from_spec("scripted:42").name
'scripted'
>>> policy_from_spec("openai:http://localhost:8000/v1#qwen").url
'http://localhost:8000/v1/chat/completions'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.optional import require_extra
from referee.policy.base import Policy
from referee.policy.folder import locate_model

__all__ = ["FORMS", "policy_from_spec"]

FORMS = (
    "openai:http://HOST:PORT/v1#MODEL",
    "local:PATH[#DEVICE]",
    "scripted:TEXT",
    "scripted:@FILE.json",
)


def _bad(spec: str, why: str) -> ConfigError:
    return ConfigError(f"policy spec {spec!r}: {why}; accepted forms: {', '.join(FORMS)}")


def policy_from_spec(spec: str, *, device: str | None = None, adapter: str | None = None) -> Policy:
    """Build the policy that ``spec`` names (see the module docstring for the forms).

    ``device`` (``auto``, ``cpu``, ``cuda``) is where a ``local:`` model runs, unless the spec
    names one after ``#``; ``adapter``, a PEFT adapter folder put on a ``local:`` model."""
    if adapter is not None and not spec.startswith("local:"):
        raise _bad(spec, "an adapter goes on a local: model only")
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise _bad(spec, "expected KIND:VALUE")
    if kind == "openai":
        url, _, model = rest.partition("#")
        if not model:
            raise _bad(spec, "the model's name is missing after '#'")
        from referee.policy.openai_compat import OpenAIPolicy

        return OpenAIPolicy(url, model, api_key=os.environ.get("OPENAI_API_KEY") or None)
    if kind == "local":
        path, _, named = rest.partition("#")
        source = locate_model(path)
        if isinstance(source, str):  # before transformers takes it for a hub id and goes online
            raise _bad(spec, source)
        require_extra("train", needed_for="a local: policy")
        from referee.policy.local import TransformersPolicy  # imports torch: only when asked

        options: dict[str, Any] = {"adapter": adapter} if adapter is not None else {}
        return TransformersPolicy(
            str(source.folder),
            device=named or device,
            gguf_file=source.gguf_file,
            name=f"local:{source.label}",
            **options,
        )
    if kind == "scripted":
        from referee.policy.scripted import Reply, ScriptedPolicy

        if not rest.startswith("@"):
            return ScriptedPolicy(lambda messages, tools: rest)
        file = Path(rest[1:])
        try:
            replies = json.loads(file.read_text())
        except (OSError, ValueError) as e:
            raise _bad(spec, f"cannot read a JSON list from {file}: {e}") from e
        if not isinstance(replies, list) or not replies:
            raise _bad(spec, f"{file} must hold a non-empty JSON list of replies")
        if not all(isinstance(r, str | dict) for r in replies):
            raise _bad(spec, f"each reply in {file} must be a string or a message object")
        script: list[Reply] = list(replies)
        return ScriptedPolicy(script)
    raise _bad(spec, f"unknown kind {kind!r}")
