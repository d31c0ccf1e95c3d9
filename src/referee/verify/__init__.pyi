"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .function import FunctionVerifier as FunctionVerifier
from .function import harness_sandbox as harness_sandbox
from .guard import scan as scan
from .program import ProgramVerifier as ProgramVerifier
from .program import program_sandbox as program_sandbox
from .pytest_verifier import PytestVerifier as PytestVerifier
from .pytest_verifier import pytest_sandbox as pytest_sandbox
from .testgen_verifier import TestgenVerifier as TestgenVerifier
from .verdict import Flag as Flag
from .verdict import TestOutcome as TestOutcome
from .verdict import Verdict as Verdict
