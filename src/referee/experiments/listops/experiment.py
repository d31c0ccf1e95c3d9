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
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from referee.experiments.listops.config import ExperimentConfig
from referee.experiments.listops.preflight import check_before_work
from referee.experiments.listops.results import ExperimentResults
from referee.experiments.listops.tasks import quarantined_tasks
from referee.optional import require_extra
from referee.track.layout import RunLayout

__all__ = ["run_experiment", "run_folder"]


def run_experiment(cfg: ExperimentConfig, log: Callable[[str], None] = print) -> ExperimentResults:
    """Run the experiment ``cfg`` describes; returns its results (also in ``results.json``).

    Raises, before any work and before the run folder exists: :class:`~referee.errors.
    ConfigError` for what the machine lacks (a ``--report-to`` package, a free
    ``--metrics-port``, a model folder: :func:`check_before_work`),
    :class:`~referee.errors.StoreError` when a ``quarantine_from`` folder has no store,
    :class:`~referee.errors.SandboxUnavailable` without a sandbox. A run that fails later is
    marked failed in its folder's store (:func:`run_folder`)."""
    require_extra("train", needed_for="the list-ops experiment (run_experiment)")
    check_before_work(cfg)
    # The earlier runs' labels are read first: a folder without a store fails in a second,
    # not after the fine-tuning.
    quarantined = quarantined_tasks(cfg.grpo.quarantine_from)
    if cfg.grpo.quarantine_from:
        log(
            f"quarantine: {len(quarantined)} tasks labelled in "
            f"{', '.join(cfg.grpo.quarantine_from)} stay out of GRPO sampling"
        )
    from referee.experiments.listops.process import prepare_process

    prepare_process(cfg.model.device)
    with run_folder(RunLayout(cfg.run_dir), cfg, log) as layout:
        if cfg.multi_turn:
            from referee.experiments.listops.multi_turn import run_multi_turn

            return run_multi_turn(cfg, layout, quarantined=quarantined, log=log)
        from referee.experiments.listops.single_turn import run_single_turn

        return run_single_turn(cfg, layout, quarantined=quarantined, log=log)


@contextmanager
def run_folder(
    layout: RunLayout, cfg: ExperimentConfig, log: Callable[[str], None] = print
) -> Iterator[RunLayout]:
    """The run folder for the block, with ``config.json`` written. If the block fails, nothing
    half-made stays behind: a folder this call made that holds nothing but what it wrote is
    removed; one with more (a fine-tuned model, trajectories) is kept and its run marked
    ``failed`` (``cancelled`` on Ctrl-C or SIGTERM) where the dashboard lists runs."""
    from referee.track.store import TrackStore

    existed = layout.root.exists()
    layout.create()
    layout.config.write_text(json.dumps(cfg.options(), indent=1))
    ours = {layout.config.name, *(p.name for p in _store_files(layout))}
    try:
        yield layout
    except BaseException as e:
        made = {p.name for p in layout.root.iterdir()}
        if not existed and made <= ours:
            shutil.rmtree(layout.root, ignore_errors=True)
            log(f"run ended before it made anything; removed {layout.root}")
        else:
            stopped = isinstance(e, KeyboardInterrupt | SystemExit)
            status = "cancelled" if stopped else "failed"
            with TrackStore(layout.root) as store:
                if layout.name not in {r.run_id for r in store.runs()}:
                    store.start_run(layout.name, cfg.options(), name="referee train")
                store.end_run(layout.name, status)
            log(f"run {status}; {layout.root} keeps what it made, marked {status} in its store")
        raise


def _store_files(layout: RunLayout) -> list[Path]:
    db = layout.track_db
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"), layout.artifacts]
