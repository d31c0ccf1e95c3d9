"""Memory and process-count limits through cgroups, v1 or v2, wherever the machine lets us.

Only a pids cgroup stops a fork bomb started by root (RLIMIT_NPROC does not bind root), and only a
memory cgroup bounds what a process tree, its tmpfs files included, can take. The sandbox puts every
run (the fresh-process path) or every worker (the fork-server path) into a group of its own, reads
peak memory and OOM kills from it, and kills the whole group when the run is over, so that nothing
a run forked or daemonised survives it.

Groups are created under the cgroup this process already lives in, inside a per-process parent
``referee-<pid>-<n>``, so that several referee processes (and several sandboxes in one process)
never collide.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from referee.errors import SandboxError

__all__ = ["Cgroup", "CgroupStats", "Cgroups", "detect_cgroups"]

_ROOT = Path("/sys/fs/cgroup")
# Several sandboxes in one process each get a parent group of their own.
_INSTANCES = itertools.count(1)


@dataclass(frozen=True)
class CgroupStats:
    peak_bytes: int
    oom_kills: int
    memory_failcnt: int
    pids_refused: int
    cpu_s: float | None


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class _Files:
    """Control files kept open: a run reads and resets counters with one syscall each.

    Files are named by ``str`` paths: the per-run files' names are made once per group, and a
    ``str`` hashes once where a ``Path`` is turned into one on every lookup."""

    def __init__(self) -> None:
        self._readers: dict[str, int] = {}
        self._writers: dict[str, int] = {}

    @staticmethod
    def _fd(cache: dict[str, int], path: str, flags: int) -> int:
        fd = cache.get(path)
        if fd is None:
            fd = cache[path] = os.open(path, flags | os.O_CLOEXEC)
        return fd

    def read(self, path: str) -> str:
        return os.pread(self._fd(self._readers, path, os.O_RDONLY), 4096, 0).decode()

    def write(self, path: str, value: str) -> None:
        os.write(self._fd(self._writers, path, os.O_WRONLY), value.encode())

    def close(self) -> None:
        for cache in (self._readers, self._writers):
            for fd in cache.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            cache.clear()


def _kv(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        try:  # (not contextlib.suppress: two of these are read for every run)
            out[key] = int(value)
        except ValueError:
            pass
    return out


class Cgroup(ABC):
    """One group: limits, membership, statistics and a kill switch."""

    name: str

    @abstractmethod
    def set_limits(self, *, memory_bytes: int, pids_max: int) -> None: ...

    @abstractmethod
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes ``0`` into to join every controller."""

    @abstractmethod
    def pids(self) -> list[int]: ...

    @abstractmethod
    def reset_peak(self) -> None: ...

    @abstractmethod
    def stats(self) -> CgroupStats: ...

    @abstractmethod
    def cpu_s(self) -> float | None:
        """CPU seconds charged to the group so far (None without CPU accounting)."""

    @abstractmethod
    def remove(self) -> None: ...

    def kill_all(self, *, timeout_s: float = 5.0, uncounted: Collection[int] = ()) -> int:
        """SIGKILL every process of the group until none is left; returns how many were killed,
        leaving out ``uncounted`` (killed like the rest: a sandbox's own init on its way out is
        not a process the program left behind).

        A pids limit keeps the number of rounds small even against a fork bomb, since the group
        cannot grow past it while we kill.
        """
        killed: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while True:
            pids = self.pids()
            if not pids:
                return len(killed.difference(uncounted))
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            if time.monotonic() > deadline:
                raise SandboxError(
                    f"cgroup {self.name} still has {len(pids)} processes after SIGKILL for "
                    f"{timeout_s:g}s (stuck in uninterruptible I/O?); inspect them with ps"
                )
            time.sleep(0.001)


