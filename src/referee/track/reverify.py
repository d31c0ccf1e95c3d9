"""Re-judging stored answers with today's verifiers (``referee reverify``): what changed.

A run's trajectories keep the verdict they got when they ran. After a verifier is fixed, or a
task's tests are, :func:`reverify` judges every stored single-turn answer again (the final
assistant text, read as the verifier reads it: :func:`referee.envs.answers.answer_for`), in the
sandbox, concurrently, and compares: each answer's old and new reward and pass, and a count per
change. Nothing stored is modified. A multi-turn episode's answer is the state its environment
ended in: given an environment factory, it is replayed in a fresh environment (the recorded
assistant messages in order, each step's tool results checked against the record) and the
state reached is judged (:mod:`referee.track.replay`); one that cannot be replayed faithfully
is skipped with the exact reason.

Trajectories come from a run folder (its ``track.sqlite``, else its ``trajectories.jsonl``), a
store file, or a JSONL file (:func:`load_trajectories`); tasks from ``--tasks`` (today's task
file: a fixed reference counts) or else the tasks the store recorded. An episode whose task is
unknown, that never got a verdict, or (without an environment factory) of more than one turn
is skipped.

>>> row = Change("t/a-v1", "tr1", 0.0, False, 1.0, True, "function", "function", None)
>>> row.change
'newly_passing'
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.errors import ConfigError
from referee.rollout.sink import JSONL_NAME, read_jsonl
from referee.rollout.trajectory import Trajectory
from referee.tasks.model import Task
from referee.track.schema import DB_NAME
from referee.verify.dispatch import VerifierSet
from referee.verify.verdict import Verdict

if TYPE_CHECKING:
    from referee.track.replay import EnvFactory, Replayed

__all__ = ["CHANGES", "Change", "ReverifyReport", "load_trajectories", "reverify"]

#: Every kind of change, in the summary's order.
CHANGES = (
    "unchanged",
    "newly_passing",
    "newly_failing",
    "reward_changed",
    "previously_unjudged",
    "infra_error",
    "skipped",
)


@dataclass(frozen=True)
class Change:
    """One stored answer judged again: old and new reward and pass (None: none)."""

    task_id: str
    trajectory_id: str
    old_reward: float | None
    old_passed: bool | None
    new_reward: float | None
    new_passed: bool | None
    old_verifier: str
    new_verifier: str
    note: str | None  # why skipped, or the infrastructure error

    @property
    def change(self) -> str:
        """One of :data:`CHANGES`."""
        if self.note is not None and self.new_reward is None:
            return "infra_error" if self.new_verifier else "skipped"
        if self.old_reward is None:
            return "previously_unjudged"
        if self.old_passed != self.new_passed:
            return "newly_passing" if self.new_passed else "newly_failing"
        if self.old_reward != self.new_reward:
            return "reward_changed"
        return "unchanged"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change}


@dataclass
class ReverifyReport:
    """Every answer's :class:`Change`, and the verifier versions: referee's today."""

    changes: list[Change]
    referee_version: str

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(CHANGES, 0)
        for c in self.changes:
            out[c.change] += 1
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "referee_version": self.referee_version,
            "summary": self.counts(),
            "changed": [c.as_dict() for c in self.changes if c.change != "unchanged"],
        }


def load_trajectories(source: str | os.PathLike[str]) -> tuple[list[Trajectory], list[Task]]:
    """The trajectories of a run folder, store file or JSONL file, and the tasks the store
    recorded (none for JSONL); :class:`ConfigError` naming ``source`` if it holds none."""
    path = Path(source)
    if path.is_dir():
        if (path / DB_NAME).is_file():
            return _from_store(path)
        if (path / JSONL_NAME).is_file():
            return read_jsonl(path / JSONL_NAME), []
        raise ConfigError(
            f"{path} is not a run folder: it holds neither {DB_NAME} nor {JSONL_NAME}"
        )
    if path.is_file():
        if path.name == DB_NAME:
            return _from_store(path.parent)
        return read_jsonl(path), []
    raise ConfigError(f"{path} does not exist; give a run folder or a trajectories JSONL file")


def _from_store(folder: Path) -> tuple[list[Trajectory], list[Task]]:
    from referee.track.store import TrackStore

    store = TrackStore(folder, create=False)
    try:
        return list(store.iter_trajectories()), store.tasks()
    finally:
        store.close()


def _skip(t: Trajectory, note: str) -> Change:
    old = t.verdict
    return Change(
        t.task_id, t.id, t.reward, t.passed if t.reward is not None else None, None, None,
        old.verifier if old else "", "", note,
    )  # fmt: skip


def reverify(
    trajectories: Sequence[Trajectory],
    tasks: Mapping[str, Task] | Iterable[Task],
    verifiers: VerifierSet,
    *,
    workers: int | None = None,
    make_env: EnvFactory | None = None,
) -> ReverifyReport:
    """Judge every stored answer of ``trajectories`` again with ``verifiers`` (concurrently,
    ``workers`` at once) against ``tasks``: single-turn answers as text, multi-turn episodes
    replayed in environments from ``make_env`` (:func:`referee.track.replay.env_factory`;
    None: they are skipped); see the module docstring."""
    from referee import __version__
    from referee.envs.answers import answer_for

    by_id = dict(tasks) if isinstance(tasks, Mapping) else {t.id: t for t in tasks}
    out: list[Change | None] = []
    todo: list[tuple[int, Trajectory, Task, str]] = []
    episodes: list[tuple[int, Trajectory, Task]] = []
    for t in trajectories:
        task = by_id.get(t.task_id)
        if task is None:
            out.append(_skip(t, "task not in the task file or store"))
        elif t.verdict is None and t.error is None:
            out.append(_skip(t, "no stored verdict"))
        elif not t.turns:
            out.append(_skip(t, "no turns: there is no answer to judge"))
        elif len(t.turns) > 1 and make_env is None:
            out.append(_skip(t, f"{len(t.turns)} turns: multi-turn episodes need an environment"))
        elif len(t.turns) > 1:
            episodes.append((len(out), t, task))
            out.append(None)
        else:
            todo.append((len(out), t, task, answer_for(task, t.final_text())))
            out.append(None)
    verdicts: list[Verdict | None] = list(
        verifiers.verify_many([(task, a) for _, _, task, a in todo], workers=workers)
    )
    notes: list[str | None] = [None] * len(todo)
    if episodes:
        assert make_env is not None
        replayed = _replay_all(episodes, make_env, workers or 4)
        todo += [(i, t, task, "") for i, t, task in episodes]
        verdicts += [r.verdict for r in replayed]
        notes += [r.note for r in replayed]
    for (i, t, _, _), v, note in zip(todo, verdicts, notes, strict=True):
        if v is None:
            out[i] = _skip(t, note or "not judged")
            continue
        old = t.verdict
        infra = v.infra_error
        out[i] = Change(
            t.task_id,
            t.id,
            t.reward,
            t.passed if t.reward is not None else None,
            None if infra else v.reward,
            None if infra else v.passed,
            old.verifier if old else "",
            v.verifier or "?",
            infra,
        )
    return ReverifyReport([c for c in out if c is not None], __version__)


def _replay_all(
    episodes: Sequence[tuple[int, Trajectory, Task]], make_env: EnvFactory, workers: int
) -> list[Replayed]:
    """Every episode replayed (``workers`` at once), in order."""
    from referee.track.replay import replay

    async def run_all() -> list[Replayed]:
        gate = asyncio.Semaphore(max(1, workers))

        async def one(t: Trajectory, task: Task) -> Replayed:
            async with gate:
                return await replay(t, task, make_env)

        return list(await asyncio.gather(*(one(t, task) for _, t, task in episodes)))

    return asyncio.run(run_all())
