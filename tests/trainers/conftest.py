"""Trainer contract tests: each runs in its trainer's own venv (scripts/run-trainer-tests.sh),
never in referee's main suite (pyproject's addopts ignore this folder)."""

from __future__ import annotations

import os
import sys

# The probes' in-memory tokenizer (no download): tests/trainers/probes/_tiny_tokenizer.py.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "probes"))
