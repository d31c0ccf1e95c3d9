"""What the sandbox sees: the bubblewrap command line that builds its file system and namespaces.

The view is deliberately small. The root is an empty tmpfs remounted read-only; into it go a
read-only ``/usr`` (programs and shared libraries; ``/usr/local`` and Debian's Python packages are
not there), a handful of synthesised ``/etc`` files, Debian's ``/etc/alternatives`` links and
libmagic's database link (see :func:`alternatives`), a new ``/proc``, a minimal ``/dev``, a
size-capped tmpfs ``/tmp`` and ``/dev/shm``, the interpreter referee runs on at ``/opt/python`` with
its standard library but **without** its site-packages, and the run's workspace at ``/workspace``.
Nothing else of the host exists inside: no home directory, no project checkout, no task file.

bubblewrap runs as an unprivileged host uid (on root machines, a uid of its own per worker), so a
file that slipped into the view would still be guarded by ordinary permissions, and RLIMIT_NPROC
binds, which it does not for root.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import SandboxUnavailable

__all__ = [
    "PYTHON_MOUNT",
    "WORKSPACE_MOUNT",
    "BwrapCommand",
    "SandboxView",
    "alternatives",
    "find_bwrap",
    "share_links",
]

PYTHON_MOUNT = "/opt/python"
WORKSPACE_MOUNT = "/workspace"
SANDBOX_UID = 1000
SANDBOX_GID = 1000

_PASSWD = "root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/tmp:/bin/sh\n"
_GROUP = "root:x:0:\nsandbox:x:1000:\n"
_HOSTS = "127.0.0.1 localhost sandbox\n::1 localhost\n"


def find_bwrap() -> str:
    """Path of ``bwrap``, or a :class:`SandboxUnavailable` that says how to install it."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed, so referee cannot isolate programs. "
            "Install the Debian package: `apt-get install bubblewrap` (or run `make bootstrap` as "
            "root). Only where that is impossible, and only for code you trust, run without "
            "isolation (UNSAFE): `--backend local` on the command line (`referee exec`), "
            "`Sandbox(backend='local')` in Python."
        )
    return path


#: Links under ``/usr/share`` (which the view leaves out) that lead back into it and a command
#: needs: libmagic's database (``file``), ``/usr/share/misc/magic.mgc`` -> ``/usr/lib/file/...``.
SHARE_LINKS = ("/usr/share/misc/magic.mgc",)


def _inside(path: str, visible: tuple[str, ...]) -> bool:
    return any(path.startswith(root.rstrip("/") + "/") for root in visible)


def alternatives(
    visible: tuple[str, ...], directory: Path = Path("/etc/alternatives")
) -> tuple[tuple[str, str], ...]:
    """Debian's alternatives links as (name, target) pairs, for those whose target is visible.

    Many of the commands a shell task needs are a link into ``/etc/alternatives`` (``/usr/bin/awk``
    -> ``/etc/alternatives/awk`` -> ``/usr/bin/mawk``; ``which``, ``cc``, ``vi``, ``nodejs`` too),
    so without it they are "not found" in the sandbox. The view re-creates these links itself
    (bubblewrap's ``--symlink``) rather than binding the host directory: only the link *texts*
    come in, never the contents of a file someone left there (the directory holds a README
    already), and the sandbox sees no more of the host than before, since a link only leads to
    what its view holds. A link comes in when its target lies under one of the ``visible``
    directories (the ones the view binds); the rest (mostly manual pages) would dangle anyway.
    """
    try:
        entries = sorted(directory.iterdir())
    except OSError:  # not a Debian system: nothing to re-create
        return ()
    links = []
    for entry in entries:
        try:
            target = os.readlink(entry)
        except OSError:  # not a link (the README): never comes in
            continue
        if _inside(os.path.normpath(os.path.join(directory, target)), visible):
            links.append((entry.name, target))
    return tuple(links)


