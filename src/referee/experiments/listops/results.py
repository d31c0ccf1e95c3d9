"""What each stage of the experiment returns, as frozen values, and the run's whole results.

``to_json()`` gives the keys ``results.json`` and ``referee train --json`` have always had
(``bench/train_summary.py``, ``bench/RESULTS.md`` and the README read them), so a new run's
file reads like an old one's.

>>> SFTResult.skipped("runs/a/model-sft").to_json()
{'from': 'runs/a/model-sft'}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from referee.experiments.listops.stats import paired_test
from referee.rollout.evaluate import EvalResult
from referee.tasks.model import Task
from referee.track.layout import RunLayout

__all__ = ["ExperimentResults", "GRPOResult", "SFTResult", "experiment_results"]


@dataclass(frozen=True)
class SFTResult:
    """A fine-tuning stage (the fine-tuning itself, or the control)."""

    steps: int
    wall_s: float
    train_s: float
    lr: float
    loss_first: float | None = None
    loss_last: float | None = None
    dev_curve: tuple[Mapping[str, Any], ...] = ()
    #: the control only: the steps GRPO's wall time buys at fine-tuning's pace
    planned_steps: int | None = None
    #: fine-tuning skipped: the fine-tuned model folder the run started from
    from_checkpoint: str | None = None
    #: this process's CPU seconds of training (all threads; None where not measured)
    cpu_s: float | None = None

    @classmethod
    def skipped(cls, checkpoint: str) -> SFTResult:
        """No fine-tuning: the run starts from ``checkpoint``."""
        return cls(steps=0, wall_s=0.0, train_s=0.0, lr=0.0, from_checkpoint=checkpoint)

    @property
    def pace_s(self) -> float:
        """Seconds per fine-tuning step (0 when none ran)."""
        return self.train_s / self.steps if self.steps else 0.0

    @property
    def pace_cpu_s(self) -> float:
        """CPU seconds per fine-tuning step (0 when none ran or none was measured)."""
        return (self.cpu_s or 0.0) / self.steps if self.steps else 0.0

    def describe(self) -> str:
        """The stage in one line of text, for the run's log.

        >>> SFTResult(steps=20, wall_s=9.0, train_s=8.42, lr=3e-3, loss_first=4.031,
        ...           loss_last=0.0213).describe()
        '20 steps in 8.4 s, loss 4.03 -> 0.02'
        """
        if self.from_checkpoint is not None:
            return f"skipped, the run starts from {self.from_checkpoint}"
        text = f"{self.steps} steps in {self.train_s:.1f} s"
        if self.planned_steps is not None:
            text += f" ({self.planned_steps} planned)"
        if self.loss_first is not None and self.loss_last is not None:
            text += f", loss {self.loss_first:.2f} -> {self.loss_last:.2f}"
        if self.dev_curve:
            points = ", ".join(
                f"{p.get('dev_pass_at_1', 0):.3f} at {p.get('step')}" for p in self.dev_curve
            )
            text += f"; dev pass@1 {points}"
        return text

    def to_json(self) -> dict[str, Any]:
        if self.from_checkpoint is not None:
            return {"from": self.from_checkpoint}
        out = {
            "steps": self.steps,
            "wall_s": self.wall_s,
            "train_s": self.train_s,
            "lr": self.lr,
            "loss_first": self.loss_first,
            "loss_last": self.loss_last,
            "dev_curve": [dict(p) for p in self.dev_curve],
        }
        if self.planned_steps is not None:
            out["planned_steps"] = self.planned_steps
        if self.cpu_s is not None:
            out["cpu_s"] = self.cpu_s
        return out


@dataclass(frozen=True)
class GRPOResult:
    """The GRPO stage, single- or multi-turn (the multi-turn fields are None in single-turn)."""

    steps: int
    wall_s: float
    train_reward_first: float | None
    train_reward_last: float | None
    train_reward_per_step: tuple[float, ...]
    frac_zero_std_mean: float | None
    zero_variance_groups_mean: float
    curriculum: Mapping[str, Any]
    never_solved: int
    curve: tuple[Mapping[str, Any], ...] = ()
    alerts: tuple[Mapping[str, Any], ...] = ()
    #: canary tasks in the GRPO pool
    canaries: int = 0
    #: tasks kept out of sampling by audit labels (earlier runs' and this run's)
    quarantined: int = 0
    # multi-turn only
    tool_calls_per_episode: tuple[float, ...] | None = None
    episodes: int | None = None
    infra_errors: int | None = None
    #: CPU seconds of the stage (held-out evaluations inside it excluded): this process's
    #: (all threads), and the sandbox's runs (the verifier's and the tools'); None where not
    #: measured
    cpu_s: float | None = None
    sandbox_cpu_s: float | None = None
    #: completions generated, and those left out of the loss because their group's rewards all
    #: tied (:class:`~referee.train.grpo.CurriculumGRPOTrainer`); None where not measured
    rows_generated: int | None = None
    rows_skipped: int | None = None

    @property
    def total_cpu_s(self) -> float | None:
        """The stage's whole CPU cost: the process's and the sandbox's."""
        return None if self.cpu_s is None else self.cpu_s + (self.sandbox_cpu_s or 0.0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "steps": self.steps,
            "wall_s": self.wall_s,
            "train_reward_first": self.train_reward_first,
            "train_reward_last": self.train_reward_last,
            "train_reward_per_step": list(self.train_reward_per_step),
            "frac_zero_std_mean": self.frac_zero_std_mean,
            "zero_variance_groups_mean": self.zero_variance_groups_mean,
            "curriculum": dict(self.curriculum),
            "never_solved": self.never_solved,
        }
        if self.tool_calls_per_episode is not None:
            out["tool_calls_per_episode"] = list(self.tool_calls_per_episode)
            out["episodes"] = self.episodes
            out["infra_errors"] = self.infra_errors
        out["curve"] = [dict(p) for p in self.curve]
        out["alerts"] = [dict(a) for a in self.alerts]
        out["canaries"] = self.canaries
        out["quarantined"] = self.quarantined
        if self.cpu_s is not None:
            out["cpu_s"] = self.cpu_s
            out["sandbox_cpu_s"] = self.sandbox_cpu_s
        if self.rows_generated is not None:
            out["rows_generated"] = self.rows_generated
            out["rows_skipped_as_tied"] = self.rows_skipped
        return out


