"""The curriculum: which training tasks to sample next, from each task's recent pass rate.

RL on verifiable tasks learns only from tasks the policy sometimes solves and sometimes does not.
The curriculum tracks every task's recent outcomes and spends the sampling budget there.

**Estimated pass rate.** For each task the tracker keeps the rewards ``r`` in [0, 1] of its last
``W`` rollouts (``window``, 32 by default) and smooths them with a Beta(alpha, beta) prior
(Beta(1, 1), uniform, by default), each reward counted as a fractional success::

    p = (alpha + sum(r)) / (alpha + beta + m)          m = rollouts in the window (m <= W)

With 0/1 rewards ``p`` is the posterior mean of the task's pass probability: one pass in one try
gives ``p = 2/3``, not 1, so a single lucky rollout does not make a task look solved, and an
unseen task starts at the prior mean ``alpha / (alpha + beta)``.

**Weights.** GRPO's advantage is a rollout's reward minus its group's mean, so a group carries a
gradient only when its rewards differ. For a task with pass probability ``p`` the variance of
one rollout's reward is ``p(1-p)`` (for rewards in [0, 1] with mean ``p`` it is the largest
variance possible, by the Bhatia-Davis inequality), and the chance that a group of ``G`` is not
all-equal, ``1 - p**G - (1-p)**G``, is likewise largest at ``p = 1/2`` and vanishes at 0 and 1.
So each eligible task gets the weight::

    w = max(p(1-p), floor) + unseen_bonus * [the task has never been attempted]

The floor keeps every eligible task reachable (an estimate can be wrong, and only sampling
corrects it); the bonus makes the curriculum look at every task early instead of trusting the
prior. In ``uniform`` mode (the baseline of the comparison experiment) ``w = 1``.

**Sampling.** A batch of ``n`` distinct tasks is drawn by weighted sampling without replacement
(Efraimidis and Spirakis 2006: each task gets the key ``log(u) / w`` with ``u`` uniform in
(0, 1], the ``n`` largest keys win). The first task drawn is task ``i`` with probability exactly
``w_i / sum(w)``, and each later one follows the same rule among those left. With
``replace=True`` the ``n`` draws are independent with those probabilities.

**Retirement.** Once a task's window holds at least ``retire_min_attempts`` rollouts and the
share of them that passed (reward >= ``pass_threshold``) is at least ``retire_threshold``, the
task is retired: never sampled again, its compute better spent elsewhere. This uses the raw
share, not ``p``: the minimum number of attempts already guards against luck, and with the
prior a threshold of 1.0 could never be met.

**Never solved.** :meth:`Curriculum.never_solved` lists tasks attempted at least ``min_attempts``
times that never passed once. They are often broken (a wrong reference, a flaky test) and are
where reward-hacking pressure is highest, so they go to audit rather than being trained on.

**Groups without signal.** :meth:`Curriculum.filter_groups` drops groups whose rewards are all
the same (all passed, all failed, or one constant partial reward): their advantages are all
zero. They still update the pass rates (:meth:`Curriculum.observe` does both).

Rewards of ``None`` (an infrastructure error: not the model's doing) are ignored everywhere.
Sampling is deterministic given the seed, and :meth:`Curriculum.state_dict` (plain JSON data,
the random generator's state included) lets a run resume exactly where it stopped.

>>> cur = Curriculum(["a", "b", "c"], seed=0)
>>> batch = cur.sample(2)
>>> len(set(batch)), cur.draws                               # two distinct tasks, one draw
(2, 1)
>>> cur.update(Group("a", (1.0, 0.0, 1.0, 0.0)))             # p = (1 + 2) / (2 + 4) = 0.5
>>> cur.tracker.estimate("a")
0.5
>>> report = cur.filter_groups([Group("a", (1, 1)), Group("b", (0, 1))])
>>> [g.task_id for g in report.kept], report.counts()
(['b'], {'all_passed': 1})
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from referee.errors import ConfigError, TaskError

__all__ = [
    "Curriculum",
    "CurriculumConfig",
    "FilterReport",
    "Group",
    "GroupLike",
    "PassRateTracker",
    "TaskSummary",
]

STATE_FORMAT = "referee.curriculum/1"
#: Rewards closer than this count as equal (rewards are shares of tests, so real differences
#: are far larger; this only absorbs float noise).
_REWARD_EPS = 1e-9

Mode = Literal["pass_rate", "uniform"]


# ---- groups ------------------------------------------------------------------------------------


class GroupLike(Protocol):
    """The rollouts of one task sampled together: anything with a task id and their rewards."""

    @property
    def task_id(self) -> str: ...

    @property
    def rewards(self) -> Sequence[float | None]: ...


@dataclass(frozen=True)
class Group:
    """A group of rollouts of one task, by reward (``None``: an infrastructure error).

    Booleans are rewards too (``True`` is 1.0), so ``Group(task.id, [t.passed for t in ...])``
    works as well as ``Group(task.id, [t.reward for t in ...])``.
    """

    task_id: str
    rewards: Sequence[float | None]


def _rewards_of(group: GroupLike) -> list[float]:
    """The group's usable rewards, checked: floats in [0, 1], infrastructure errors left out."""
    out: list[float] = []
    for r in group.rewards:
        if r is None:
            continue
        value = float(r)
        if not (0.0 <= value <= 1.0):  # also rejects NaN
            raise ConfigError(
                f"task {group.task_id!r}: reward {r!r} is outside [0, 1]; the curriculum expects "
                "the verifier's reward (a share of tests passed) or a passed flag"
            )
        out.append(value)
    return out


