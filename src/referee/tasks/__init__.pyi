"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .curriculum import Curriculum as Curriculum
from .curriculum import CurriculumConfig as CurriculumConfig
from .curriculum import FilterReport as FilterReport
from .curriculum import Group as Group
from .curriculum import PassRateTracker as PassRateTracker
from .curriculum import TaskSummary as TaskSummary
from .humaneval import humaneval_tasks as humaneval_tasks
from .model import Difficulty as Difficulty
from .model import Message as Message
from .model import Provenance as Provenance
from .model import Task as Task
from .model import read_tasks as read_tasks
from .model import write_tasks as write_tasks
from .procedural import FAMILIES as FAMILIES
from .procedural import generate as generate
from .procedural import generate_many as generate_many
from .sampler import TrainingSampler as TrainingSampler
from .sampler import heldout_tasks as heldout_tasks
