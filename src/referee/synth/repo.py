"""Repository intake: a local folder or a PyPI source distribution, read into memory.

``open_repository("pypi:toolz==1.2.0")`` fetches the sdist with pip (``pip download --no-deps
--no-binary :all:``) into the cache and unpacks it; ``open_repository("path/to/project")``
reads a checkout. Either way the result is a :class:`Repository`: its files (what a task's
snapshot holds), where its importable code lives (``src/`` layout or the root), its test files
and ``conftest.py`` files, and the test dependencies its metadata declares.

Trust: pip may run the sdist's build backend to read its metadata, as ``pip download`` always
does; that is the user's choice of project, like ``pip install``. From here on nothing of the
repository runs outside the sandbox: baseline runs, mutants and candidate patches all run in it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import subprocess
import sys
import tarfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import ConfigError

__all__ = ["Repository", "open_repository"]

CACHE = Path("~/.cache/referee").expanduser()
_SKIP_DIRS = {
    ".git",
    ".hg",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    ".idea",
    ".github",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "node_modules",
    ".eggs",
}
_MAX_FILE = 1 << 20
_MAX_TOTAL = 64 << 20
_TEST_PATTERNS = ("test_*.py", "*_test.py")
# The grader brings its own pytest and coverage; a repository's pins of them are not installed.
_GRADER_OWNED = {"pytest", "coverage", "pytest-cov", "pluggy", "iniconfig"}


@dataclass(frozen=True)
class Repository:
    """A project as synthesis sees it. ``files`` are relative paths to bytes."""

    name: str
    version: str
    origin: str
    files: dict[str, bytes] = field(repr=False)
    source_roots: tuple[str, ...]
    packages: tuple[str, ...]
    test_files: tuple[str, ...]
    conftests: tuple[str, ...]
    requirements: tuple[str, ...]

    @property
    def python_files(self) -> list[str]:
        """Importable source files (not tests), under the source roots' packages."""
        roots = [f"{r}/{p}/" if r else f"{p}/" for r in self.source_roots for p in self.packages]
        return sorted(
            f
            for f in self.files
            if f.endswith(".py")
            and f.startswith(tuple(roots))
            and f not in self.test_files
            and f not in self.conftests
            and "/tests/" not in f"/{f}"
        )

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}" if self.version else self.name

    def text(self, path: str) -> str:
        return self.files[path].decode("utf-8")


def check_source(source: str) -> None:
    """Refuse, in no time, a ``source`` that is neither a folder nor a pinned
    ``pypi:NAME==VERSION`` (a :class:`ConfigError`), before any work is reported."""
    if source.startswith("pypi:"):
        spec = source.removeprefix("pypi:")
        if "==" not in spec:
            raise ConfigError(f"pin the version: pypi:{spec}==X.Y (got pypi:{spec})")
    elif not Path(source).expanduser().is_dir():
        raise ConfigError(
            f"repository source {source!r} is neither a folder nor pypi:NAME==VERSION"
        )


def open_repository(source: str, *, cache: Path = CACHE) -> Repository:
    """Read ``source``: ``pypi:NAME==VERSION`` or a local folder."""
    check_source(source)
    if source.startswith("pypi:"):
        root, origin = _fetch_sdist(source.removeprefix("pypi:"), cache)
        return _read(root, origin)
    path = Path(source).expanduser()
    return _read(path.resolve(), str(path.resolve()))