G = TypeVar("G", bound=GroupLike)


@dataclass(frozen=True)
class FilterReport(Generic[G]):
    """The groups with a learning signal, and why the others were dropped.

    ``dropped`` holds ``(task_id, reason)`` pairs; the reasons are ``all_passed``,
    ``all_failed``, ``constant`` (every rollout got the same partial reward) and ``no_rewards``
    (every rollout was an infrastructure error).
    """

    kept: list[G]
    dropped: list[tuple[str, str]]

    @property
    def n_dropped(self) -> int:
        return len(self.dropped)

    def counts(self) -> dict[str, int]:
        """How many groups were dropped for each reason (reasons with none left out)."""
        out: dict[str, int] = {}
        for _, reason in self.dropped:
            out[reason] = out.get(reason, 0) + 1
        return out


# ---- configuration -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CurriculumConfig:
    """How the curriculum weighs, samples and retires tasks (see the module docstring).

    ``retire_threshold=None`` never retires. :meth:`uniform` is the comparison baseline.
    """

    mode: Mode = "pass_rate"
    window: int = 32
    prior_alpha: float = 1.0
    prior_beta: float = 1.0
    floor: float = 0.01
    unseen_bonus: float = 0.25
    #: A rollout passed when its reward is at least this (1.0: every test passed).
    pass_threshold: float = 1.0
    retire_threshold: float | None = 0.95
    retire_min_attempts: int = 16

    def __post_init__(self) -> None:
        def bad(name: str, why: str) -> ConfigError:
            return ConfigError(f"curriculum {name}={getattr(self, name)!r}: {why}")

        if self.mode not in ("pass_rate", "uniform"):
            raise bad("mode", "use 'pass_rate' or 'uniform'")
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            raise bad("window", "must be a whole number of rollouts, at least 1")
        for name in ("prior_alpha", "prior_beta"):
            if not (getattr(self, name) > 0 and math.isfinite(getattr(self, name))):
                raise bad(name, "a Beta prior needs a positive, finite parameter (1.0 is uniform)")
        if not (0 < self.floor <= 0.25):
            # p(1-p) is at most 0.25, so a larger floor would make every task weigh the same.
            raise bad("floor", "must be in (0, 0.25] so that no eligible task has probability 0")
        if not (self.unseen_bonus >= 0 and math.isfinite(self.unseen_bonus)):
            raise bad("unseen_bonus", "must be a finite number, 0 or more")
        if not (0 < self.pass_threshold <= 1):
            raise bad("pass_threshold", "must be in (0, 1]")
        if self.retire_threshold is not None and not (0 < self.retire_threshold <= 1):
            raise bad("retire_threshold", "must be in (0, 1], or None to never retire")
        if not (1 <= self.retire_min_attempts <= self.window):
            raise bad(
                "retire_min_attempts",
                f"must be between 1 and the window ({self.window}): retirement is judged on the "
                "rollouts in the window",
            )

    @classmethod
    def uniform(cls, **overrides: Any) -> CurriculumConfig:
        """The baseline: every task equally likely, none retired (pass rates still tracked)."""
        return cls(**{"mode": "uniform", "retire_threshold": None, **overrides})

    @property
    def prior_mean(self) -> float:
        return self.prior_alpha / (self.prior_alpha + self.prior_beta)


