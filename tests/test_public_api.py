"""The public API is what ``referee.__all__`` says; changing it is a deliberate act."""

import referee

PINNED = [
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


def test_all_is_pinned():
    assert referee.__all__ == PINNED


def test_every_name_resolves_and_errors_share_one_root():
    for name in referee.__all__:
        assert getattr(referee, name) is not None
    for name in (
        "ConfigError",
        "TaskError",
        "SandboxError",
        "VerifierError",
        "PolicyError",
        "StoreError",
        "SandboxUnavailable",
        "UnsafePathError",
    ):
        assert issubclass(getattr(referee, name), referee.RefereeError)
