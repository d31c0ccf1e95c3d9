"""Type information for the lazily loaded names of this package: lazy_loader reads
the same imports to load each name on first use (see the package's __init__.py)."""

from .artifacts import ArtifactStore as ArtifactStore
from .export import EXPORT_FORMATS as EXPORT_FORMATS
from .export import ExportReport as ExportReport
from .export import export_jsonl as export_jsonl
from .export import export_parquet as export_parquet
from .export import export_run as export_run
from .export import rl_prompt_rows as rl_prompt_rows
from .export import select_tasks as select_tasks
from .export import sft_rows as sft_rows
from .export import skyrl_rows as skyrl_rows
from .export import verl_rows as verl_rows
from .export import write_dataset as write_dataset
from .store import AlertRow as AlertRow
from .store import AuditItemRow as AuditItemRow
from .store import LabelRow as LabelRow
from .store import MetricRow as MetricRow
from .store import RunRow as RunRow
from .store import TrackStore as TrackStore
