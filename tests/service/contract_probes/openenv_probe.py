"""OpenEnv's client (``openenv`` 0.10.0, ``openenv/core/env_client.py``).

The client is WebSocket only: ``EnvClient(base_url)`` turns ``http(s)://host`` into
``ws(s)://host/ws`` and keeps one connection (one server-side environment) per client. There is
no HTTP client class in 0.10.0 (``HTTPEnvClient`` is gone); the HTTP ``/reset`` and ``/step``
routes of OpenEnv's server are stateless (a fresh environment per call) and are driven here with
plain httpx, with the bodies of OpenEnv's ``ResetRequest`` / ``StepRequest`` models.
"""

from __future__ import annotations

import sys
from typing import Any

import httpx
from openenv.core.client_types import StepResult
from openenv.core.generic_client import GenericEnvClient


def episode_ws(
    base_url: str, action: dict[str, Any], **reset_kwargs: Any
) -> tuple[StepResult[Any], StepResult[Any], dict[str, Any]]:
    """reset, one step, state, close: over ``WS /ws``, with the sync wrapper TRL and others use."""
    with GenericEnvClient(base_url=base_url, message_timeout_s=30).sync() as env:
        first = env.reset(**reset_kwargs)
        after = env.step(action)
        state = env.state()
    return first, after, state


def episode_http(base_url: str, action: dict[str, Any], **reset_kwargs: Any) -> tuple[Any, Any]:
    """``POST /reset`` then ``POST /step`` (each a fresh environment on OpenEnv's own server)."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        first = client.post("/reset", json=reset_kwargs)
        first.raise_for_status()
        after = client.post("/step", json={"action": action})
        after.raise_for_status()
    return first.json(), after.json()


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"
    print(episode_ws(url, {"answer": "3"}, seed=1))
