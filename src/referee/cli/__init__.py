"""The ``referee`` command line: each command parses, makes one library call, and renders.

One module per command (or command group); what they share is defined once:

* :mod:`.entry`: the Typer ``app`` and the console entry point :func:`main` (``referee``,
  ``python -m referee``, ``python -m referee.cli``), which builds only the parser of the
  command it runs;
* :mod:`.group`: the exit-code policy (an error becomes one line on stderr and a status:
  ``ConfigError`` and the user's other mistakes 2, referee's or its infrastructure's failures
  1, ``exec``'s own failures 125, a closed pipe 0, quietly);
* :mod:`.options`: the option types and help texts several commands take (``TaskFile``,
  ``RunFolder``, ``--heldout``, ``--by``...);
* :mod:`.files`: the files named on the command line, read or checked before the work;
* :mod:`.console`: stderr, for messages and progress.

To add a command ``referee NAME``: write ``referee/cli/NAME.py`` holding the command's
function (imports of the library inside it, so that ``import referee.cli`` stays light) and
``register(app)``, which adds it (``app.command()(NAME)``); then add the module to
:data:`COMMANDS` below, where it is to appear in ``referee --help``. A ``referee tasks``
subcommand is one entry in :data:`referee.cli.tasks.COMMANDS` instead.
"""

from __future__ import annotations

from referee.cli import (
    audit,
    cost,
    demo,
    doctor,
    domains,
    eval_,
    exec_,
    export,
    redteam,
    reverify,
    serve,
    synth,
    tasks,
    train,
    ui,
    verify,
)
from referee.cli.entry import app, app_for, main

__all__ = ["COMMANDS", "app", "app_for", "main"]

#: The commands' modules, each with ``register(app)``, in the order ``referee --help`` lists
#: them (typer lists the groups, ``tasks`` and ``domains``, after the commands).
COMMANDS = (
    exec_,
    synth,
    verify,
    reverify,
    redteam,
    doctor,
    train,
    eval_,
    export,
    cost,
    audit,
    ui,
    serve,
    demo,
    tasks,
    domains,
)

for _command in COMMANDS:
    _command.register(app)