@dataclass(frozen=True)
class ExperimentResults:
    """Everything a ``referee train`` run reports; ``to_json()`` is ``results.json``."""

    run_dir: str
    train_tasks: int
    heldout_tasks: int
    demo_pass_rate: float
    imitation_ceiling: Mapping[str, float]
    heldout_before: float
    heldout_sft: float
    heldout_rl: float
    heldout_sft_control: float | None
    sft: SFTResult
    rl: GRPOResult
    control: SFTResult | None
    paired: Mapping[str, Mapping[str, Any]]
    dev_pass_at_1: Mapping[str, float] = field(default_factory=dict)
    heldout_pass_at_k: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    heldout_infra_errors: Mapping[str, int] = field(default_factory=dict)
    times: Mapping[str, float] = field(default_factory=dict)
    # multi-turn only
    env: str | None = None
    tools: tuple[str, ...] | None = None
    heldout_tool_use: Mapping[str, Mapping[str, Any]] | None = None

    @property
    def train_reward(self) -> float | None:
        """GRPO's training reward over its last steps."""
        return self.rl.train_reward_last

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run_dir": self.run_dir,
            "train_tasks": self.train_tasks,
            "heldout_tasks": self.heldout_tasks,
            "demo_pass_rate": self.demo_pass_rate,
            "imitation_ceiling": dict(self.imitation_ceiling),
            "heldout_before": self.heldout_before,
            "heldout_sft": self.heldout_sft,
            "heldout_rl": self.heldout_rl,
            "heldout_sft_control": self.heldout_sft_control,
            "train_reward": self.train_reward,
            "sft": self.sft.to_json(),
            "rl": self.rl.to_json(),
            "control": self.control.to_json() if self.control else {},
            "paired": {k: dict(v) for k, v in self.paired.items()},
        }
        if self.env is not None:
            out["env"] = self.env
            out["tools"] = list(self.tools or ())
        out["dev_pass_at_1"] = dict(self.dev_pass_at_1)
        out["heldout_pass_at_k"] = {k: dict(v) for k, v in self.heldout_pass_at_k.items()}
        out["heldout_infra_errors"] = dict(self.heldout_infra_errors)
        if self.heldout_tool_use is not None:
            out["heldout_tool_use"] = {k: dict(v) for k, v in self.heldout_tool_use.items()}
        out["times"] = dict(self.times)
        return out

    def write(self, layout: RunLayout) -> None:
        """Write ``results.json``."""
        layout.results.write_text(json.dumps(self.to_json(), indent=1))


def experiment_results(
    layout: RunLayout, *, train: Sequence[Task], heldout: Sequence[Task], demo_pass: float,
    ceiling: Mapping[str, float], stages: Mapping[str, EvalResult | None], sft: SFTResult,
    rl: GRPOResult, control: SFTResult | None, **extra: Any,
) -> ExperimentResults:  # fmt: skip
    """The results of a run from its held-out evaluations (``stages``: before, sft, rl and
    control, the last None without a control) and each stage's result, with the paired tests;
    also writes ``heldout_per_task.json``. ``extra``: the mode's own fields."""
    before, on_sft, on_rl, on_control = (stages[k] for k in ("before", "sft", "rl", "control"))
    assert before is not None and on_sft is not None and on_rl is not None
    paired = {"rl_vs_sft": asdict(paired_test(on_rl.passed, on_sft.passed))}
    if on_control:
        paired["rl_vs_control"] = asdict(paired_test(on_rl.passed, on_control.passed))
    per_task = {
        "task_ids": on_sft.task_ids, "before": before.passed, "sft": on_sft.passed,
        "rl": on_rl.passed, "control": on_control.passed if on_control else None,
    }  # fmt: skip
    layout.heldout_per_task.write_text(json.dumps(per_task))
    return ExperimentResults(
        run_dir=str(layout.root),
        train_tasks=len(train),
        heldout_tasks=len(heldout),
        demo_pass_rate=round(demo_pass, 4),
        imitation_ceiling=dict(ceiling),
        heldout_before=before.pass_at_1,
        heldout_sft=on_sft.pass_at_1,
        heldout_rl=on_rl.pass_at_1,
        heldout_sft_control=on_control.pass_at_1 if on_control else None,
        sft=sft,
        rl=rl,
        control=control,
        paired=paired,
        **extra,
    )
