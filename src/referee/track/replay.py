"""Replaying a stored multi-turn episode in a fresh environment, to judge its final state again.

A multi-turn answer is the state the environment was in when the episode ended (a workspace, a
shop's orders, a shell system), not one text. :func:`replay` makes a fresh environment of the
kind the trajectory names, resets it on the task, sends it the recorded assistant messages in
order, checking that each step gives back the tool results that were recorded, and then judges
the state reached with ``verify()``. A record that cannot be replayed faithfully is not judged;
the reason says exactly why:

* it ran under distribution-shift wrappers (their perturbations are not replayed);
* its episode ended in a fault of the environment or the policy (the state is incomplete);
* its environment is not known here, or cannot be made;
* the first messages differ from the record (the task or the environment changed since);
* a step's tool results differ from the record at turn *k* (the state would not be the one the
  policy saw: a nondeterministic tool, or a changed environment);
* the environment ended the episode before the record did.

>>> import asyncio                                                         # doctest: +SKIP
>>> asyncio.run(replay(trajectory, task, env_factory(verifiers, runtime))).verdict  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.errors import RefereeError
from referee.rollout.trajectory import Trajectory
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

if TYPE_CHECKING:
    from referee.envs.base import Environment
    from referee.envs.runtime import CodeRuntime
    from referee.verify.dispatch import VerifierSet

__all__ = ["EnvFactory", "Replayed", "env_factory", "replay"]

#: ``(environment name, task) -> a fresh environment``.
EnvFactory = Callable[[str, Task], "Environment"]
#: Seconds one replayed reset, step or verify may take.
STEP_TIMEOUT_S = 300.0
_SHOWN = 120


@dataclass(frozen=True)
class Replayed:
    """The verdict on the replayed episode's final state, or why it was not judged."""

    verdict: Verdict | None
    note: str | None = None
    turns: int = 0


def env_factory(verifiers: VerifierSet, runtime: CodeRuntime) -> EnvFactory:
    """Environments as the server's sessions make them: the code environments on ``runtime``,
    a domain's environment with ``verifiers``' judge of the task's kind (shared, so a thousand
    replays share one sandbox)."""
    from referee.envs.registry import env_keywords, make_env

    def make(name: str, task: Task) -> Environment:
        takes = env_keywords(name)
        kwargs: dict[str, Any] = {"runtime": runtime}
        if takes is not None and "verifier" in takes:
            kwargs["verifier"] = verifiers.verifier(task.kind)
        if takes is not None:
            kwargs = {k: v for k, v in kwargs.items() if k in takes}
        return make_env(name, **kwargs)

    return make


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    """What a message list says, for comparing a replay with its record (roles and contents;
    ids and metadata left out)."""
    out = []
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
        out.append(f"{m.get('role')}: {text}")
    return out


def _first_difference(replayed: list[str], recorded: list[str]) -> str:
    for got, want in zip(replayed, recorded, strict=False):
        if got != want:
            return f"recorded {want[:_SHOWN]!r}, replayed {got[:_SHOWN]!r}"
    return f"{len(recorded)} message(s) recorded, {len(replayed)} replayed"


def _cannot(t: Trajectory) -> str | None:
    """Why ``t`` cannot be replayed at all (None: it can be tried)."""
    if t.shift:
        from referee.envs.shift.base import shift_label

        return (
            f"ran under distribution-shift wrappers ({shift_label(t.shift)}): their "
            "perturbations are not "
            "replayed, so the state would differ"
        )
    if t.error is not None and t.error.where != "verifier":
        return (
            f"the episode ended in a fault ({t.error.kind} at {t.error.where}: "
            f"{t.error.message[:_SHOWN]}); its final state was never complete"
        )
    if not t.env:
        return "the record names no environment"
    return None


async def replay(t: Trajectory, task: Task, make: EnvFactory) -> Replayed:
    """Replay ``t``'s assistant messages in a fresh environment made by ``make`` and judge the
    final state; see the module docstring. Never raises for what the record holds."""
    why = _cannot(t)
    if why is not None:
        return Replayed(None, why)
    try:
        env = make(t.env, task)
    except RefereeError as e:
        return Replayed(None, f"environment {t.env!r} cannot be made here: {e}")
    done = 0
    try:
        first = await asyncio.wait_for(env.reset(task), STEP_TIMEOUT_S)
        if t.messages and _texts(list(first)) != _texts(t.messages):
            diff = _first_difference(_texts(list(first)), _texts(t.messages))
            return Replayed(
                None, f"the first messages differ from the record (the task changed?): {diff}"
            )
        for turn in t.turns:
            if env.done:
                return Replayed(
                    None,
                    f"the environment ended the replay after turn {done} of {len(t.turns)} "
                    "(the record goes on)",
                    done,
                )
            result = await asyncio.wait_for(env.step(turn.assistant), STEP_TIMEOUT_S)
            done += 1
            got, want = _texts(list(result.observations)), _texts(turn.observations)
            if got != want:
                return Replayed(
                    None,
                    f"tool results differ from the record at turn {done} of {len(t.turns)}: "
                    f"{_first_difference(got, want)}",
                    done,
                )
        verdict = await asyncio.wait_for(env.verify(), STEP_TIMEOUT_S)
        return Replayed(verdict, None, done)
    except Exception as e:  # the replay's fault, reported as not judged
        where = f"turn {done + 1}" if done < len(t.turns) else "verify"
        return Replayed(None, f"the replay failed at {where}: {type(e).__name__}: {e}", done)
    finally:
        with contextlib.suppress(Exception):
            await env.close()
