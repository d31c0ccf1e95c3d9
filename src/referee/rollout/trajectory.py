"""The ``Trajectory``: one episode of a policy in an environment, as it is stored.

Everything needed to inspect, replay or train on an episode: the first messages, every turn
(the assistant message with its token ids and log-probabilities where the policy returned
them, the observations, step metrics and timings), the verdict, and what went wrong. A bad
rollout is data, not a crash: ``error`` says whether the fault was the infrastructure's
(sandbox, policy server, environment bug: not the model's doing, never trained on, retried) or
the model's (it broke the protocol in a way the environment could not turn into an observation).

>>> t = Trajectory(task_id="demo/add-v1", policy="scripted", env="code")
>>> t.reward is None and t.ok
True
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.rollout.cost import Cost
from referee.verify.verdict import Verdict

__all__ = ["TRAJECTORY_SCHEMA_VERSION", "ErrorKind", "Trajectory", "TrajectoryError", "Turn"]

TRAJECTORY_SCHEMA_VERSION = 1
ErrorKind = Literal["infra", "model"]


class TrajectoryError(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: ErrorKind
    #: Where it happened: "policy", "env.reset", "env.step", "env.verify", "verifier".
    where: str
    message: str


class Turn(BaseModel):
    model_config = ConfigDict(frozen=True)
    index: int
    assistant: dict[str, Any]
    observations: list[dict[str, Any]] = Field(default_factory=list)
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    policy_s: float = 0.0  # time waiting for the policy
    env_s: float = 0.0  # time in env.step
    metrics: dict[str, float] = Field(default_factory=dict)


class Trajectory(BaseModel):
    model_config = ConfigDict(frozen=False)

    schema_version: int = TRAJECTORY_SCHEMA_VERSION
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    run_id: str | None = None
    task_id: str
    split: str = "train"
    policy: str
    env: str
    #: Rollouts of one task sampled together (GRPO's group) share a group id.
    group_id: str | None = None
    sample_index: int = 0
    step: int | None = None  # the training step that produced it, if any
    messages: list[dict[str, Any]] = Field(default_factory=list)  # from env.reset
    turns: list[Turn] = Field(default_factory=list)
    verdict: Verdict | None = None
    end_reason: str = ""  # StepResult.reason of the last step
    error: TrajectoryError | None = None
    attempts: int = 1  # 1 + the retries after infrastructure errors
    timings: dict[str, float] = Field(
        default_factory=dict
    )  # reset_s, policy_s, env_s, verify_s, total_s
    started_at: float = 0.0  # unix seconds
    finished_at: float = 0.0
    #: What the rollout cost (sandbox, wall time, tokens, bytes stored); zeros in records
    #: written before costs were kept.
    cost: Cost = Field(default_factory=Cost)
    #: The distribution-shift wrappers the episode ran under, innermost first, each with what
    #: it did (:func:`referee.envs.shift.shift_record`); empty for a clean episode.
    shift: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def reward(self) -> float | None:
        """The verifier's reward; None when no verdict was reached or it was an infra error."""
        if self.verdict is None or self.verdict.infra_error or self.error is not None:
            return None
        return self.verdict.reward

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.verdict is not None and self.verdict.passed

    @property
    def ok(self) -> bool:
        """No infrastructure fault: the trajectory can be trained on and counted."""
        return self.error is None or self.error.kind != "infra"

    @property
    def completion_tokens(self) -> int:
        return sum(t.completion_tokens for t in self.turns)

    @property
    def prompt_tokens(self) -> int:
        return sum(t.prompt_tokens for t in self.turns)

    @property
    def tool_calls(self) -> int:
        return sum(len(t.assistant.get("tool_calls") or []) for t in self.turns)

    def final_text(self) -> str:
        """The last assistant message's text (the answer of a single-turn episode)."""
        for t in reversed(self.turns):
            content = t.assistant.get("content")
            if isinstance(content, str):
                return content
        return ""
