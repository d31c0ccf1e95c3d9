"""``ArtifactStore``: referee's one content-addressed store, in any fsspec file system.

It holds two shapes of content, both named by their SHA-256 so that writing the same content
again is a no-op and a read is checked against its name:

* **file-set snapshots** (``put_files`` / ``get_files``): a repository task does not carry its
  repository: it names a snapshot by digest, and the store holds the bytes. A snapshot is a set
  of files (path -> bytes); its digest is the SHA-256 of a canonical tar of them (sorted names,
  fixed owner, mode and time), so the same files always give the same digest, on any machine.
  Reading checks the digest again: a corrupted or substituted snapshot is an error, never a
  silently different task. Stored under ``snapshots/``.
* **blobs** (``put`` / ``get`` / ``ref``): long observations and stdout, workspace tarballs and
  anything else of a run too big for a database row, stored under ``<sha[:2]>/<sha>-<name>``.
  The track store keeps them in ``file://<run_dir>/artifacts/`` and puts references to them in
  its records (:mod:`referee.track.artifacts`).

The store is ``file://~/.cache/referee/artifacts`` unless ``REFEREE_ARTIFACTS`` or the caller
names another fsspec URL (``s3://bucket/prefix``, ``memory://x``, ...). It lives here, low in
the layering (it imports nothing of referee but its errors and :mod:`referee.storage`), so
that tasks, verifiers and the track store all share it. Writes are whole or nothing, on any
backend (:func:`referee.storage.fs_write`).

>>> store = ArtifactStore("memory://referee-doc")
>>> digest = store.put_files({"pkg/__init__.py": b"", "pkg/core.py": b"X = 1\\n"})
>>> digest.startswith("sha256:")
True
>>> store.get_files(digest)["pkg/core.py"]
b'X = 1\\n'
>>> store.get(store.put("hello.txt", b"hello"))
b'hello'
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import tarfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import fsspec

from referee.errors import ConfigError, StoreError
from referee.optional import require_fsspec_backend
from referee.storage import fs_exists, fs_read, fs_write, is_url, read_bytes

__all__ = [
    "DEFAULT_STORE",
    "REF_KEY",
    "ArtifactStore",
    "SnapshotMissingError",
    "default_store_url",
    "task_snapshot",
]

#: The key of a blob reference in a record: ``{"$artifact": url, "sha256": hex, "bytes": n}``.
REF_KEY = "$artifact"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")

DEFAULT_STORE = "file://" + str(Path("~/.cache/referee/artifacts").expanduser())


def default_store_url() -> str:
    """``REFEREE_ARTIFACTS`` if set, else a folder in the user's cache."""
    return os.environ.get("REFEREE_ARTIFACTS") or DEFAULT_STORE


def store_url(url: str | None = None) -> str:
    """The store's URL as tasks record it: a plain path (``--store store``) becomes the
    absolute ``file://`` URL of that folder, so that the tasks name the same store when they
    are verified from another folder; URLs are kept as given (no trailing ``/``)."""
    url = (url or default_store_url()).rstrip("/")
    if is_url(url):
        return url
    # Not Path.as_uri(): fsspec does not undo its percent-encoding ("my%20store").
    return "file://" + Path(url).expanduser().resolve().as_posix()


