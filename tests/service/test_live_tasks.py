"""``referee serve`` serves its --tasks files as they are now: a task written after it started
is served from the next request on; a file that breaks leaves it on the tasks it last read."""

from __future__ import annotations

from pathlib import Path

import httpx

from referee.service import ServeConfig, Service, running
from referee.tasks.model import Task, write_tasks


def _task(n: int) -> Task:
    return Task.create(
        name=f"t/add{n:02d}-v1",
        prompt="Write add(a, b).",
        payload={"entry_point": "add"},
        hidden={"tests": "assert add(1, 2) == 3\n"},
    )


def test_the_server_picks_up_a_changed_task_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(1)])
    config = ServeConfig(tasks=(str(path),), no_auth=True, workers=1)
    with running(Service.start(config)) as url, httpx.Client(base_url=url, timeout=60) as c:
        assert [t["id"] for t in c.get("/v1/tasks").json()["tasks"]] == ["t/add01-v1"]
        write_tasks(path, [_task(2)])  # a re-export: task 1 gone, task 2 new
        assert [t["id"] for t in c.get("/v1/tasks").json()["tasks"]] == ["t/add02-v1"]
        sample = {"task_id": "t/add02-v1", "completion": "def add(a, b):\n    return a + b\n"}
        r = c.post("/v1/verify", json={"samples": [sample]})
        assert r.status_code == 200, r.text
        gone = c.post("/v1/verify", json={"samples": [dict(sample, task_id="t/add01-v1")]})
        assert gone.status_code == 422 and "t/add01-v1" in gone.json()["message"]

        path.write_text("not json\n")  # broken: keep serving the last good tasks, and say why
        assert [t["id"] for t in c.get("/v1/tasks").json()["tasks"]] == ["t/add02-v1"]
        health = c.get("/health").json()
        assert "tasks.jsonl" in health["tasks_error"]
        write_tasks(path, [_task(3)])
        assert [t["id"] for t in c.get("/v1/tasks").json()["tasks"]] == ["t/add03-v1"]
        assert "tasks_error" not in c.get("/health").json()
