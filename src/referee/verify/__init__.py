"""Verifiers: decide, from data the solution cannot forge, whether a solution is right.

>>> from referee.verify import FunctionVerifier, harness_sandbox          # doctest: +SKIP
>>> with harness_sandbox() as sb:                                        # doctest: +SKIP
...     verdict = FunctionVerifier(sb).verify(task, completion)
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
