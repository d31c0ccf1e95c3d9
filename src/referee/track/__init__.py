"""Tracking: the run's store (trajectories, metrics, alerts, audit tables), artifacts, exports.

Names are imported lazily, so ``import referee.track`` stays cheap (pyarrow and fsspec load
only when a store or an export is used).

>>> from referee.track import TrackStore, write_dataset, verl_rows   # doctest: +SKIP
>>> with TrackStore("runs/r1") as store:                              # doctest: +SKIP
...     write_dataset(verl_rows(store), "runs/r1/verl-train.parquet")
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module of this package that defines it.
_EXPORTS = {
    "TrackStore": "store",
    "RunRow": "store",
    "MetricRow": "store",
    "AlertRow": "store",
    "AuditItemRow": "store",
    "LabelRow": "store",
    "ArtifactStore": "artifacts",
    "EXPORT_FORMATS": "export",
    "export_run": "export",
    "export_jsonl": "export",
    "export_parquet": "export",
    "sft_rows": "export",
    "rl_prompt_rows": "export",
    "verl_rows": "export",
    "skyrl_rows": "export",
    "write_dataset": "export",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'referee.track' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"referee.track.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
