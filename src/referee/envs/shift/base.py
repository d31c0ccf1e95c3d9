"""``ShiftWrapper``: the base of the distribution-shift wrappers, and what they record.

A shift wrapper is an :class:`~referee.envs.base.Environment` around another one (any: the code
environment, a domain's, a :class:`~referee.service.remote_env.RemoteEnvironment`). It changes
what the policy *sees* or how its tools *behave*, never what is judged: :meth:`verify` is the
inner environment's, on the inner environment's real state, so a shifted episode's reward means
the same as a clean one's.

Randomness is reproducible per episode: every decision draws from a generator seeded by the
wrapper's name, its ``seed``, the task's id, the episode's index and the turn (and, inside a
turn, the message or call), so a rerun with the same seed perturbs the same episodes the same
way, whatever ran before or alongside. The episode index is the number of earlier resets of the
wrapper, or, for environments made by :func:`~referee.envs.shift.spec.shift_factory` (one per
rollout, as the rollout runner wants them), the number of earlier episodes of the same task made
by that factory.

What a wrapper did is counted per turn: the counts go into the step's metrics (as
``shift.<Wrapper>.<count>``, so they land on the trajectory's turns) and into :meth:`record`,
which the rollout runner stores as ``Trajectory.shift`` (see :func:`shift_record`).

>>> from referee.envs.shift import TruncateObservations
>>> env = TruncateObservations(GuessEnv(), max_chars=100)   # doctest: +SKIP
>>> env.spec                                                 # doctest: +SKIP
'TruncateObservations(max_chars=100,keep=head,seed=0)'
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = [
    "EpisodeCounter",
    "ShiftSnapshot",
    "ShiftWrapper",
    "probability",
    "shift_label",
    "shift_record",
]


def probability(name: str, p: float) -> float:
    """``p`` checked as the probability parameter ``name`` of a wrapper."""
    if not 0.0 <= p <= 1.0:
        raise ConfigError(f"{name} must be a probability from 0 to 1, got {p}")
    return float(p)


class EpisodeCounter:
    """Hands out episode indices per (task, wrapper position), shared by the environments of one
    factory, so that the *k*-th episode of a task gets index *k* even though each episode runs
    in an environment of its own. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()

    def next(self, key: str) -> int:
        with self._lock:
            index = self._seen[key]
            self._seen[key] += 1
            return index


@dataclass(frozen=True)
class ShiftSnapshot:
    """A wrapper's episode state with the inner environment's snapshot."""

    inner: Any
    task_id: str
    episode: int
    turn: int
    turns: tuple[tuple[tuple[str, int], ...], ...] = field(default_factory=tuple)


