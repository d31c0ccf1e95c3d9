"""What the experiment needs from the machine, checked before any work (and before the run
folder exists): the option's packages, the sandbox, the ports, the model folders.

:func:`~referee.experiments.listops.config.experiment_config` checks each value on its own;
this checks what the values ask of the machine. Each failure is a :class:`ConfigError` (or
:class:`~referee.errors.SandboxUnavailable`) naming the option and the fix, raised in a
second: never a traceback after the fine-tuning.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

from referee.errors import ConfigError
from referee.experiments.listops.config import ExperimentConfig
from referee.experiments.listops.tasks import check_generated_splits
from referee.optional import require_extra, require_module
from referee.policy.folder import model_folder_problem
from referee.track.layout import RunLayout

__all__ = ["check_before_work"]

#: ``--report-to`` value -> the modules transformers' logger for it imports (any one will do).
REPORT_TO_MODULES: dict[str, tuple[str, ...]] = {
    "wandb": ("wandb",),
    "tensorboard": ("tensorboard", "tensorboardX"),
}


def check_before_work(cfg: ExperimentConfig) -> None:
    """Refuse, in one line naming the fix, what would fail only once the run is under way."""
    report_to = cfg.tracking.report_to
    if report_to in REPORT_TO_MODULES:
        modules = REPORT_TO_MODULES[report_to]
        require_module(modules, needed_for=f"--report-to {report_to}", package=modules[-1])
    port = cfg.tracking.metrics_port
    if port:
        require_extra("train", ("prometheus_client",), needed_for="--metrics-port")
        _check_port_free("--metrics-port", port)
    _check_run_dir_free(RunLayout(cfg.run_dir))
    check_generated_splits(cfg.tasks, cfg.seed)  # both splits, or nothing measures the run
    _check_model("--model", cfg.model.model)
    _check_model("--sft-checkpoint", cfg.model.sft_checkpoint)
    from referee.sandbox.view import find_bwrap

    find_bwrap()  # every reward comes from the sandbox: SandboxUnavailable names the package


def _check_run_dir_free(layout: RunLayout) -> None:
    """A run folder holds one run: an earlier run's store, models and results are never merged
    into or overwritten. It must be a folder, or one that can be made here (checked by making
    and removing an empty folder beside where it would go: nothing stays behind)."""
    _check_can_make_folder("--run-dir", layout.root)
    held = [p.name for p in (layout.config, layout.track_db, layout.results) if p.exists()]
    if held:
        raise ConfigError(
            f"--run-dir {layout.root} already holds a run ({', '.join(held)}); name a new "
            "folder, leave --run-dir out (a new runs/train-<time>), or remove this one first"
        )


def _check_can_make_folder(option: str, path: Path) -> None:
    """Refuse, naming ``option``, a ``path`` that is a file, lies under a file, or whose nearest
    existing folder refuses a new folder (read-only, no permission, ``/proc``)."""
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{option} {path} is a file, not a folder; name a new folder")
        return
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(
            f"{option} {path}: {existing} is a file, so no folder can be made under it; "
            "name a new folder"
        )
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".referee-probe-", dir=existing))
    except OSError as e:
        raise ConfigError(
            f"{option} {path}: cannot make a folder in {existing} ({e.strerror}); name a "
            "folder where you can write"
        ) from e


def _check_port_free(option: str, port: int, host: str = "127.0.0.1") -> None:
    with socket.socket(socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise ConfigError(
                f"{option} {port}: {host}:{port} is in use ({e.strerror}); choose another port, "
                "or 0 for any free one"
            ) from e


def _offline() -> bool:
    # The experiment sets HF_HUB_OFFLINE=1 unless the user set it (prepare_process).
    return os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "")


def _check_model(option: str, value: str | None) -> None:
    """A model folder must hold a model; a hub id must be in the local cache when offline."""
    if value is None:
        return
    path = Path(value).expanduser()
    if path.exists():
        problem = model_folder_problem(path)
        sft = RunLayout(path).model_sft
        if problem is not None and model_folder_problem(sft) is None:
            # a run folder: its fine-tuned model is what --sft-checkpoint means
            raise ConfigError(f"{option}: {value} is a run folder, not a model; pass {sft}")
        if problem is not None:
            hub = " or a hub id" if option == "--model" else ""
            fix = "" if "pass " in problem else f" (a run's model-sft, model-rl){hub}"
            raise ConfigError(f"{option}: {problem}{fix}")
        return
    if not _offline():
        return
    from huggingface_hub import try_to_load_from_cache

    if not isinstance(try_to_load_from_cache(value, "config.json"), str):
        raise ConfigError(
            f"{option} {value}: no such folder, and no model of that id in the local hub cache "
            "(referee train downloads nothing: HF_HUB_OFFLINE=1); download it first, or give a "
            "model folder"
        )
