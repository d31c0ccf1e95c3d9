"""``python -m referee.cli``: the same command line as ``referee``."""

from referee.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
