"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .cost import BudgetExhausted as BudgetExhausted
from .cost import BudgetStop as BudgetStop
from .cost import Cost as Cost
from .cost import CostLedger as CostLedger
from .cost import RunBudget as RunBudget
from .runner import EnvFactory as EnvFactory
from .runner import RolloutRunner as RolloutRunner
from .sink import JSONL_NAME as JSONL_NAME
from .sink import JsonlSink as JsonlSink
from .sink import TrajectorySink as TrajectorySink
from .sink import read_jsonl as read_jsonl
from .trajectory import TRAJECTORY_SCHEMA_VERSION as TRAJECTORY_SCHEMA_VERSION
from .trajectory import ErrorKind as ErrorKind
from .trajectory import Trajectory as Trajectory
from .trajectory import TrajectoryError as TrajectoryError
from .trajectory import Turn as Turn
