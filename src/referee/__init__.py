"""referee: post-training language models with reinforcement learning on verifiable tasks.

The public API. Each name is documented where it is defined; ``referee --help`` lists the CLI.
"""

from referee.errors import (
    ConfigError,
    PolicyError,
    RefereeError,
    SandboxError,
    SandboxUnavailable,
    StoreError,
    TaskError,
    UnsafePathError,
    VerifierError,
)
from referee.sandbox import ExecResult, Limits, Sandbox, Snapshot, Workspace

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ExecResult",
    "Limits",
    "PolicyError",
    "RefereeError",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "Snapshot",
    "StoreError",
    "TaskError",
    "UnsafePathError",
    "VerifierError",
    "Workspace",
    "__version__",
]
