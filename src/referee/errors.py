"""One error tree for the whole framework.

Every error referee raises on purpose is a :class:`RefereeError`. Messages say what went wrong
*and how to fix it*, because the person reading them is usually in the middle of a training run.
Third-party exceptions are translated into this tree at the edge where they enter.

What a sandboxed *program* does (crash, time out, exhaust memory) is never an exception: it is
data in an :class:`~referee.sandbox.ExecResult`. These errors are for bad input and broken
infrastructure only.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "PolicyError",
    "RefereeError",
    "SandboxError",
    "SandboxUnavailable",
    "StoreError",
    "TaskError",
    "UnsafePathError",
    "VerifierError",
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
