"""``python -m referee`` and the ``referee`` console script: the same command line.

A plain ``referee verify`` starts its sandbox before the command line's libraries load
(:mod:`referee.verify.early`): the workers' start, mostly other processes' work, then overlaps
those imports instead of following them; and it judges its first sample there, before those
imports, when it can (:mod:`referee.verify.first`).
"""

from __future__ import annotations

import sys


def main() -> None:
    """The console entry point: :func:`referee.cli.main`, with ``verify``'s sandbox started
    first when the command line is a plain ``referee verify``."""
    from referee.verify import early

    plain, workers = early.plain_verify_workers(sys.argv[1:])
    if plain:
        early.start(workers)
        early.judge_first(sys.argv[1:])
    from referee.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