def share_links(visible: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The :data:`SHARE_LINKS` this host has, as (path, link text), whose targets are visible."""
    links = []
    for path in SHARE_LINKS:
        try:
            target = os.readlink(path)
        except OSError:
            continue
        if _inside(os.path.normpath(os.path.join(os.path.dirname(path), target)), visible):
            links.append((path, target))
    return tuple(links)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass
class BwrapCommand:
    """An argv plus the file descriptors it references; close them after the spawn."""

    argv: list[str]
    owned_fds: list[int] = field(default_factory=list)  # made for this spawn: closed after it
    pass_fds: tuple[int, ...] = ()  # every fd the child must inherit (owned ones included)

    def close(self) -> None:
        for fd in self.owned_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.owned_fds.clear()


@dataclass
class SandboxView:
    """The file system and namespaces of a sandbox. One instance is reused for many spawns."""

    python_prefix: Path = field(default_factory=lambda: Path(sys.base_prefix))
    #: Where the host exposes ``python_prefix`` to the unprivileged bwrap (see Scratch.expose).
    python_source: Path | None = None
    tmp_mb: int = 256
    extra_ro_binds: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        self.bwrap = find_bwrap()
        ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
        stdlib = Path(
            sysconfig.get_paths(
                vars={"installed_base": str(self.python_prefix), "base": str(self.python_prefix)}
            )["stdlib"]
        )
        self._site_packages = f"{PYTHON_MOUNT}/lib/{ver}/site-packages"
        self._python_bin = f"{PYTHON_MOUNT}/bin/{ver}"
        if not (stdlib / "os.py").exists():
            raise SandboxUnavailable(f"no standard library found under {self.python_prefix}")
        self._has_lib64 = Path("/usr/lib64").is_dir()
        visible: tuple[str, ...] = ("/usr/bin", "/usr/lib", "/usr/lib64", "/etc/alternatives")
        visible += tuple(dest for _, dest in self.extra_ro_binds)
        self._alternatives = alternatives(visible)
        self._share_links = share_links(visible)
        # The base filter never changes; compile it once and copy the bytes into each spawn.
        from referee.sandbox.seccomp_policy import base_filter_bpf

        self._bpf = base_filter_bpf()

    @property
    def python(self) -> str:
        """The interpreter's path inside the sandbox."""
        return self._python_bin

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The whole environment of a sandboxed program: nothing of the host's leaks in."""
        env = {
            "PATH": f"{PYTHON_MOUNT}/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "USER": "sandbox",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TMPDIR": "/tmp",
            "LD_LIBRARY_PATH": f"{PYTHON_MOUNT}/lib",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
        }
        if extra:
            env.update(extra)
        return env

    def command(
        self,
        workspace: Path,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> BwrapCommand:
        """The bwrap argv that runs ``argv`` in ``workspace``. ``argv[0]`` is looked up on PATH."""
        fds: list[int] = []
        a: list[str] = [self.bwrap]
        a += [
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "sandbox",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_GID),
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
        ]
        a += ["--ro-bind", "/usr/bin", "/usr/bin", "--ro-bind", "/usr/lib", "/usr/lib"]
        if self._has_lib64:
            a += ["--ro-bind", "/usr/lib64", "/usr/lib64", "--symlink", "usr/lib64", "/lib64"]
        a += [
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/bin",
            "/bin",
            "--symlink",
            "usr/bin",
            "/sbin",
        ]
        # Debian's own Python packages would be importable by /usr/bin/python3: hide them.
        if Path("/usr/lib/python3/dist-packages").is_dir():
            a += ["--tmpfs", "/usr/lib/python3/dist-packages"]
        a += ["--dir", "/etc"]
        if Path("/etc/ld.so.cache").exists():
            a += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
        for dest, data in (
            ("/etc/passwd", _PASSWD),
            ("/etc/group", _GROUP),
            ("/etc/hosts", _HOSTS),
            ("/etc/hostname", "sandbox\n"),
        ):
            fd = _memfd("etc", data.encode())
            fds.append(fd)
            a += ["--ro-bind-data", str(fd), dest]
        if self._alternatives:
            a += ["--dir", "/etc/alternatives"]
            for name, target in self._alternatives:
                a += ["--symlink", target, f"/etc/alternatives/{name}"]
        for path, target in self._share_links:
            a += ["--dir", os.path.dirname(path), "--symlink", target, path]
        # The interpreter with its standard library; its site-packages are hidden.
        source = str(self.python_source or self.python_prefix)
        a += ["--ro-bind", source, PYTHON_MOUNT, "--tmpfs", self._site_packages]
        for src, dest in self.extra_ro_binds:
            a += ["--ro-bind", src, dest]
        a += ["--proc", "/proc", "--dev", "/dev"]
        a += ["--size", str(self.tmp_mb << 20), "--tmpfs", "/tmp"]
        a += ["--size", str(self.tmp_mb << 20), "--tmpfs", "/dev/shm"]
        a += ["--bind", str(workspace), WORKSPACE_MOUNT, "--chdir", WORKSPACE_MOUNT]
        a += ["--remount-ro", "/"]
        bpf = _memfd("seccomp", self._bpf)
        fds.append(bpf)
        a += ["--seccomp", str(bpf)]
        a += ["--clearenv"]
        for key, value in self.env(env).items():
            a += ["--setenv", key, value]
        a += ["--", *argv]
        return BwrapCommand(argv=a, owned_fds=fds, pass_fds=(*fds, *pass_fds))
