"""Large artifacts of a run, content-addressed, behind any fsspec URL.

Long observations and stdout, workspace tarballs and anything else too big for a database row
are written once, under their SHA-256, to ``file://<run_dir>/artifacts/`` by default or to any
fsspec URL (``memory://``, ``s3://bucket/run`` where s3fs is installed). Writing the same bytes
again is a no-op. A record keeps a small reference instead of the bytes::

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

import hashlib
import os
import re
import uuid
from collections.abc import Callable
from typing import Any

from referee.errors import StoreError

__all__ = ["ArtifactStore", "externalize", "has_refs", "internalize", "is_ref"]

REF_KEY = "$artifact"
_REF_KEYS = frozenset({REF_KEY, "sha256", "bytes"})
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def is_ref(value: Any) -> bool:
    """Whether ``value`` is an artifact reference (exactly the three reference keys)."""
    return isinstance(value, dict) and value.keys() == _REF_KEYS


class ArtifactStore:
    """Content-addressed blobs under one fsspec base URL.

    Names are ``<sha[:2]>/<sha>-<name>``: the hash makes rewriting idempotent and lets a
    reference be found again under a new base when a run folder is moved or copied.
    """

    def __init__(self, base_url: str) -> None:
        import fsspec

        self.base_url = base_url.rstrip("/")
        try:
            self._fs, self._base = fsspec.core.url_to_fs(self.base_url)
        except (ImportError, ValueError) as e:
            raise StoreError(
                f"cannot use artifact location {base_url!r}: {e}; give a file:// or memory:// "
                "URL, or install the fsspec backend for its scheme (s3fs for s3://)"
            ) from e
        self._local = "file" in _protocols(self._fs)

    def put(self, name: str, data: bytes) -> str:
        """Store ``data`` (if not there yet) and return its URL."""
        digest = hashlib.sha256(data).hexdigest()
        rel = f"{digest[:2]}/{digest}-{_SAFE_NAME.sub('_', os.path.basename(name)) or 'blob'}"
        path = f"{self._base}/{rel}"
        try:
            if not self._fs.exists(path):
                if self._local:
                    _write_local(path, data)
                else:
                    # Object stores (and memory://) replace an object in one put: a reader
                    # never sees half of it, so no temporary name is needed.
                    self._fs.pipe_file(path, data)
        except OSError as e:
            raise StoreError(
                f"cannot write artifact {name!r} to {self.base_url}: {e}; check that the "
                "location exists, is writable and has space"
            ) from e
        return f"{self.base_url}/{rel}"

    def get(self, url: str, sha256: str | None = None) -> bytes:
        """The bytes at ``url``; checked against ``sha256`` when given.

        The blob is looked for under this store's base first (same content name), then at the
        URL itself, so records survive the run folder being moved.
        """
        rel = "/".join(url.rstrip("/").split("/")[-2:])
        data = _try(lambda: self._fs.cat_file(f"{self._base}/{rel}"))
        if data is None:
            data = _try(lambda: _read_url(url))
        if data is None:
            raise StoreError(
                f"artifact {url} is missing (looked under {self.base_url} too); restore the "
                "run's artifacts folder, or open the store with artifacts= where they now are"
            )
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(
                f"artifact {url} does not match its SHA-256 {sha256[:12]}: it was altered or "
                "truncated; restore it from a copy of the run"
            )
        return bytes(data)

    def ref(self, text: str, name: str = "text") -> dict[str, Any]:
        """Store a string's UTF-8 bytes and return the reference that replaces it."""
        data = text.encode("utf-8")
        url = self.put(name, data)
        return {REF_KEY: url, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


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


def _try(read: Callable[[], Any]) -> bytes | None:
    try:
        return bytes(read())
    except (OSError, ValueError, ImportError):  # missing, or a scheme with no backend here
        return None


def _read_url(url: str) -> bytes:
    import fsspec

    with fsspec.open(url, "rb") as f:
        return bytes(f.read())


def _protocols(fs: Any) -> tuple[str, ...]:
    p = fs.protocol
    return (p,) if isinstance(p, str) else tuple(p)


def _write_local(path: str, data: bytes) -> None:
    # A temporary name, fsync, then rename: a process killed mid-write leaves a stray temporary
    # file, never a truncated blob under the content name (which ``exists`` would then trust).
    # The rename is fsynced too, so a committed record never outlives the blob it points to.
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
