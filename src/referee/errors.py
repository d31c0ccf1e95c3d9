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

``referee exec`` is the one exception, because it relays a program's exit status the way
``timeout``, ``docker run`` and ``bwrap`` do: :func:`exec_exit_status` gives the program's own
status, 128+N for a signal N and 124 for a timeout, and :data:`EXEC_EXIT_CODES` gives referee's
own failures codes no program status is read as (125 for every error of referee; the sandbox
reports 126 for a command it could not invoke and 127 for one not found, as a shell does).
"""

from __future__ import annotations

from typing import Protocol

__all__ = [
    "COMMAND_EXIT_CODES",
    "EXEC_EXIT_CODES",
    "EXEC_FAILED",
    "EXEC_SIGNAL_BASE",
    "EXEC_TIMED_OUT",
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
    "exec_exit_status",
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


def exit_code_for(exc: BaseException, command: str | None = None) -> int:
    """The exit status for ``exc`` in ``command``: the command's table (:data:`EXEC_EXIT_CODES`
    for ``exec``, else :data:`EXIT_CODES`), its most specific listed class, else 1.

    >>> exit_code_for(NotFoundError("no run 'r9'")), exit_code_for(StoreError("disk full"))
    (2, 1)
    >>> exit_code_for(ConfigError("--timeout must be more than 0"), "exec")
    125
    """
    table = COMMAND_EXIT_CODES.get(command or "", EXIT_CODES)
    for klass in type(exc).__mro__:
        if klass in table:
            return table[klass]
    return 1


# ---- referee exec: the program's status is referee's ---------------------------------------

#: ``referee exec`` could not run the program (a bad option, a missing or failing sandbox):
#: docker run's code for its own errors, which no program status is confused with.
EXEC_FAILED = 125
#: The program ran past ``--timeout`` (what ``timeout`` exits with).
EXEC_TIMED_OUT = 124
#: A program ended by signal N exits 128+N, as a shell reports it.
EXEC_SIGNAL_BASE = 128

#: Error class -> exit status of ``referee exec``: every failure of referee itself is
#: :data:`EXEC_FAILED`, whatever :data:`EXIT_CODES` says for the other commands.
EXEC_EXIT_CODES: dict[type[BaseException], int] = {RefereeError: EXEC_FAILED}
#: Commands whose own failures use a table of their own (a usage error included).
COMMAND_EXIT_CODES: dict[str, dict[type[BaseException], int]] = {"exec": EXEC_EXIT_CODES}


class ProgramOutcome(Protocol):
    """What :func:`exec_exit_status` reads of a run (``referee.sandbox.ExecResult`` has it)."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def signal(self) -> int | None: ...
    @property
    def timed_out(self) -> bool: ...


def exec_exit_status(result: ProgramOutcome) -> int:
    """``referee exec``'s exit status for a program's ``result``: 124 when it timed out,
    128+N when signal N ended it, else its own exit status (126 and 127 come from the sandbox
    when the command could not be invoked or was not found).

    >>> from types import SimpleNamespace as R
    >>> [exec_exit_status(R(exit_code=c, signal=s, timed_out=t))
    ...  for c, s, t in [(3, None, False), (None, 9, False), (None, 9, True), (0, None, False)]]
    [3, 137, 124, 0]
    """
    if result.timed_out:
        return EXEC_TIMED_OUT
    if result.exit_code is None:
        return EXEC_SIGNAL_BASE + (result.signal or 0)
    return result.exit_code
