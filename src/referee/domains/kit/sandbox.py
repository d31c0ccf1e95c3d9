"""A domain's sandbox: referee's, with the domain's grader-side runner preloaded.

A domain that runs the candidate through a runner of its own (the SQL query runner, the
dataframe runner, the numeric harness) ships the runner as a module file of its package, read as
text and preloaded into every fork-server worker, so each run imports nothing of it again and
the host never imports it at all:

>>> box = runner_sandbox({"referee_sql_runner": runner_source("referee.domains.sql",
...                       "sandbox_runner.py")}, python_workers=2)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.sandbox import Sandbox

__all__ = ["runner_sandbox", "runner_source"]


def runner_source(package: str, filename: str) -> str:
    """The text of the module file ``filename`` of ``package`` (never imported on the host)."""
    return resources.files(package).joinpath(filename).read_text()


def runner_sandbox(runners: Mapping[str, str], **kwargs: Any) -> Sandbox:
    """A :class:`Sandbox` (``kwargs`` as it takes them) whose Python workers preload
    ``runners`` (module name -> source) beside any ``preload`` given."""
    from referee.sandbox import Sandbox  # here, not at import: registering a domain stays light

    preload = dict(kwargs.pop("preload", None) or {})
    preload.update(runners)
    return Sandbox(preload=preload, **kwargs)
