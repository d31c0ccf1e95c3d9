"""Packaging (issue 28): pyproject's light core and extras, their ranges, the lock that pins
them, referee.optional.EXTRAS in step with them, and a wheel that holds every file the code
reads by path (lazy_loader's stubs, the dashboard's templates, the sandbox runners' sources)."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from referee.optional import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
OPTIONAL: dict[str, list[str]] = PROJECT["optional-dependencies"]
#: Extras that only gather others.
AGGREGATES = {"domains", "all", "dev"}
#: Extras of tools for working on referee, not for running it: `all` leaves them out.
TOOLING = {"docs"}
#: What each trainer's adapter needs beside the trainer (bench/coinstall.py resolves each beside
#: its trainer): installed with the trainer, so `all` leaves them out too.
TRAINERS = {"verl", "openrlhf", "areal", "skyrl", "prime", "trl"}
#: Public benchmarks read from their packages, installed --no-deps from requirements-bench.lock
#: (their own dependencies are heavy and unused): `all` leaves them out.
BENCHMARKS = {"bench-intercode", "bench-agentbench", "bench-bfcl", "bench-tau2"}


def _expand(extra: str) -> list[Requirement]:
    """The requirements of ``extra``, self-references (``referee[train]``) followed."""
    out: list[Requirement] = []
    for spec in OPTIONAL[extra]:
        req = Requirement(spec)
        if canonicalize_name(req.name) == "referee":
            for inner in sorted(req.extras):
                out += _expand(inner)
        else:
            out.append(req)
    return out


def _lock() -> dict[str, str]:
    pins = {}
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    lines += (ROOT / "requirements-bench.lock").read_text().splitlines()
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_the_core_and_the_extras_are_ranges_with_a_lower_bound():
    for extra in [None, *(e for e in OPTIONAL if e != "dev")]:
        specs = PROJECT["dependencies"] if extra is None else OPTIONAL[extra]
        for spec in specs:
            req = Requirement(spec)
            if canonicalize_name(req.name) == "referee":
                assert not req.specifier, spec
                continue
            ops = {s.operator for s in req.specifier}
            assert ">=" in ops and "==" not in ops, f"{extra or 'core'}: {spec}"


def test_the_lock_pins_every_declared_requirement_within_its_range():
    pins = _lock()
    declared = [Requirement(s) for s in PROJECT["dependencies"]]
    declared += [r for extra in OPTIONAL for r in _expand(extra)]
    for req in declared:
        name = canonicalize_name(req.name)
        assert name in pins, f"requirements.lock lacks {req.name}"
        assert req.specifier.contains(pins[name], prereleases=True), (str(req), pins[name])


def test_no_core_requirement_belongs_to_an_extra():
    core = {canonicalize_name(Requirement(s).name) for s in PROJECT["dependencies"]}
    for extra in set(OPTIONAL) - {"dev"}:
        heavy = {canonicalize_name(r.name) for r in _expand(extra)}
        assert not core & heavy, (extra, core & heavy)


def test_all_gathers_every_extra_and_dev_gathers_all():
    assert set(OPTIONAL) >= TRAINERS
    assert set(OPTIONAL) - AGGREGATES - TOOLING - TRAINERS == set(EXTRAS)
    gathered = {canonicalize_name(r.name) for r in _expand("all")}
    for extra in set(EXTRAS) - BENCHMARKS:
        assert {canonicalize_name(r.name) for r in _expand(extra)} <= gathered, extra
    assert "referee[all]" in OPTIONAL["dev"]
    assert all(f"referee[{t}]" in OPTIONAL["dev"] for t in TOOLING)


def test_each_extra_brings_the_modules_require_extra_checks():
    """referee.optional.EXTRAS names import names; each must come from a distribution the
    extra declares (read from the installed distributions' top-level modules)."""
    providers = importlib.metadata.packages_distributions()
    for extra, modules in EXTRAS.items():
        declared = {canonicalize_name(r.name) for r in _expand(extra)}
        for module in modules:
            dists = {canonicalize_name(d) for d in providers.get(module, [])}
            assert dists, f"{module} is not installed here (the dev venv has every extra)"
            assert dists & declared, f"referee[{extra}] declares none of {dists} ({module})"


def _tracked_package_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "src/referee", "src/referee_tasks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [p.removeprefix("src/") for p in listed]


#: Files the code opens by path at run time rather than imports: lazy_loader's stubs
#: (attach_stub reads __init__.pyi), the dashboard's templates and static files, and the sources
#: that are sent into the sandbox (importlib.resources).
READ_BY_PATH = [
    "referee/py.typed",
    "referee/__init__.pyi",
    "referee/ui/templates/base.html",
    "referee/ui/static/app.js",
    "referee/ui/static/style.css",
    "referee/sandbox/_server.py",
    "referee/verify/harness.py",
    "referee/verify/_pytest_runner.py",
    "referee/domains/sql/sandbox_runner.py",
    "referee/domains/dataframe/sandbox_runner.py",
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling")
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-c", "import sys; from hatchling.build import build_wheel; "
         "print(build_wheel(sys.argv[1]))", str(out)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()[-1]  # fmt: skip
    return out / built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_the_wheel_holds_every_file_of_the_package(wheel_names):
    tracked = _tracked_package_files()
    stubs = [p for p in tracked if p.endswith(".pyi")]
    assert len(stubs) >= 10 and any(p.startswith("referee/ui/templates/") for p in tracked)
    missing = [p for p in tracked if p not in wheel_names]
    assert not missing, f"not in the wheel: {missing[:10]}"
    for path in READ_BY_PATH:
        assert path in wheel_names, path
    # Only the packages: no tests, benches or fixtures ride along.
    assert not [n for n in wheel_names if re.match(r"(tests|bench|examples)/", n)]


def test_the_wheel_declares_the_light_core(wheel, wheel_names):
    (meta,) = [n for n in wheel_names if n.endswith(".dist-info/METADATA")]
    with zipfile.ZipFile(wheel) as zf:
        lines = zf.read(meta).decode().splitlines()
    requires = [
        Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")
    ]
    always = {canonicalize_name(r.name) for r in requires if r.marker is None}
    assert always == {canonicalize_name(Requirement(s).name) for s in PROJECT["dependencies"]}
    assert not always & {"torch", "transformers", "ray", "duckdb", "pandas", "scipy", "fastapi"}
    provided = {
        line.split(":", 1)[1].strip() for line in lines if line.startswith("Provides-Extra:")
    }
    assert provided == set(OPTIONAL)
