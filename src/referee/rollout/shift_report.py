"""Clean against shifted: success and reward of trajectories, grouped by the shift they ran
under (``Trajectory.shift``, recorded by the rollout runner from the environment's wrappers).

From a shell, on JSONL trajectory files (a :class:`~referee.rollout.sink.JsonlSink`'s, or a
store's export)::

    python -m referee.rollout.shift_report clean.jsonl shifted.jsonl

>>> from referee.rollout.trajectory import Trajectory
>>> from referee.verify.verdict import Verdict
>>> def traj(passed, shift=()):
...     v = Verdict(task_id="t", reward=float(passed), passed=passed, verifier="x")
...     return Trajectory(task_id="t", policy="p", env="e", verdict=v, shift=list(shift))
>>> noisy = [{"wrapper": "AddObservationNoise", "spec": "AddObservationNoise(rate=0.1,seed=0)",
...           "totals": {"noised_chars": 12}}]
>>> rows = compare_shifts([traj(True), traj(True), traj(True, noisy), traj(False, noisy)])
>>> [(r.label, r.success, r.drop) for r in rows]
[('clean', 1.0, 0.0), ('AddObservationNoise(rate=0.1,seed=0)', 0.5, 0.5)]
>>> rows[1].perturbations
{'noised_chars': 24}
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from referee.envs.shift.base import shift_label
from referee.errors import RefereeError
from referee.rollout.sink import read_jsonl
from referee.rollout.trajectory import Trajectory

__all__ = ["ShiftRow", "compare_shifts", "shift_table"]


@dataclass(frozen=True)
class ShiftRow:
    """One condition (clean, or one stack of shifts) over its trajectories."""

    label: str
    episodes: int  # that reached a verdict (infrastructure faults are not counted)
    passed: int
    mean_reward: float
    infra_errors: int
    #: Clean success minus this one's (a fraction; None when there is no clean condition).
    drop: float | None
    #: The wrappers' counts summed over the episodes (``failed_calls``, ``noised_chars``, ...).
    perturbations: dict[str, int] = field(default_factory=dict)

    @property
    def success(self) -> float:
        return self.passed / self.episodes if self.episodes else 0.0


def compare_shifts(trajectories: Iterable[Trajectory]) -> list[ShiftRow]:
    """One row per condition, ``clean`` first, then in order of first appearance."""
    groups: dict[str, list[Trajectory]] = {}
    for t in trajectories:
        groups.setdefault(shift_label(t.shift), []).append(t)
    order = sorted(groups, key=lambda k: k != "clean")  # stable: first appearance otherwise
    rows = [_row(label, groups[label]) for label in order]
    clean = rows[0].success if rows and rows[0].label == "clean" else None
    return [replace(r, drop=None if clean is None else round(clean - r.success, 6)) for r in rows]


def _row(label: str, trajs: list[Trajectory]) -> ShiftRow:
    judged = [t for t in trajs if t.reward is not None]
    counts: Counter[str] = Counter()
    for t in trajs:
        for record in t.shift:
            counts.update(record.get("totals", {}))
    rewards = [t.reward or 0.0 for t in judged]
    return ShiftRow(
        label=label,
        episodes=len(judged),
        passed=sum(t.passed for t in judged),
        mean_reward=sum(rewards) / len(rewards) if rewards else 0.0,
        infra_errors=len(trajs) - len(judged),
        drop=None,
        perturbations=dict(sorted(counts.items())),
    )


def shift_table(rows: list[ShiftRow]) -> str:
    """The rows as a markdown table (success in percent, drop in percentage points)."""
    lines = [
        "| condition | episodes | success | drop (pp) | mean reward | infra | perturbations |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        drop = "" if r.drop is None else f"{100 * r.drop:.0f}"
        perturbed = ", ".join(f"{k}={v}" for k, v in r.perturbations.items()) or "-"
        lines.append(
            f"| `{r.label}` | {r.episodes} | {100 * r.success:.0f}% | {drop} | "
            f"{r.mean_reward:.2f} | {r.infra_errors} | {perturbed} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of the trajectories in the JSONL files named in ``argv``: 0; a file that
    is not trajectories: one line on stderr, 1; a file that cannot be read: one line, 2."""
    parser = argparse.ArgumentParser(
        prog="python -m referee.rollout.shift_report",
        description="Success and reward of trajectories, clean against shifted: one row per "
        "condition (clean, or one stack of distribution-shift wrappers), as a markdown table.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="TRAJECTORIES.jsonl",
        help="JSONL trajectory files (a run's JsonlSink, or a store's export); all are pooled",
    )
    args = parser.parse_args(argv)
    trajectories: list[Trajectory] = []
    for path in args.paths:
        try:
            trajectories.extend(read_jsonl(path))
        except OSError as e:
            print(f"{parser.prog}: error: cannot read {path}: {e.strerror or e}", file=sys.stderr)
            return 2
        except RefereeError as e:
            print(f"{parser.prog}: error: {e}", file=sys.stderr)
            return 1
    print(shift_table(compare_shifts(trajectories)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
