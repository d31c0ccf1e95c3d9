"""Tasks: the task model and its JSONL files, and the task sources (HumanEval, procedural).

>>> from referee.tasks import read_tasks, generate                        # doctest: +SKIP
>>> task = generate("list-pipeline", difficulty=0.5, seed=1)             # doctest: +SKIP
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
