"""After every hostile test: the host is unharmed and the next run, on both paths, is unaffected."""

from __future__ import annotations

import time

import pytest

from tests.redteam.strays import stray_sandbox_processes


@pytest.fixture(autouse=True)
def next_run_is_unaffected(sandbox):  # type: ignore[no-untyped-def]
    yield
    fast = sandbox.run_python("print('ok')")
    fresh = sandbox.run(["python3", "-c", "print('ok')"])
    assert fast.ok and fast.stdout == "ok\n", fast
    assert fresh.ok and fresh.stdout == "ok\n", fresh
    deadline = time.monotonic() + 3
    while (strays := stray_sandbox_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)  # a killed namespace takes a moment to be torn down
    assert strays == [], f"processes of a finished run survive on the host: {strays}"
