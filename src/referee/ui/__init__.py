"""The dashboard: a local web page over a run folder's track store, and the terminal views.

Served by ``referee ui --run DIR`` on 127.0.0.1; pages are rendered on the server (Jinja2), the
charts are inline SVG made in Python (:mod:`referee.ui.charts`), and nothing is fetched from the
network. FastAPI loads only when :func:`create_app` is first used.

>>> from referee.ui import create_app                                  # doctest: +SKIP
>>> app = create_app("runs/r1")        # an ASGI app: uvicorn.run(app, port=8765)
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "running", "serve"]
_HOME = {"create_app": "app", "running": "server", "serve": "server"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(f"referee.ui.{_HOME[name]}"), name)
    raise AttributeError(f"module 'referee.ui' has no attribute {name!r}")
