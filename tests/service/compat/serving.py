"""Helpers of the compat protocol tests: a server whose ``Service`` the test can reach, and the
skip rule for the trainers' client packages (scripts/bootstrap-contracts.sh installs them)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def require_clients(*modules: str) -> None:
    """Skip the calling test module when a client package is missing, unless
    ``REFEREE_REQUIRE_CONTRACTS`` is set (``make test``): then fail."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    if os.environ.get("REFEREE_REQUIRE_CONTRACTS"):
        raise RuntimeError(
            f"REFEREE_REQUIRE_CONTRACTS is set but {', '.join(missing)} is not installed: "
            "run scripts/bootstrap-contracts.sh"
        )
    pytest.skip(
        f"client packages missing ({', '.join(missing)}): scripts/bootstrap-contracts.sh",
        allow_module_level=True,
    )


@contextmanager
def served(he_file: Path, **overrides: Any) -> Iterator[tuple[str, Any]]:
    """``with served(he_file, compat=(...), ...) as (url, service):`` a real server on loopback
    (no token: the compat routes take none) and its ``Service``."""
    from referee.service import ServeConfig, Service, running

    settings: dict[str, Any] = {"tasks": (str(he_file),), "workers": 2, "no_auth": True}
    settings.update(overrides)
    service = Service.start(ServeConfig(**settings))
    with running(service) as url:
        yield url, service


def assert_json_error(response: Any, status: int) -> dict[str, Any]:
    """``response`` is a JSON error ``{"error", "message", ...}`` with ``status``."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    body: dict[str, Any] = response.json()
    assert set(body) >= {"error", "message"}, body
    assert "Traceback" not in response.text
    return body
