"""``RepoVenv``: a repository task's virtual environment, with the project's test dependencies.

Named for what it is (a Python virtualenv), not "environment": :mod:`referee.envs` holds the
RL environments a policy acts in, an unrelated idea.

Sandboxed runs see its ``site-packages`` read-only (``Sandbox(python_paths=...)``) and have no
network. The project itself is *not* installed: it is imported from the task's workspace, so
that a patch changes what the tests import. Dependencies are installed from wheels only
(``--only-binary :all:``), which runs none of their code on the host; a dependency without a
wheel is reported by name. Virtualenvs are cached by the hash of Python version and
requirements, so all tasks of a repository (and repositories with the same needs) share one.

>>> env = RepoVenv(())
>>> env.key == RepoVenv(()).key
True
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from referee.errors import ConfigError

__all__ = ["RepoVenv"]

CACHE = Path("~/.cache/referee/envs").expanduser()


@dataclass(frozen=True)
class RepoVenv:
    """``requirements`` (PEP 508 strings) installed for the running Python's version."""

    requirements: tuple[str, ...]
    cache: Path = CACHE

    @property
    def key(self) -> str:
        body = json.dumps([sys.version_info[:2], sorted(self.requirements)])
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @property
    def root(self) -> Path:
        return self.cache / self.key

    @property
    def site_packages(self) -> Path:
        v = sys.version_info
        return self.root / "lib" / f"python{v.major}.{v.minor}" / "site-packages"

    def to_json(self) -> dict[str, object]:
        return {
            "requirements": list(self.requirements),
            "python": "{}.{}".format(*sys.version_info[:2]),
        }

    def ensure(self) -> Path:
        """Create the environment if needed; return its site-packages folder."""
        done = self.root / ".referee-ready"
        if done.exists():
            return self.site_packages
        self.root.parent.mkdir(parents=True, exist_ok=True)
        self._sh([sys.executable, "-m", "venv", "--without-pip", "--clear", str(self.root)])
        if self.requirements:
            self._sh(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "--python",
                    str(self.root / "bin" / "python"),
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--only-binary",
                    ":all:",
                    *self.requirements,
                ]
            )
        self.site_packages.mkdir(parents=True, exist_ok=True)
        done.write_text(json.dumps(self.to_json()))
        return self.site_packages

    def _sh(self, cmd: list[str]) -> None:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise ConfigError(
                f"could not build the test environment ({' '.join(self.requirements) or 'empty'}):"
                f" {r.stderr.strip()[-600:]}; a dependency without a wheel for this Python "
                "cannot be installed (source builds would run its code outside the sandbox)"
            )
