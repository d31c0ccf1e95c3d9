"""How the registries find the domains' registrations.

The registries of task kinds (:mod:`referee.verify.dispatch`), environments
(:mod:`referee.envs.registry`) and task sources (:mod:`referee.tasks.sources`) sit below
:mod:`referee.domains`, which registers into them. On a miss they call
:func:`discover_domains`, which imports the domains by name (a static import would point upward)
and lets the lookup try again.
"""

from __future__ import annotations

import importlib

__all__ = ["discover_domains"]


def discover_domains() -> None:
    """Import every domain package once, so that each has registered its parts."""
    importlib.import_module("referee.domains").load_domains()
