"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .base import Generation as Generation
from .base import Policy as Policy
from .base import PolicyOutputError as PolicyOutputError
from .base import Sampling as Sampling
from .local import TransformersPolicy as TransformersPolicy
from .openai_compat import OpenAIPolicy as OpenAIPolicy
from .scripted import ScriptedPolicy as ScriptedPolicy
from .spec import policy_from_spec as policy_from_spec
