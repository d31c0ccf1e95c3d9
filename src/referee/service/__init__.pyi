"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .app import create_app as create_app
from .auth import Tokens as Tokens
from .config import ServeConfig as ServeConfig
from .engine import ExecRequest as ExecRequest
from .engine import ServiceEngine as ServiceEngine
from .server import running as running
from .server import serve as serve
from .state import Service as Service
