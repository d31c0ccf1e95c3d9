"""``referee.cluster``: verification and environment sessions on Ray.

Actors holding warm sandboxes (:class:`SandboxActor`), a pool that spreads batches over them,
retries a dead actor's work on another and replaces the actor (:class:`SandboxPool`), and
:func:`connect`, which joins a trainer's running Ray cluster instead of starting another. Ray is
imported only when one of these is used, so ``import referee`` works without it.

>>> from referee.cluster import SandboxPool, connect                   # doctest: +SKIP
>>> connect("local")  # doctest: +SKIP
>>> with SandboxPool(tasks, actors=2) as pool:  # doctest: +SKIP
...     verdicts = pool.verify_many([(task, completion)])
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