# ---- pass-rate tracking ------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskSummary:
    """What the tracker knows about one task (a snapshot)."""

    task_id: str
    attempts: int  # every rollout ever recorded, not only the window
    passes: int
    mean_reward: float  # over all attempts; 0.0 when unseen
    best_reward: float
    estimate: float  # the smoothed pass rate p over the window
    window_attempts: int
    window_passes: int
    first_seen: int | None  # steps
    last_seen: int | None


@dataclass
class _Stats:
    window: deque[float]
    attempts: int = 0
    passes: int = 0
    reward_sum: float = 0.0
    best: float = 0.0
    first_seen: int | None = None
    last_seen: int | None = None
    window_passes: int = 0  # kept in step with ``window``, so retirement checks are O(1)


class PassRateTracker:
    """Per-task outcomes: the last ``window`` rewards, lifetime counts, first and last step.

    >>> tr = PassRateTracker(window=4)
    >>> tr.record("t", [1.0, None, 0.0], step=3)        # None (infra error) is not counted
    2
    >>> s = tr.summary("t")
    >>> s.attempts, s.passes, s.first_seen, round(s.estimate, 3)
    (2, 1, 3, 0.5)
    """

    def __init__(
        self,
        *,
        window: int = 32,
        prior_alpha: float = 1.0,
        prior_beta: float = 1.0,
        pass_threshold: float = 1.0,
    ) -> None:
        # The config validates the numbers; the tracker has no other settings.
        cfg = CurriculumConfig(
            window=window,
            prior_alpha=prior_alpha,
            prior_beta=prior_beta,
            pass_threshold=pass_threshold,
            retire_min_attempts=1,
        )
        self.window = cfg.window
        self.prior_alpha = cfg.prior_alpha
        self.prior_beta = cfg.prior_beta
        self.pass_threshold = cfg.pass_threshold
        self._stats: dict[str, _Stats] = {}

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._stats

    def __len__(self) -> int:
        return len(self._stats)

    def task_ids(self) -> list[str]:
        """Every task with at least one recorded rollout, in the order first seen."""
        return list(self._stats)

    def _passed(self, reward: float) -> bool:
        return reward >= self.pass_threshold - _REWARD_EPS

    def record(self, task_id: str, rewards: Iterable[float | None], *, step: int) -> int:
        """Add a group's rewards (``None`` skipped); returns how many were recorded."""
        values = _rewards_of(Group(task_id, list(rewards)))
        if not values:
            return 0
        s = self._stats.get(task_id)
        if s is None:
            s = self._stats[task_id] = _Stats(window=deque(maxlen=self.window))
        for r in values:
            if len(s.window) == self.window and self._passed(s.window[0]):
                s.window_passes -= 1  # the oldest reward is about to fall out of the window
            s.window.append(r)
            passed = self._passed(r)
            s.window_passes += passed
            s.passes += passed
            s.attempts += 1
            s.reward_sum += r
            s.best = max(s.best, r)
        s.first_seen = step if s.first_seen is None else min(s.first_seen, step)
        s.last_seen = step if s.last_seen is None else max(s.last_seen, step)
        return len(values)

    def attempts(self, task_id: str) -> int:
        s = self._stats.get(task_id)
        return 0 if s is None else s.attempts

    def estimate(self, task_id: str) -> float:
        """The smoothed pass rate ``p`` over the window (the prior mean for an unseen task)."""
        s = self._stats.get(task_id)
        m, total = (0, 0.0) if s is None else (len(s.window), math.fsum(s.window))
        return (self.prior_alpha + total) / (self.prior_alpha + self.prior_beta + m)

    def window_share(self, task_id: str) -> tuple[int, int]:
        """``(passes, rollouts)`` in the window."""
        s = self._stats.get(task_id)
        return (0, 0) if s is None else (s.window_passes, len(s.window))

    def summary(self, task_id: str) -> TaskSummary:
        s = self._stats.get(task_id)
        if s is None:
            return TaskSummary(task_id, 0, 0, 0.0, 0.0, self.estimate(task_id), 0, 0, None, None)
        return TaskSummary(
            task_id=task_id,
            attempts=s.attempts,
            passes=s.passes,
            mean_reward=s.reward_sum / s.attempts,
            best_reward=s.best,
            estimate=self.estimate(task_id),
            window_attempts=len(s.window),
            window_passes=s.window_passes,
            first_seen=s.first_seen,
            last_seen=s.last_seen,
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            task_id: {
                "window": list(s.window),
                "attempts": s.attempts,
                "passes": s.passes,
                "reward_sum": s.reward_sum,
                "best": s.best,
                "first_seen": s.first_seen,
                "last_seen": s.last_seen,
            }
            for task_id, s in self._stats.items()
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        stats: dict[str, _Stats] = {}
        for task_id, d in state.items():
            window = deque((float(r) for r in d["window"]), maxlen=self.window)
            stats[str(task_id)] = _Stats(
                window=window,
                attempts=int(d["attempts"]),
                passes=int(d["passes"]),
                reward_sum=float(d["reward_sum"]),
                best=float(d["best"]),
                first_seen=None if d["first_seen"] is None else int(d["first_seen"]),
                last_seen=None if d["last_seen"] is None else int(d["last_seen"]),
                window_passes=sum(self._passed(r) for r in window),
            )
        self._stats = stats


# ---- the curriculum ----------------------------------------------------------------------------


@dataclass
class _Counters:
    groups: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


class Curriculum:
    """Samples training task ids by ``p(1-p)`` (or uniformly), tracks and retires them.

    It knows task *ids* only; :class:`referee.tasks.sampler.TrainingSampler` maps them to tasks
    and is what keeps held-out tasks out. Outcomes for an id that is not in the pool are refused
    rather than adding it, so no update path can bring a new task into training.

    >>> cfg = CurriculumConfig(retire_threshold=1.0, retire_min_attempts=4)
    >>> cur = Curriculum(["easy", "hard"], cfg, seed=1)
    >>> cur.update(Group("easy", [1, 1, 1, 1]), step=0)
    >>> cur.retired(), cur.eligible()
    ({'easy': 0}, ['hard'])
    """

    def __init__(
        self,
        task_ids: Iterable[str] = (),
        config: CurriculumConfig | None = None,
        *,
        seed: int = 0,
    ) -> None:
        self.config = config or CurriculumConfig()
        self.tracker = PassRateTracker(
            window=self.config.window,
            prior_alpha=self.config.prior_alpha,
            prior_beta=self.config.prior_beta,
            pass_threshold=self.config.pass_threshold,
        )
        self._rng = random.Random(seed)
        # A dict as an ordered set: iteration order is insertion order, so sampling is
        # reproducible for a given seed and order of tasks.
        self._pool: dict[str, None] = {}
        self._retired: dict[str, int] = {}
        self._quarantined: set[str] = set()
        self._draws = 0
        self._counters = _Counters()
        self.add_tasks(task_ids)

    # -- the pool --

    def add_tasks(self, task_ids: Iterable[str]) -> None:
        """Add ids to the pool (ids already there are left as they are)."""
        if isinstance(task_ids, str):
            raise ConfigError(f"add_tasks takes a list of task ids, got the string {task_ids!r}")
        for task_id in task_ids:
            if not isinstance(task_id, str) or not task_id:
                raise ConfigError(f"task ids are non-empty strings, got {task_id!r}")
            self._pool.setdefault(task_id, None)

    def start_from(self, outcomes: Mapping[str, Sequence[float | None]]) -> int:
        """Record earlier outcomes (a calibration's pass/fail pseudo-outcomes, say) as of step
        0, for the ids in the pool; ids outside it are left out. Returns how many were recorded.

        >>> cur = Curriculum(["a", "b"])
        >>> cur.start_from({"a": [1.0, 0.0, 0.0, 0.0], "elsewhere": [1.0]})
        1
        >>> cur.tracker.attempts("a"), cur.tracker.attempts("b")
        (4, 0)
        """
        recorded = 0
        for task_id, rewards in outcomes.items():
            if task_id in self._pool:
                self.tracker.record(task_id, rewards, step=0)
                recorded += 1
        return recorded

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(self._pool)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._pool

    def __len__(self) -> int:
        return len(self._pool)

    @property
    def draws(self) -> int:
        """How many batches :meth:`sample` has drawn (the default step of :meth:`update`)."""
        return self._draws

    def retired(self) -> dict[str, int]:
        """Retired task ids and the step at which each was retired."""
        return dict(self._retired)

    def eligible(self) -> list[str]:
        """The ids that can be sampled (in the pool, not retired, not quarantined), in pool
        order."""
        return [t for t in self._pool if t not in self._retired and t not in self._quarantined]

    def quarantine(self, task_ids: Iterable[str]) -> int:
        """Never sample these again (an auditor judged them broken, or hacked); returns how
        many were newly quarantined. Ids outside the pool are ignored: a label may name a task
        of another run."""
        before = len(self._quarantined)
        self._quarantined.update(t for t in task_ids if t in self._pool)
        return len(self._quarantined) - before

    def quarantined(self) -> frozenset[str]:
        return frozenset(self._quarantined)

    def weight(self, task_id: str) -> float:
        """The unnormalised sampling weight of an eligible task (see the module docstring)."""
        if self.config.mode == "uniform":
            return 1.0
        p = self.tracker.estimate(task_id)
        w = max(p * (1.0 - p), self.config.floor)
        if self.tracker.attempts(task_id) == 0:
            w += self.config.unseen_bonus
        return w

    def probabilities(self) -> dict[str, float]:
        """Each eligible task's probability of being the first (or only) task drawn."""
        weights = {t: self.weight(t) for t in self.eligible()}
        total = math.fsum(weights.values())
        return {t: w / total for t, w in weights.items()}

    # -- sampling --

    def sample(self, n: int, *, replace: bool = False) -> list[str]:
        """``n`` task ids: distinct unless ``replace``. Raises if no task is eligible."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConfigError(f"sample size must be a whole number, 0 or more, got {n!r}")
        ids = self.eligible()
        if not ids:
            if not self._pool:
                raise TaskError("the curriculum has no tasks; give it training task ids first")
            raise TaskError(
                f"every task of the curriculum is retired ({len(self._retired)} of "
                f"{len(self._pool)}) or quarantined ({len(self._quarantined)}): add tasks, "
                "raise retire_threshold, or stop: the pool is solved"
            )
        if not replace and n > len(ids):
            raise ConfigError(
                f"cannot sample {n} distinct tasks: only {len(ids)} are eligible "
                f"({len(self._retired)} retired); ask for fewer or pass replace=True"
            )
        self._draws += 1
        weights = [self.weight(t) for t in ids]
        if replace:
            return self._rng.choices(ids, weights=weights, k=n)
        # Efraimidis-Spirakis: key log(u)/w, largest n keys. 1 - random() lies in (0, 1], so the
        # logarithm is always defined.
        keys = [math.log(1.0 - self._rng.random()) / w for w in weights]
        order = sorted(range(len(ids)), key=lambda i: keys[i], reverse=True)
        return [ids[i] for i in order[:n]]

    # -- outcomes --

    def update(self, group: GroupLike, *, step: int | None = None) -> None:
        """Record one group's outcomes and retire the task if it is now saturated.

        ``step`` defaults to :attr:`draws`. An id outside the pool raises :class:`TaskError`.
        """
        task_id = group.task_id
        self._check_known(task_id)
        at = self._draws if step is None else step
        self.tracker.record(task_id, group.rewards, step=at)
        threshold = self.config.retire_threshold
        if threshold is None or task_id in self._retired:
            return
        passes, m = self.tracker.window_share(task_id)
        if m >= self.config.retire_min_attempts and passes >= threshold * m - _REWARD_EPS:
            self._retired[task_id] = at

    def _check_known(self, task_id: str) -> None:
        if task_id not in self._pool:
            raise TaskError(
                f"task {task_id!r} is not in this curriculum, so its outcomes are refused; add "
                "training tasks with add_tasks() first (held-out tasks never belong here)"
            )

    def filter_groups(self, groups: Iterable[G]) -> FilterReport[G]:
        """The groups whose rewards differ (the others carry no GRPO signal), and a report.

        The drops are also counted for :meth:`summary`. Pass rates are not updated: that is
        :meth:`update`'s (or :meth:`observe`'s) work.
        """
        kept: list[G] = []
        dropped: list[tuple[str, str]] = []
        for group in groups:
            values = _rewards_of(group)
            reason: str | None = None
            if not values:
                reason = "no_rewards"
            elif max(values) - min(values) <= _REWARD_EPS:
                if values[0] >= self.config.pass_threshold - _REWARD_EPS:
                    reason = "all_passed"
                elif values[0] <= _REWARD_EPS:
                    reason = "all_failed"
                else:
                    reason = "constant"
            if reason is None:
                kept.append(group)
            else:
                dropped.append((group.task_id, reason))
                self._counters.dropped[reason] = self._counters.dropped.get(reason, 0) + 1
            self._counters.groups += 1
        return FilterReport(kept=kept, dropped=dropped)

    def observe(self, groups: Iterable[G], *, step: int | None = None) -> FilterReport[G]:
        """:meth:`update` with every group, then :meth:`filter_groups`: one training step's work.

        Every group is checked before any is recorded, so a bad one changes nothing.
        """
        groups = list(groups)
        for group in groups:
            self._check_known(group.task_id)
            _rewards_of(group)
        for group in groups:
            self.update(group, step=step)
        return self.filter_groups(groups)

    # -- reports --

    def never_solved(self, min_attempts: int = 32) -> list[TaskSummary]:
        """Tasks attempted at least ``min_attempts`` times that never passed: send to audit.

        Most attempted first. A task like this is often broken (a wrong reference, an
        impossible test), and it is where the pressure to hack the verifier is highest.
        """
        if min_attempts < 1:
            raise ConfigError(f"min_attempts must be at least 1, got {min_attempts!r}")
        summaries = (self.tracker.summary(t) for t in self._pool)
        found = [s for s in summaries if s.attempts >= min_attempts and s.passes == 0]
        return sorted(found, key=lambda s: (-s.attempts, s.task_id))

    def summary(self) -> dict[str, float | int | None]:
        """Numbers for a training log: pool, eligible, retired, seen, mean estimate, filtering.

        ``mean_estimate`` is None until an eligible task has been attempted (None, not NaN,
        so that the summary stays valid JSON).
        """
        eligible = self.eligible()
        seen = [t for t in self._pool if self.tracker.attempts(t) > 0]
        estimates = [self.tracker.estimate(t) for t in eligible if self.tracker.attempts(t) > 0]
        out: dict[str, float | int | None] = {
            "tasks": len(self._pool),
            "eligible": len(eligible),
            "retired": len(self._retired),
            "seen": len(seen),
            "unseen": len(self._pool) - len(seen),
            "mean_estimate": math.fsum(estimates) / len(estimates) if estimates else None,
            "groups": self._counters.groups,
            "groups_dropped": sum(self._counters.dropped.values()),
        }
        for reason, count in sorted(self._counters.dropped.items()):
            out[f"groups_dropped_{reason}"] = count
        return out

    # -- resuming --

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, as JSON-able data (the config and the RNG state too)."""
        version, internal, gauss = self._rng.getstate()
        return {
            "format": STATE_FORMAT,
            "config": asdict(self.config),
            "pool": list(self._pool),
            "retired": dict(self._retired),
            "quarantined": sorted(self._quarantined),
            "draws": self._draws,
            "tracker": self.tracker.state_dict(),
            "groups": self._counters.groups,
            "dropped": dict(self._counters.dropped),
            "rng": [version, list(internal), gauss],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s data, config included (a resumed run is the same run)."""
        if state.get("format") != STATE_FORMAT:
            raise ConfigError(
                f"not a curriculum state (format {state.get('format')!r}, expected "
                f"{STATE_FORMAT!r}); pass what Curriculum.state_dict() returned"
            )
        try:
            config = CurriculumConfig(**state["config"])
            tracker = PassRateTracker(
                window=config.window,
                prior_alpha=config.prior_alpha,
                prior_beta=config.prior_beta,
                pass_threshold=config.pass_threshold,
            )
            tracker.load_state_dict(state["tracker"])
            rng = random.Random()
            version, internal, gauss = state["rng"]
            rng.setstate((version, tuple(internal), gauss))
            pool = {str(t): None for t in state["pool"]}
            retired = {str(t): int(s) for t, s in state["retired"].items()}
            quarantined = {str(t) for t in state.get("quarantined", ())}
            counters = _Counters(int(state["groups"]), {**state["dropped"]})
            draws = int(state["draws"])
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"curriculum state is incomplete or malformed: {e!r}") from e
        # Assigned only once everything parsed, so a bad state leaves the curriculum unchanged.
        self.config, self.tracker, self._rng = config, tracker, rng
        self._pool, self._retired, self._counters, self._draws = pool, retired, counters, draws
        self._quarantined = quarantined

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> Curriculum:
        cur = cls()
        cur.load_state_dict(state)
        return cur
