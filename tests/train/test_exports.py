"""``referee.train`` holds the trainer adapters, exported lazily: importing it costs no torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_importing_the_package_imports_no_trainer_library():
    code = (
        "import sys, referee.train, referee.experiments.listops; "
        "print(sorted(m for m in ('torch', 'trl', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_adapters_are_exported_and_the_experiment_is_not():
    import referee.train as train

    assert {"reward_function", "tasks_dataset", "environment_class", "TRLEnvironment",
            "CurriculumGRPOTrainer", "RunTracking"} <= set(train.__all__)  # fmt: skip
    assert train.reward_function.__module__ == "referee.train.trl_adapter"
    with pytest.raises(AttributeError):
        train.run_experiment  # noqa: B018 - the experiment lives in referee.experiments
