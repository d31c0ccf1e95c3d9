"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .envs import CodeEnv as CodeEnv
from .envs import Environment as Environment
from .errors import ConfigError as ConfigError
from .errors import NotFoundError as NotFoundError
from .errors import PolicyError as PolicyError
from .errors import RefereeError as RefereeError
from .errors import SandboxError as SandboxError
from .errors import SandboxUnavailable as SandboxUnavailable
from .errors import StoreError as StoreError
from .errors import TaskError as TaskError
from .errors import UnsafePathError as UnsafePathError
from .errors import VerifierError as VerifierError
from .policy import OpenAIPolicy as OpenAIPolicy
from .policy import TransformersPolicy as TransformersPolicy
from .rollout import RolloutRunner as RolloutRunner
from .rollout import Trajectory as Trajectory
from .sandbox import ExecResult as ExecResult
from .sandbox import Limits as Limits
from .sandbox import Sandbox as Sandbox
from .sandbox import Snapshot as Snapshot
from .sandbox import Workspace as Workspace
from .synth.pipeline import synthesize as synthesize
from .tasks import Task as Task
from .tasks import read_tasks as read_tasks
from .tasks import write_tasks as write_tasks
from .tasks.artifacts import ArtifactStore as ArtifactStore
from .tasks.curriculum import Curriculum as Curriculum
from .tasks.sampler import TrainingSampler as TrainingSampler
from .verify import FunctionVerifier as FunctionVerifier
from .verify import PytestVerifier as PytestVerifier
from .verify import TestgenVerifier as TestgenVerifier
from .verify import Verdict as Verdict

__version__: str
