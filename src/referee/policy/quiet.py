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
    # A GGUF model's "Converting and de-quantizing GGUF tensors" bar is a plain tqdm, which
    # disable_progress_bar does not reach (transformers 5.24).
    from functools import partial
    from typing import Any

    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    bar: Any = getattr(gguf_utils, "tqdm", None)
    if isinstance(bar, type):  # the class itself: not yet silenced
        setattr(gguf_utils, "tqdm", partial(bar, disable=True))  # noqa: B010
