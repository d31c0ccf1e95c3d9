"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .core import Backend as Backend
from .core import Sandbox as Sandbox
from .lease import Lease as Lease
from .limits import Limits as Limits
from .resident import Resident as Resident
from .result import ExecResult as ExecResult
from .workspace import Snapshot as Snapshot
from .workspace import Workspace as Workspace
