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
import os
import shutil
import tempfile
import threading
from pathlib import Path

from referee.errors import SandboxError

__all__ = ["Scratch", "UidPool", "isolation_layers"]

_libc = ctypes.CDLL(None, use_errno=True)


class Scratch:
    """A directory for workspaces, a size-capped tmpfs when this process may mount one."""

    def __init__(self, size_mb: int = 4096) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="referee-"))
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
        shutil.rmtree(self.path, ignore_errors=True)


class UidPool:
    """Hands out distinct host uids to concurrent sandboxes (root) or the caller's own uid."""

    def __init__(self, base: int | None = None, size: int = 1024) -> None:
        self.privileged = os.geteuid() == 0
        self.base = base if base is not None else int(os.environ.get("REFEREE_UID_BASE", "61000"))
        self.size = size
        self._free = list(range(self.base, self.base + size))
        self._lock = threading.Lock()

    def acquire(self) -> int:
        if not self.privileged:
            return os.geteuid()
        with self._lock:
            if not self._free:
                raise SandboxError(
                    f"all {self.size} sandbox uids are in use; lower concurrency or raise size"
                )
            return self._free.pop(0)

    def release(self, uid: int) -> None:
        if self.privileged:
            with self._lock, contextlib.suppress(ValueError):
                if uid not in self._free:
                    self._free.append(uid)


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
