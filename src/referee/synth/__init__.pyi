"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .mutate import OPERATORS as OPERATORS
from .mutate import Mutation as Mutation
from .mutate import apply_mutation as apply_mutation
from .mutate import find_mutations as find_mutations
from .pipeline import KINDS as KINDS
from .pipeline import SynthReport as SynthReport
from .pipeline import synthesize as synthesize
