"""``run_experiment``: the one library call behind ``referee train``, whatever the mode.

It checks what the config alone cannot (the ``--quarantine-from`` stores can be read), writes
``config.json``, prepares the process, and runs the mode the config names: single-turn
(:mod:`~referee.experiments.listops.single_turn`) or multi-turn tool episodes
(:mod:`~referee.experiments.listops.multi_turn`). Both share the task set, the SFT stage, the
GRPO stage, the control and the results.

>>> results = run_experiment(experiment_config({"rl_steps": 5}))            # doctest: +SKIP
>>> results.to_json()["heldout_rl"]                                         # doctest: +SKIP
0.41
"""

from __future__ import annotations

import json
from collections.abc import Callable

from referee.experiments.listops.config import ExperimentConfig
from referee.experiments.listops.results import ExperimentResults
from referee.experiments.listops.tasks import quarantined_tasks
from referee.track.layout import RunLayout

__all__ = ["run_experiment"]


def run_experiment(cfg: ExperimentConfig, log: Callable[[str], None] = print) -> ExperimentResults:
    """Run the experiment ``cfg`` describes; returns its results (also in ``results.json``).

    Raises :class:`~referee.errors.StoreError` before any work when a ``quarantine_from``
    folder has no store, :class:`~referee.errors.SandboxUnavailable` without a sandbox."""
    # The earlier runs' labels are read first: a folder without a store fails in a second,
    # not after the fine-tuning.
    quarantined = quarantined_tasks(cfg.grpo.quarantine_from)
    if cfg.grpo.quarantine_from:
        log(
            f"quarantine: {len(quarantined)} tasks labelled in "
            f"{', '.join(cfg.grpo.quarantine_from)} stay out of GRPO sampling"
        )
    from referee.experiments.listops.process import prepare_process

    prepare_process()
    layout = RunLayout(cfg.run_dir).create()
    layout.config.write_text(json.dumps(cfg.options(), indent=1))
    if cfg.multi_turn:
        from referee.experiments.listops.multi_turn import run_multi_turn

        return run_multi_turn(cfg, layout, quarantined=quarantined, log=log)
    from referee.experiments.listops.single_turn import run_single_turn

    return run_single_turn(cfg, layout, quarantined=quarantined, log=log)
