"""One sandbox with Icarus Verilog for the whole folder; every test here skips, saying why,
where iverilog is not installed (``make bootstrap`` installs it)."""

from __future__ import annotations

import shutil

import pytest

HAVE_IVERILOG = shutil.which("iverilog") is not None and shutil.which("vvp") is not None
NO_IVERILOG = "iverilog is not installed: apt-get install iverilog (or make bootstrap as root)"


@pytest.fixture(scope="session")
def verifier():
    if not HAVE_IVERILOG:
        pytest.skip(NO_IVERILOG)
    from referee.domains.verilog.verifier import VerilogVerifier

    v = VerilogVerifier()
    yield v
    v.close()


@pytest.fixture(scope="session")
def family_tasks():
    """One task of each family, at spread difficulties."""
    from referee.domains.verilog.families import generate

    tasks = []
    for i, family in enumerate(("v-comb", "v-arith", "v-counter", "v-shift", "v-fsm")):
        tasks += generate(family, 1, (0.2 + 0.2 * i) % 1.0, 40 + i)
    return tasks
