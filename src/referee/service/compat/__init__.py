"""Trainer wire protocols, each a router turned on by ``referee serve --compat NAME``.

Their clients send no referee token, so every one of them is off by default, and the server
says so at start-up when one is on (:func:`compat_warnings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module

from fastapi import APIRouter, FastAPI

__all__ = ["compat_routes", "compat_warnings", "include_compat_routes"]

#: Protocol name -> module defining ``router`` (an APIRouter) and ``ROUTES`` (for GET /v1).
MODULES: dict[str, str] = {
    "sandbox-fusion": "referee.service.compat.sandbox_fusion",
    "openrlhf": "referee.service.compat.openrlhf",
    "slime": "referee.service.compat.slime",
    "nemo-gym": "referee.service.compat.nemo_gym",
    "openenv": "referee.service.compat.openenv",
}


def _router(name: str) -> APIRouter:
    module = import_module(MODULES[name])
    router: APIRouter = module.router
    return router


def compat_routes(name: str) -> list[str]:
    if name not in MODULES:
        return []
    routes: list[str] = import_module(MODULES[name]).ROUTES
    return routes


def include_compat_routes(app: FastAPI, names: Sequence[str]) -> None:
    from referee.errors import ConfigError

    for name in names:
        if name not in MODULES:
            raise ConfigError(
                f"the {name!r} protocol is not available in this build; available: "
                + (", ".join(MODULES) or "none")
            )
        app.include_router(_router(name))


def compat_warnings(names: Sequence[str]) -> list[str]:
    """One line per protocol turned on, for the start-up banner."""
    return [
        f"--compat {name}: requests WITHOUT a token are accepted on "
        f"{', '.join(compat_routes(name))} (the protocol's clients send none); serve on a "
        "trusted network only"
        for name in names
    ]
