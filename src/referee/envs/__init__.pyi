"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .base import ChatMessage as ChatMessage
from .base import Environment as Environment
from .base import EpisodeLimits as EpisodeLimits
from .base import StepResult as StepResult
from .base import SyncEnvironment as SyncEnvironment
from .budget import Budget as Budget
from .code import CodeEnv as CodeEnv
from .code import CodeSnapshot as CodeSnapshot
from .registry import env_keywords as env_keywords
from .registry import env_names as env_names
from .registry import make_env as make_env
from .registry import register_env as register_env
from .runtime import CodeRuntime as CodeRuntime
from .tools import ToolCall as ToolCall
from .tools import function_tool as function_tool
from .tools import parse_tool_calls as parse_tool_calls
from .tools import tool_message as tool_message
