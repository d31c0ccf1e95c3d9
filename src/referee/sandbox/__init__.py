"""Isolated execution of untrusted code: bubblewrap namespaces, seccomp, rlimits, cgroups, and a
fork server for Python at about a millisecond per run.

>>> from referee.sandbox import Sandbox, Limits
>>> with Sandbox() as sb:                                   # doctest: +SKIP
...     sb.run_python("print('hi')", limits=Limits(timeout_s=1)).stdout
'hi\n'
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
