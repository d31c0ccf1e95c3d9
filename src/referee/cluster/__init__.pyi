"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .actor import SandboxActor as SandboxActor
from .connect import connect as connect
from .environment import PoolEnvironment as PoolEnvironment
from .named import NamedPool as NamedPool
from .named import named_pool as named_pool
from .named import shutdown_named_pool as shutdown_named_pool
from .pool import SandboxPool as SandboxPool
from .session import PoolSession as PoolSession
from .shared import judge_texts as judge_texts
from .shared import shared_pool as shared_pool
