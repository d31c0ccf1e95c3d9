"""``python -m referee``: the same command line as ``referee``."""

from referee.cli import main

if __name__ == "__main__":
    main()
