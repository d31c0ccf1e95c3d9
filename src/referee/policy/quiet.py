"""Quiet transformers: no progress bars ("Loading weights"), no notices about generation flags
referee does not set. A command that prints its own progress (``referee train``, ``referee
eval`` with a local model) calls :func:`quiet_transformers` before loading a model; the
library never silences anything on import, so a Python user keeps transformers' own output.
"""

from __future__ import annotations

__all__ = ["quiet_transformers"]


def quiet_transformers() -> None:
    """Errors only from transformers' loggers, its progress bars off, its FutureWarnings off."""
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")
