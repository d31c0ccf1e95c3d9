"""The dashboard: a local web page over a run folder's track store, and the terminal views.

Served by ``referee ui --run DIR`` on 127.0.0.1; pages are rendered on the server (Jinja2), the
charts are inline SVG made in Python (:mod:`referee.ui.charts`), and nothing is fetched from the
network. FastAPI loads only when :func:`create_app` is first used.

>>> from referee.ui import create_app                                  # doctest: +SKIP
>>> app = create_app("runs/r1")        # an ASGI app: uvicorn.run(app, port=8765)
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
