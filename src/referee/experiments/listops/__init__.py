"""The ``list-ops`` experiment behind ``referee train``: does RL beat imitation of an imperfect
demonstrator on held-out tasks, on a CPU? Single-turn completions or multi-turn tool episodes,
one SFT stage, one GRPO stage, the control, paired statistics.

Names are imported lazily, so ``import referee.experiments.listops`` does not import torch.

>>> from referee.experiments.listops import experiment_config, run_experiment  # doctest: +SKIP
>>> results = run_experiment(experiment_config({"rl_steps": 5}, env="code"))   # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module of this package that defines it.
_EXPORTS = {
    "ExperimentConfig": "config",
    "TasksConfig": "config",
    "ModelConfig": "config",
    "SFTConfig": "config",
    "GRPOConfig": "config",
    "EvalConfig": "config",
    "TrackingConfig": "config",
    "MULTI_TURN_DEFAULTS": "config",
    "OPTIONS": "config",
    "experiment_config": "config",
    "ExperimentResults": "results",
    "GRPOResult": "results",
    "SFTResult": "results",
    "run_experiment": "experiment",
    "results_table": "report",
    "TinyConfig": "tiny",
    "Demonstrator": "demonstrator",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'referee.experiments.listops' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"referee.experiments.listops.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
