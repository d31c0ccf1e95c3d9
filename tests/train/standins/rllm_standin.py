"""Stand-in mirroring rLLM's signatures at commit 9beb6e0f676a46d38858991fd79ac5f8e0b16d4c
(tests/trainers/fixtures/signatures/rllm.json). rLLM is not on the package index: this is not
rLLM, only its recorded class shapes, installed under rLLM's module names by :func:`install`
so that referee's adapter finds them the way it would find the real package."""

from __future__ import annotations

import sys
import types
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field


@dataclass(slots=True, kw_only=True)
class RewardOutputStandin:
    reward: float
    metadata: dict = field(default_factory=dict)
    is_correct: bool | None = None


@dataclass
class SignalStandin:
    name: str
    value: float
    metadata: dict = field(default_factory=dict)


@dataclass
class EvalOutputStandin:
    reward: float
    is_correct: bool
    signals: list[SignalStandin] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)


class StepStandin(BaseModel):
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    input: Any | None = None
    output: Any | None = None
    action: Any | None = None
    reward: float = 0.0
    done: bool = False
    metadata: dict | None = None
    prompt_ids: list[int] = []


class TrajectoryStandin(BaseModel):
    uid: str = Field(default_factory=lambda: str(uuid.uuid4()))
    name: str = "default"
    task: Any = None
    steps: list[StepStandin] = []
    reward: float | None = None
    input: dict | None = None
    output: Any = None
    signals: dict[str, float] = {}
    metadata: dict | None = None


class EpisodeStandin(BaseModel):
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    task: Any = None
    termination_reason: Any | None = None
    is_correct: bool = False
    session_id: str | None = None
    trajectories: list[TrajectoryStandin] = []
    artifacts: dict[str, Any] = {}
    metrics: dict = {}
    metadata: dict = {}


class WorkflowStandin(ABC):
    def __init__(
        self,
        rollout_engine: Any,
        executor: Any,
        timeout: float = 1e6,
        gamma: float = 0.0,
        reward_bonus_coeff: float = 0.0,
        store: Any = None,
        **kwargs: Any,
    ) -> None:
        self.rollout_engine = rollout_engine
        self.executor = executor
        self.timeout = timeout

    @abstractmethod
    async def run(self, task: dict, uid: str, **kwargs: Any) -> EpisodeStandin | None: ...


#: rLLM's module and class name -> the stand-in.
CLASSES: dict[str, tuple[str, type]] = {
    "rllm.rewards.reward_types.RewardOutput": ("rllm.rewards.reward_types", RewardOutputStandin),
    "rllm.eval.types.EvalOutput": ("rllm.eval.types", EvalOutputStandin),
    "rllm.eval.types.Signal": ("rllm.eval.types", SignalStandin),
    "rllm.types.Episode": ("rllm.types", EpisodeStandin),
    "rllm.types.Trajectory": ("rllm.types", TrajectoryStandin),
    "rllm.types.Step": ("rllm.types", StepStandin),
    "rllm.workflows.workflow.Workflow": ("rllm.workflows.workflow", WorkflowStandin),
}


def install(monkeypatch: Any) -> None:
    """Put the stand-ins in ``sys.modules`` under rLLM's module names (undone by monkeypatch)."""
    modules: dict[str, types.ModuleType] = {}
    for qualname, (module, cls) in CLASSES.items():
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name not in modules:
                modules[name] = types.ModuleType(name)
                modules[name].__path__ = []  # a package, so submodules import
        setattr(modules[module], qualname.rsplit(".", 1)[1], cls)
    for name, mod in modules.items():
        monkeypatch.setitem(sys.modules, name, mod)