class ShiftWrapper(Environment):
    """Delegates everything to ``env``; subclasses override :meth:`perturb` (each observation
    of a step) or :meth:`shift_step` (the whole step, e.g. to intercept tool calls).

    ``seed``: the wrapper's seed (see the module docstring). ``counter`` and ``position``: set by
    :func:`~referee.envs.shift.spec.wrap_env` to share episode indices between environments.
    Attributes the wrappers do not define (``answer()``, ``reason``, ``runtime`` of a
    :class:`~referee.envs.code.CodeEnv`) are the inner environment's.
    """

    def __init__(
        self,
        env: Environment,
        *,
        seed: int = 0,
        counter: EpisodeCounter | None = None,
        position: int = 0,
    ) -> None:
        self.env = env
        self.seed = seed
        self.name = getattr(env, "name", type(env).__name__)
        self._counter = counter
        self._position = position
        self._resets = 0
        self._task_id = ""
        self._episode = 0
        self._turn = 0
        self._turns: list[dict[str, int]] = []

    # ---- what a subclass describes ------------------------------------------------------
    def params(self) -> dict[str, Any]:
        """The wrapper's parameters (without ``seed``), as its spec writes them."""
        return {}

    def perturb(
        self, message: ChatMessage, rng: random.Random, counts: Counter[str]
    ) -> ChatMessage:
        """One observation as the policy will see it; counts what was changed. Identity here."""
        return message

    async def shift_step(self, message: ChatMessage, counts: Counter[str]) -> StepResult:
        """The step as the policy experiences it: by default the inner step, each of its
        observations passed through :meth:`perturb`."""
        result = await self.env.step(message)
        observations = [
            self.perturb(m, self.rng("obs", i), counts) for i, m in enumerate(result.observations)
        ]
        return replace(result, observations=observations)

    # ---- seeding and records ------------------------------------------------------------
    def rng(self, *parts: object) -> random.Random:
        """The generator of one decision of this episode's current turn (see the module)."""
        key = "|".join(
            str(p)
            for p in (
                type(self).__name__,
                self.seed,
                self._task_id,
                self._episode,
                self._turn,
                *parts,
            )
        )
        return random.Random(key)  # a str seed is hashed with SHA-512: stable across runs

    @property
    def spec(self) -> str:
        """The wrapper as a spec string that :func:`~referee.envs.shift.spec.parse_shift`
        reads back: ``Name(k=v,...,seed=S)``."""
        items = [*self.params().items(), ("seed", self.seed)]
        return f"{type(self).__name__}({','.join(f'{k}={_show(v)}' for k, v in items)})"

    def record(self) -> dict[str, Any]:
        """What this wrapper did in the current (or last) episode: its name, spec, parameters,
        seed, episode index, the counts of each turn and their totals."""
        totals: Counter[str] = Counter()
        for t in self._turns:
            totals.update(t)
        return {
            "wrapper": type(self).__name__,
            "spec": self.spec,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in self.params().items()},
            "seed": self.seed,
            "episode": self._episode,
            "turns": [dict(t) for t in self._turns],
            "totals": dict(totals),
        }

    # ---- the Environment protocol -------------------------------------------------------
    async def reset(self, task: Task) -> list[ChatMessage]:
        self._task_id = task.id
        if self._counter is not None:
            self._episode = self._counter.next(f"{self._position}|{task.id}")
        else:
            self._episode = self._resets
        self._resets += 1
        self._turn, self._turns = 0, []
        return await self.env.reset(task)

    def tools(self) -> list[dict[str, Any]]:
        return self.env.tools()

    async def step(self, message: ChatMessage) -> StepResult:
        counts: Counter[str] = Counter()
        result = await self.shift_step(message, counts)
        self._turns.append({k: v for k, v in counts.items() if v})
        self._turn += 1
        prefix = f"shift.{type(self).__name__}."
        metrics = {**result.metrics, **{prefix + k: float(v) for k, v in counts.items()}}
        return replace(result, metrics=metrics)

    @property
    def done(self) -> bool:
        return self.env.done

    async def verify(self) -> Verdict:
        # Never shifted: the reward is the inner environment's judgement of its real state.
        return await self.env.verify()

    async def snapshot(self) -> ShiftSnapshot:
        inner = await self.env.snapshot()
        turns = tuple(tuple(sorted(t.items())) for t in self._turns)
        return ShiftSnapshot(inner, self._task_id, self._episode, self._turn, turns)

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, ShiftSnapshot):
            raise ConfigError(
                f"{type(self).__name__}.restore takes what its snapshot() returned, "
                f"not {type(snapshot).__name__}"
            )
        await self.env.restore(snapshot.inner)
        self._task_id, self._episode, self._turn = snapshot.task_id, snapshot.episode, snapshot.turn
        self._turns = [dict(t) for t in snapshot.turns]

    async def close(self) -> None:
        await self.env.close()

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this wrapper lacks; "env" itself is guarded so that a
        # half-built wrapper does not recurse.
        if name == "env" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.env, name)


def _show(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "|".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def shift_record(env: Environment) -> list[dict[str, Any]]:
    """The records of every shift wrapper around ``env``'s innermost environment, innermost
    first; ``[]`` for an environment without any (a clean one)."""
    records = []
    while isinstance(env, ShiftWrapper):
        records.append(env.record())
        env = env.env
    return records[::-1]


def shift_label(records: list[dict[str, Any]]) -> str:
    """A short name for a stack of shifts, ``"clean"`` for none: the specs joined by ``+``."""
    return "+".join(r.get("spec", r.get("wrapper", "?")) for r in records) or "clean"
