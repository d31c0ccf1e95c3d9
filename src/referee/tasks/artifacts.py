"""Content-addressed snapshots of repositories, kept in any fsspec file system.

A repository task does not carry its repository: it names a snapshot by digest, and the store
holds the bytes. A snapshot is a set of files (path -> bytes); its digest is the SHA-256 of a
canonical tar of them (sorted names, fixed owner, mode and time), so the same files always give
the same digest, on any machine. Reading checks the digest again: a corrupted or substituted
snapshot is an error, never a silently different task.

The store is ``file://~/.cache/referee/artifacts`` unless ``REFEREE_ARTIFACTS`` or the caller
names another fsspec URL (``s3://bucket/prefix``, ``memory://x``, ...).

>>> store = ArtifactStore("memory://referee-doc")
>>> digest = store.put_files({"pkg/__init__.py": b"", "pkg/core.py": b"X = 1\\n"})
>>> digest.startswith("sha256:")
True
>>> store.get_files(digest)["pkg/core.py"]
b'X = 1\\n'
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

import fsspec

from referee.errors import StoreError

__all__ = ["DEFAULT_STORE", "ArtifactStore", "default_store_url"]

DEFAULT_STORE = "file://" + str(Path("~/.cache/referee/artifacts").expanduser())


def default_store_url() -> str:
    """``REFEREE_ARTIFACTS`` if set, else a folder in the user's cache."""
    return os.environ.get("REFEREE_ARTIFACTS") or DEFAULT_STORE


_SHARED: dict[str, ArtifactStore] = {}
_SHARED_LOCK = threading.Lock()


def _canonical_tar(files: Mapping[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _check_name(name: str) -> None:
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise StoreError(f"snapshot file name {name!r} is not a plain relative path")


class ArtifactStore:
    """Snapshots by digest in one fsspec location; a small in-memory cache of recent reads."""

    def __init__(self, url: str | None = None, *, cache_entries: int = 8) -> None:
        self.url = (url or default_store_url()).rstrip("/")
        try:
            self.fs, self.root = fsspec.core.url_to_fs(self.url)
        except (ValueError, ImportError) as e:
            raise StoreError(
                f"cannot open artifact store {self.url!r}: {e}; use a file:// path or install "
                "the fsspec backend for that scheme"
            ) from e
        self._cache: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._cache_entries = cache_entries
        self._lock = threading.Lock()

    @classmethod
    def at(cls, url: str | None = None) -> ArtifactStore:
        """The shared store for ``url``: verifiers call this per task, and one instance per URL
        keeps its cache of recent snapshots (otherwise every verification re-reads,
        decompresses and re-hashes the repository)."""
        key = (url or default_store_url()).rstrip("/")
        with _SHARED_LOCK:
            if key not in _SHARED:
                _SHARED[key] = cls(key)
            return _SHARED[key]

    def _path(self, digest: str) -> str:
        hexd = digest.removeprefix("sha256:")
        if len(hexd) != 64 or any(c not in "0123456789abcdef" for c in hexd):
            raise StoreError(f"{digest!r} is not a snapshot digest (sha256:<64 hex digits>)")
        return f"{self.root}/snapshots/{hexd[:2]}/{hexd}.tar.gz"

    def put_files(self, files: Mapping[str, bytes | str]) -> str:
        """Store ``files`` (idempotent) and return their digest, ``sha256:<hex>``."""
        blobs = {k: v.encode() if isinstance(v, str) else bytes(v) for k, v in files.items()}
        for name in blobs:
            _check_name(name)
        tar = _canonical_tar(blobs)
        digest = "sha256:" + hashlib.sha256(tar).hexdigest()
        path = self._path(digest)
        if not self.fs.exists(path):
            self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with self.fs.open(tmp, "wb") as f:
                f.write(gzip.compress(tar, mtime=0))
            self.fs.mv(tmp, path)  # a reader never sees half a snapshot
        with self._lock:
            self._remember(digest, blobs)
        return digest

    def get_files(self, digest: str) -> dict[str, bytes]:
        """The files of snapshot ``digest``; raises :class:`StoreError` if absent or corrupt."""
        with self._lock:
            if digest in self._cache:
                self._cache.move_to_end(digest)
                return dict(self._cache[digest])
        path = self._path(digest)
        try:
            with self.fs.open(path, "rb") as f:
                tar = gzip.decompress(f.read())
        except FileNotFoundError:
            raise StoreError(
                f"snapshot {digest} is not in the artifact store {self.url}; point "
                "REFEREE_ARTIFACTS (or --store) at the store the tasks were made with"
            ) from None
        except (OSError, EOFError) as e:
            raise StoreError(f"snapshot {digest} in {self.url} is unreadable: {e}") from e
        if "sha256:" + hashlib.sha256(tar).hexdigest() != digest:
            raise StoreError(f"snapshot {digest} in {self.url} is corrupt (digest mismatch)")
        files: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(tar), mode="r") as archive:
            for member in archive.getmembers():
                _check_name(member.name)
                extracted = archive.extractfile(member)
                if not member.isfile() or extracted is None:
                    raise StoreError(f"snapshot {digest} holds a non-file entry {member.name!r}")
                files[member.name] = extracted.read()
        with self._lock:
            self._remember(digest, files)
        return dict(files)

    def _remember(self, digest: str, files: dict[str, bytes]) -> None:
        self._cache[digest] = files
        self._cache.move_to_end(digest)
        while len(self._cache) > self._cache_entries:
            self._cache.popitem(last=False)
