"""``Sandbox``: the one object users hold to run untrusted code.

>>> from referee.sandbox import Sandbox, Limits
>>> with Sandbox() as sb:                                     # doctest: +SKIP
...     r = sb.run_python("print(sum(range(10)))")            # fast path: fork server
...     r.stdout, r.exit_code
('45\\n', 0)
>>> with Sandbox() as sb:                                     # doctest: +SKIP
...     sb.run(["sh", "-c", "echo $0"], limits=Limits(timeout_s=2)).stdout
'sh\\n'

A sandbox owns its scratch area (a tmpfs on root machines), its cgroup parent and a pool of
fork-server workers that starts on the first ``run_python``. Close it (or use ``with``) to
remove all of them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from referee.errors import ConfigError, SandboxError
from referee.sandbox.bubblewrap import BubblewrapRunner
from referee.sandbox.cgroups import Cgroups, detect_cgroups
from referee.sandbox.cputime import stretched
from referee.sandbox.deadline import clip_limits
from referee.sandbox.forkserver import ForkServerPool, ForkWorker
from referee.sandbox.host import Scratch, UidPool
from referee.sandbox.lease import Lease
from referee.sandbox.limits import Limits
from referee.sandbox.local import LocalRunner
from referee.sandbox.metering import record_run
from referee.sandbox.resident import Resident
from referee.sandbox.result import ExecResult
from referee.sandbox.toolchains import Toolchain, find_toolchain
from referee.sandbox.view import SandboxView
from referee.sandbox.workspace import Workspace

__all__ = ["PACKAGES_MOUNT", "PATHS_MOUNT", "Backend", "Sandbox"]

Backend = Literal["bwrap", "local"]
#: Where ``python_packages`` appear inside the sandbox (add it to ``sys.path`` to import them).
PACKAGES_MOUNT = "/opt/packages"
#: Where ``python_paths`` appear: ``/opt/paths/0``, ``/opt/paths/1``, ... in the order given.
PATHS_MOUNT = "/opt/paths"


class Sandbox:
    """Isolated execution of commands and Python programs.

    ``backend="bwrap"`` (the default) is the real sandbox and fails with a clear
    :class:`~referee.errors.SandboxUnavailable` when bubblewrap is missing. ``backend="local"``
    is the unsafe, no-isolation backend for trusted code on machines without bubblewrap.

    ``python_workers`` is the size of the fork-server pool (default: one more than CPUs).
    ``python_packages`` names host packages (pure Python: pytest and what it needs) to make
    visible read-only at ``/opt/packages``; nothing else of site-packages is. ``python_paths``
    are whole directories (a repository's own site-packages) made visible read-only at
    ``/opt/paths/<i>``; ``self.python_paths`` lists those mount points.
    ``limits`` are the defaults for runs that pass none. ``preload`` maps module names to
    source that every fast-path worker compiles once at start, so runs import them for free.
    ``toolchains`` names languages (``"c"``, ``"java"``, ``"rust"``, ...; see
    :mod:`referee.sandbox.toolchains`) whose compilers and runtimes the sandbox must see; their
    directories are bound read-only, and ``self.toolchains`` maps each name to its
    :class:`~referee.sandbox.toolchains.Toolchain`.
    ``warm_imports`` names installed modules (``"pytest"``) each fast-path worker imports once at
    start, with :data:`PACKAGES_MOUNT` on ``sys.path`` only while it does (not the
    ``python_paths``): a run that imports them finds them already in ``sys.modules``.
    """

    def __init__(
        self,
        backend: Backend = "bwrap",
        *,
        python_workers: int | None = None,
        limits: Limits | None = None,
        scratch_mb: int = 4096,
        preload: dict[str, str] | None = None,
        python_packages: tuple[str, ...] = (),
        python_paths: tuple[str | Path, ...] = (),
        toolchains: tuple[str, ...] = (),
        warm_imports: tuple[str, ...] = (),
    ) -> None:
        if backend not in ("bwrap", "local"):
            raise ConfigError(f"unknown sandbox backend {backend!r}; use 'bwrap' or 'local'")
        self.backend = backend
        self.limits = limits or Limits()
        self.preload = dict(preload or {})
        self.warm_imports = tuple(warm_imports)
        self.python_packages = tuple(python_packages)
        self.python_paths: list[str] = []
        self.toolchains: dict[str, Toolchain] = {name: find_toolchain(name) for name in toolchains}
        # One worker more than cores: while one worker's run computes, another's supervisor and
        # the host are busy with the previous result (measured: 2 cores, 3 workers, +25%).
        self.python_workers = python_workers or (os.cpu_count() or 1) + 1
        self._pool: ForkServerPool | None = None
        self._pool_lock = threading.Lock()
        self._warmer: threading.Thread | None = None
        self._residents: list[Resident] = []
        self._local: LocalRunner | None = None
        self._cgroups: Cgroups | None = None
        self._scratch: Scratch | None = None
        if backend == "local":
            self._local = LocalRunner()
            return
        self._scratch = Scratch(size_mb=scratch_mb)
        try:
            python_source = self._scratch.expose(Path(sys.base_prefix), "python")
            self.view = SandboxView(
                python_source=python_source,
                extra_ro_binds=(
                    *self._package_binds(python_packages),
                    *self._path_binds(python_paths),
                    *self._toolchain_binds(),
                ),
            )
            self._cgroups = detect_cgroups()
            self.uids = UidPool()
            self._runner = BubblewrapRunner(
                self.view, cgroups=self._cgroups, scratch=self._scratch, uids=self.uids
            )
        except BaseException:
            self._scratch.close()
            raise

    def _package_binds(self, names: tuple[str, ...]) -> list[tuple[str, str]]:
        """Host packages (pure Python, e.g. pytest) visible read-only at /opt/packages/<name>."""
        import importlib.util

        assert self._scratch is not None
        binds = []
        for name in names:
            spec = importlib.util.find_spec(name)
            if spec is None or spec.origin is None:
                raise ConfigError(f"python package {name!r} is not installed; pip install it")
            origin = Path(spec.origin)
            source = origin.parent if origin.name == "__init__.py" else origin
            exposed = self._scratch.expose(source, f"pkg-{name}")
            binds.append((str(exposed), f"{PACKAGES_MOUNT}/{source.name}"))
        return binds

    def _toolchain_binds(self) -> list[tuple[str, str]]:
        """The directories the toolchains need that the view lacks (headers, a sysroot...)."""
        assert self._scratch is not None
        binds: dict[str, str] = {}
        for tc in self.toolchains.values():
            for host, dest in tc.binds:
                binds.setdefault(dest, host)
        return [
            (str(self._scratch.expose(Path(host), f"tc-{i}")), dest)
            for i, (dest, host) in enumerate(sorted(binds.items()))
        ]

    def _path_binds(self, paths: tuple[str | Path, ...]) -> list[tuple[str, str]]:
        """Whole directories (a per-repository site-packages, say) read-only at /opt/paths/<i>."""
        assert self._scratch is not None
        binds = []
        for i, path in enumerate(paths):
            source = Path(path).resolve()
            if not source.is_dir():
                raise ConfigError(f"python path {str(path)!r} is not a directory")
            exposed = self._scratch.expose(source, f"path-{i}")
            binds.append((str(exposed), f"{PATHS_MOUNT}/{i}"))
        self.python_paths = [f"{PATHS_MOUNT}/{i}" for i in range(len(paths))]
        return binds

    # ---- running ------------------------------------------------------------------------
    def run(
        self,
        argv: list[str],
        *,
        files: Mapping[str, bytes | str] | None = None,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        workspace: Workspace | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a command in a fresh sandbox. ``files`` go into the workspace first.

        Under :func:`referee.sandbox.deadline.deadline` the wall-clock limit is cut to the time
        left, so the deadline kills the run; under :func:`referee.sandbox.metering.metering`
        the run's cost is counted."""
        limits, env = stretched(limits or self.limits, env)
        limits = clip_limits(limits)
        runner = self._local if self._local is not None else self._runner
        return record_run(
            runner.run(argv, files=files, stdin=stdin, limits=limits, workspace=workspace, env=env)
        )

    def run_python(
        self,
        source: str | bytes,
        *,
        name: str = "main.py",
        argv: list[str] | None = None,
        files: Mapping[str, bytes | str] | None = None,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        workspace: Workspace | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run Python source on the fast path (a fork of a warm, sandboxed interpreter).

        The program runs as ``/workspace/<name>`` with ``sys.argv == argv or [name]``. Thread-safe:
        concurrent calls use different workers. A deadline in force cuts the wall-clock limit,
        as for :meth:`run`.
        """
        limits, env = stretched(limits or self.limits, env)
        limits = clip_limits(limits)
        run = self._local.run_python if self._local is not None else self.pool.run
        result = run(
            source,
            name=name,
            argv=argv,
            files=files,
            stdin=stdin,
            limits=limits,
            workspace=workspace,
            env=env,
        )
        return record_run(result)

    @property
    def pool(self) -> ForkServerPool:
        with self._pool_lock:
            if self._pool is None:
                assert self._scratch is not None
                self._pool = ForkServerPool(
                    self.view,
                    cgroups=self._cgroups,
                    scratch=self._scratch,
                    uids=self.uids,
                    workers=self.python_workers,
                    preload=self.preload,
                    warm_imports=self.warm_imports,
                    warm_paths=(PACKAGES_MOUNT,),
                )
            return self._pool

    def warm(self) -> None:
        """Start the fast-path workers now, in the background, so that the first
        :meth:`run_python` finds them ready (or nearly) while the caller does other work
        (``referee verify`` loads its tasks meanwhile). A start that fails here is tried again,
        and its error raised, by the first run. Does nothing if they are started already."""
        if self._local is not None or self._pool is not None or self._warmer is not None:
            return

        def start() -> None:
            with contextlib.suppress(Exception):
                self.pool  # noqa: B018 - starts the pool

        self._warmer = threading.Thread(target=start, name="referee-sandbox-warm", daemon=True)
        self._warmer.start()

    @contextlib.contextmanager
    def lease(self) -> Iterator[Lease]:
        """Hold one fast-path worker for several runs on its own workspace (see
        :class:`~referee.sandbox.lease.Lease`): nothing is copied in or out, and commands run as
        forks. The workspace is emptied when the block ends. The ``local`` backend has no
        workers to hold."""
        if self._local is not None:
            raise SandboxError("the local backend has no fork-server workers to lease")
        with self.pool.held() as worker:
            yield Lease(worker, self.limits)

    def resident(
        self,
        source: str,
        *,
        limits: Limits,
        name: str = "resident.py",
        env: dict[str, str] | None = None,
        max_requests: int = 1000,
    ) -> Resident:
        """A program that stays up in a fork-server worker of its own (not one of the pool's)
        and answers requests one at a time (see :class:`~referee.sandbox.resident.Resident`):
        for work too small to pay for a fork per request. Closed with the sandbox, or by its
        own ``close``. The ``local`` backend has no workers to keep a program in."""
        if self._local is not None or self._scratch is None:
            raise SandboxError("the local backend has no fork-server workers for a resident")
        with self._pool_lock:
            index = 1000 + len(self._residents)
            worker = ForkWorker(
                self.view,
                cgroups=self._cgroups,
                scratch=self._scratch,
                uids=self.uids,
                index=index,
                preload=self.preload,
                warm_imports=self.warm_imports,
                warm_paths=(PACKAGES_MOUNT,),
            )
            worker.start()
            resident = Resident(
                worker, source, limits=limits, name=name, env=env, max_requests=max_requests
            )
            self._residents.append(resident)
        return resident

    def workspace(self) -> Workspace:
        """A new empty workspace for a multi-turn session (snapshot/restore for branching).

        It holds a sandbox uid until :meth:`Workspace.close` (or the end of its ``with``).
        """
        if self._scratch is None:
            return Workspace.temporary()
        uids = self.uids
        uid = uids.acquire()
        try:
            root = self._scratch.new_dir("session", uid)
            # The uid goes back to the pool when the workspace is closed (once, however often).
            return Workspace(root, owner=uid, cleanup=True, on_close=lambda: uids.release(uid))
        except BaseException:
            uids.release(uid)
            raise

    def isolation(self) -> list[str]:
        """The layers a run gets on this machine, e.g. ``['bwrap', ..., 'cgroup-v1']``."""
        if self._local is not None:
            return self._local.isolation()
        return self._runner.isolation()

    # ---- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        warmer, self._warmer = self._warmer, None
        if warmer is not None:
            warmer.join()
        residents, self._residents = self._residents, []
        for resident in residents:
            resident.close()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._cgroups is not None:
            self._cgroups.close()
            self._cgroups = None
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
