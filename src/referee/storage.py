"""Files at a local path or at any fsspec URL: read whole, written atomically.

Task files, exports and the artifact store take a *target*: a local path (``str`` or
:class:`os.PathLike`) or an fsspec URL (``s3://bucket/key``, ``gs://...``, ``memory://...``,
``file:///abs/path``). Local paths behave as they always did (the operating system's messages,
a temporary file renamed into place); a URL goes through the fsspec backend of its scheme,
checked first (:func:`referee.optional.require_fsspec_backend`: ``s3://`` needs ``s3fs``).

**No reader ever sees half a file.** A write either puts the whole content under its name or
leaves that name as it was:

* local: a temporary file in the same folder, fsynced, then renamed over the name (and the
  folder fsynced, so the rename survives a crash);
* object stores (``s3://``, ``gs://``, ``az://``, ``memory://``, ...): the bytes are staged
  on this side (in memory, or a local temporary file for a streamed export) and sent in one
  upload; S3 shows an object only when its single PUT, or its multipart upload's completion,
  succeeds, and s3fs aborts a multipart upload that fails. This module never writes with
  ``with fs.open(url, "wb")``: fsspec's ``__exit__`` closes, and so *commits*, the file even
  when the block raised, which publishes a truncated object;
* other remote file systems (sftp, ftp, smb, ...): a temporary name beside the file, then a
  rename.

Errors: a missing or forbidden file is the :class:`OSError` it was (callers phrase it, naming
their option); a store that cannot be reached, or any other failure of a backend (botocore's
errors, aiohttp's), is a :class:`~referee.errors.StoreError` naming the URL and what to check;
missing credentials are a :class:`~referee.errors.ConfigError`.

S3-compatible stores (MinIO, Ceph, moto...): s3fs reads the usual AWS settings. Point it at the
server with ``AWS_ENDPOINT_URL`` (botocore; or ``FSSPEC_S3_ENDPOINT_URL``, fsspec's own), and
give credentials with ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (or ``AWS_PROFILE``);
``AWS_MAX_ATTEMPTS`` bounds botocore's retries.

>>> write_bytes("memory://referee-doc/tasks.jsonl", b'{"id": 1}\\n')
>>> read_bytes("memory://referee-doc/tasks.jsonl")
b'{"id": 1}\\n'
>>> with atomic_writer("memory://referee-doc/rows.jsonl", "w") as f:
...     _ = f.write("a\\n")
>>> read_bytes("memory://referee-doc/rows.jsonl"), is_url("s3://b/k"), is_url("runs/x.jsonl")
(b'a\\n', True, False)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from referee.errors import ConfigError, RefereeError, StoreError
from referee.optional import require_fsspec_backend

__all__ = [
    "Target",
    "atomic_writer",
    "check_output",
    "fs_exists",
    "fs_read",
    "fs_write",
    "is_local",
    "is_url",
    "local_path",
    "open_fs",
    "os_reason",
    "read_bytes",
    "write_bytes",
]

Target = str | os.PathLike[str]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_LOCAL = frozenset({"file", "local"})
# Stores where a write replaces a whole object in one call (the object appears when the upload
# completes): bytes go straight to the final key, with no temporary name to clean up.
_WHOLE_OBJECT = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oci", "memory"})
# Of those, the ones with buckets: the first part of the path must exist before a write.
_BUCKETS = _WHOLE_OBJECT - {"memory"}
_S3 = frozenset({"s3", "s3a"})


def is_url(target: Target) -> bool:
    """Whether ``target`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(target, str) and _SCHEME.match(target) is not None


def _scheme(target: Target) -> str:
    m = _SCHEME.match(target) if isinstance(target, str) else None
    return m.group(1).lower() if m else "file"


def is_local(target: Target) -> bool:
    """Whether ``target`` is on this machine: a path, or a ``file://`` URL."""
    return _scheme(target) in _LOCAL


def local_path(target: Target) -> Path:
    """The local path of a path or ``file://`` URL (``~`` is not expanded: paths mean what
    the shell passed)."""
    if is_url(target):
        return Path(_SCHEME.sub("", str(target), count=1) or "/")
    return Path(target)


def open_fs(url: str, *, option: str = "storage") -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path in it; :class:`ConfigError` when its
    backend is missing (naming the package and ``option``) or the URL is not one."""
    import fsspec

    require_fsspec_backend(url, option=option)
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{option} {url}: not a storage URL fsspec can open ({e})") from e
    return fs, str(path)


def os_reason(e: OSError) -> str:
    """An :class:`OSError`'s reason in the operating system's words, also for the backends
    that raise ``FileNotFoundError(path)`` without one."""
    if e.strerror:
        return str(e.strerror)
    for kind, code in _ERRNO.items():
        if isinstance(e, kind):
            return os.strerror(code)
    return str(e) or type(e).__name__


_ERRNO: dict[type[OSError], int] = {
    FileNotFoundError: errno.ENOENT,
    PermissionError: errno.EACCES,
    IsADirectoryError: errno.EISDIR,
    NotADirectoryError: errno.ENOTDIR,
}


def _hint(protocol: str) -> str:
    if protocol in _S3:
        return (
            "check the endpoint (AWS_ENDPOINT_URL), the credentials (AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and that the server is up"
        )
    return "check that the storage service is reachable and its credentials are set"


def _reason(e: BaseException) -> str:
    return os_reason(e) if isinstance(e, OSError) else (str(e) or type(e).__name__)


def _failure(doing: str, shown: str, protocol: str, e: BaseException) -> RefereeError:
    """A backend's exception as referee's error. Backends raise their own types (botocore's,
    aiohttp's, gcsfs's), which cannot be listed without importing each: missing credentials
    are told apart by name (the user's to fix, exit 2), and the original stays chained."""
    message = f"cannot {doing} {shown}: {_reason(e)}; {_hint(protocol)}"
    if type(e).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
        return ConfigError(message)
    return StoreError(message)


def _protocol(fs: Any) -> str:
    p = fs.protocol
    return str(p if isinstance(p, str) else p[0])


# --- reading ----------------------------------------------------------------------------------


def fs_read(fs: Any, path: str, shown: str | None = None) -> bytes:
    """The bytes at ``path`` of ``fs``: a missing or forbidden file raises its :class:`OSError`,
    any other failure a :class:`StoreError` (or :class:`ConfigError`) naming ``shown``."""
    try:
        return bytes(fs.cat_file(path))
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError):
        raise
    except Exception as e:  # the backend's own errors: see _failure
        raise _failure("read", shown or path, _protocol(fs), e) from e


def fs_exists(fs: Any, path: str, shown: str | None = None) -> bool:
    """Whether ``path`` exists in ``fs``; a backend's failure is a :class:`StoreError`, as in
    :func:`fs_read` (s3fs answers False when the server cannot be reached: the write that
    follows then fails, naming the URL)."""
    try:
        return bool(fs.exists(path))
    except Exception as e:  # the backend's own errors: see _failure
        raise _failure("read", shown or path, _protocol(fs), e) from e


def read_bytes(target: Target, *, option: str = "file") -> bytes:
    """The whole content of a local file or URL.

    A missing file raises :class:`FileNotFoundError` (local or remote alike, so callers keep
    one message); see the module docstring for the other errors."""
    if is_local(target):
        return local_path(target).read_bytes()
    fs, path = open_fs(str(target), option=option)
    return fs_read(fs, path, str(target))


# --- writing ----------------------------------------------------------------------------------


def fs_write(
    fs: Any,
    path: str,
    data: bytes,
    *,
    shown: str | None = None,
    parents: bool = False,
    part_size: int | None = None,
) -> None:
    """Put ``data`` at ``path`` of ``fs`` whole or not at all (see the module docstring).

    Args:
        shown: the name errors give (default ``path``).
        parents: make missing parent folders (local and folder-based file systems).
        part_size: bytes per part of an S3 multipart upload (default s3fs's 50 MiB; data under
            two parts goes in one PUT).
    """
    shown = shown or path
    protocol = _protocol(fs)
    if protocol in _LOCAL:
        _replace_local(Path(path), data, shown, parents=parents)
        return
    try:
        if protocol in _S3 and part_size is not None:
            fs.pipe_file(path, data, chunksize=part_size)
        elif protocol in _WHOLE_OBJECT:
            fs.pipe_file(path, data)
        else:
            _via_temporary_name(fs, path, lambda tmp: fs.pipe_file(tmp, data), parents)
    except RefereeError:
        raise
    except Exception as e:
        raise _failure("write", shown, protocol, e) from e


def write_bytes(
    target: Target,
    data: bytes,
    *,
    option: str = "file",
    parents: bool = False,
    part_size: int | None = None,
) -> None:
    """Write ``data`` to a local path or URL, atomically (see :func:`fs_write`).

    >>> write_bytes("memory://referee-doc/a.bin", b"\\x00\\x01")
    >>> read_bytes("memory://referee-doc/a.bin")
    b'\\x00\\x01'
    """
    if is_local(target):
        _replace_local(local_path(target), data, str(target), parents=parents)
        return
    fs, path = open_fs(str(target), option=option)
    fs_write(fs, path, data, shown=str(target), parents=parents, part_size=part_size)


@contextlib.contextmanager
def atomic_writer(
    target: Target,
    mode: Literal["w", "wb"] = "w",
    *,
    option: str = "file",
    parents: bool = False,
    part_size: int | None = None,
) -> Iterator[IO[Any]]:
    """A file to write ``target`` through, published only when the block ends without an error
    (text mode writes UTF-8). For streamed output too big to hold in memory: a URL's content is
    staged in a local temporary file and uploaded whole at the end.

    >>> with atomic_writer("memory://referee-doc/out.jsonl") as f:
    ...     _ = f.write('{"row": 1}\\n')
    >>> read_bytes("memory://referee-doc/out.jsonl")
    b'{"row": 1}\\n'
    """
    encoding = "utf-8" if mode == "w" else None
    shown = str(target)
    if is_local(target):
        final = local_path(target)
        tmp = _local_tmp(final, shown, parents=parents)
        with _cleanup(tmp):
            with _opened(tmp, mode, encoding, shown) as f:
                yield f
                _sync(f, shown)
            _publish(tmp, final, shown)
        return
    fs, path = open_fs(shown, option=option)  # before anything is staged
    fd, staged = tempfile.mkstemp(prefix="referee-upload-")
    os.close(fd)
    with _cleanup(Path(staged)):
        with _opened(Path(staged), mode, encoding, shown) as f:
            yield f
        _upload(fs, staged, path, shown, parents=parents, part_size=part_size)


def _upload(
    fs: Any, staged: str, path: str, shown: str, *, parents: bool, part_size: int | None
) -> None:
    protocol = _protocol(fs)
    try:
        if protocol in _S3:
            # s3fs's put_file: one PUT below two parts, else a multipart upload aborted on
            # failure; the file is read part by part, never whole into memory.
            kwargs = {} if part_size is None else {"chunksize": part_size}
            fs.put_file(staged, path, **kwargs)
        elif protocol in _WHOLE_OBJECT:
            # The generic put_file copies through fs.open(path, "wb"), which commits a partial
            # object on failure (see the module docstring): hand over the bytes in one call.
            fs.pipe_file(path, Path(staged).read_bytes())
        else:
            _via_temporary_name(fs, path, lambda tmp: fs.put_file(staged, tmp), parents)
    except RefereeError:
        raise
    except Exception as e:
        raise _failure("write", shown, protocol, e) from e


def _via_temporary_name(fs: Any, path: str, put: Callable[[str], object], parents: bool) -> None:
    """A file system that writes in place (sftp, ftp, smb): the content goes to a temporary
    name beside the file, then is renamed over it; the temporary file goes on failure."""
    if parents:
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    tmp = f"{path}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        put(tmp)
        fs.mv(tmp, path)
    except BaseException:
        with contextlib.suppress(Exception):
            fs.rm(tmp)
        raise


# --- local files ------------------------------------------------------------------------------


def _local_tmp(final: Path, shown: str, *, parents: bool) -> Path:
    if parents:
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot write {shown}: {os_reason(e)}; choose a writable path") from e
    # A name of its own per write: two writers of one file never share a temporary file.
    return final.with_name(f"{final.name}.{uuid.uuid4().hex[:12]}.tmp")


@contextlib.contextmanager
def _cleanup(tmp: Path) -> Iterator[None]:
    try:
        yield
    finally:
        tmp.unlink(missing_ok=True)  # published files were renamed away; anything left is junk


@contextlib.contextmanager
def _opened(path: Path, mode: str, encoding: str | None, shown: str) -> Iterator[IO[Any]]:
    try:
        f = open(path, mode, encoding=encoding)  # closed below, before publishing
    except OSError as e:
        raise StoreError(f"cannot write {shown}: {os_reason(e)}; choose a writable path") from e
    with f:
        yield f


def _sync(f: IO[Any], shown: str) -> None:
    try:
        f.flush()
        os.fsync(f.fileno())
    except OSError as e:
        raise StoreError(f"cannot write {shown}: {os_reason(e)}; check the disk") from e


def _publish(tmp: Path, final: Path, shown: str) -> None:
    # The rename is what readers see; fsyncing the folder makes it survive a crash too, so a
    # record that names the file never outlives it.
    try:
        os.replace(tmp, final)
        fd = os.open(final.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        raise StoreError(f"cannot write {shown}: {os_reason(e)}; choose a writable path") from e


def _replace_local(final: Path, data: bytes, shown: str, *, parents: bool) -> None:
    tmp = _local_tmp(final, shown, parents=parents)
    with _cleanup(tmp):
        with _opened(tmp, "wb", None, shown) as f:
            try:
                f.write(data)
            except OSError as e:
                raise StoreError(f"cannot write {shown}: {os_reason(e)}; check the disk") from e
            _sync(f, shown)
        _publish(tmp, final, shown)


# --- checks before work -----------------------------------------------------------------------


def check_output(url: str, *, option: str) -> None:
    """Refuse (:class:`ConfigError`, exit 2) an output URL that cannot be written, before any
    work: a backend not installed, a bucket that does not exist, a store that cannot be reached
    or has no credentials. Local paths are the caller's to check (their messages differ)."""
    fs, path = open_fs(url, option=option)
    protocol = _protocol(fs)
    if protocol in _BUCKETS:
        where, what = path.split("/", 1)[0], "bucket"
    elif protocol in _WHOLE_OBJECT:
        return  # memory://: nothing to exist first
    else:
        where, what = path.rsplit("/", 1)[0] if "/" in path else "", "folder"
    if not where:
        raise ConfigError(f"{option} {url}: name a {what} and a file in it")
    try:
        # info, not exists: s3fs's exists() answers False when the server cannot be reached.
        fs.info(where)
    except FileNotFoundError:
        raise ConfigError(
            f"{option} {url}: the {what} {where!r} does not exist; create it first"
        ) from None
    except Exception as e:  # the backend's own errors: see _failure
        raise ConfigError(
            f"{option} {url}: cannot reach the store: {_reason(e)}; {_hint(protocol)}"
        ) from e
