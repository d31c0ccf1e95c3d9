"""Fixtures for the service tests: a few recorded HumanEval tasks and running servers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

TOKEN = "alice-token-0123456789"
OTHER_TOKEN = "bob-token-0123456789ab"


@pytest.fixture(scope="session")
def he_tasks(humaneval: dict[str, Any]) -> list[Any]:
    """Eight recorded HumanEval tasks."""
    return [humaneval[f"HumanEval/{i}"] for i in range(8)]


@pytest.fixture(scope="session")
def he_file(he_tasks: list[Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from referee.tasks.model import write_tasks

    path = tmp_path_factory.mktemp("service") / "he8.jsonl"
    write_tasks(path, he_tasks)
    return path


@pytest.fixture(scope="session")
def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens.txt"
    path.write_text(f"# test tokens\nalice:{TOKEN}\nbob:{OTHER_TOKEN}\n")
    return path


@pytest.fixture(scope="session")
def gold(he_tasks: list[Any]) -> list[dict[str, str]]:
    from referee.verify.samples import gold_samples

    return list(gold_samples(he_tasks))


ServerFactory = Callable[..., AbstractContextManager[str]]


@pytest.fixture
def server(he_file: Path, tokens_file: Path) -> ServerFactory:
    """``with server(**ServeConfig overrides) as url:`` a real server on loopback, with the
    test tokens unless ``no_auth=True`` is given."""
    from referee.service import ServeConfig, Service, running

    @contextmanager
    def start(**overrides: Any) -> Iterator[str]:
        settings: dict[str, Any] = {"tasks": (str(he_file),), "workers": 2}
        if not overrides.get("no_auth"):
            settings["tokens_file"] = str(tokens_file)
        settings.update(overrides)
        with running(Service.start(ServeConfig(**settings))) as url:
            yield url

    return start


def client(url: str, token: str | None = TOKEN, **kw: Any) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=kw.pop("timeout", 60), **kw)
