"""Verifiers: decide, from data the solution cannot forge, whether a solution is right.

>>> from referee.verify import FunctionVerifier, harness_sandbox          # doctest: +SKIP
>>> with harness_sandbox() as sb:                                        # doctest: +SKIP
...     verdict = FunctionVerifier(sb).verify(task, completion)
"""

from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.guard import scan
from referee.verify.pytest_verifier import PytestVerifier, pytest_sandbox
from referee.verify.testgen_verifier import TestgenVerifier
from referee.verify.verdict import Flag, TestOutcome, Verdict

__all__ = [
    "Flag",
    "FunctionVerifier",
    "PytestVerifier",
    "TestOutcome",
    "TestgenVerifier",
    "Verdict",
    "harness_sandbox",
    "pytest_sandbox",
    "scan",
]
