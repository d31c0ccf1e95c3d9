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
from referee.tasks import Task, read_tasks, write_tasks
from referee.tasks.artifacts import ArtifactStore
from referee.verify import FunctionVerifier, PytestVerifier, TestgenVerifier, Verdict

__version__ = "0.1.0"

__all__ = [
    "ArtifactStore",
    "ConfigError",
    "ExecResult",
    "FunctionVerifier",
    "Limits",
    "PolicyError",
    "PytestVerifier",
    "RefereeError",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "Snapshot",
    "StoreError",
    "Task",
    "TaskError",
    "TestgenVerifier",
    "UnsafePathError",
    "Verdict",
    "VerifierError",
    "Workspace",
    "__version__",
    "read_tasks",
    "synthesize",
    "write_tasks",
]


def __getattr__(name: str) -> object:
    # Synthesis pulls in libcst; `import referee` stays light until it is used.
    if name == "synthesize":
        from referee.synth.pipeline import synthesize

        return synthesize
    raise AttributeError(f"module 'referee' has no attribute {name!r}")
