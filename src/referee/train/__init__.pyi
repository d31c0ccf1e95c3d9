"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .grpo import ChooseTasks as ChooseTasks
from .grpo import CurriculumGRPOTrainer as CurriculumGRPOTrainer
from .grpo import GroupSampler as GroupSampler
from .tracking import RunTracking as RunTracking
from .trl_adapter import OnVerdicts as OnVerdicts
from .trl_adapter import reward_function as reward_function
from .trl_adapter import tasks_dataset as tasks_dataset
from .trl_env import TRLEnvironment as TRLEnvironment
from .trl_env import environment_class as environment_class