class _V1Group(Cgroup):
    def __init__(self, dirs: dict[str, Path], name: str) -> None:
        self.dirs = dirs
        self.name = name
        self.files = _Files()
        # The files every run reads or resets, named once (building paths is per-run work).
        mem = dirs["memory"]
        self._peak = str(mem / "memory.max_usage_in_bytes")
        self._failcnt = str(mem / "memory.failcnt")
        self._oom = str(mem / "memory.oom_control")
        self._pids_events = str(dirs["pids"] / "pids.events")
        self._cpu = str(dirs["cpuacct"] / "cpuacct.usage") if "cpuacct" in dirs else None

    def set_limits(self, *, memory_bytes: int, pids_max: int) -> None:
        mem = self.dirs["memory"]
        # No swap: memory+swap gets the same limit where swap accounting exists. The kernel
        # insists that memsw >= memory at every moment, so the order depends on the direction.
        memsw = mem / "memory.memsw.limit_in_bytes"
        try:
            _write(mem / "memory.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(OSError):
                _write(memsw, str(memory_bytes))
        except OSError:
            _write(memsw, str(memory_bytes))
            _write(mem / "memory.limit_in_bytes", str(memory_bytes))
        _write(self.dirs["pids"] / "pids.max", str(pids_max))

    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs.values()]

    def pids(self) -> list[int]:
        seen: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(FileNotFoundError):
                seen.update(int(x) for x in _read(d / "cgroup.procs").split())
        return sorted(seen)

    def reset_peak(self) -> None:
        self.files.write(self._peak, "0")
        self.files.write(self._failcnt, "0")

    def cpu_s(self) -> float | None:
        if self._cpu is None:
            return None
        return int(self.files.read(self._cpu)) / 1e9

    def stats(self) -> CgroupStats:
        read = self.files.read
        oom = _kv(read(self._oom)).get("oom_kill", 0)
        events = _kv(read(self._pids_events))
        return CgroupStats(
            peak_bytes=int(read(self._peak)),
            oom_kills=oom,
            memory_failcnt=int(read(self._failcnt)),
            pids_refused=events.get("max", 0),
            cpu_s=self.cpu_s(),
        )

    def remove(self) -> None:
        self.files.close()
        self.kill_all()
        for d in self.dirs.values():
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the kernel finishes tearing tasks down
                    time.sleep(0.002)


class _V2Group(Cgroup):
    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self.files = _Files()
        # The files every run reads or resets, named once (building paths is per-run work).
        self._peak = str(path / "memory.peak")
        self._current = str(path / "memory.current")
        self._events = str(path / "memory.events")
        self._pids_events = str(path / "pids.events")
        self._cpu_stat = str(path / "cpu.stat")

    def set_limits(self, *, memory_bytes: int, pids_max: int) -> None:
        _write(self.path / "memory.max", str(memory_bytes))
        with contextlib.suppress(OSError):
            _write(self.path / "memory.swap.max", "0")
        _write(self.path / "pids.max", str(pids_max))

    def procs_files(self) -> list[Path]:
        return [self.path / "cgroup.procs"]

    def pids(self) -> list[int]:
        try:
            return sorted(int(x) for x in _read(self.path / "cgroup.procs").split())
        except FileNotFoundError:
            return []

    def reset_peak(self) -> None:
        # memory.peak is resettable only per open file on new kernels; fall back to a baseline.
        with contextlib.suppress(OSError):
            self.files.write(self._peak, "0")

    def cpu_s(self) -> float | None:
        usec = _kv(self.files.read(self._cpu_stat)).get("usage_usec")
        return None if usec is None else usec / 1e6

    def stats(self) -> CgroupStats:
        read = self.files.read
        events = _kv(read(self._events))
        pid_events = _kv(read(self._pids_events))
        cpu = self.cpu_s()
        try:
            peak = int(read(self._peak))
        except FileNotFoundError:
            peak = int(read(self._current))
        return CgroupStats(
            peak_bytes=peak,
            oom_kills=events.get("oom_kill", 0),
            memory_failcnt=events.get("max", 0),
            pids_refused=pid_events.get("max", 0),
            cpu_s=cpu,
        )

    def kill_all(self, *, timeout_s: float = 5.0, uncounted: Collection[int] = ()) -> int:
        n = len(set(self.pids()).difference(uncounted))
        with contextlib.suppress(OSError):
            _write(self.path / "cgroup.kill", "1")
        super().kill_all(timeout_s=timeout_s)
        return n

    def remove(self) -> None:
        self.files.close()
        self.kill_all()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)


