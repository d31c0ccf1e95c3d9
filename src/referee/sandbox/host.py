"""Host-side resources of a sandbox: the scratch area for workspaces and the uids runs use.

Scratch: on a root machine, one tmpfs mounted for the sandbox holds every workspace, so a program
that fills its disk fills memory charged to its own cgroup, never the host's disk. Elsewhere it is
a plain temporary directory and only RLIMIT_FSIZE bounds a single file.

Uids: as root, each concurrent sandbox (a worker or a fresh-process run) runs as a host uid of its
own (61000 and up, like isolate's per-box users), so RLIMIT_NPROC binds, a leaked file keeps its
permissions, and two sandboxes cannot signal each other even if a namespace failed. As a normal
user, every sandbox runs as that user.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import tempfile
import threading
from pathlib import Path

from referee.errors import SandboxError

__all__ = ["Scratch", "UidPool", "clean_stale_scratch", "isolation_layers"]

_libc = ctypes.CDLL(None, use_errno=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_unless_mounted(path: Path) -> None:
    """rmtree, but never into something still mounted (such as the interpreter's bind)."""
    if os.path.ismount(path):
        return
    if path.is_dir() and not path.is_symlink():
        for entry in path.iterdir():
            if os.path.ismount(entry):
                return
    shutil.rmtree(path, ignore_errors=True)


def clean_stale_scratch() -> int:
    """Unmount and remove scratch areas left by referee processes that died. Returns the count.

    A process killed with SIGKILL cannot clean up; its scratch tmpfs (and the interpreter bind
    inside) would otherwise stay mounted until reboot.
    """
    removed = 0
    for path in Path(tempfile.gettempdir()).glob("referee-*-*"):
        parts = path.name.split("-")
        if len(parts) < 3 or not parts[1].isdigit() or _alive(int(parts[1])):
            continue
        with contextlib.suppress(OSError):
            for inner in path.iterdir() if path.is_dir() else ():
                _libc.umount2(str(inner).encode(), 2)
            _libc.umount2(str(path).encode(), 2)
            _remove_unless_mounted(path)
            removed += 1
    return removed


class Scratch:
    """A directory for workspaces, a size-capped tmpfs when this process may mount one."""

    def __init__(self, size_mb: int = 4096) -> None:
        clean_stale_scratch()
        self.path = Path(tempfile.mkdtemp(prefix=f"referee-{os.getpid()}-"))
        os.chmod(self.path, 0o711)
        self.is_tmpfs = False
        if os.geteuid() == 0 and os.environ.get("REFEREE_NO_TMPFS") != "1":
            opts = f"size={size_mb}m,nr_inodes=1m,mode=0711".encode()
            rc = _libc.mount(b"tmpfs", str(self.path).encode(), b"tmpfs", 0, opts)
            self.is_tmpfs = rc == 0
        self._lock = threading.Lock()
        self._n = 0
        self._mounts: list[Path] = []

    def expose(self, source: Path, name: str) -> Path:
        """A read-only view of ``source`` inside the scratch area, reachable by sandbox uids.

        The interpreter often lives under ``/root``, which the unprivileged uid bubblewrap runs as
        cannot traverse; as root we bind-mount it here. Otherwise the source is used as it is.
        """
        if os.geteuid() != 0:
            return source
        target = self.path / name
        if source.is_dir():
            target.mkdir(mode=0o755, exist_ok=True)
        else:
            target.touch(mode=0o644, exist_ok=True)
        ms_bind, ms_rec, ms_remount, ms_rdonly = 4096, 16384, 32, 1
        if _libc.mount(str(source).encode(), str(target).encode(), None, ms_bind | ms_rec, None):
            err = ctypes.get_errno()
            raise SandboxError(f"could not bind {source} into the scratch area: {os.strerror(err)}")
        self._mounts.append(target)
        flags = ms_bind | ms_remount | ms_rdonly | ms_rec
        if _libc.mount(None, str(target).encode(), None, flags, None):
            err = ctypes.get_errno()
            raise SandboxError(f"could not make {target} read-only: {os.strerror(err)}")
        return target

    def new_dir(self, label: str, owner: int | None) -> Path:
        with self._lock:
            self._n += 1
            path = self.path / f"{label}-{self._n}"
        path.mkdir(mode=0o700)
        if owner is not None:
            os.chown(path, owner, owner)
        return path

    def close(self) -> None:
        for m in reversed(self._mounts):
            _libc.umount2(str(m).encode(), 2)
        self._mounts.clear()
        if self.is_tmpfs:
            _libc.umount2(str(self.path).encode(), 2)  # MNT_DETACH: never blocks on a busy mount
        _remove_unless_mounted(self.path)


_UID_LOCKS = Path(tempfile.gettempdir()) / "referee-uid-locks"


class UidPool:
    """Hands out distinct host uids to concurrent sandboxes (root) or the caller's own uid.

    A uid is claimed with an advisory lock on a file named after it, so that sandboxes of
    *different* referee processes on one machine never share a uid (they would share its
    RLIMIT_NPROC budget). The kernel drops the lock when the holder dies, so nothing leaks.
    """

    def __init__(self, base: int | None = None, size: int = 4096) -> None:
        self.privileged = os.geteuid() == 0
        self.base = base if base is not None else int(os.environ.get("REFEREE_UID_BASE", "61000"))
        self.size = size
        self._held: dict[int, int] = {}  # uid -> fd of its lock file
        self._lock = threading.Lock()
        self._next = 0

    def acquire(self) -> int:
        if not self.privileged:
            return os.geteuid()
        _UID_LOCKS.mkdir(mode=0o700, exist_ok=True)
        with self._lock:
            for step in range(self.size):
                uid = self.base + (self._next + step) % self.size
                if uid in self._held:
                    continue
                fd = os.open(_UID_LOCKS / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self._held[uid] = fd
                self._next = (self._next + step + 1) % self.size
                return uid
        raise SandboxError(
            f"all {self.size} sandbox uids from {self.base} are in use on this machine; "
            "lower concurrency or set REFEREE_UID_BASE to a free range"
        )

    def release(self, uid: int) -> None:
        if not self.privileged:
            return
        with self._lock:
            fd = self._held.pop(uid, None)
        if fd is not None:
            os.close(fd)  # closing the file drops the lock


_NAMESPACE_LAYERS = ("bwrap", "userns", "pidns", "netns", "ipcns", "utsns", "mountns", "seccomp")


def isolation_layers(
    *, cgroup_version: int | None, scratch: Scratch, uids: UidPool, extra: tuple[str, ...] = ()
) -> list[str]:
    """The names ``ExecResult.isolation`` reports for a sandbox built from these parts."""
    layers = [*_NAMESPACE_LAYERS, *extra, "rlimits"]
    if cgroup_version is not None:
        layers.append(f"cgroup-v{cgroup_version}")
    if scratch.is_tmpfs:
        layers.append("tmpfs-workspace")
    if uids.privileged:
        layers.append("uid-per-sandbox")
    return layers
