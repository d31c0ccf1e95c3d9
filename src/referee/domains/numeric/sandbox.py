"""The numeric domain's sandbox: the grader's harness, numpy and scipy, and nothing else.

Candidate programs (and imported references, untrusted too) need numpy and scipy. The
sandbox's view hides the host's ``site-packages`` (it holds referee itself, whose families
contain the reference programs: a candidate that could import them would read the reference).
So only those two packages are made visible: :func:`numeric_site` builds, once per version
pair, a folder holding hard links to ``numpy``, ``scipy`` and their bundled shared libraries
(``numpy.libs``, ``scipy.libs``, which must sit beside them), and the sandbox binds that folder
read-only at ``/opt/paths/0``.

Importing scipy costs about half a second; every run paying it would dwarf the work. A warm
module preloaded into the fork server imports them once per worker (with one BLAS thread, so
a fork inherits no thread pool), and each run's fork gets them for free.

>>> with numeric_sandbox() as sb:                                   # doctest: +SKIP
...     sb.run_python("import numpy; print(numpy.ones(2).sum())").stdout
'2.0\\n'
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from referee.domains.kit import runner_sandbox
from referee.errors import ConfigError, SandboxError
from referee.sandbox import Limits, Sandbox
from referee.verify.function import HARNESS_MODULE, HARNESS_SOURCE

__all__ = ["NUMERIC_PACKAGES", "WARM_MODULE", "numeric_sandbox", "numeric_site"]

#: The packages (and their bundled libraries' folders) the sandbox sees.
NUMERIC_PACKAGES = ("numpy", "scipy")
#: The preloaded module that imports them in each fork-server worker.
WARM_MODULE = "referee_numeric_warm"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "referee" / "numeric"

_WARM_SOURCE = """
import os, sys
# One BLAS thread: a fork inherits no thread pool, and a run's CPU time is its own.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
sys.path.insert(0, {path!r})
import numpy, scipy, scipy.integrate, scipy.optimize, scipy.linalg, scipy.special
import scipy.interpolate, scipy.fft
"""


def _installed(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ConfigError(
            f"the numeric domain needs {name!r} on the host (pip install numpy scipy)"
        )
    return Path(spec.origin).parent


def _link_tree(source: Path, target: Path) -> None:
    """``target`` as a copy of ``source`` made of hard links (a real copy across devices)."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link, symlinks=True)


def numeric_site(cache: Path = CACHE) -> Path:
    """The folder holding only numpy and scipy (with their libraries), built on first use.

    Built under a temporary name and renamed into place, so concurrent builders never see
    half a folder; keyed by the packages' versions, so an upgrade builds a new one.
    """
    import numpy
    import scipy  # type: ignore[import-untyped]

    key = f"numpy-{numpy.__version__}-scipy-{scipy.__version__}"
    site = cache / key
    if (site / ".complete").exists():
        return site
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=cache))
    try:
        for name in NUMERIC_PACKAGES:
            package = _installed(name)
            _link_tree(package, staging / name)
            libs = package.parent / f"{name}.libs"
            if libs.is_dir():
                _link_tree(libs, staging / libs.name)
        (staging / ".complete").write_text(key)
        os.chmod(staging, 0o755)
        try:
            staging.rename(site)
        except OSError:  # another process finished first: use its folder
            if not (site / ".complete").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return site


def numeric_sandbox(*, warm: bool = True, **kwargs: Any) -> Sandbox:
    """A sandbox with the grader's harness, numpy and scipy preloaded in its Python workers.

    ``kwargs`` go to :class:`~referee.sandbox.Sandbox` (``backend``, ``python_workers``...).
    With ``warm`` (the default) every worker has finished importing before this returns: a
    worker still importing scipy under load would otherwise eat into the first run's time
    limit, and a short one could time out through no fault of the program.
    """
    site = numeric_site()
    paths = tuple(kwargs.pop("python_paths", ()))
    sandbox = runner_sandbox(
        {HARNESS_MODULE: HARNESS_SOURCE}, python_paths=(site, *paths), **kwargs
    )
    # The mount point of the folder inside the sandbox (the host path for the local backend).
    inside = sandbox.python_paths[0] if sandbox.python_paths else str(site)
    sandbox.preload[WARM_MODULE] = _WARM_SOURCE.format(path=inside)
    if warm and sandbox.backend != "local":
        try:
            _warm(sandbox)
        except BaseException:
            sandbox.close()
            raise
    return sandbox


def _warm(sandbox: Sandbox) -> None:
    """One trivial run per worker at once, so that each worker is taken and waited for."""
    from concurrent.futures import ThreadPoolExecutor

    def run(_: int) -> None:
        r = sandbox.run_python("import numpy, scipy\n", limits=Limits(timeout_s=120))
        if r.exit_code != 0:
            raise SandboxError(f"the numeric sandbox could not import numpy and scipy: {r.stderr}")

    with ThreadPoolExecutor(sandbox.python_workers) as pool:
        list(pool.map(run, range(sandbox.python_workers)))
