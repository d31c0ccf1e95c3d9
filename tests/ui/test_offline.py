"""Nothing the dashboard serves is fetched from the network: every page, /api/docs included."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from referee.track import TrackStore
from referee.ui import create_app

RUN = "grpo-curriculum"
# Attributes through which a browser fetches something on its own.
FETCHED = re.compile(r"""\b(?:src|href|action|srcset|data)\s*=\s*["']?([^"'\s>]+)""", re.I)


@pytest.fixture
def client(store: TrackStore) -> TestClient:
    return TestClient(create_app(store))


def test_every_page_loads_only_from_the_app(client: TestClient, store: TrackStore) -> None:
    trajectory = store.trajectories(run_id=RUN, limit=1)[0].id
    pages = ["/", f"/runs/{RUN}", f"/runs/{RUN}/audit", f"/trajectories/{trajectory}", "/api/docs"]
    for path in pages:
        r = client.get(path)
        assert r.status_code == 200, path
        for url in FETCHED.findall(r.text):
            assert url.startswith(("/", "#", "?")), f"{path} loads {url}"
        assert "cdn" not in r.text.lower(), path


def test_api_docs_lists_the_json_endpoints(client: TestClient) -> None:
    html = client.get("/api/docs").text
    for path in (
        "/api/runs",
        "/api/runs/{run_id}/trajectories",
        "/api/trajectories/{trajectory_id}/label",
    ):
        assert path in html
    assert client.get("/openapi.json").json()["paths"]
