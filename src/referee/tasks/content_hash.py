"""A task's content hash from its plain data: what ``Task.compute_hash`` covers, computable
without the task model (and so without pydantic), as a one-shot ``referee verify`` checks the
first sample's task before its libraries load (:mod:`referee.verify.first`).

>>> len(content_hash("code", [{"role": "user", "content": "p"}], {}, {}, "code", "function"))
64
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["content_hash"]


def content_hash(
    domain: str,
    prompt: list[dict[str, Any]],
    payload: dict[str, Any],
    hidden: dict[str, Any],
    answer_format: str,
    kind: str | None = None,
) -> str:
    """The sha256 of the canonical JSON of the task's content (``prompt``: each message as
    ``{"role", "content"}``). ``kind`` is covered from schema version 2; None (version 1)
    leaves it out, so the hashes of old files stay what they were."""
    body: dict[str, Any] = {
        "domain": domain,
        "prompt": prompt,
        "payload": payload,
        "hidden": hidden,
        "answer_format": answer_format,
    }
    if kind is not None:
        body["kind"] = str(kind)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
