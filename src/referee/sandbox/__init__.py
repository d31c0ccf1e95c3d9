"""Isolated execution of untrusted code: bubblewrap namespaces, seccomp, rlimits, cgroups, and a
fork server for Python at about a millisecond per run.

>>> from referee.sandbox import Sandbox, Limits
>>> with Sandbox() as sb:                                   # doctest: +SKIP
...     sb.run_python("print('hi')", limits=Limits(timeout_s=1)).stdout
'hi\\n'
"""

from referee.sandbox.core import Backend, Sandbox
from referee.sandbox.limits import Limits
from referee.sandbox.result import ExecResult
from referee.sandbox.workspace import Snapshot, Workspace

__all__ = ["Backend", "ExecResult", "Limits", "Sandbox", "Snapshot", "Workspace"]
