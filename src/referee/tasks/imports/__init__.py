"""Imports of the public code-RL formats: APPS, TACO, CodeContests, LiveCodeBench, DeepCoder,
veRL's Parquet rows and SWE-bench, each registered as a task source that reads a file
(:mod:`referee.tasks.sources`; ``referee tasks import NAME FILE --out TASKS.jsonl``).

One module per format; :mod:`.rows` reads the files (JSONL, JSON, Parquet; errors name the
file, the row and the field) and :mod:`.program` makes the ``program`` tasks and their one
prompt. ``docs/imports.md`` tabulates what each format's fields become.
"""

from referee.tasks.imports.importer import ImportSummary, import_tasks

__all__ = ["ImportSummary", "import_tasks"]