class SnapshotMissingError(StoreError):
    """A snapshot that is not in the store looked in (as opposed to an unreadable store)."""


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
    """Snapshots and blobs by SHA-256 in one fsspec location; see the module docstring.

    Args:
        url: the fsspec URL of the store (default :func:`default_store_url`).
        cache_entries: recently read snapshots kept in memory.
    """

    def __init__(self, url: str | None = None, *, cache_entries: int = 8) -> None:
        self.url = store_url(url)
        # A scheme with no backend installed (s3:// without s3fs) is the user's to fix.
        require_fsspec_backend(self.url, option="artifact store")
        try:
            self.fs, self.root = fsspec.core.url_to_fs(self.url)
        except (ValueError, ImportError) as e:
            raise StoreError(
                f"cannot open artifact store {self.url!r}: {e}; use a file:// or memory:// URL, "
                "or install the fsspec backend for that scheme (s3fs for s3://)"
            ) from e
        self._cache: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._cache_entries = cache_entries
        self._lock = threading.Lock()

    @classmethod
    def at(cls, url: str | None = None) -> ArtifactStore:
        """The shared store for ``url``: verifiers call this per task, and one instance per URL
        keeps its cache of recent snapshots (otherwise every verification re-reads,
        decompresses and re-hashes the repository)."""
        key = store_url(url)
        with _SHARED_LOCK:
            if key not in _SHARED:
                _SHARED[key] = cls(key)
            return _SHARED[key]

    # --- blobs --------------------------------------------------------------------------------

    def put(self, name: str, data: bytes) -> str:
        """Store ``data`` (if not there yet) and return its URL.

        A blob is written whole or not at all (:func:`referee.storage.fs_write`): a partial
        object under its content name would be taken for the content (``exists`` trusts it),
        so a failed or interrupted write leaves nothing there."""
        digest = hashlib.sha256(data).hexdigest()
        rel = f"{digest[:2]}/{digest}-{_SAFE_NAME.sub('_', os.path.basename(name)) or 'blob'}"
        self._put_once(f"{self.root}/{rel}", data, f"{self.url}/{rel}")
        return f"{self.url}/{rel}"

    def _put_once(self, path: str, data: bytes, shown: str) -> None:
        # Content-addressed: what is there under the name is this content already.
        if not fs_exists(self.fs, path, shown):
            fs_write(self.fs, path, data, shown=shown, parents=True)

    def get(self, url: str, sha256: str | None = None) -> bytes:
        """The bytes at ``url``; checked against ``sha256`` when given.

        The blob is looked for under this store's location first (same content name), then at
        the URL itself, so records survive the run folder being moved.
        """
        rel = "/".join(url.rstrip("/").split("/")[-2:])
        data = _try(lambda: fs_read(self.fs, f"{self.root}/{rel}", f"{self.url}/{rel}"))
        if data is None:
            data = _try(lambda: read_bytes(url, option="artifact"))
        if data is None:
            raise StoreError(
                f"artifact {url} is missing (looked under {self.url} too); restore the "
                "run's artifacts folder, or open the store with artifacts= where they now are"
            )
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(
                f"artifact {url} does not match its SHA-256 {sha256[:12]}: it was altered or "
                "truncated; restore it from a copy of the run"
            )
        return bytes(data)

    def ref(self, text: str, name: str = "text") -> dict[str, Any]:
        """Store a string's UTF-8 bytes and return the reference that replaces it in a record."""
        data = text.encode("utf-8")
        url = self.put(name, data)
        return {REF_KEY: url, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}

    # --- file-set snapshots -------------------------------------------------------------------

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
        shown = f"{self.url}/{path.removeprefix(self.root + '/')}"
        # Whole or not at all, as a blob: a reader never sees half a snapshot.
        self._put_once(path, gzip.compress(tar, mtime=0), shown)
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
        shown = f"{self.url}/{path.removeprefix(self.root + '/')}"
        try:
            tar = gzip.decompress(fs_read(self.fs, path, shown))
        except FileNotFoundError:
            raise SnapshotMissingError(
                f"snapshot {digest} is not in the artifact store {self.url}; point "
                "REFEREE_ARTIFACTS at the store the tasks were made with (their --store)"
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


def task_snapshot(
    recorded: str | None, digest: str, store: ArtifactStore | None = None
) -> dict[str, bytes]:
    """The files of a repository task's snapshot ``digest``: from ``store`` when the caller
    gives one; else from the store the task recorded (``payload.repo.store``) and, where that
    store lacks it (moved, or recorded as a path relative to another folder by an older
    referee), from ``REFEREE_ARTIFACTS``'s store, as the error advises."""
    if store is not None:
        return store.get_files(digest)
    first = ArtifactStore.at(recorded)
    try:
        return first.get_files(digest)
    except SnapshotMissingError:
        given = os.environ.get("REFEREE_ARTIFACTS")
        if not given or store_url(given) == first.url:
            raise
    try:
        return ArtifactStore.at(given).get_files(digest)
    except SnapshotMissingError:
        raise SnapshotMissingError(
            f"snapshot {digest} is neither in the task's store {first.url} nor in "
            f"REFEREE_ARTIFACTS={given}; point REFEREE_ARTIFACTS at the store the tasks were "
            "made with (their --store)"
        ) from None


def _try(read: Callable[[], bytes]) -> bytes | None:
    """The bytes, or None where they are not: missing, or a scheme with no backend here (a
    ConfigError). A store that cannot be reached is a StoreError, raised: not "missing"."""
    try:
        return read()
    except (OSError, ValueError, ConfigError):
        return None
