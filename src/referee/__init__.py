"""referee: post-training language models with reinforcement learning on verifiable tasks.

The public API. Each name is documented where it is defined; ``referee --help`` lists the CLI.
"""

from referee.errors import (
    ConfigError,
    NotFoundError,
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
    "CodeEnv",
    "ConfigError",
    "Curriculum",
    "Environment",
    "ExecResult",
    "FunctionVerifier",
    "Limits",
    "NotFoundError",
    "OpenAIPolicy",
    "PolicyError",
    "PytestVerifier",
    "RefereeError",
    "RolloutRunner",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "Snapshot",
    "StoreError",
    "Task",
    "TaskError",
    "TestgenVerifier",
    "TrainingSampler",
    "Trajectory",
    "TransformersPolicy",
    "UnsafePathError",
    "Verdict",
    "VerifierError",
    "Workspace",
    "__version__",
    "read_tasks",
    "synthesize",
    "write_tasks",
]


# Synthesis pulls in libcst, policies httpx or torch: `import referee` stays light until a name
# from them is used.
_LAZY = {
    "synthesize": "referee.synth.pipeline",
    "CodeEnv": "referee.envs",
    "Environment": "referee.envs",
    "OpenAIPolicy": "referee.policy",
    "TransformersPolicy": "referee.policy",
    "RolloutRunner": "referee.rollout",
    "Trajectory": "referee.rollout",
    "Curriculum": "referee.tasks.curriculum",
    "TrainingSampler": "referee.tasks.sampler",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'referee' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