class Cgroups:
    """Creates groups for one referee process. ``version`` is 1 or 2."""

    def __init__(self, version: int, parents: dict[str, Path]) -> None:
        self.version = version
        self._parents = parents
        self._counter = itertools.count(1)  # next() is atomic: workers start concurrently

    def create(self, label: str) -> Cgroup:
        name = f"{label}-{next(self._counter)}"
        try:
            if self.version == 1:
                dirs = {c: p / name for c, p in self._parents.items()}
                for d in dirs.values():
                    d.mkdir()
                return _V1Group(dirs, name)
            path = self._parents["unified"] / name
            path.mkdir()
            return _V2Group(path, name)
        except OSError as e:
            raise SandboxError(f"could not create cgroup {name}: {e}") from e

    def close(self) -> None:
        """Remove the per-process parent groups (children must be gone already)."""
        for p in self._parents.values():
            with contextlib.suppress(OSError):
                for child in p.iterdir():
                    if child.is_dir():
                        child.rmdir()
                p.rmdir()


def _own_path(controller: str) -> str | None:
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            return path
        if controller == "" and ctrls == "":
            return path
    return None


def _try_v1(label: str) -> Cgroups | None:
    # memory and pids limit; cpuacct counts CPU time of processes rusage never sees (bubblewrap
    # does not wait for its init, so the program's rusage is lost). Each controller costs a
    # migration per process that joins: several milliseconds on v1 (an RCU grace period).
    wanted = ["memory", "pids", "cpuacct"]
    parents: dict[str, Path] = {}
    for ctrl in wanted:
        mount = _ROOT / ctrl
        own = _own_path(ctrl)
        if own is None or not (mount / "cgroup.procs").exists():
            if ctrl == "cpuacct":
                continue  # optional: CPU time then comes from rusage
            return None
        base = mount / own.lstrip("/")
        clean_stale(base)
        parent = base / label
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            for made in parents.values():
                with contextlib.suppress(OSError):
                    made.rmdir()
            return None
        parents[ctrl] = parent
    return Cgroups(1, parents)


def _try_v2(label: str) -> Cgroups | None:
    if not (_ROOT / "cgroup.controllers").exists():
        return None
    own = _own_path("")
    if own is None:
        return None
    base = _ROOT / own.lstrip("/")
    parent = base / label
    try:
        parent.mkdir(exist_ok=True)
        _write(parent / "cgroup.subtree_control", "+memory +pids")
    except OSError:
        with contextlib.suppress(OSError):
            parent.rmdir()
        return None
    return Cgroups(2, {"unified": parent})


def clean_stale(parent_dir: Path) -> None:
    """Remove ``referee-<pid>-<n>`` groups whose process is gone (it died without cleaning up)."""
    for group in parent_dir.glob("referee-*-*"):
        pid = group.name.split("-")[1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        for child in sorted(group.glob("*/"), reverse=True):
            with contextlib.suppress(OSError):
                for p in _read(child / "cgroup.procs").split():
                    os.kill(int(p), signal.SIGKILL)
                child.rmdir()
        with contextlib.suppress(OSError):
            group.rmdir()


def detect_cgroups() -> Cgroups | None:
    """The cgroup hierarchy this process may create groups in, or None where it may not."""
    if os.environ.get("REFEREE_NO_CGROUPS") == "1":
        return None
    label = f"referee-{os.getpid()}-{next(_INSTANCES)}"
    try:
        return _try_v2(label) or _try_v1(label)
    except OSError:
        return None
