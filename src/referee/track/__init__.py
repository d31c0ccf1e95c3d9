"""Tracking: the run's store (trajectories, metrics, alerts, audit tables), artifacts, exports.

Names are imported lazily, so ``import referee.track`` stays cheap (pyarrow and fsspec load
only when a store or an export is used).

>>> from referee.track import TrackStore, write_dataset, verl_rows   # doctest: +SKIP
>>> with TrackStore("runs/r1") as store:                              # doctest: +SKIP
...     write_dataset(verl_rows(store), "runs/r1/verl-train.parquet")
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
