"""Trainer contract tests: each runs in its trainer's own venv (scripts/run-trainer-tests.sh),
never in referee's main suite (pyproject's addopts ignore this folder).

referee must be the wheel installed in that venv with the trainer's extra
(scripts/bootstrap-trainer-venv.sh), not this checkout's src/: the suites then fail when referee's
declared requirements do not fit the trainer, or when the wheel lacks a file the code needs."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import referee

_SITE = Path(sysconfig.get_paths()["purelib"]).resolve()
_REFEREE = Path(referee.__file__).resolve()
assert _REFEREE.is_relative_to(_SITE), (
    f"referee was imported from {_REFEREE}, not from this venv's site-packages ({_SITE}): run the "
    "contract tests with scripts/run-trainer-tests.sh (the built wheel, no PYTHONPATH=src)"
)

# The probes' in-memory tokenizer (no download): tests/trainers/probes/_tiny_tokenizer.py.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "probes"))