def _fetch_sdist(spec: str, cache: Path) -> tuple[Path, str]:
    key = hashlib.sha256(spec.encode()).hexdigest()[:16]
    where = cache / "sdists" / key
    unpacked = where / "src"
    if not unpacked.is_dir():
        (where / "download").mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(where / "download"),
            spec,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        archives = sorted((where / "download").glob("*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise ConfigError(
                f"could not fetch the source distribution of {spec}: "
                f"{done.stderr.strip()[-400:] or 'pip found no .tar.gz'}"
            )
        tmp = where / "unpacking"
        with tarfile.open(archives[0]) as tar:
            tar.extractall(tmp, filter="data")
        tops = [p for p in tmp.iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise ConfigError(f"unexpected layout of the sdist of {spec}: {len(tops)} top folders")
        tops[0].rename(unpacked)
        tmp.rmdir()
    return unpacked, f"pypi:{spec}"


def _read(root: Path, origin: str) -> Repository:
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts[:-1]):
            continue
        if not path.is_file() or path.is_symlink() or path.suffix in (".pyc", ".so", ".pyd"):
            continue
        size = path.stat().st_size
        if size > _MAX_FILE:
            continue
        total += size
        if total > _MAX_TOTAL:
            raise ConfigError(f"{origin} has more than {_MAX_TOTAL >> 20} MB of files under 1 MB")
        files[rel.as_posix()] = path.read_bytes()
    meta = _metadata(files)
    src = any(f.startswith("src/") and f.endswith("/__init__.py") for f in files)
    roots = ("src",) if src else ("",)
    packages = _packages(files, roots[0])
    if not packages:
        raise ConfigError(f"{origin}: no Python package found (a folder with __init__.py)")
    tests = tuple(
        f for f in files if any(fnmatch.fnmatch(f.rsplit("/", 1)[-1], p) for p in _TEST_PATTERNS)
    )
    if not tests:
        raise ConfigError(
            f"{origin}: no test files (test_*.py or *_test.py); synthesis needs a suite"
        )
    name = str(meta.get("name") or root.name)
    return Repository(
        name=name,
        version=str(meta.get("version") or ""),
        origin=origin,
        files=files,
        source_roots=roots,
        packages=packages,
        test_files=tuple(sorted(tests)),
        conftests=tuple(sorted(f for f in files if f.rsplit("/", 1)[-1] == "conftest.py")),
        requirements=_test_requirements(files),
    )


def _packages(files: dict[str, bytes], root: str) -> tuple[str, ...]:
    prefix = f"{root}/" if root else ""
    out = set()
    for f in files:
        if f.startswith(prefix) and f.endswith("/__init__.py"):
            parts = f[len(prefix) :].split("/")
            if len(parts) == 2 and parts[0] not in ("tests", "test", "docs", "benchmarks"):
                out.add(parts[0])
    return tuple(sorted(out))


def _metadata(files: dict[str, bytes]) -> dict[str, object]:
    meta: dict[str, object] = {}
    if "PKG-INFO" in files:
        for line in files["PKG-INFO"].decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(": ")
            if key in ("Name", "Version") and key.lower() not in meta:
                meta[key.lower()] = value.strip()
    if "pyproject.toml" in files:
        project = _pyproject(files).get("project", {})
        if isinstance(project, dict):
            for key in ("name", "version"):
                if key not in meta and isinstance(project.get(key), str):
                    meta[key] = project[key]
    return meta


def _pyproject(files: dict[str, bytes]) -> dict[str, object]:
    try:
        return tomllib.loads(files["pyproject.toml"].decode("utf-8"))
    except (KeyError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _test_requirements(files: dict[str, bytes]) -> tuple[str, ...]:
    """Runtime dependencies plus the ``test``/``tests``/``testing`` extras and groups."""
    from packaging.requirements import InvalidRequirement, Requirement

    data = _pyproject(files)
    project = data.get("project", {})
    found: list[str] = []
    if isinstance(project, dict):
        found += [r for r in project.get("dependencies", []) if isinstance(r, str)]
        extras = project.get("optional-dependencies", {})
        if isinstance(extras, dict):
            for key in ("test", "tests", "testing"):
                found += [r for r in extras.get(key, []) if isinstance(r, str)]
    groups = data.get("dependency-groups", {})
    if isinstance(groups, dict):
        for key in ("test", "tests", "testing"):
            found += [r for r in groups.get(key, []) if isinstance(r, str)]
    for name in ("requirements-test.txt", "test-requirements.txt", "requirements/test.txt"):
        if name in files:
            lines = files[name].decode("utf-8", "replace").splitlines()
            found += [ln.split("#")[0].strip() for ln in lines if ln.strip() and ln[0] not in "#-"]
    out = []
    for req in found:
        try:
            parsed = Requirement(req)
        except InvalidRequirement:
            continue
        if parsed.marker is not None and not parsed.marker.evaluate():
            continue
        if parsed.name.lower() in _GRADER_OWNED or parsed.name.lower().startswith("pytest-"):
            continue
        if str(parsed) not in out:
            out.append(str(parsed))
    return tuple(out)
