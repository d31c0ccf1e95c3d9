"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .config import MULTI_TURN_DEFAULTS as MULTI_TURN_DEFAULTS
from .config import OPTIONS as OPTIONS
from .config import EvalConfig as EvalConfig
from .config import ExperimentConfig as ExperimentConfig
from .config import GRPOConfig as GRPOConfig
from .config import ModelConfig as ModelConfig
from .config import SFTConfig as SFTConfig
from .config import TasksConfig as TasksConfig
from .config import TrackingConfig as TrackingConfig
from .config import experiment_config as experiment_config
from .demonstrator import Demonstrator as Demonstrator
from .experiment import run_experiment as run_experiment
from .report import results_table as results_table
from .results import ExperimentResults as ExperimentResults
from .results import GRPOResult as GRPOResult
from .results import SFTResult as SFTResult
from .tiny import TinyConfig as TinyConfig
