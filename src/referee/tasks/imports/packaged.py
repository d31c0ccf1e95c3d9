"""The data files of a benchmark that ships inside a package on the index, read without
importing the package.

Several public benchmarks come as Python packages whose modules pull heavy or conflicting
dependencies (``nvidia-bigcode-eval`` needs transformers and pins ``fsspec<2023.10``, which
referee's own ``fsspec`` range excludes; ``intercode-bench`` brings docker, a MySQL client and
scikit-learn) while the problems themselves are plain files inside it. Their import sources
(``referee tasks import verilogeval``, ``intercode-bash``, ``intercode-sql``) read those files
through the installed distribution's record (:mod:`importlib.metadata`), so the package can be
installed with ``pip install --no-deps`` (``requirements-benchmarks.lock``) and none of its
modules is ever imported.

A source names the distribution, the versions whose file layout it was written against, and
the files it reads; a missing distribution or one outside the range is a
:class:`~referee.errors.ConfigError` (exit 2) saying what to install.

>>> bench = PackagedBenchmark("verilogeval", "nvidia-bigcode-eval", ">=26.3,<27", "26.3")
>>> bench.install_hint()
"pip install --no-deps 'nvidia-bigcode-eval==26.3'"
"""

from __future__ import annotations

import importlib.metadata as md
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from referee.errors import ConfigError

__all__ = ["PackagedBenchmark"]


@dataclass(frozen=True)
class PackagedBenchmark:
    """A benchmark's data inside the distribution ``distribution``: ``source`` is the task
    source that reads it, ``versions`` the range whose layout it knows, ``tested`` the version
    pinned in ``requirements-benchmarks.lock``."""

    source: str
    distribution: str
    versions: str
    tested: str

    def install_hint(self) -> str:
        """The command that installs the tested version (its own dependencies are not needed)."""
        return f"pip install --no-deps '{self.distribution}=={self.tested}'"

    def version(self) -> str:
        """The installed version; a :class:`ConfigError` naming the install command when the
        distribution is missing or outside :attr:`versions`."""
        try:
            have = md.version(self.distribution)
        except md.PackageNotFoundError:
            raise ConfigError(
                f"task source {self.source!r} reads the benchmark's files from the package "
                f"{self.distribution}, which is not installed: run `{self.install_hint()}` "
                "(only its data files are read; its own dependencies are not needed)"
            ) from None
        try:
            ok = Version(have) in SpecifierSet(self.versions)
        except InvalidVersion:
            ok = False
        if not ok:
            raise ConfigError(
                f"task source {self.source!r} knows the file layout of {self.distribution} "
                f"{self.versions}, found {have}: run `{self.install_hint()}`"
            )
        return have

    def file(self, relative: str) -> Path:
        """The installed file ``relative`` (a path inside the distribution, e.g.
        ``bigcode_eval/tasks/datasets/verilog/VerilogEval_Human.jsonl``); a
        :class:`ConfigError` when the distribution does not hold it."""
        self.version()
        dist = md.distribution(self.distribution)
        path = Path(str(dist.locate_file(relative)))
        if not path.is_file():
            raise ConfigError(
                f"task source {self.source!r}: {self.distribution} {dist.version} has no file "
                f"{relative!r} (a broken install?): run `{self.install_hint()}`"
            )
        return path
