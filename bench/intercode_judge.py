"""InterCode's own reward functions on recorded episodes (runs in a venv holding
``intercode-bench`` with its dependencies: gymnasium, docker, a MySQL client, scikit-learn).

    JUDGE_PY bench/intercode_judge.py < episodes.json > rewards.json

Called by ``bench/imports_intercode.py``, which runs every command and query in referee's
sandbox and records what InterCode's containers and MySQL cursor would have answered. This
script calls the shipped ``BashEnv.get_reward`` and ``SqlEnv.get_reward`` unchanged, on an
object whose container (or cursor) replays those records: the reward arithmetic (git status
diff, md5 of common changes, TF-IDF similarity; intersection over union scaled by Kendall's
tau) is InterCode's own code, not a copy of it.
"""

from __future__ import annotations

import json
import logging
import sys
from collections import namedtuple
from typing import Any

from intercode.envs.bash.bash_env import BashEnv
from intercode.envs.sql.sql_env import SqlEnv

ExecResult = namedtuple("ExecResult", ["exit_code", "output"])
_LOG = logging.getLogger("intercode-judge")
_LOG.setLevel(logging.WARNING)


class Container:
    """A container that answers the judge's commands from one episode's records."""

    def __init__(self, env: BashEnv, record: dict[str, Any], gold: str | None) -> None:
        self.answers = {env.clean_cmd("git reset --hard; git clean -fd;"): "",
                        env.clean_cmd("git status --short;"): record["status"],
                        **record["hashes"]}  # fmt: skip
        if gold is not None:
            self.answers[env.clean_cmd(gold)] = record["observation"]

    def exec_run(self, cmd: str, **_: Any) -> ExecResult:
        if cmd not in self.answers:
            raise KeyError(f"no record for {cmd!r}")
        return ExecResult(0, self.answers[cmd].encode())


class Cursor:
    """A cursor whose every execute returns the gold's recorded rows."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = [tuple(r) for r in rows]
        self.description: Any = None

    def execute(self, query: str) -> None:
        self.description = [("column",)]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self.rows)


def bash_reward(item: dict[str, Any]) -> float:
    env = object.__new__(BashEnv)
    env.image_name, env.logger, env.info = "intercode-bash", _LOG, {}
    env.gold = item["gold"]
    env.container = Container(env, item["agent"], None)
    env.container_eval = Container(env, item["eval"], item["gold"])
    env.observation = item["agent"]["observation"]
    reward, _ = env.get_reward()
    return float(reward)


def sql_reward(item: dict[str, Any]) -> float:
    env = object.__new__(SqlEnv)
    env.logger, env.info = _LOG, {}
    env.gold = item["gold"]
    env.cur = Cursor(item["gold_rows"])
    agent = item["agent_rows"]
    env.observation = [tuple(r) for r in agent] if isinstance(agent, list) else agent
    reward, _ = env.get_reward()
    return float(reward)


def main() -> None:
    items = json.load(sys.stdin)
    out = []
    for item in items:
        reward = bash_reward(item) if item["kind"] == "bash" else sql_reward(item)
        out.append({"key": item["key"], "reward": reward})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
