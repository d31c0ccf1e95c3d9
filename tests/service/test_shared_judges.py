"""Sessions of a domain whose environment takes a judge share the server's one (and its
sandbox): a thousand SQL sessions must not start a thousand sandbox workers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from referee.domains.sql.families import make_task
from referee.service import ServeConfig, Service
from referee.service.episodes import make_session_env
from referee.service.schemas import EnvBody
from referee.tasks.model import write_tasks


def test_sql_sessions_share_the_servers_judge_and_closing_one_leaves_it_open(
    tmp_path: Path,
) -> None:
    task = make_task("sql-join", 0.7, 0)
    path = tmp_path / "sql.jsonl"
    write_tasks(path, [task])
    service = Service.start(ServeConfig(tasks=(str(path),), no_auth=True, workers=1))
    try:
        body = EnvBody(env="sql")
        first, second = (make_session_env(service, body, task) for _ in range(2))
        shared = service.engine.verifiers.verifier(task.kind)
        assert first.verifier is shared and second.verifier is shared  # type: ignore[attr-defined]

        async def episode() -> str:
            await first.reset(task)
            call = {"id": "c", "type": "function", "function": {
                "name": "run_query", "arguments": json.dumps({"query": "SELECT 1 AS one"})}}  # fmt: skip
            result = await first.step({"role": "assistant", "content": "", "tool_calls": [call]})
            await first.close()
            await second.close()
            return str(result.observations[0]["content"])

        assert "one" in asyncio.run(episode())
        # The sessions closed; the server's judge (and its sandbox) still works.
        assert shared.verify(task, "```sql\n" + task.hidden["reference"] + "\n```").passed
    finally:
        service.close()
