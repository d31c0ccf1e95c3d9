"""``referee tasks``: the group of the task-file commands, in the order its help lists them."""

from __future__ import annotations

import typer

from referee.cli.tasks_calibrate import tasks_calibrate
from referee.cli.tasks_export import tasks_export
from referee.cli.tasks_make import tasks_families, tasks_generate, tasks_import, tasks_sources
from referee.cli.tasks_read import tasks_gold, tasks_list, tasks_show, tasks_split, tasks_stats

#: The group's commands: name and function.
COMMANDS = (
    ("import", tasks_import),
    ("generate", tasks_generate),
    ("families", tasks_families),
    ("sources", tasks_sources),
    ("list", tasks_list),
    ("show", tasks_show),
    ("stats", tasks_stats),
    ("split", tasks_split),
    ("calibrate", tasks_calibrate),
    ("gold", tasks_gold),
    ("export", tasks_export),
)


def register(app: typer.Typer) -> None:
    """Add the ``referee tasks`` group to ``app``."""
    group = typer.Typer(
        help="Task files: import, list, show, stats, split, gold solutions, trainer datasets.",
        no_args_is_help=True,
    )
    for name, command in COMMANDS:
        group.command(name)(command)
    app.add_typer(group, name="tasks")
