"""referee: post-training language models with reinforcement learning on verifiable tasks.

The public API. Each name is documented where it is defined; ``referee --help`` lists the CLI.
"""

import lazy_loader

__version__ = "0.1.0"

# Every name loads on first use, from the imports listed in __init__.pyi: `import referee`
# stays light (no libcst, httpx or torch until a name that needs them is used).
__getattr__, __dir__, _names = lazy_loader.attach_stub(__name__, __file__)
__all__ = sorted([*_names, "__version__"])
