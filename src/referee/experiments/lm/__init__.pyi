"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .config import LMConfig as LMConfig
from .recipe import run_lm as run_lm
