"""What a person is shown of one trajectory, ready to render (in the browser or the terminal).

:func:`trajectory_view` gathers a trajectory with everything that explains it: the task's
prompt, every turn with its tool calls and observations (long texts clipped, with the count of
what was left out), the verdict per test, the flags, the alerts that name it, its queue items,
its labels, and whether its task or verifier is quarantined.

>>> view = trajectory_view(store, trajectory_id)                     # doctest: +SKIP
>>> [t.status for t in view.tests]                                    # doctest: +SKIP
['passed', 'failed']
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from referee.errors import StoreError
from referee.rollout.trajectory import Trajectory
from referee.track.audit import alerts_for
from referee.track.store import AlertRow, AuditItemRow, LabelRow, TrackStore
from referee.verify.verdict import Flag, TestOutcome

__all__ = ["Clipped", "ToolCallView", "TrajectoryView", "TurnView", "clip", "trajectory_view"]

#: Characters of one observation or message shown before it is clipped: enough for a stack
#: trace, short enough that a page of twenty turns stays readable.
CLIP = 4_000


@dataclass(frozen=True)
class Clipped:
    """A text cut to a length, and how many characters were left out."""

    text: str
    omitted: int = 0

    def __str__(self) -> str:
        return self.text


def clip(text: Any, limit: int = CLIP) -> Clipped:
    """``text`` (any value: non-strings become JSON) cut to ``limit`` characters.

    >>> clip("abcdef", 4)
    Clipped(text='abcd', omitted=2)
    """
    if not isinstance(text, str):
        text = json.dumps(text, indent=2, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return Clipped(text)
    return Clipped(text[:limit], len(text) - limit)


@dataclass(frozen=True)
class ToolCallView:
    id: str
    name: str
    arguments: Clipped


@dataclass(frozen=True)
class ObservationView:
    role: str
    name: str
    text: Clipped


@dataclass(frozen=True)
class TurnView:
    index: int
    content: Clipped
    tool_calls: list[ToolCallView]
    observations: list[ObservationView]
    completion_tokens: int
    finish_reason: str
    policy_s: float
    env_s: float


@dataclass(frozen=True)
class TrajectoryView:
    trajectory: Trajectory
    prompt: list[tuple[str, Clipped]]  # (role, text)
    turns: list[TurnView]
    tests: list[TestOutcome]
    flags: list[Flag]
    alerts: list[AlertRow]
    items: list[AuditItemRow]
    labels: list[LabelRow]
    task_quarantined: bool
    verifier_quarantined: bool
    difficulty: float | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def verifier(self) -> str:
        return self.trajectory.verdict.verifier if self.trajectory.verdict else ""


def _arguments(raw: Any) -> Clipped:
    # Tool arguments arrive as a JSON string; shown indented, they are readable code and data.
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            return clip(raw)
        if isinstance(parsed, dict) and len(parsed) == 1:
            (only,) = parsed.values()
            if isinstance(only, str):  # {"code": "..."}: show the code itself
                return clip(only)
        return clip(parsed)
    return clip(raw)


def _turn(turn: Any) -> TurnView:
    calls = []
    for call in turn.assistant.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        calls.append(
            ToolCallView(
                id=str(call.get("id", "")) if isinstance(call, dict) else "",
                name=str(fn.get("name", "?")),
                arguments=_arguments(fn.get("arguments", "")),
            )
        )
    observations = [
        ObservationView(
            role=str(o.get("role", "tool")),
            name=str(o.get("name", "")),
            text=clip(o.get("content", o)),
        )
        for o in turn.observations
    ]
    content = turn.assistant.get("content")
    return TurnView(
        index=turn.index,
        content=clip(content if isinstance(content, str) else (content or "")),
        tool_calls=calls,
        observations=observations,
        completion_tokens=turn.completion_tokens,
        finish_reason=turn.finish_reason,
        policy_s=turn.policy_s,
        env_s=turn.env_s,
    )


def trajectory_view(store: TrackStore, trajectory_id: str) -> TrajectoryView:
    """Everything shown about one trajectory; StoreError when the store has no such id."""
    t = store.trajectory(trajectory_id)
    difficulty = None
    prompt: list[tuple[str, Clipped]]
    try:
        task = store.task(t.task_id)
        prompt = [(str(m.role), clip(m.content)) for m in task.prompt]
        difficulty = task.difficulty.estimate
    except StoreError:  # tasks are recorded by runs that call add_tasks; not all do
        prompt = [(str(m.get("role", "")), clip(m.get("content", ""))) for m in t.messages]
    verdict = t.verdict
    items = [i for i in store.audit_items() if i.trajectory_id == t.id]
    verifier = verdict.verifier if verdict else ""
    return TrajectoryView(
        trajectory=t,
        prompt=prompt,
        turns=[_turn(turn) for turn in t.turns],
        tests=list(verdict.tests) if verdict else [],
        flags=list(verdict.flags) if verdict else [],
        alerts=alerts_for(store, t.id, t.run_id),
        items=items,
        labels=store.labels(t.id),
        task_quarantined=t.task_id in store.quarantined("task"),
        verifier_quarantined=bool(verifier) and verifier in store.quarantined("verifier"),
        difficulty=difficulty,
        counts=verdict.counts() if verdict else {},
    )
