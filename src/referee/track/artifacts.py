"""Artifact references in a run's records: long strings moved out to the artifact store.

Long observations and stdout, and anything else too big for a database row, are written once,
under their SHA-256, to the :class:`~referee.tasks.artifacts.ArtifactStore` (referee's one
content-addressed store; ``file://<run_dir>/artifacts/`` for a track store by default, or any
fsspec URL). A record keeps a small reference instead of the bytes::

    {"$artifact": "file:///runs/r1/artifacts/ab/ab12...-text", "sha256": "ab12...", "bytes": 81234}

and :func:`internalize` puts the bytes back where the reference was.

>>> store = ArtifactStore("memory://referee-doctest")
>>> url = store.put("hello.txt", b"hello")
>>> store.get(url)
b'hello'
>>> record = externalize({"stdout": "x" * 10}, store, threshold=4)
>>> record["stdout"]["bytes"], internalize(record, store)["stdout"] == "x" * 10
(10, True)
"""

from __future__ import annotations

from typing import Any

from referee.tasks.artifacts import REF_KEY, ArtifactStore

__all__ = ["REF_KEY", "ArtifactStore", "externalize", "has_refs", "internalize", "is_ref"]

_REF_KEYS = frozenset({REF_KEY, "sha256", "bytes"})


def is_ref(value: Any) -> bool:
    """Whether ``value`` is an artifact reference (exactly the three reference keys)."""
    return isinstance(value, dict) and value.keys() == _REF_KEYS


def externalize(value: Any, store: ArtifactStore, threshold: int) -> Any:
    """A copy of a JSON value with every string over ``threshold`` UTF-8 bytes stored away.

    Only strings move (observations, stdout, long messages): they are what grows without bound;
    numbers and keys stay inline so the record remains queryable.
    """
    if isinstance(value, str):
        # len(str) <= len(utf-8) <= 4 * len(str): skip the encode for short strings.
        if len(value) * 4 > threshold and len(value.encode("utf-8")) > threshold:
            return store.ref(value)
        return value
    if isinstance(value, dict):
        return {k: externalize(v, store, threshold) for k, v in value.items()}
    if isinstance(value, list):
        return [externalize(v, store, threshold) for v in value]
    return value


def internalize(value: Any, store: ArtifactStore) -> Any:
    """The inverse of :func:`externalize`: references replaced by their (checked) text."""
    if is_ref(value):
        return store.get(value[REF_KEY], value["sha256"]).decode("utf-8")
    if isinstance(value, dict):
        return {k: internalize(v, store) for k, v in value.items()}
    if isinstance(value, list):
        return [internalize(v, store) for v in value]
    return value


def has_refs(value: Any) -> bool:
    """Whether a JSON value holds any artifact reference (to skip the walk when none)."""
    if is_ref(value):
        return True
    if isinstance(value, dict):
        return any(has_refs(v) for v in value.values())
    if isinstance(value, list):
        return any(has_refs(v) for v in value)
    return False
