"""`referee domains new NAME`: the package it writes installs, and referee reaches it by name.

The package is pip-installed into a throwaway venv that sees this checkout's source and the
running interpreter's site-packages (a .pth file), then `referee domains list` and `referee
domains check` run there in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import referee
from referee.domains.scaffold import LAYOUT, write_domain
from referee.errors import ConfigError

SRC = Path(referee.__file__).parents[1]


def test_a_new_domain_installs_lists_and_keeps_the_contract(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    paths = write_domain("gizmo", package)
    assert len(paths) == len(LAYOUT) and (package / "src/referee_gizmo/verifier.py").exists()
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # This checkout first, then every site-packages the running interpreter sees (hatchling).
    sites = [p for p in sys.path if p.endswith("site-packages")] or [
        sysconfig.get_paths()["purelib"]
    ]
    Path(site, "referee-test.pth").write_text("\n".join([str(SRC), *sites]) + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-build-isolation", "--no-index", str(package)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr

    def referee_cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python, "-m", "referee.cli", *args], capture_output=True, text=True, timeout=120
        )

    listed = referee_cli("domains", "list")
    assert listed.returncode == 0, listed.stderr
    row = next(line.split("\t") for line in listed.stdout.splitlines() if line.startswith("gizmo"))
    # The description: the generated register()'s docstring, as docs/domains.md says.
    assert row[:9] == [
        "gizmo", "0.1.0", "referee-gizmo",
        "Gizmo: Python functions computing a polynomial, judged on hidden inputs.",
        "gizmo-poly", "gizmo", "gizmo", "gizmo", "ok",
    ]  # fmt: skip
    assert any(line.startswith("sql\t") for line in listed.stdout.splitlines())
    checked = referee_cli("domains", "check", "gizmo", "--per-family", "2")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "gizmo: 6/6 checks hold" in checked.stderr
    unknown = referee_cli("domains", "check", "no-such-domain")
    assert unknown.returncode == 2 and "unknown domain 'no-such-domain'" in unknown.stderr


def test_new_refuses_a_taken_name_or_a_used_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'sql' is taken"):
        write_domain("sql", tmp_path / "a")
    with pytest.raises(ConfigError, match="lower-case words"):
        write_domain("Bad_Name", tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("")
    with pytest.raises(ConfigError, match="not an empty folder"):
        write_domain("fresh", tmp_path / "c")
