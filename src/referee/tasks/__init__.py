"""Tasks: the task model and its JSONL files, and the task sources (HumanEval, procedural).

>>> from referee.tasks import read_tasks, generate                        # doctest: +SKIP
>>> task = generate("list-pipeline", difficulty=0.5, seed=1)             # doctest: +SKIP
"""

from referee.tasks.curriculum import (
    Curriculum,
    CurriculumConfig,
    FilterReport,
    Group,
    PassRateTracker,
    TaskSummary,
)
from referee.tasks.humaneval import humaneval_tasks
from referee.tasks.model import Difficulty, Message, Provenance, Task, read_tasks, write_tasks
from referee.tasks.procedural import FAMILIES, generate, generate_many
from referee.tasks.sampler import TrainingSampler, heldout_tasks

__all__ = [
    "FAMILIES",
    "Curriculum",
    "CurriculumConfig",
    "Difficulty",
    "FilterReport",
    "Group",
    "Message",
    "PassRateTracker",
    "Provenance",
    "Task",
    "TaskSummary",
    "TrainingSampler",
    "generate",
    "generate_many",
    "heldout_tasks",
    "humaneval_tasks",
    "read_tasks",
    "write_tasks",
]
