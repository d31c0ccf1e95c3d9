"""Task synthesis from repositories: ``synthesize(source)`` or ``referee synth SOURCE``.

See ``pipeline.py`` for the steps; each has a module of its own.
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
