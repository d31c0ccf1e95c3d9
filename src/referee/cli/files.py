"""Files and folders named on the command line: read, or checked before the work that writes
them, each refusal a ``ConfigError`` (exit 2) naming the option and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.errors import ConfigError, NotFoundError


def out_file(option: str, target: str | Path) -> str | Path:
    """``target`` if a file can be written there, checked before the work whose result it
    holds: a local path's folder must exist; a URL's backend must be installed and its bucket
    reachable (:func:`referee.storage.check_output`)."""
    from referee.storage import check_output, is_local, local_path

    if not is_local(target):
        check_output(str(target), option=option)
        return target
    path = local_path(target)
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a folder; name the file to write")
    folder = path.parent
    if not folder.is_dir():
        raise ConfigError(f"{option} {path}: the folder {folder} does not exist; create it first")
    return target


def store_folder(option: str, store: str | None) -> None:
    """A local artifact store (a path, not an fsspec URL) is made if missing, like ``--out``'s
    file: its own folder may be new, but the folder it goes in must exist (a typo in a parent
    is refused, not made); a file there is refused. URLs are the store's to check."""
    if store is None or "://" in store:
        return
    path = Path(store).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {store} is a file; name a folder for the store")
    if not path.exists() and not path.parent.is_dir():
        raise ConfigError(
            f"{option} {store}: the folder {path.parent} does not exist; create it first"
        )


def read_bytes(option: str, path: Path) -> bytes:
    """The bytes of the file ``option`` names."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{option}: cannot read {str(path)!r}: {e.strerror}") from e


def load_tasks(path: str | Path, option: str = "task file") -> list[Any]:
    """The tasks of a local file or an fsspec URL (``s3://bucket/tasks.jsonl``)."""
    from referee.optional import require_fsspec_backend
    from referee.storage import is_url
    from referee.tasks.model import read_tasks

    if is_url(path):  # s3:// without s3fs: one line naming the package, before any work
        require_fsspec_backend(str(path), option=option)
    return read_tasks(path)  # a bad or missing file is a TaskError: exit 2, naming the line


def track_store(run: Path) -> Any:
    """The run folder's TrackStore; a folder without one is a NotFoundError (exit 2) that names
    the option and says what writes a store."""
    from referee.track.store import TrackStore

    try:
        return TrackStore(run, create=False)
    except NotFoundError as e:
        raise NotFoundError(f"--run {run} is not a run folder: {e}") from e
