"""One error tree for the whole framework.

Every error referee raises on purpose is a :class:`RefereeError`. Messages say what went wrong
*and how to fix it*, because the person reading them is usually in the middle of a training run.
Third-party exceptions are translated into this tree at the edge where they enter.

What a sandboxed *program* does (crash, time out, exhaust memory) is never an exception: it is
data in an :class:`~referee.sandbox.ExecResult`. These errors are for bad input and broken
infrastructure only.

Exit codes: :func:`exit_code_for` maps an error to the exit status a command line reports, from
one table (:data:`EXIT_CODES`): 2 for what the user can fix (a bad setting or argument, a bad
task file, a missing sandbox layer, a run or trajectory that is not there), 1 for every other
failure of referee or its infrastructure. 0 is success, whatever a sandboxed program did.
"""

from __future__ import annotations

__all__ = [
    "EXIT_CODES",
    "ConfigError",
    "NotFoundError",
    "PolicyError",
    "RefereeError",
    "SandboxError",
    "SandboxUnavailable",
    "StoreError",
    "TaskError",
    "UnsafePathError",
    "VerifierError",
    "exit_code_for",
]


class RefereeError(Exception):
    """Base of every error referee raises deliberately."""


class ConfigError(RefereeError):
    """A setting or argument is invalid; the message names it and the accepted values."""


class TaskError(RefereeError):
    """A task or task file is malformed; the message names the file, line and field."""


class SandboxError(RefereeError):
    """The sandbox itself failed (not the program inside it): an infrastructure error."""


class SandboxUnavailable(SandboxError):
    """A layer the sandbox needs is missing on this machine (for example bubblewrap)."""


class UnsafePathError(ConfigError):
    """A file name would leave the workspace (absolute, `..`, a symlink on the way)."""


class VerifierError(RefereeError):
    """A verifier could not reach a decision for reasons outside the solution."""


class PolicyError(RefereeError):
    """A policy (model endpoint, local model, script) failed to produce an action."""


class StoreError(RefereeError):
    """The trajectory store could not read or write."""


class NotFoundError(StoreError):
    """What was asked for is not in the store: no store at that path, no such run or trajectory.

    Raised instead of a plain :class:`StoreError` so that callers tell "you named something that
    is not there" (fixable by the user) from "the store is broken" without matching message text.
    """


#: Error class -> exit status. The most specific class in an error's MRO decides, so
#: ``SandboxUnavailable`` (2) wins over ``SandboxError`` (1 through ``RefereeError``).
EXIT_CODES: dict[type[BaseException], int] = {
    ConfigError: 2,
    TaskError: 2,
    SandboxUnavailable: 2,
    NotFoundError: 2,
    RefereeError: 1,
}


def exit_code_for(exc: BaseException) -> int:
    """The exit status for ``exc``: :data:`EXIT_CODES` of its most specific listed class, else 1.

    >>> exit_code_for(NotFoundError("no run 'r9'")), exit_code_for(StoreError("disk full"))
    (2, 1)
    """
    for klass in type(exc).__mro__:
        if klass in EXIT_CODES:
            return EXIT_CODES[klass]
    return 1
