"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .app import create_app as create_app
from .auth import Tokens as Tokens
from .client import AsyncClient as AsyncClient
from .client import Client as Client
from .client import RetryPolicy as RetryPolicy
from .config import ServeConfig as ServeConfig
from .engine import ExecRequest as ExecRequest
from .engine import ServiceEngine as ServiceEngine
from .errors import DeadlineExceeded as DeadlineExceeded
from .errors import InvalidRequest as InvalidRequest
from .errors import RemoteNotFound as RemoteNotFound
from .errors import ServerBusy as ServerBusy
from .errors import ServerUnavailable as ServerUnavailable
from .errors import ServiceError as ServiceError
from .errors import Unauthorized as Unauthorized
from .remote_env import RemoteEnvironment as RemoteEnvironment
from .server import running as running
from .server import serve as serve
from .state import Service as Service
from .wire import OpenedSession as OpenedSession
from .wire import RemoteStep as RemoteStep
